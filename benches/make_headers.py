"""Writes Qwen2.5-like and Llama-3-like GGUF headers with gguf-py (PyPI `gguf`), for the header
benchmarks: a big tokenizer (tokens, types, merges) and ~340 tensor infos whose data is absent
(the data section is a sparse hole: the file has a real model's size but uses no disk).

The Qwen2.5-like and Llama-3-like vocabularies are the real ones: tokens, token types and
merges copied from llama.cpp's own vocabulary files (models/ggml-vocab-qwen2.gguf and
ggml-vocab-llama-bpe.gguf in the llama-cpp-python 0.3.36 sdist, at $LLAMA_CPP_SDIST or
fetched from PyPI into ~/.cache/gguf-lens). The >50 MB one repeats each text of Command-R's
vocabulary 10 times (real length-by-rank shape, 10x the text bytes).

usage: python benches/make_headers.py OUT_DIR [NAME ...]
"""
import hashlib
import os
import re
import shutil
import sys
import tarfile
import urllib.request
from pathlib import Path

import numpy as np
import gguf

SHAPES = {
    # name: (vocabulary, n_layers, n_embd, n_ff); a vocabulary is a llama.cpp vocab file's
    # name, or (name, times each text is repeated).
    "qwen-like": ("qwen2", 28, 3584, 18944),
    "llama3-like": ("llama-bpe", 32, 4096, 14336),
    # A header over 50 MB: Command-R's 256,000 tokens and 253,333 merges, each text 10 times.
    "huge-vocab": (("command-r", 10), 32, 4096, 14336),
    # Gemma 3 270M's shape: a 262,144-token SentencePiece vocabulary (Gemma's, from llama.cpp's
    # gemma-4 file: tokens, scores and types, no merges), 18 layers of 640.
    "gemma3-like": (("gemma-4", 1, "spm"), 18, 640, 2048),
    # DeepSeek LLM 7B's: its 102,400-token BPE vocabulary and merges, 30 layers of 4096.
    "deepseek7b-like": ("deepseek-llm", 30, 4096, 11008),
}
SDIST_VERSION = "0.3.36"


def vocab_file(name: str) -> Path:
    """llama.cpp's models/ggml-vocab-NAME.gguf from the llama-cpp-python sdist."""
    member = f"vendor/llama.cpp/models/ggml-vocab-{name}.gguf"
    sdist = os.environ.get("LLAMA_CPP_SDIST")
    if sdist and (Path(sdist) / member).exists():
        return Path(sdist) / member
    cache = Path.home() / ".cache/gguf-lens"
    out = cache / f"ggml-vocab-{name}.gguf"
    if out.exists():
        return out
    cache.mkdir(parents=True, exist_ok=True)
    archive = cache / f"llama_cpp_python-{SDIST_VERSION}.tar.gz"
    if not archive.exists():
        # The sdist's address from PyPI's simple index (pip download would build its metadata).
        index = urllib.request.urlopen("https://pypi.org/simple/llama-cpp-python/").read().decode()
        name = re.escape(archive.name)
        url = re.search(rf'href="([^"#]*/{name})#sha256=([0-9a-f]+)"', index)
        if url is None:
            sys.exit(f"{archive.name} is not on PyPI's simple index")
        digest = url.group(2)
        url = url.group(1)
        partial = archive.with_suffix(".part")
        with urllib.request.urlopen(url) as response, open(partial, "wb") as f:
            shutil.copyfileobj(response, f)
        if hashlib.sha256(partial.read_bytes()).hexdigest() != digest:
            sys.exit(f"{url}: sha256 mismatch")
        partial.rename(archive)
    with tarfile.open(archive) as tar:
        data = tar.extractfile(f"llama_cpp_python-{SDIST_VERSION}/{member}").read()
    out.write_bytes(data)
    return out


def real_vocabulary(name: str, repeat: int = 1, model: str = "gpt2"):
    """Tokens (bytes), token types, merges (BPE) or scores (SentencePiece, `model` "spm") of a
    llama.cpp vocabulary file (each text `repeat` times), and its pre-tokenizer."""
    reader = gguf.GGUFReader(vocab_file(name))
    def strings(key):
        field = reader.fields[key]
        return [bytes(field.parts[i]) * repeat for i in field.data]
    types = reader.fields["tokenizer.ggml.token_type"]
    pre = reader.fields.get("tokenizer.ggml.pre")
    pre = None if pre is None else bytes(pre.parts[pre.data[0]]).decode()
    tokens = strings("tokenizer.ggml.tokens")
    if model == "spm":
        scores = reader.fields["tokenizer.ggml.scores"]
        pieces = [float(scores.parts[i][0]) for i in scores.data]
    else:
        pieces = strings("tokenizer.ggml.merges")
    return tokens, [int(types.parts[i][0]) for i in types.data], pieces, pre, model


def write(path: Path, vocabulary, n_layers: int, n_embd: int, n_ff: int) -> None:
    if isinstance(vocabulary, str):
        tokens, token_types, pieces, pre, model = real_vocabulary(vocabulary)
    else:
        tokens, token_types, pieces, pre, model = real_vocabulary(*vocabulary)
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name(path.stem)
    w.add_block_count(n_layers)
    w.add_context_length(32768)
    w.add_embedding_length(n_embd)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(32)
    w.add_head_count_kv(8)
    w.add_file_type(15)
    w.add_tokenizer_model("llama" if model == "spm" else "gpt2")
    if pre is not None:
        w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    if model == "spm":
        w.add_token_scores(pieces)
    w.add_token_types(token_types)
    if model != "spm":
        w.add_token_merges(pieces)
    w.add_chat_template("{% for m in messages %}{{ m['content'] }}{% endfor %}")
    data_bytes = 0
    names = ["attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down", "attn_norm", "ffn_norm", "attn_q.bias", "attn_k.bias", "attn_v.bias"]
    for layer in range(n_layers):
        for name in names:
            shape = (n_embd,) if "norm" in name or "bias" in name else (n_embd, n_embd)
            # Q4_K where rows hold whole 256-value blocks (Gemma 3 270M's 640 do not: Q8_0).
            block = gguf.GGMLQuantizationType.Q4_K if n_embd % 256 == 0 else gguf.GGMLQuantizationType.Q8_0
            dtype = gguf.GGMLQuantizationType.F32 if len(shape) == 1 else block
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
