"""Writes Qwen2.5-like and Llama-3-like GGUF headers with gguf-py (PyPI `gguf`), for the header
benchmarks: a big tokenizer (tokens, types, merges) and ~340 tensor infos whose data is absent
(the data section is a sparse hole: the file has a real model's size but uses no disk).

usage: python benches/make_headers.py OUT_DIR [NAME ...]
"""
import random
import sys
from pathlib import Path

import numpy as np
import gguf

SHAPES = {
    # name: (n_vocab, n_merges, n_layers, n_embd, n_ff, token_repeat)
    "qwen-like": (151_936, 151_387, 28, 3584, 18944, 1),
    "llama3-like": (128_256, 280_147, 32, 4096, 14336, 1),
    # A header over 50 MB: 600k tokens and merges, longer strings (token_repeat copies).
    "huge-vocab": (600_000, 600_000, 32, 4096, 14336, 5),
}


def random_token(rng: random.Random) -> str:
    length = rng.choice([1, 2, 3, 4, 5, 6, 7, 8, 10, 12])
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyzĠĊ") for _ in range(length))


def write(path: Path, n_vocab: int, n_merges: int, n_layers: int, n_embd: int, n_ff: int, token_repeat: int) -> None:
    rng = random.Random(1234)
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name(path.stem)
    w.add_block_count(n_layers)
    w.add_context_length(32768)
    w.add_embedding_length(n_embd)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(32)
    w.add_head_count_kv(8)
    w.add_file_type(15)
    w.add_tokenizer_model("gpt2")
    tokens = [f"{random_token(rng) * token_repeat}{i}" for i in range(n_vocab)]
    w.add_token_list(tokens)
    w.add_token_types([1] * n_vocab)
    # A BPE merge "a b" makes the token "ab": split existing tokens, as real merges do.
    merges = []
    for i in range(n_merges):
        token = tokens[i % n_vocab]
        cut = rng.randint(1, len(token) - 1) if len(token) > 1 else 1
        merges.append(f"{token[:cut]} {token[cut:]}")
    w.add_token_merges(merges)
    w.add_chat_template("{% for m in messages %}{{ m['content'] }}{% endfor %}")
    data_bytes = 0
    names = ["attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down", "attn_norm", "ffn_norm", "attn_q.bias", "attn_k.bias", "attn_v.bias"]
    for layer in range(n_layers):
        for name in names:
            shape = (n_embd,) if "norm" in name or "bias" in name else (n_embd, n_embd)
            dtype = gguf.GGMLQuantizationType.F32 if len(shape) == 1 else gguf.GGMLQuantizationType.Q4_K
            # gguf-py takes the numpy byte shape when raw_dtype is given.
            byte_shape = gguf.quant_shape_to_byte_shape(shape[::-1], dtype)
            n_bytes = int(np.prod(byte_shape))
            w.add_tensor_info(f"blk.{layer}.{name}.weight", byte_shape, np.dtype(np.uint8), n_bytes, raw_dtype=dtype)
            data_bytes += -(-n_bytes // 32) * 32
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    # Extend to the full model size as a sparse file: real offsets, no disk used.
    header_len = path.stat().st_size
    with open(path, "r+b") as f:
        f.truncate(-(-header_len // 32) * 32 + data_bytes)


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    names = sys.argv[2:] or list(SHAPES)
    for name in names:
        shape = SHAPES[name]
        write(out / f"{name}.gguf", *shape)
        print(out / f"{name}.gguf", (out / f"{name}.gguf").stat().st_size, "bytes (sparse)")


if __name__ == "__main__":
    main()
