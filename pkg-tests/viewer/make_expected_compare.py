"""Expected values for the viewer's Compare panel, from gguf-py and numpy (never from gguf-lens), for
two pairs: the sample (A, fixtures/sample/tiny-llama-Q4_K_M.gguf) against its Q8_0 requantization
(B, fixtures/sample/tiny-llama-Q8_0.gguf, from `fixtures/make_sample.py --variant q8_0`), and
arrays-a.gguf against arrays-b.gguf (make_compare_arrays.py: arrays that differ past item 8), and
edges-a.gguf against edges-b.gguf (make_compare_edges.py: zero tensors, NaN / Inf pairs).

Definitions (the viewer's): metadata keys only in A / only in B / changed (another type, another
scalar value, or for arrays another item type, length or any item); for arrays of one item type
in both, over their common length, the number of differing items and the first differing index
(past the shorter array when the common items are equal) with the items there (null when
absent; 64-bit integers as decimal strings); tensors only in A / only in B, shape and type
changes; per-type counts and bytes; and for every tensor with the same shape in both, over the
pairs where both values are finite, with a and b dequantized to f32 and accumulated in f64:
RMSE, max |a-b|, mean |a-b|, RMSE / RMS(a), cosine similarity, plus the count of NaN mismatches
(NaN in one only) and Inf mismatches (an Inf in either, a != b). These are the core's definitions
(src/compare.rs, as `gguf-lens diff`), edge cases included: with no finite pair every metric is
null; RMSE / RMS(a) is 0 when RMSE is 0 and null when only RMS(a) is 0; the cosine is 1 for two
zero vectors and 0 when only one is zero.

usage: .venv/bin/python pkg-tests/viewer/make_expected_compare.py
       → pkg-tests/viewer/fixtures/expected-compare.json, expected-compare-arrays.json,
         expected-compare-edges.json
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
from gguf import GGUFReader, GGUFValueType
from gguf.quants import dequantize

ROOT = Path(__file__).resolve().parents[2]
A = ROOT / "fixtures" / "sample" / "tiny-llama-Q4_K_M.gguf"
B = ROOT / "fixtures" / "sample" / "tiny-llama-Q8_0.gguf"
FIX = Path(__file__).resolve().parent / "fixtures"
BIG = (GGUFValueType.UINT64, GGUFValueType.INT64)


def fields(r: GGUFReader) -> dict:
    out = {}
    for key, f in r.fields.items():
        if key.startswith("GGUF."):
            continue
        if f.types[0] == GGUFValueType.ARRAY:
            out[key] = ("array", f.types[-1].name, len(f.data), list(f.contents()))
        else:
            out[key] = (f.types[0].name, f.contents())
    return out


def array_diff(x: tuple, y: tuple) -> dict:
    """Item by item over the common length of two arrays of one item type."""
    n = min(x[2], y[2])
    diff = [i for i in range(n) if x[3][i] != y[3][i]]
    first = diff[0] if diff else (n if x[2] != y[2] else None)
    big = x[1] in (t.name for t in BIG)
    item = lambda a: None if first is None or first >= a[2] else (str(a[3][first]) if big else a[3][first])  # noqa: E731
    return {"item_type": x[1], "length_a": x[2], "length_b": y[2], "compared": n, "differing": len(diff),
            "first_index": first, "a": item(x), "b": item(y)}


def summary(r: GGUFReader, path: Path) -> dict:
    get = lambda k: r.fields[k].contents() if k in r.fields else None  # noqa: E731
    arch = get("general.architecture")
    params = sum(int(t.n_elements) for t in r.tensors)
    return {
        "architecture": arch, "name": get("general.name"), "parameter-count": params,
        "file-type-id": int(get("general.file_type")), "file-size": os.path.getsize(path),
        "bits-per-weight": sum(int(t.n_bytes) for t in r.tensors) * 8 / params,
        "context-length": int(get(f"{arch}.context_length")), "block-count": int(get(f"{arch}.block_count")),
        "vocab-size": int(get(f"{arch}.vocab_size")),
    }


def mix(r: GGUFReader) -> dict:
    out: dict = {}
    for t in r.tensors:
        m = out.setdefault(t.tensor_type.name, {"tensors": 0, "bytes": 0})
        m["tensors"] += 1
        m["bytes"] += int(t.n_bytes)
    return out


def numeric(ta, tb) -> dict:
    """The metrics as src/compare.rs defines them, computed here with numpy (nulls: undefined)."""
    a = dequantize(ta.data, ta.tensor_type).astype(np.float32).reshape(-1).astype(np.float64)
    b = dequantize(tb.data, tb.tensor_type).astype(np.float32).reshape(-1).astype(np.float64)
    fin = np.isfinite(a) & np.isfinite(b)
    x, y = a[fin], b[fin]
    d = x - y
    n = int(fin.sum())
    mismatches = {
        "nan_mismatch": int((np.isnan(a) != np.isnan(b)).sum()),
        "inf_mismatch": int(((np.isinf(a) | np.isinf(b)) & (a != b)).sum()),
    }
    if n == 0:  # no finite pair: every metric over them is undefined
        return {"count": 0, "rmse": None, "max_abs": None, "mean_abs": None, "rel_rmse": None, "cosine": None, **mismatches}
    rmse = float(np.sqrt(np.sum(d * d) / n))
    rms_a = float(np.sqrt(np.sum(x * x) / n))
    saa, sbb = float(np.sum(x * x)), float(np.sum(y * y))
    # RMSE / RMS(a): 0 when RMSE is 0, undefined when only RMS(a) is 0
    rel = 0.0 if rmse == 0 else (rmse / rms_a if rms_a > 0 else None)
    # cosine: 1 for two zero vectors (they are equal), 0 when only one is zero
    cos = float(np.sum(x * y) / np.sqrt(saa * sbb)) if saa > 0 and sbb > 0 else (1.0 if saa == sbb == 0 else 0.0)
    return {"count": n, "rmse": rmse, "max_abs": float(np.max(np.abs(d))), "mean_abs": float(np.sum(np.abs(d)) / n),
            "rel_rmse": rel, "cosine": cos, **mismatches}


def expected_pair(A: Path, B: Path, source: str) -> dict:
    ra, rb = GGUFReader(str(A)), GGUFReader(str(B))
    fa, fb = fields(ra), fields(rb)
    ta, tb = {t.name: t for t in ra.tensors}, {t.name: t for t in rb.tensors}
    shape = lambda t: [int(x) for x in t.shape]  # noqa: E731
    both = [n for n in ta if n in tb]
    expected = {
        "source": f"gguf-py GGUFReader + gguf.quants.dequantize + numpy (f64) on {source}",
        "a": {"path": str(A.relative_to(ROOT)), "summary": summary(ra, A), "mix": mix(ra)},
        "b": {"path": str(B.relative_to(ROOT)), "summary": summary(rb, B), "mix": mix(rb)},
        "metadata": {
            "only_a": [k for k in fa if k not in fb],
            "only_b": [k for k in fb if k not in fa],
            "changed": [k for k in fa if k in fb and fa[k] != fb[k]],
            "arrays": {k: array_diff(fa[k], fb[k]) for k in fa if k in fb and fa[k][0] == fb[k][0] == "array"
                       and fa[k][1] == fb[k][1] and fa[k] != fb[k]},
            "retyped_arrays": [k for k in fa if k in fb and fa[k][0] == fb[k][0] == "array" and fa[k][1] != fb[k][1]],
        },
        "tensors": {
            "only_a": [n for n in ta if n not in tb],
            "only_b": [n for n in tb if n not in ta],
            "shape_changes": [[n, shape(ta[n]), shape(tb[n])] for n in both if shape(ta[n]) != shape(tb[n])],
            "type_changes": [[n, ta[n].tensor_type.name, tb[n].tensor_type.name] for n in both
                             if ta[n].tensor_type != tb[n].tensor_type],
        },
        "numeric": {n: numeric(ta[n], tb[n]) for n in both if shape(ta[n]) == shape(tb[n])},
    }
    return expected


def main() -> None:
    for name, a, b, what in [
        ("expected-compare.json", A, B, "the two sample files"),
        ("expected-compare-arrays.json", FIX / "arrays-a.gguf", FIX / "arrays-b.gguf", "arrays-a/b.gguf"),
        ("expected-compare-edges.json", FIX / "edges-a.gguf", FIX / "edges-b.gguf", "edges-a/b.gguf"),
    ]:
        (FIX / name).write_text(json.dumps(expected_pair(a, b, what), indent=1) + "\n")
        print(f"wrote {FIX / name}")


if __name__ == "__main__":
    main()
