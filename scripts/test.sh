#!/usr/bin/env bash
# Every test: formatting, lints, unit + integration tests (oracle fixtures, malformed inputs,
# CLI) natively (AVX2 where the CPU has it), for aarch64 under qemu (NEON) and for wasm32 under
# Node (scalar and simd128), the npm package (packed tarball under Node and headless Chromium),
# and a bounded fuzz run. Run from anywhere; installs what it needs first.
set -euo pipefail
# pipefail: a failing cargo test fails the pipe through tee.
cd "$(dirname "$0")/.."
# `bash scripts/test.sh quick`: the tier to run while changing code (a few minutes): module graph,
# fmt, clippy, the native unit + oracle + CLI tests, and the npm package's Node suites once.
# The full run (no argument) is what CI runs.
tier="${1:-full}"
case "$tier" in
  quick | full) ;;
  *) echo "usage: bash scripts/test.sh [quick]" >&2; exit 2 ;;
esac
# Each stage's time, printed with its heading and summed up at the end (the budget is 45 minutes
# on 2 cores, setup included).
stage_names=()
stage_secs=()
stage_start=$SECONDS
stage() {
  stage_end
  stage_names+=("$1")
  stage_start=$SECONDS
  echo "== $1"
}
stage_end() {
  [ "${#stage_names[@]}" -gt 0 ] && stage_secs+=($((SECONDS - stage_start)))
  return 0
}
stage_report() {
  stage_end
  local i
  for i in "${!stage_names[@]}"; do
    printf 'time: %5d s  %s\n' "${stage_secs[$i]}" "${stage_names[$i]}"
  done
  printf 'time: %5d s  in all\n' "$SECONDS"
}
stage "set-up (scripts/setup.sh)"
bash scripts/setup.sh
# A full run builds every target once: incremental caches would only take disk (CI's is small).
if [ "$tier" = full ]; then
  export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
fi

stage "module graph: no Rust or JS module imports one that imports it back"
python3 scripts/check-cycles.py
stage "cargo fmt --check"
cargo fmt --all -- --check
stage "cargo clippy"
cargo clippy --all-targets --quiet -- -D warnings
cargo clippy --target wasm32-unknown-unknown --lib --quiet -- -D warnings
# The core module (the header path alone: js/wasm.js loads it first).
cargo clippy --target wasm32-unknown-unknown --lib --no-default-features --quiet -- -D warnings
# llama.cpp's vocabularies and chat templates (llama-cpp-python's sdist, sha256-checked, cached):
# the Rust, npm and viewer tests read them as real inputs.
stage "llama.cpp sdist (tokenizer vectors; tests fail without it under CI)"
bash scripts/llama-sdist.sh >/dev/null
stage "cargo test"
log=$(mktemp)
cargo test --quiet 2>&1 | tee "$log"
if [ "$tier" = quick ]; then
  echo "== npm package: Node suites (quick tier)"
  GGUF_LENS_NPM_SUITES=node bash scripts/test-npm.sh 2>&1 | tee -a "$log"
  awk '/^test result:/ { p += $4; f += $6 } /^# pass / { p += $3 } /^# fail / { f += $3 }
       END { printf "quick: %d passed, %d failed\n", p, f }' "$log"
  stage_report
  exit 0
fi
stage "NEON kernels: aarch64 build under qemu"
bash scripts/test-neon.sh --quiet 2>&1 | tee -a "$log"
stage "wasm: scalar and simd128 builds under Node"
bash scripts/test-wasm.sh 2>&1 | tee -a "$log"
stage "npm package: packed tarball under Node and headless Chromium"
bash scripts/test-npm.sh 2>&1 | tee -a "$log"
stage "viewer: headless Chromium (pkg-tests/viewer)"
bash pkg-tests/viewer/run.sh
stage "fuzz smoke run (${FUZZ_SECONDS:-30} s)"
bash scripts/fuzz.sh "${FUZZ_SECONDS:-30}"
# One closing line for the whole run (cargo prints one per test binary).
# node --test ends with "# pass N" / "# fail N".
awk '/^test result:/ { p += $4; f += $6 } /^# pass / { p += $3 } /^# fail / { f += $3 }
     END { printf "tests: %d passed, %d failed\n", p, f }' "$log"
stage_report
