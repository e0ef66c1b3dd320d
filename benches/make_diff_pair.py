#!/usr/bin/env python3
"""A larger pair for timing `gguf-lens diff --values`: the same tensor names and shapes, Q4_K in A
and Q8_0 in B, random blocks with every f16 scale set finite (in [0.5, 1), as
benches/bench_ggml.py makes them), written with gguf-py's GGUFWriter.

    /tmp/oracle/venv/bin/python benches/make_diff_pair.py OUT_DIR [--tensors 8] [--dim 4096]
    time target/release/gguf-lens diff OUT_DIR/big-a.gguf OUT_DIR/big-b.gguf --values

Defaults: 8 tensors of 4096 x 4096 (134M elements; A 75 MB, B 143 MB).
"""

import argparse
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType as QT
from gguf import GGUFWriter


def blocks(rng, n_blocks: int, block_bytes: int, scale_offsets: list[int]) -> np.ndarray:
    b = rng.integers(0, 256, (n_blocks, block_bytes), dtype=np.uint8)
    for off in scale_offsets:
        d = rng.uniform(0.5, 1.0, n_blocks).astype(np.float16)
        b[:, off:off + 2] = d.view(np.uint8).reshape(n_blocks, 2)
    return b


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--tensors", type=int, default=8)
    ap.add_argument("--dim", type=int, default=4096)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    rows, cols = args.dim, args.dim
    for name, qt, block_bytes, scales in (("big-a", QT.Q4_K, 144, [0, 2]), ("big-b", QT.Q8_0, 34, [0])):
        block_elems = 256 if qt == QT.Q4_K else 32
        w = GGUFWriter(None, "bench")
        for i in range(args.tensors):
            data = blocks(rng, rows * cols // block_elems, block_bytes, scales)
            w.add_tensor(f"blk.{i}.w", data.reshape(rows, -1), raw_dtype=qt)
        path = args.out / f"{name}.gguf"
        w.write_header_to_file(path=path)
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
