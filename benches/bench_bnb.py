#!/usr/bin/env python3
"""bitsandbytes 4-bit dequantization: `gguf-lens dequant` (release build) against bitsandbytes'
own `dequantize_4bit` (the CPU kernel it dispatches to) and its reference kernel (the default
backend's `_dequantize_4bit_compute`, eager torch) on one 7B-sized linear layer (4096 x 4096 by
default, bf16, block 64, double-quantized scales: what `load_in_4bit` with
`bnb_4bit_use_double_quant` writes), one thread each (OMP_NUM_THREADS=1, torch.set_num_threads(1)),
CPU time of each (the machine is shared: wall times are noisy, CPU time less so). The layer is
quantized by bnb's `quantize_4bit` and written with `QuantState.as_dict(packed=True)` under
`Linear4bit`'s key names. Checks all three outputs are equal, bit for bit (rows are whole blocks,
so bnb's CPU kernel is right here too), then prints one Markdown table row per tool.

  ~/.cache/gguf-lens/bnb-venv/bin/python benches/bench_bnb.py target/release/gguf-lens [quant_type] [rows] [cols]
"""
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import resource
import subprocess
import sys
import tempfile
import time

import bitsandbytes as bnb
import numpy as np
import torch
from bitsandbytes.backends.default.ops import _dequantize_4bit_compute
from bitsandbytes.backends.utils import _get_4bit_code
from bitsandbytes.functional import dequantize_4bit, dequantize_blockwise, quantize_4bit
from safetensors.torch import save_file

NAME = "model.layers.0.mlp.down_proj"


def reference(packed, state):
    absmax = dequantize_blockwise(state.absmax, state.state2) + state.offset
    code = _get_4bit_code(state.quant_type, torch.device("cpu"))
    compute = getattr(_dequantize_4bit_compute, "__wrapped__", _dequantize_4bit_compute)
    return compute(packed.reshape(-1), absmax.float(), code, state.blocksize, state.shape, state.dtype)


def timed(fn):
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.process_time() - c0, time.perf_counter() - t0


def main():
    binary = sys.argv[1]
    quant_type = sys.argv[2] if len(sys.argv) > 2 else "nf4"
    rows = int(sys.argv[3]) if len(sys.argv) > 3 else 4096
    cols = int(sys.argv[4]) if len(sys.argv) > 4 else 4096
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(1)
    w = (torch.randn(rows, cols, generator=g) * 0.02).to(torch.bfloat16)
    packed, state = quantize_4bit(w, blocksize=64, compress_statistics=True, quant_type=quant_type)
    tensors = {f"{NAME}.weight": packed}
    tensors.update({f"{NAME}.weight.{k}": v.contiguous() for k, v in state.as_dict(packed=True).items()})
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model.safetensors")
        save_file(tensors, model)
        want, ref_cpu, ref_wall = timed(lambda: reference(packed, state))
        cpu_out, bnb_cpu, bnb_wall = timed(lambda: dequantize_4bit(packed, state))
        out = os.path.join(tmp, "out.f32")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        w0 = time.perf_counter()
        subprocess.run([binary, "dequant", model, f"{NAME}.weight", "-o", out], check=True)
        w1 = time.perf_counter()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        got = np.fromfile(out, dtype=np.uint32)
        bits = want.float().contiguous().numpy().view(np.uint32).reshape(-1)
        assert np.array_equal(got, bits), "gguf-lens and the reference differ"
        assert torch.equal(cpu_out, want), "bnb's CPU kernel and its reference differ"
    n = want.numel()
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    label = f"{quant_type.upper()}-b64-dq bf16"
    v = f"{n / 1e6:.1f} M"
    print("| layer | values | tool | CPU s | wall s | M values / CPU s |")
    print("|---|---|---|---|---|---|")
    print(f"| {label} | {v} | bitsandbytes {bnb.__version__} `dequantize_4bit` (CPU kernel, torch {torch.__version__}, 1 thread, in memory) | {bnb_cpu:.2f} | {bnb_wall:.2f} | {n / 1e6 / bnb_cpu:.0f} |")
    print(f"| {label} | {v} | bitsandbytes {bnb.__version__} reference `_dequantize_4bit_compute` (eager torch, 1 thread, in memory) | {ref_cpu:.2f} | {ref_wall:.2f} | {n / 1e6 / ref_cpu:.0f} |")
    print(f"| {label} | {v} | gguf-lens `dequant` (file to file, bit for bit equal) | {cpu:.2f} | {w1 - w0:.2f} | {n / 1e6 / cpu:.0f} |")


if __name__ == "__main__":
    main()
