#!/usr/bin/env bash
# Every test: formatting, lints, unit + integration tests (oracle fixtures, malformed inputs,
# CLI) natively (AVX2 where the CPU has it), for aarch64 under qemu (NEON) and for wasm32 under
# Node (scalar and simd128), and a bounded fuzz run. Run from anywhere; installs what it needs first.
set -euo pipefail
# pipefail: a failing cargo test fails the pipe through tee.
cd "$(dirname "$0")/.."
bash scripts/setup.sh

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --all-targets --quiet -- -D warnings
echo "== cargo test"
log=$(mktemp)
cargo test --quiet 2>&1 | tee "$log"
echo "== NEON kernels: aarch64 build under qemu"
bash scripts/test-neon.sh --quiet 2>&1 | tee -a "$log"
echo "== wasm: scalar and simd128 builds under Node"
bash scripts/test-wasm.sh 2>&1 | tee -a "$log"
echo "== viewer: headless Chromium (pkg-tests/viewer)"
bash pkg-tests/viewer/run.sh
(cd viewer/engine && cargo fmt -- --check && cargo clippy --quiet --target wasm32-unknown-unknown -- -D warnings)
echo "== fuzz smoke run (${FUZZ_SECONDS:-30} s)"
bash scripts/fuzz.sh "${FUZZ_SECONDS:-30}"
# One closing line for the whole run (cargo prints one per test binary).
awk '/^test result:/ { p += $4; f += $6 } END { printf "tests: %d passed, %d failed\n", p, f }' "$log"
