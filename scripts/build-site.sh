#!/usr/bin/env bash
# Builds the viewer into one folder of static files (default: site/):
#   www/*                              the page, worker and adapter
#   lite/engine.wasm                   gguf-lens's type table + dequantizer (viewer/engine), used
#                                      by the stand-in engine when the npm package is absent
#   pkg/                               the npm package's build, when there is one (below)
#   engine.json                        {"package": true|false}: which engine source.js loads
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
# The npm package (branch npm: js/*.js + js/wasm/gguf_lens.js + js/wasm/gguf_lens_bg.wasm):
# $GGUF_LENS_PKG, else ./js once its wasm is built, else ./pkg.
pkg="${GGUF_LENS_PKG:-}"
if [ -z "$pkg" ]; then
  for d in js pkg; do
    if [ -f "$d/index.js" ] && [ -f "$d/wasm/gguf_lens_bg.wasm" ]; then pkg="$d"; break; fi
  done
fi
if [ -n "$pkg" ] && [ -f "$pkg/index.js" ]; then
  mkdir -p "$out/pkg"
  cp "$pkg"/*.js "$out/pkg/"
  [ -d "$pkg/wasm" ] && cp -R "$pkg/wasm" "$out/pkg/wasm"
  echo '{"package": true}' > "$out/engine.json"
  echo "site: engine = the npm package from $pkg" >&2
else
  echo '{"package": false}' > "$out/engine.json"
  echo "site: engine = the stand-in (www/lite): no npm package build found (js/wasm/gguf_lens_bg.wasm)" >&2
fi
echo "site: built $out/" >&2
