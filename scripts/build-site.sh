#!/usr/bin/env bash
# Builds the viewer into one folder of static files (default: site/):
#   www/*                              the page, worker and adapter
#   lite/engine.wasm                   gguf-lens's type table + dequantizer (viewer/engine), used
#                                      by the stand-in engine when the npm package is absent
#   pkg/                               the npm package's build, when there is one: $GGUF_LENS_PKG
#                                      or ./pkg (a folder whose index.js exports openGguf)
#   sample/tiny-llama-Q4_K_M.gguf      the bundled sample model, opened when no file is given
# usage: bash scripts/build-site.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-site}"
rm -rf "$out"
mkdir -p "$out/sample"
cp -R www/. "$out/"
cp fixtures/sample/tiny-llama-Q4_K_M.gguf "$out/sample/"
rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown >&2
( cd viewer/engine && RUSTFLAGS="-C target-feature=+simd128" cargo build --quiet --release --target wasm32-unknown-unknown )
cp viewer/engine/target/wasm32-unknown-unknown/release/gguf_lens_viewer_engine.wasm "$out/lite/engine.wasm"
pkg="${GGUF_LENS_PKG:-pkg}"
if [ -f "$pkg/index.js" ]; then
  mkdir -p "$out/pkg" && cp -R "$pkg/." "$out/pkg/"
  echo "site: using the npm package build from $pkg" >&2
else
  echo "site: no npm package build ($pkg/index.js); using the stand-in engine (www/lite)" >&2
fi
echo "site: built $out/" >&2
