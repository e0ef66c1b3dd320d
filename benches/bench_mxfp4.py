#!/usr/bin/env python3
"""MXFP4 dequantization: `gguf-lens dequant` (release build) against transformers' own
`convert_moe_packed_tensors` on one gpt-oss-20b-sized expert tensor (down_proj of one layer:
blocks U8 [32, 2880, 90, 16], 132.7 M values), CPU time of each (the machine is shared: wall
times are noisy, CPU time less so). Checks the two outputs are equal, bit for bit, then prints
one Markdown table row per tool.

  ~/.cache/gguf-lens/ct-venv/bin/python benches/bench_mxfp4.py target/release/gguf-lens [experts]
"""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import transformers
from safetensors.torch import save_file
from transformers.integrations.mxfp4 import convert_moe_packed_tensors

NAME = "model.layers.0.mlp.experts.down_proj"


def main():
    binary = sys.argv[1]
    experts = int(sys.argv[2]) if len(sys.argv) > 2 else 32
    rows, groups = 2880, 90
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(1)
    blocks = torch.randint(0, 256, (experts, rows, groups, 16), generator=g, dtype=torch.int32).to(torch.uint8)
    scales = torch.randint(118, 134, (experts, rows, groups), generator=g, dtype=torch.int32).to(torch.uint8)
    with tempfile.TemporaryDirectory() as tmp:
        save_file({f"{NAME}_blocks": blocks, f"{NAME}_scales": scales}, os.path.join(tmp, "model.safetensors"))
        with open(os.path.join(tmp, "config.json"), "w") as f:
            json.dump({"quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": []}}, f)
        t0, c0 = time.perf_counter(), time.process_time()
        want = convert_moe_packed_tensors(blocks, scales, dtype=torch.float32)
        t1, c1 = time.perf_counter(), time.process_time()
        out = os.path.join(tmp, "out.f32")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        w0 = time.perf_counter()
        subprocess.run([binary, "dequant", os.path.join(tmp, "model.safetensors"), NAME, "-o", out], check=True)
        w1 = time.perf_counter()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        got = np.fromfile(out, dtype=np.uint32)
        assert np.array_equal(got, want.contiguous().numpy().view(np.uint32).reshape(-1)), "outputs differ"
    n = want.numel()
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    print(f"| values | tool | CPU s | wall s | M values / CPU s |")
    print(f"|---|---|---|---|---|")
    print(f"| {n / 1e6:.1f} M | transformers {transformers.__version__} convert_moe_packed_tensors (torch {torch.__version__}, 1 thread, in memory) | {c1 - c0:.2f} | {t1 - t0:.2f} | {n / 1e6 / (c1 - c0):.0f} |")
    print(f"| {n / 1e6:.1f} M | gguf-lens dequant (file to file, bit for bit equal) | {cpu:.2f} | {w1 - w0:.2f} | {n / 1e6 / cpu:.0f} |")


if __name__ == "__main__":
    main()
