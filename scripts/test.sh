#!/usr/bin/env bash
# Every test: formatting, lints, unit + integration tests (oracle fixtures, malformed inputs,
# CLI), and a bounded fuzz run. Run from anywhere; installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --all-targets --quiet -- -D warnings
echo "== cargo test"
cargo test --quiet
echo "== fuzz smoke run (${FUZZ_SECONDS:-30} s)"
bash scripts/fuzz.sh "${FUZZ_SECONDS:-30}"
