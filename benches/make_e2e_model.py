"""A GGUF with one large Q8_0 and one large Q4_K tensor (default 4096 x 32768 = 134M elements
each), the shape of a big token embedding, for the end-to-end benchmarks (benches/bench-e2e.sh);
with --extra-types, one more tensor per listed type (`big_<type>.weight`), made as
benches/bench_ggml.py makes blocks (random bytes, every scale field finite).

Blocks are written with sane scales (f16 d, dmin ~ 1e-3) and random quants, by gguf-py's
GGUFWriter as raw bytes; gguf-py reads the file back. Deterministic (seeded).

    python benches/make_e2e_model.py OUT.gguf [--cols 32768] [--extra-types Q4_0,Q6_K,IQ4_XS,MXFP4]
"""
import argparse
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType, GGUFReader, GGUFWriter

ROWS = 4096


def q8_0_blocks(n_blocks: int, rng: np.random.Generator) -> np.ndarray:
    """Q8_0: f16 d, then 32 int8 quants (34 bytes)."""
    block = np.zeros((n_blocks, 34), dtype=np.uint8)
    d = (rng.random(n_blocks, dtype=np.float32) * 2e-3 + 1e-4).astype(np.float16)
    block[:, 0:2] = d.view(np.uint8).reshape(n_blocks, 2)
    block[:, 2:] = rng.integers(-127, 128, size=(n_blocks, 32), dtype=np.int8).view(np.uint8)
    return block


def q4_k_blocks(n_blocks: int, rng: np.random.Generator) -> np.ndarray:
    """Q4_K: f16 d, f16 dmin, 12 bytes of 6-bit scales/mins, 128 bytes of nibbles (144 bytes)."""
    block = np.zeros((n_blocks, 144), dtype=np.uint8)
    d = (rng.random(n_blocks, dtype=np.float32) * 1e-3 + 1e-4).astype(np.float16)
    dmin = (rng.random(n_blocks, dtype=np.float32) * 1e-3).astype(np.float16)
    block[:, 0:2] = d.view(np.uint8).reshape(n_blocks, 2)
    block[:, 2:4] = dmin.view(np.uint8).reshape(n_blocks, 2)
    block[:, 4:] = rng.integers(0, 256, size=(n_blocks, 140), dtype=np.uint8)
    return block


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--cols", type=int, default=32768)
    parser.add_argument("--extra-types", default="")
    args = parser.parse_args()
    rng = np.random.default_rng(20261124)
    n = ROWS * args.cols
    writer = GGUFWriter(str(args.out), "llama")
    writer.add_name("gguf-lens end-to-end benchmark")
    # GGUFWriter takes a quantized tensor's bytes shaped (rows, bytes per row).
    q8 = q8_0_blocks(n // 32, rng).reshape(args.cols, ROWS // 32 * 34)
    writer.add_tensor("big_q8_0.weight", q8, raw_dtype=GGMLQuantizationType.Q8_0)
    q4 = q4_k_blocks(n // 256, rng).reshape(args.cols, ROWS // 256 * 144)
    writer.add_tensor("big_q4_k.weight", q4, raw_dtype=GGMLQuantizationType.Q4_K)
    if args.extra_types:
        import sys
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_ggml import random_blocks  # noqa: E402
        from gguf.constants import GGML_QUANT_SIZES  # noqa: E402
        for name in args.extra_types.split(","):
            qtype = GGMLQuantizationType[name]
            block, size = GGML_QUANT_SIZES[qtype]
            data = random_blocks(name, block, size, n, rng)
            writer.add_tensor(f"big_{name.lower()}.weight", data.reshape(args.cols, ROWS // block * size),
                              raw_dtype=qtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    for t in GGUFReader(str(args.out)).tensors:
        print(f"{args.out}: {t.name} {t.tensor_type.name} {list(t.shape)} {t.n_elements} elements")


if __name__ == "__main__":
    main()
