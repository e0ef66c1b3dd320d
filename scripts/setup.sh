#!/usr/bin/env bash
# Installs what the build and the tests need. Idempotent: each step checks before it installs.
set -euo pipefail
cd "$(dirname "$0")/.."

have() { command -v "$1" >/dev/null 2>&1; }

if ! have cargo; then
  echo "setup: cargo is missing; this project needs a Rust toolchain (rustup)" >&2
  exit 1
fi

# Fuzzing needs cargo-fuzz and a nightly compiler (sanitizers are nightly-only).
if ! have cargo-fuzz; then
  echo "setup: installing cargo-fuzz"
  cargo install cargo-fuzz --locked --quiet
fi
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  echo "setup: installing the nightly toolchain for cargo-fuzz"
  rustup toolchain install nightly --profile minimal || echo "setup: no nightly; fuzz will use RUSTC_BOOTSTRAP"
fi
echo "setup: ok"
