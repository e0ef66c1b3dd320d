#!/usr/bin/env bash
# Runs the tests as WebAssembly under Node's built-in WASI (scripts/wasi-runner.mjs, wired up
# as cargo's runner in .cargo/config.toml): once as a plain (scalar) wasm32-wasip1 build, once
# with simd128 enabled, where the simd128 kernels must exist and equal the scalar ones bit for
# bit (REQUIRE_SIMD=1); that run takes the kernels' tests only (GGUF_LENS_WASM_ALL=1: all).
# Tests that spawn processes are compiled out on WASI.
# Idempotent: installs the rustup target if missing. Extra arguments go to `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=wasm32-wasip1
if ! command -v node >/dev/null 2>&1; then
  echo "test-wasm: node (>= 20) is needed to run WASI binaries" >&2
  exit 1
fi
if ! rustup target list --installed | grep -qx "$TARGET"; then
  echo "test-wasm: installing rustup target $TARGET"
  rustup target add "$TARGET"
fi

echo "== wasm32-wasip1, scalar"
# The unit tests in three processes: in one, Node 20's V8 (and 22's) dies with SIGSEGV on its own
# stack near the end of the run, after every test passed, whichever single test is left out;
# each part alone passes (a crash of the engine, not a test: wasm cannot reach native memory).
scalar() { env -u RUSTFLAGS cargo test --target "$TARGET" "$@"; }
scalar "$@" --lib -- quant:: quantize:: stats::
scalar "$@" --lib -- chat::
scalar "$@" --lib -- --skip quant:: --skip quantize:: --skip stats:: --skip chat::
scalar "$@" --test '*'

echo "== wasm32-wasip1, +simd128"
# Own target dir: different RUSTFLAGS would otherwise rebuild everything on each switch.
# The simd128 build differs from the scalar one in the kernels of quant/, quantize/, stats/,
# hash/, mlx/, bnb/, ct/ and safetensors/ alone: their unit tests and the kernel oracles
# (GGUF_LENS_WASM_ALL=1: everything).
simd() {
  RUSTFLAGS="-C target-feature=+simd128" CARGO_TARGET_DIR=target/wasm-simd128 REQUIRE_SIMD=1 \
    cargo test --target "$TARGET" "$@"
}
if [ "${GGUF_LENS_WASM_ALL:-0}" = 1 ]; then
  simd "$@"
else
  # Two processes, for the engine's crash at the end of a long run (see the scalar run).
  simd "$@" --lib -- quant:: quantize:: stats:: hash::
  simd "$@" --lib -- mlx:: bnb:: safetensors:: ct::
  simd "$@" --test simd_equivalence --test oracle_dequant --test differential_dequant \
    --test oracle_quantize --test oracle_hash --test oracle_mlx --test model_bnb \
    --test model_fp8 --test oracle_gptq --test model_ct
fi
echo "test-wasm: ok"
