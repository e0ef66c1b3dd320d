#!/usr/bin/env bash
# Cold-page benchmark (#31): headless Chromium, fresh context per run, 20 and 100 Mbit/s with
# 50 ms latency; the packed npm package (no bundler: index.bundle.js) vs @huggingface/gguf and a
# page that only fetches the range (the floor), JS and wasm served brotli-compressed as a CDN
# does; time to the first summary next to one exact Range request of the header, JS+wasm bytes
# before it, then the first tokenize / template / tensorStats / quantError. Headers from benches/make_headers.py (sparse
# files) and the small real model of scripts/real-model.sh when cached. Prints a Markdown table.
#   bash benches/bench-cold-page.sh [HEADER_NAME...]   (make_headers.py names; default
#     qwen-like llama3-like gemma3-like; huge-vocab is the >50 MB one)
# BENCH_RUNS=N (default 5), BENCH_PAGES=bundle,modules,hf,floor (default bundle,hf,floor),
# BENCH_COMPRESS=0 (identity). GGUF_LENS_TARBALL=path skips the npm build (a tarball already built).
# Needs a Python with PyPI gguf at $ORACLE_VENV (default: scripts/real-model.sh's venv, then
# /tmp/oracle/venv): header ends are gguf-py's data offsets, not the library's.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
VENV="${ORACLE_VENV:-}"
if [ -z "$VENV" ]; then
  for v in "$HOME/.cache/gguf-lens/real-model-venv" /tmp/oracle/venv; do
    [ -x "$v/bin/python" ] && VENV="$v" && break
  done
fi
[ -n "$VENV" ] || { echo "bench-cold-page: no Python venv with gguf (set ORACLE_VENV)" >&2; exit 1; }
if [ ! -d tools/node_modules/playwright-core ] || [ ! -d tools/node_modules/@huggingface/gguf ]; then
  (cd tools && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
fi
tarball="${GGUF_LENS_TARBALL:-}"
if [ -z "$tarball" ]; then
  bash scripts/setup.sh >&2
  tarball=$(bash scripts/build-npm.sh | tail -n 1)
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(qwen-like llama3-like gemma3-like)
"$VENV/bin/python" benches/make_headers.py "$work/headers" "${names[@]}" >&2
small="$HOME/.cache/gguf-lens/real-model/all-MiniLM-L6-v2-Q4_K.gguf"
[ -f "$small" ] && cp "$small" "$work/headers/"
ends=$("$VENV/bin/python" -c '
import json, os, sys, gguf
print(json.dumps({os.path.basename(p): int(gguf.GGUFReader(p).data_offset) for p in sys.argv[1:]}))' "$work"/headers/*.gguf)
(cd "$work" && npm init -y >/dev/null && npm pkg set type=module >/dev/null &&
  npm install --no-audit --no-fund --loglevel=error "$tarball" >/dev/null)
export GGUF_LENS_REPO="$repo" GGUF_LENS_PKG="$work/node_modules/gguf-lens" BENCH_HEADER_ENDS="$ends"
files=()
[ -f "$work/headers/all-MiniLM-L6-v2-Q4_K.gguf" ] && files+=("$work/headers/all-MiniLM-L6-v2-Q4_K.gguf")
for n in "${names[@]}"; do files+=("$work/headers/$n.gguf"); done
node benches/cold-page.mjs "${files[@]}"
