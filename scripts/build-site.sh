#!/usr/bin/env bash
# Builds the viewer into one folder of static files (default: site/):
#   www/*                              the page, its panels and the worker
#   pkg/                               the npm package's build (scripts/build-npm.sh)
#   sample/tiny-llama-Q4_K_M.gguf      the bundled sample model, opened when no file is given
# usage: bash scripts/build-site.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-site}"
rm -rf "$out"
mkdir -p "$out/sample"
cp -R www/. "$out/"
cp fixtures/sample/tiny-llama-Q4_K_M.gguf "$out/sample/"
# The npm package (scripts/build-npm.sh makes pkg/: the ESM wrapper and its wasm).
bash scripts/build-npm.sh >/dev/null
mkdir -p "$out/pkg"
cp pkg/*.js "$out/pkg/"
cp -R pkg/wasm "$out/pkg/wasm"
echo "site: built $out/" >&2
