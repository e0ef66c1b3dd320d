"""A tiny pair of GGUF files (A, B) whose metadata arrays differ past their first 8 items, for the
Compare panel's full-array comparison and its exports. Written with gguf-py's GGUFWriter.

A vs B: tokens differ at 1000, 1500 and 1999 (of 2000); scores at 777 and 1234; token types are
equal; merges are equal but B has 3 more; a u64 array differs at 50 past 2^53; a bool array at
40; one array is uint32 in A and int32 in B; the name and context length differ; tensor `w` differs slightly and
`only_a` is only in A.

usage: .venv/bin/python pkg-tests/viewer/make_compare_arrays.py
       → pkg-tests/viewer/fixtures/arrays-a.gguf, arrays-b.gguf
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import gguf
from gguf import GGUFValueType as T

HERE = Path(__file__).resolve().parent
N_TOKENS, N_MERGES = 2000, 600


def finish(w: gguf.GGUFWriter) -> None:
    """Writes the file's header, metadata and tensors, and closes it."""
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write(side: str) -> None:
    b = side == "b"
    w = gguf.GGUFWriter(str(HERE / "fixtures" / f"arrays-{side}.gguf"), "llama")
    w.add_name(f"arrays {side.upper()}")
    w.add_uint32("general.file_type", 0)
    w.add_context_length(128 if b else 64)
    w.add_block_count(1)
    w.add_vocab_size(N_TOKENS)
    w.add_tokenizer_model("gpt2")
    tokens = [f"tok{i}" for i in range(N_TOKENS)]
    tokens[3] = "Ġthe"
    if b:
        tokens[1000] = "TOK1000"
        tokens[1500] = "tok1500-longer"
        tokens[1999] = "ünïcödé"
    w.add_token_list(tokens)
    scores = [float(-i) for i in range(N_TOKENS)]
    if b:
        scores[777] += 0.5
        scores[1234] = 1.25
    w.add_token_scores(scores)
    w.add_token_types([1] * N_TOKENS)
    merges = [f"t{i} k{i}" for i in range(N_MERGES)]
    w.add_token_merges(merges + (["x y", "y z", "z w"] if b else []))
    big = [2**60 + i for i in range(100)]
    if b:
        big[50] += 2
    w.add_key_value("test.u64s", big, T.ARRAY, sub_type=T.UINT64)
    flags = [i % 3 == 0 for i in range(64)]
    if b:
        flags[40] = not flags[40]
    w.add_key_value("test.bools", flags, T.ARRAY, sub_type=T.BOOL)
    w.add_key_value("test.retyped", list(range(1, 21)), T.ARRAY, sub_type=T.INT32 if b else T.UINT32)
    rng = np.random.default_rng(7)
    wt = rng.standard_normal((4, 8)).astype(np.float32)
    if b:
        wt[1, 2] += 0.25
    w.add_tensor("w", wt)
    if not b:
        w.add_tensor("only_a", np.arange(8, dtype=np.float32))
    finish(w)


if __name__ == "__main__":
    write("a")
    write("b")
    print("wrote arrays-a.gguf, arrays-b.gguf")
