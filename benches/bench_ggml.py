#!/usr/bin/env python3
"""llama.cpp's own dequantization speed: ggml's `to_float` for each type, through ctypes.

    /tmp/oracle/venv/bin/python benches/bench_ggml.py [--size 1M,64M] [--types Q4_0,Q6_K]

Prints `size<TAB>type<TAB>llama.cpp` rows in Gelem/s (f32 outputs per second, single thread,
median of several runs into a reused output buffer), on random blocks made like
examples/bench_dequant.rs makes them: random bytes with every scale field set finite (f16 in
[0.5, 1), E8M0 127 or 128). The ctypes call costs about a microsecond, nothing at 1M+ elements.
"""

import argparse
import ctypes
import time
from pathlib import Path

import sys

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fixtures"))
from generate import ROW_FN, load_ggml as load_fixture_ggml  # noqa: E402

DEFAULT_TYPES = ("F16,BF16,Q8_0,Q8_1,Q8_K,Q4_0,Q4_1,Q5_0,Q5_1,Q6_K,Q4_K,Q5_K,Q3_K,Q2_K,"
                 "IQ4_NL,IQ4_XS,IQ2_XXS,IQ2_XS,IQ2_S,IQ3_XXS,IQ3_S,IQ1_S,IQ1_M,"
                 "MXFP4,NVFP4,TQ2_0,TQ1_0,Q1_0,Q2_0")

# ggml type ids (shared/reference/ggml-types.md), checked against ggml's traits below.
TYPE_IDS = {
    "F16": 1, "Q4_0": 2, "Q4_1": 3, "Q5_0": 6, "Q5_1": 7, "Q8_0": 8, "Q8_1": 9, "Q2_K": 10, "Q3_K": 11,
    "Q4_K": 12, "Q5_K": 13, "Q6_K": 14, "Q8_K": 15, "IQ2_XXS": 16, "IQ2_XS": 17, "IQ3_XXS": 18,
    "IQ1_S": 19, "IQ4_NL": 20, "IQ3_S": 21, "IQ2_S": 22, "IQ4_XS": 23, "IQ1_M": 29,
    "BF16": 30, "TQ1_0": 34, "TQ2_0": 35, "MXFP4": 39, "NVFP4": 40, "Q1_0": 41, "Q2_0": 42,
}

# (byte offset, kind) of each block's scales; mirrors scale_fields in examples/bench_dequant.rs.
SCALE_FIELDS = {
    "Q4_0": [(0, "f16")], "Q5_0": [(0, "f16")], "Q8_0": [(0, "f16")], "IQ4_NL": [(0, "f16")],
    "Q1_0": [(0, "f16")], "Q2_0": [(0, "f16")], "IQ4_XS": [(0, "f16")],
    "Q4_1": [(0, "f16"), (2, "f16")], "Q5_1": [(0, "f16"), (2, "f16")],
    "Q4_K": [(0, "f16"), (2, "f16")], "Q5_K": [(0, "f16"), (2, "f16")],
    "Q2_K": [(80, "f16"), (82, "f16")], "Q3_K": [(108, "f16")], "Q6_K": [(208, "f16")],
    "TQ1_0": [(52, "f16")], "TQ2_0": [(64, "f16")], "MXFP4": [(0, "e8m0")],
    "IQ2_XXS": [(0, "f16")], "IQ2_XS": [(0, "f16")], "IQ2_S": [(0, "f16")],
    "IQ3_XXS": [(0, "f16")], "IQ3_S": [(0, "f16")], "IQ1_S": [(0, "f16")],
    "IQ1_M": [(48, "iq1m")], "Q8_1": [(0, "f16"), (2, "f16")], "Q8_K": [(0, "f32")],
}


def load_ggml() -> ctypes.CDLL:
    """libggml-base, loaded and declared once, by the fixture generator."""
    base, _cpu = load_fixture_ggml()
    return base


def parse_size(s: str) -> int:
    mult = {"K": 1 << 10, "M": 1 << 20}.get(s[-1].upper(), 1)
    return int(s[:-1] if mult > 1 else s) * mult


def random_blocks(name: str, block_size: int, type_size: int, n: int,
                  rng: np.random.Generator) -> np.ndarray:
    count = n // block_size
    data = rng.integers(0, 256, size=count * type_size, dtype=np.uint8)
    if name in ("F16", "BF16"):
        keep, set_ = (0x83FF, 0x3800) if name == "F16" else (0x807F, 0x3F00)
        halves = data.view("<u2")
        halves &= keep
        halves |= set_
        return data
    blocks = data.reshape(count, type_size)
    for at, kind in SCALE_FIELDS.get(name, []):
        h = (0x3800 | (rng.integers(0, 1 << 16, size=count) & 0x03FF)).astype("<u2")
        if kind == "f16":
            blocks[:, at:at + 2] = h.view(np.uint8).reshape(count, 2)
        elif kind == "f32":
            f = (0x3F000000 | (rng.integers(0, 1 << 23, size=count))).astype("<u4")
            blocks[:, at:at + 4] = f.view(np.uint8).reshape(count, 4)
        elif kind == "iq1m":
            for i in range(4):
                top = at + 2 * i + 1
                nibble = ((h >> (4 * i)) & 0xF).astype(np.uint8)
                blocks[:, top] = (blocks[:, top] & 0x0F) | (nibble << 4)
        else:
            blocks[:, at] = 127 + rng.integers(0, 2, size=count)
    return data


def median_secs(runs: int, f) -> float:
    f()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    times.sort()
    return times[len(times) // 2]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="1M,64M")
    ap.add_argument("--types", default=DEFAULT_TYPES)
    args = ap.parse_args()
    base = load_ggml()
    rng = np.random.default_rng(12345)
    print("size\ttype\tllama.cpp")
    for size in args.size.split(","):
        n_req = parse_size(size)
        runs = 7 if n_req > 8 << 20 else 15
        for name in args.types.split(","):
            tr = base.ggml_get_type_traits(TYPE_IDS[name]).contents
            if tr.type_name.decode().upper() != name.upper() or not tr.to_float:
                print(f"{size}\t{name}\tn/a")
                continue
            bs, ts = tr.blck_size, tr.type_size
            n = n_req // bs * bs
            src = random_blocks(name, bs, ts, n, rng)
            out = np.zeros(n, dtype="<f4")
            fn = ROW_FN(tr.to_float)
            src_p, out_p = src.ctypes.data, out.ctypes.data
            t = median_secs(runs, lambda: fn(src_p, out_p, n))
            print(f"{size}\t{name}\t{n / t / 1e9:.3f}", flush=True)


if __name__ == "__main__":
    main()
