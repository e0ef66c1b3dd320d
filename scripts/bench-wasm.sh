#!/usr/bin/env bash
# Dequantization throughput as WebAssembly under Node: examples/bench_dequant_wasm built
# without simd128 (plain scalar wasm) and with it (scalar kernels, auto-vectorized by LLVM, and
# the simd128 kernels). Arguments go to the example: [ELEMENTS [TYPE...]].
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=wasm32-wasip1
if ! rustup target list --installed | grep -qx "$TARGET"; then
  rustup target add "$TARGET"
fi
echo "== wasm32-wasip1, no simd128"
env -u RUSTFLAGS cargo run -q --release --target "$TARGET" --example bench_dequant_wasm -- "$@"
echo "== wasm32-wasip1, +simd128"
RUSTFLAGS="-C target-feature=+simd128" CARGO_TARGET_DIR=target/wasm-simd128 \
  cargo run -q --release --target "$TARGET" --example bench_dequant_wasm -- "$@"
