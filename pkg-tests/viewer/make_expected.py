"""Expected values for the viewer tests, from gguf-py (never from gguf-lens): the sample model's
summary fields and the statistics of a few tensors dequantized by gguf-py's numpy reference.

usage: .venv/bin/python pkg-tests/viewer/make_expected.py   (venv from fixtures/setup.sh; any
Python with PyPI `gguf` works) → pkg-tests/viewer/fixtures/expected-sample.json
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
from gguf import GGUFReader, GGUFValueType, LlamaFileType
from gguf.quants import dequantize

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "fixtures" / "sample" / "tiny-llama-Q4_K_M.gguf"
OUT = Path(__file__).resolve().parent / "fixtures" / "expected-sample.json"
INSPECT = ["blk.0.attn_q.weight", "blk.0.attn_v.weight", "output.weight", "blk.1.ffn_norm.weight"]


def scalar(r: GGUFReader, key: str):
    f = r.fields.get(key)
    if f is None:
        return None
    v = f.contents()
    return v


def main() -> None:
    r = GGUFReader(str(SAMPLE))
    arch = scalar(r, "general.architecture")
    params = sum(int(t.n_elements) for t in r.tensors)
    tensor_bytes = sum(int(t.n_bytes) for t in r.tensors)
    ftype = int(scalar(r, "general.file_type"))
    tokens = r.fields["tokenizer.ggml.tokens"]
    expected = {
        "source": "gguf-py GGUFReader on fixtures/sample/tiny-llama-Q4_K_M.gguf",
        "summary": {
            "architecture": arch,
            "name": scalar(r, "general.name"),
            "parameter-count": params,
            "file-type": LlamaFileType(ftype).name.removeprefix("MOSTLY_"),
            "file-type-id": ftype,
            "file-size": os.path.getsize(SAMPLE),
            "bits-per-weight": tensor_bytes * 8 / params,
            "context-length": int(scalar(r, f"{arch}.context_length")),
            "embedding-length": int(scalar(r, f"{arch}.embedding_length")),
            "block-count": int(scalar(r, f"{arch}.block_count")),
            "head-count": int(scalar(r, f"{arch}.attention.head_count")),
            "head-count-kv": int(scalar(r, f"{arch}.attention.head_count_kv")),
            "vocab-size": int(scalar(r, f"{arch}.vocab_size")),
            "tensor-count": len(r.tensors),
            "tokenizer-model": scalar(r, "tokenizer.ggml.model"),
        },
        "tensor_bytes": tensor_bytes,
        "metadata_keys": [k for k in r.fields if not k.startswith("GGUF.")],
        "token_count": len(tokens.data),
        "tokens": {str(i): tokens.contents(i) for i in (0, 1, 2, 3, 70, 100, 255)},
        "chat_template": scalar(r, "tokenizer.chat_template"),
        "tensors": [
            {"name": t.name, "type": t.tensor_type.name, "shape": [int(x) for x in t.shape],
             "n_elements": int(t.n_elements), "n_bytes": int(t.n_bytes)}
            for t in r.tensors
        ],
        "stats": {},
    }
    by_name = {t.name: t for t in r.tensors}
    for name in INSPECT:
        t = by_name[name]
        v = dequantize(t.data, t.tensor_type).astype(np.float32).reshape(-1)
        fin = v[np.isfinite(v)].astype(np.float64)
        expected["stats"][name] = {
            "type": t.tensor_type.name,
            "count": int(v.size),
            "min": float(fin.min()), "max": float(fin.max()),
            "mean": float(fin.mean()), "std": float(fin.std()),
            "nan": int(np.isnan(v).sum()), "inf": int(np.isinf(v).sum()), "zero": int((v == 0).sum()),
            "first": [float(x) for x in v[:8]],
        }
    assert GGUFValueType.STRING  # the reader's enum is the one the file was checked with
    OUT.write_text(json.dumps(expected, indent=1) + "\n")
    print(f"wrote {OUT}")
    write_tall()


def stats_of(v: np.ndarray) -> dict:
    fin = v[np.isfinite(v)].astype(np.float64)
    return {"count": int(v.size), "min": float(fin.min()), "max": float(fin.max()),
            "mean": float(fin.mean()), "std": float(fin.std())}


def write_tall() -> None:
    """tall.gguf: one F32 tensor of 1000 rows x 64, for statistics over the first rows only
    (the inspector reads the first 256 rows); expected values by numpy from what gguf-py reads."""
    import gguf
    path = OUT.parent / "tall.gguf"
    rng = np.random.default_rng(7)
    rows = (rng.standard_normal((1000, 64)) * np.linspace(0.1, 3, 1000)[:, None]).astype(np.float32)
    w = gguf.GGUFWriter(str(path), "tall")
    w.add_name("tall f32")
    w.add_tensor("tall.weight", rows)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    t = GGUFReader(str(path)).tensors[0]
    v = np.asarray(t.data, dtype=np.float32).reshape(1000, 64)
    out = {"name": "tall f32", "tensor": t.name, "shape": [int(x) for x in t.shape],
           "whole": stats_of(v.reshape(-1)), "head256": stats_of(v[:256].reshape(-1))}
    (OUT.parent / "expected-tall.json").write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
