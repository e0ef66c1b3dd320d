#!/usr/bin/env bash
# Header benchmark of the npm package against @huggingface/gguf (tools/package.json pins it):
# headers made by benches/make_headers.py from llama.cpp's real vocabularies (Qwen2, Llama 3,
# Gemma 3 270M's and DeepSeek 7B's shapes, and a >50 MB header; sparse files): time to summary
# from memory and through a local HTTP server (0 / 50 ms latency, next to one exact range
# request; and one that ignores Range), then parse time from memory in Node and in headless
# Chromium. Prints two Markdown tables (the README has the last ones).
#   bash benches/bench-npm.sh [HEADER_NAME...]    (names from make_headers.py; default all)
# BENCH_MODES=link keeps the 50 ms / 100 Mbit/s rows only; BENCH_RUNS=N runs each N times.
# Needs the oracle venv with PyPI gguf (fixtures/setup.sh) at $ORACLE_VENV (default /tmp/oracle/venv).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
VENV="${ORACLE_VENV:-/tmp/oracle/venv}"
bash scripts/setup.sh >&2
tarball=$(bash scripts/build-npm.sh | tail -n 1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$VENV/bin/python" benches/make_headers.py "$work/headers" "$@" >&2
cp benches/npm-header-bench.mjs benches/npm-header-one.mjs benches/npm-parse-bench.mjs "$work/"
(cd "$work" && npm init -y >/dev/null && npm pkg set type=module >/dev/null &&
  npm install --no-audit --no-fund --loglevel=error "$tarball" >/dev/null)
cd "$work"
export GGUF_LENS_REPO="$repo" HF_GGUF="$repo/tools/node_modules/@huggingface/gguf/dist/index.mjs"
node npm-header-bench.mjs headers/*.gguf
echo
node npm-parse-bench.mjs $(ls headers/*.gguf | grep -v huge-vocab)
