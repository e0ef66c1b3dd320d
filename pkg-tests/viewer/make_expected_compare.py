"""Expected values for the viewer's Compare panel, from gguf-py and numpy (never from gguf-lens):
the sample (A, fixtures/sample/tiny-llama-Q4_K_M.gguf) against its Q8_0 requantization (B,
fixtures/sample/tiny-llama-Q8_0.gguf, from `fixtures/make_sample.py --variant q8_0`).

Definitions (the viewer's): metadata keys only in A / only in B / changed (another type, another
scalar value, or for arrays another item type, length or first 8 items); tensors only in A / only
in B, shape and type changes; per-type counts and bytes; and for every tensor with the same shape
in both, over the pairs where both values are finite, with a and b dequantized to f32 and
accumulated in f64: RMSE, max |a-b|, mean |a-b|, RMSE / RMS(a), cosine similarity, plus the
count of NaN mismatches (NaN in one only) and Inf mismatches (an Inf in either, a != b).

usage: .venv/bin/python pkg-tests/viewer/make_expected_compare.py
       → pkg-tests/viewer/fixtures/expected-compare.json
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
OUT = Path(__file__).resolve().parent / "fixtures" / "expected-compare.json"
PREVIEW = 8


def fields(r: GGUFReader) -> dict:
    out = {}
    for key, f in r.fields.items():
        if key.startswith("GGUF."):
            continue
        if f.types[0] == GGUFValueType.ARRAY:
            n = len(f.data)
            out[key] = ("array", f.types[-1].name, n, [f.contents(i) for i in range(min(n, PREVIEW))])
        else:
            out[key] = (f.types[0].name, f.contents())
    return out


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
    a = dequantize(ta.data, ta.tensor_type).astype(np.float32).reshape(-1).astype(np.float64)
    b = dequantize(tb.data, tb.tensor_type).astype(np.float32).reshape(-1).astype(np.float64)
    fin = np.isfinite(a) & np.isfinite(b)
    x, y = a[fin], b[fin]
    d = x - y
    n = int(fin.sum())
    rmse = float(np.sqrt(np.sum(d * d) / n))
    rms_a = float(np.sqrt(np.sum(x * x) / n))
    return {
        "count": n, "rmse": rmse, "max_abs": float(np.max(np.abs(d))), "mean_abs": float(np.sum(np.abs(d)) / n),
        "rel_rmse": rmse / rms_a, "cosine": float(np.sum(x * y) / np.sqrt(np.sum(x * x) * np.sum(y * y))),
        "nan_mismatch": int((np.isnan(a) != np.isnan(b)).sum()),
        "inf_mismatch": int(((np.isinf(a) | np.isinf(b)) & (a != b)).sum()),
    }


def main() -> None:
    ra, rb = GGUFReader(str(A)), GGUFReader(str(B))
    fa, fb = fields(ra), fields(rb)
    ta, tb = {t.name: t for t in ra.tensors}, {t.name: t for t in rb.tensors}
    shape = lambda t: [int(x) for x in t.shape]  # noqa: E731
    both = [n for n in ta if n in tb]
    expected = {
        "source": "gguf-py GGUFReader + gguf.quants.dequantize + numpy (f64) on the two sample files",
        "a": {"path": "fixtures/sample/" + A.name, "summary": summary(ra, A), "mix": mix(ra)},
        "b": {"path": "fixtures/sample/" + B.name, "summary": summary(rb, B), "mix": mix(rb)},
        "metadata": {
            "only_a": [k for k in fa if k not in fb],
            "only_b": [k for k in fb if k not in fa],
            "changed": [k for k in fa if k in fb and fa[k] != fb[k]],
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
    OUT.write_text(json.dumps(expected, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
