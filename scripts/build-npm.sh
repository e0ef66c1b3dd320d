#!/usr/bin/env bash
# Builds the npm package: the crate for wasm32 with simd128 kernels (wasm-pack + wasm-bindgen,
# --target web), wasm-opt from the npm binaryen package (tools/), the hand-written ESM wrapper
# (js/) beside it in pkg/, and an installable tarball from `npm pack` in target/npm/.
# Prints the tarball's path on its last line. Run scripts/setup.sh first (test.sh does).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x tools/node_modules/.bin/wasm-opt ]; then
  (cd tools && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
fi

rm -rf pkg
# Own target dir: other RUSTFLAGS would otherwise rebuild everything on each switch.
RUSTFLAGS="-C target-feature=+simd128" CARGO_TARGET_DIR=target/wasm-web \
  wasm-pack --quiet build --release --target web --no-pack --out-dir pkg/wasm --out-name gguf_lens >&2
rm -f pkg/wasm/.gitignore pkg/wasm/*.d.ts pkg/wasm/package.json pkg/wasm/README.md

wasm=pkg/wasm/gguf_lens_bg.wasm
before=$(stat -c %s "$wasm")
tools/node_modules/.bin/wasm-opt "$wasm" -O3 -o "$wasm" \
  --enable-simd --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
  --enable-mutable-globals --enable-reference-types --enable-multivalue
echo "build-npm: wasm-opt $before -> $(stat -c %s "$wasm") bytes" >&2

cp js/*.js js/*.d.ts js/package.json pkg/
cp js/README.md pkg/README.md
cp LICENSE pkg/LICENSE
mkdir -p target/npm
rm -f target/npm/gguf-lens-*.tgz
(cd pkg && npm pack --silent --pack-destination ../target/npm >/dev/null)
ls "$PWD"/target/npm/gguf-lens-*.tgz
