"""llama.cpp's own tokenizer on the benchmark text, through llama-cpp-python (vocab_only):
median MB/s of `tokenize(text, add_bos=True, special=False)`, token count and an FNV hash of
the ids (same as benches/tokenize.rs prints), one JSON line per file.
    python benches/tokenize_llama.py TEXT_FILE RUNS GGUF...
"""
import json
import statistics
import sys
import time

from llama_cpp import Llama


def fnv(ids):
    h = 0xCBF29CE484222325
    for i in ids:
        for b in (i & 0xFFFFFFFF).to_bytes(4, "little"):
            h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def main():
    text = open(sys.argv[1], "rb").read()
    runs = int(sys.argv[2])
    for path in sys.argv[3:]:
        t0 = time.perf_counter()
        llm = Llama(path, vocab_only=True, verbose=False)
        llm.tokenize(b"Hello", add_bos=True, special=False)
        first_ms = (time.perf_counter() - t0) * 1e3
        ids = llm.tokenize(text, add_bos=True, special=False)
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            llm.tokenize(text, add_bos=True, special=False)
            times.append(time.perf_counter() - t)
        print(json.dumps({"file": path, "mb_s": round(len(text) / 1e6 / statistics.median(times), 2),
                          "tokens": len(ids), "hash": f"{fnv(ids):016x}",
                          "first_ms": round(first_ms, 1)}), flush=True)


main()
