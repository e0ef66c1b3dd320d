"""A tiny pair of GGUF files (A, B) of F32 tensors where the numeric metrics hit their edge cases,
for the Compare panel (the definitions are the core's, src/compare.rs). Written with gguf-py's
GGUFWriter.

Tensors (4 x 8 each): `zeros` all zeros in both (-0.0 in A: cosine 1, RMSE / RMS(a) 0);
`zero_a` zeros in A only (cosine 0, RMSE / RMS(a) undefined); `zero_b` zeros in B only (cosine
0, RMSE / RMS(a) 1); `nonfinite` a NaN or an infinity in every pair (no finite pair: every
metric undefined, mismatches counted); `mixed` random values with NaN / Inf in a few pairs
(both NaN, the same infinity, opposite infinities, NaN against Inf, one side only).

usage: .venv/bin/python pkg-tests/viewer/make_compare_edges.py
       → pkg-tests/viewer/fixtures/edges-a.gguf, edges-b.gguf
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import gguf

from make_compare_arrays import finish

HERE = Path(__file__).resolve().parent
SHAPE = (4, 8)
NAN, INF = np.float32("nan"), np.float32("inf")


def tensors(b: bool) -> dict[str, np.ndarray]:
    ramp = np.arange(1, 33, dtype=np.float32).reshape(SHAPE) / 8
    zeros = np.zeros(SHAPE, np.float32)
    if not b:
        zeros[0, 3] = -0.0
    nonfinite = np.ones(SHAPE, np.float32)
    if b:
        nonfinite[::2] = NAN
        nonfinite[1::2] = INF
    else:
        nonfinite[:, ::2] = NAN
        nonfinite[:, 1::2] = -INF
    rng = np.random.default_rng(11)
    mixed = rng.standard_normal(SHAPE).astype(np.float32)
    if b:
        mixed = mixed + rng.standard_normal(SHAPE).astype(np.float32) * 0.01
    flat = mixed.reshape(-1)
    for i, (x, y) in enumerate([(NAN, NAN), (INF, INF), (INF, -INF), (NAN, INF), (NAN, None), (None, INF)]):
        v = y if b else x
        if v is not None:
            flat[i * 5] = v
    return {"zeros": zeros, "zero_a": ramp if b else np.zeros(SHAPE, np.float32),
            "zero_b": np.zeros(SHAPE, np.float32) if b else ramp, "nonfinite": nonfinite, "mixed": mixed}


def write(side: str) -> None:
    b = side == "b"
    w = gguf.GGUFWriter(str(HERE / "fixtures" / f"edges-{side}.gguf"), "llama")
    w.add_name(f"edges {side.upper()}")
    w.add_uint32("general.file_type", 0)
    w.add_context_length(64)
    w.add_block_count(1)
    w.add_vocab_size(8)
    for name, t in tensors(b).items():
        w.add_tensor(name, t)
    finish(w)


if __name__ == "__main__":
    write("a")
    write("b")
    print("wrote edges-a.gguf, edges-b.gguf")
