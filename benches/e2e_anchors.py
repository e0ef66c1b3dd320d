"""Anchors for benches/bench-e2e.sh, measured on the same file: gguf-py (GGUFReader +
gguf.quants.dequantize, then numpy min/max/mean/std/histogram/percentile) and llama.cpp's ggml
`to_float` over the whole tensor (ctypes, one thread). Prints `name<TAB>seconds` rows, medians.

    python benches/e2e_anchors.py FILE TENSOR [--runs 3]
"""
import argparse
import ctypes
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fixtures"))
from generate import load_ggml  # noqa: E402


def median_time(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("file")
    parser.add_argument("tensor")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    reader = GGUFReader(args.file)
    t = next(x for x in reader.tensors if x.name == args.tensor)
    n = int(t.n_elements)

    def gguf_py_dequant():
        return dequantize(t.data, t.tensor_type)

    def gguf_py_stats():
        v = dequantize(t.data, t.tensor_type).astype(np.float64).reshape(-1)
        fin = v[np.isfinite(v)]
        lo, hi = fin.min(), fin.max()
        fin.mean(), fin.std()
        np.histogram(fin, bins=64, range=(lo, hi))
        np.percentile(fin, [1, 50, 99])

    base, _cpu = load_ggml()
    traits = base.ggml_get_type_traits(int(t.tensor_type)).contents
    to_float = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(traits.to_float)
    data = np.ascontiguousarray(np.frombuffer(t.data.tobytes(), dtype=np.uint8))
    out = np.empty(n, dtype=np.float32)

    def ggml_to_float():
        to_float(data.ctypes.data, out.ctypes.data, n)

    for name, fn in [("gguf-py dequant (numpy)", gguf_py_dequant),
                     ("gguf-py dequant + numpy stats", gguf_py_stats),
                     ("ggml to_float (1 thread, into memory)", ggml_to_float)]:
        print(f"{name}\t{median_time(fn, args.runs):.4f}", flush=True)


if __name__ == "__main__":
    main()
