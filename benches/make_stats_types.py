#!/usr/bin/env python3
"""One GGUF per ggml type for benches/bench-stats-types.sh: a single 2-D tensor `t` of 128M
values (32768 rows of 4096), quantized by ggml itself (`ggml_quantize_chunk` of the llama_cpp
package's libggml-base, through ctypes; an all-ones importance matrix for the types that need
one). The values are seeded normals with a lognormal scale per row; 1024 rows are quantized and
written 32 times over (quantizing 128M values of the i-quants takes minutes; the statistics
pass costs the same on repeated rows).

    /root/oracle-venv/bin/python benches/make_stats_types.py OUT_DIR [TYPE,TYPE,...]

Writes OUT_DIR/TYPE.gguf for each type not already there.
"""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import numpy as np
import gguf
from gguf import GGMLQuantizationType as QT

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fixtures"))
from generate import load_ggml  # noqa: E402

ROW, ROWS, DISTINCT_ROWS = 4096, 32768, 1024
# Every type ggml_quantize_chunk accepts that gguf-py can write.
TYPES = ("F32,F16,BF16,Q4_0,Q4_1,Q5_0,Q5_1,Q8_0,Q2_K,Q3_K,Q4_K,Q5_K,Q6_K,IQ2_XXS,IQ2_XS,"
         "IQ3_XXS,IQ1_S,IQ4_NL,IQ3_S,IQ2_S,IQ4_XS,IQ1_M,TQ1_0,TQ2_0,MXFP4,NVFP4,Q1_0")


def quantize(base: ctypes.CDLL, qtype: QT, src: np.ndarray) -> np.ndarray:
    rows, n_per_row = src.shape
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    dst = np.zeros(rows * (n_per_row // block) * size, dtype=np.uint8)
    imatrix = np.ones(n_per_row, dtype=np.float32)
    f = base.ggml_quantize_chunk
    f.restype = ctypes.c_size_t
    f.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                  ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p]
    written = f(int(qtype), src.ctypes.data, dst.ctypes.data, 0, rows, n_per_row,
                imatrix.ctypes.data)
    assert written == dst.size, (qtype, written, dst.size)
    return dst.reshape(rows, -1)


def main() -> None:
    out = Path(sys.argv[1])
    types = (sys.argv[2] if len(sys.argv) > 2 else TYPES).split(",")
    out.mkdir(parents=True, exist_ok=True)
    base, _cpu = load_ggml()
    rng = np.random.default_rng(0x57A7)
    scale = np.exp(rng.normal(-3.5, 0.5, size=(DISTINCT_ROWS, 1))).astype(np.float32)
    src = (rng.standard_normal((DISTINCT_ROWS, ROW)).astype(np.float32) * scale)
    src = np.ascontiguousarray(src, dtype=np.float32)
    for name in types:
        path = out / f"{name}.gguf"
        if path.exists():
            continue
        qtype = QT[name]
        blocks = quantize(base, qtype, src)
        data = np.tile(blocks, (ROWS // DISTINCT_ROWS, 1))
        tmp = path.with_suffix(".tmp")
        w = gguf.GGUFWriter(str(tmp), "stats-bench")
        w.add_tensor("t", data, raw_dtype=qtype)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        tmp.rename(path)
        print(f"{name}: {path.stat().st_size >> 20} MiB", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
