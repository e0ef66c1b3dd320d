#!/usr/bin/env bash
# Tokenizer benchmark, one run: 1 MB of mixed text (English, code, CJK, emoji; written by
# benches/tokenize_text.py, seeded) through llama.cpp's BPE (llama-bpe, qwen2, gemma-4) and SPM
# (llama-spm) vocab files from its sdist, tokenized
#   - natively (cargo bench --bench tokenize),
#   - in wasm under Node (the npm package, built by scripts/build-npm.sh),
#   - by llama.cpp itself (llama-cpp-python 0.3.36, Llama(path, vocab_only=True).tokenize),
# MB/s medians of RUNS runs, token counts and id hashes (they must agree across the three);
# then open-to-first-token on gemma-4's 262,144-token vocabulary in headless Chromium.
#   bash benches/tokenize.sh [RUNS]        (ORACLE_VENV defaults to /root/oracle-venv)
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
RUNS="${1:-5}"
VENV="${ORACLE_VENV:-/root/oracle-venv}"
models="$(bash scripts/llama-sdist.sh)/models"
files=("$models/ggml-vocab-llama-bpe.gguf" "$models/ggml-vocab-qwen2.gguf"
  "$models/ggml-vocab-gemma-4.gguf" "$models/ggml-vocab-llama-spm.gguf")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 benches/tokenize_text.py "$work/text.txt"
echo "load: $(uptime | sed 's/.*load/load/')"
echo "# native"
cargo bench --quiet --bench tokenize -- "$work/text.txt" "$RUNS" "${files[@]}" 2>/dev/null
echo "# llama.cpp (llama-cpp-python)"
"$VENV/bin/python" benches/tokenize_llama.py "$work/text.txt" "$RUNS" "${files[@]}" 2>/dev/null
echo "# wasm (npm package)"
if [ -z "${TOKENIZE_BENCH_TARBALL:-}" ]; then
  TOKENIZE_BENCH_TARBALL=$(bash scripts/build-npm.sh | tail -n 1)
fi
cp benches/tokenize-npm.mjs "$work/"
(cd "$work" && npm init -y >/dev/null && npm pkg set type=module >/dev/null &&
  npm install --no-audit --no-fund --loglevel=error "$TOKENIZE_BENCH_TARBALL" >/dev/null)
cd "$work"
GGUF_LENS_REPO="$repo" node tokenize-npm.mjs "$work/text.txt" "$RUNS" "$models/ggml-vocab-gemma-4.gguf" "${files[@]}"
echo "load: $(uptime | sed 's/.*load/load/')"
