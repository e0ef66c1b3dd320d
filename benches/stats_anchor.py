#!/usr/bin/env python3
"""The anchor beside `gguf-lens stats` in benches/bench-stats-types.sh: ggml's own `to_float`
(llama_cpp's libggml-base, through ctypes) of a GGUF tensor, then numpy's min, max, mean, std
and a 32-bin histogram; single thread, as a user would do it.

    /root/oracle-venv/bin/python benches/stats_anchor.py FILE.gguf TENSOR

Prints `wall_seconds<TAB>cpu_seconds` of dequantization plus statistics (the file read through
a memory map, counted too).
"""

import sys
import time
from pathlib import Path

import numpy as np
import gguf

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fixtures"))
from generate import ROW_FN, load_ggml  # noqa: E402


def main() -> None:
    path, name = sys.argv[1], sys.argv[2]
    base, _cpu = load_ggml()
    reader = gguf.GGUFReader(path)
    t = next(t for t in reader.tensors if t.name == name)
    n = int(t.n_elements)
    wall, cpu = time.perf_counter(), time.process_time()
    data = np.ascontiguousarray(t.data).view(np.uint8)
    out = np.empty(n, dtype=np.float32)
    tr = base.ggml_get_type_traits(int(t.tensor_type)).contents
    if int(t.tensor_type) == 0:
        out[:] = data.view(np.float32).reshape(-1)
    else:
        ROW_FN(tr.to_float)(data.ctypes.data, out.ctypes.data, n)
    # The benchmark's tensors are finite: numpy's plain calls, as a user makes them.
    lo, hi = out.min(), out.max()
    mean, std = out.mean(), out.std()
    counts, _ = np.histogram(out, bins=32, range=(float(lo), float(hi)))
    assert counts.sum() == n and np.isfinite(mean) and np.isfinite(std)
    print(f"{time.perf_counter() - wall:.4f}\t{time.process_time() - cpu:.4f}")


if __name__ == "__main__":
    main()
