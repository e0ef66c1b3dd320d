#!/usr/bin/env bash
# Builds the npm package: the crate for wasm32 with simd128 kernels and a scalar fallback
# (cargo + wasm-bindgen, --target web), wasm-opt from the npm binaryen package (tools/), the hand-written ESM wrapper
# (js/) beside it in pkg/ with its declarations generated from the JSDoc (tsc, tools/), and an
# installable tarball from `npm pack` in target/npm/.
# Prints the tarball's path on its last line. Run scripts/setup.sh first (test.sh does).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x tools/node_modules/.bin/wasm-opt ]; then
  (cd tools && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
fi

# Two builds of the same crate: with simd128 (what engines with SIMD load) and without (the
# fallback js/wasm.js picks where WebAssembly.validate refuses a SIMD instruction). Own target
# dirs: other RUSTFLAGS would otherwise rebuild everything on each switch. wasm-bindgen runs
# itself (wasm-pack passes it no flags) with --experimental-reset-state-function: the glue's
# __wbg_reset_state, with which js/wasm.js replaces an instance that trapped.
bindgen() { # target dir, out dir[, --no-typescript[, out name]]
  wasm-bindgen --target web ${3:-} --experimental-reset-state-function \
    --out-dir "$2" --out-name "${4:-gguf_lens}" "$1/wasm32-unknown-unknown/release/gguf_lens.wasm"
}
RUSTFLAGS="-C target-feature=+simd128" CARGO_TARGET_DIR=target/wasm-web \
  cargo build --quiet --release --lib --target wasm32-unknown-unknown >&2
env -u RUSTFLAGS CARGO_TARGET_DIR=target/wasm-web-scalar \
  cargo build --quiet --release --lib --target wasm32-unknown-unknown >&2
# The core module (the header path; js/wasm.js loads the full one on first use of anything else):
# no SIMD code in it, so one build serves every engine.
env -u RUSTFLAGS CARGO_TARGET_DIR=target/wasm-core \
  cargo build --quiet --release --lib --target wasm32-unknown-unknown --no-default-features >&2
# Unchanged inputs (both modules as cargo left them, the wrapper, this script): the last
# package stands, without another wasm-opt and compression (the tests and the site build
# each ask for the package).
stamp=$(cat target/wasm-web/wasm32-unknown-unknown/release/gguf_lens.wasm \
  target/wasm-web-scalar/wasm32-unknown-unknown/release/gguf_lens.wasm \
  target/wasm-core/wasm32-unknown-unknown/release/gguf_lens.wasm \
  js/* LICENSE "$0" scripts/precompress.mjs scripts/bundle.mjs scripts/dts-docs.mjs tools/package-lock.json <(wasm-bindgen --version) | sha256sum | cut -d' ' -f1)
tarball=$(ls "$PWD"/target/npm/gguf-lens-*.tgz 2>/dev/null | head -n 1 || true)
if [ -n "$tarball" ] && [ -d pkg/wasm ] && [ "$(cat target/npm/stamp 2>/dev/null)" = "$stamp" ]; then
  echo "build-npm: up to date" >&2
  echo "$tarball"
  exit 0
fi
rm -rf pkg target/npm/stamp
bindgen target/wasm-web pkg/wasm --no-typescript
bindgen target/wasm-web-scalar pkg/wasm-scalar --no-typescript
# One JS glue serves both modules (the same exports and imports): checked, then the scalar
# module moves beside the other.
if ! cmp -s pkg/wasm/gguf_lens.js pkg/wasm-scalar/gguf_lens.js; then
  echo "build-npm: the simd128 and scalar builds need different JS glue" >&2
  exit 1
fi
mv pkg/wasm-scalar/gguf_lens_bg.wasm pkg/wasm/gguf_lens_scalar_bg.wasm
rm -rf pkg/wasm-scalar
bindgen target/wasm-core pkg/wasm --no-typescript gguf_lens_core
rm -f pkg/wasm/.gitignore pkg/wasm/*.d.ts pkg/wasm/package.json pkg/wasm/README.md
# The glue's types, for tsc over the package (pkg/tsconfig.json, below) and shipped beside the
# glue for the declarations that name its handles (internal.d.ts), from a second run: the
# shipped glue stays the one without types (it names no .d.ts).
types=$(mktemp -d)
bindgen target/wasm-web "$types"
bindgen target/wasm-core "$types" "" gguf_lens_core
mv "$types/gguf_lens.d.ts" "$types/gguf_lens_core.d.ts" pkg/wasm/
rm -rf "$types"

for wasm in pkg/wasm/gguf_lens_bg.wasm pkg/wasm/gguf_lens_scalar_bg.wasm pkg/wasm/gguf_lens_core_bg.wasm; do
  before=$(stat -c %s "$wasm")
  tools/node_modules/.bin/wasm-opt "$wasm" -O3 -o "$wasm" \
    --enable-simd --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types --enable-multivalue
  echo "build-npm: wasm-opt $wasm $before -> $(stat -c %s "$wasm") bytes" >&2
done

# Precompressed copies beside each module (node:zlib; nothing at run time): what a static server
# sends with Content-Encoding (docs/js-api.md, "Serving the wasm").
node scripts/precompress.mjs pkg/wasm/gguf_lens_bg.wasm pkg/wasm/gguf_lens_scalar_bg.wasm pkg/wasm/gguf_lens_core_bg.wasm >&2

cp js/*.js js/*.d.ts js/package.json pkg/
# The published declarations, generated from the modules' JSDoc: tsc checks them (strict; an
# error fails the build) and writes a .d.ts beside each module (pkg/tsconfig.json).
# dts-docs.mjs then puts each typedef's description on its type (a tsc 7 emit bug).
cp js/tsconfig.json pkg/
generated=$(cd js && ls ./*.js | sed 's/\.js$/.d.ts/')
node tools/node_modules/typescript/bin/tsc -p pkg
(cd pkg && node ../scripts/dts-docs.mjs $generated)
# types.js holds typedefs alone, now in types.d.ts: shipped without them (index.js imports it).
printf '// The public data shapes: types only (types.d.ts, generated from js/types.js).\nexport {};\n' >pkg/types.js
# The single-file browser builds (index.bundle.js, preview.bundle.js) for pages without a
# bundler, and their precompressed copies.
node scripts/bundle.mjs pkg >&2
node scripts/precompress.mjs pkg/index.bundle.js pkg/preview.bundle.js >&2
cp js/README.md pkg/README.md
cp LICENSE pkg/LICENSE
mkdir -p target/npm
rm -f target/npm/gguf-lens-*.tgz
(cd pkg && npm pack --silent --pack-destination ../target/npm >/dev/null)
echo "$stamp" >target/npm/stamp
ls "$PWD"/target/npm/gguf-lens-*.tgz
