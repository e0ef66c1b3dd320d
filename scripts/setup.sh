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
# The npm package: the wasm32 target, wasm-bindgen-cli at the version Cargo.toml pins (the build
# runs cargo and wasm-bindgen itself: wasm-pack cannot pass --experimental-reset-state-function),
# the build/test/bench tools (tools/package.json: binaryen's wasm-opt, playwright-core, webpack and
# Vite for the bundler test, the
# @huggingface/gguf baseline) and Debian's Chromium for the browser tests. Nothing downloads a
# browser or binaryen on its own.
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  echo "setup: installing rustup target wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi
bindgen_version=$(sed -n 's/^wasm-bindgen = "=\(.*\)"/\1/p' Cargo.toml)
if [ "$(wasm-bindgen --version 2>/dev/null | cut -d' ' -f2)" != "$bindgen_version" ]; then
  echo "setup: installing wasm-bindgen-cli $bindgen_version (a few minutes)"
  cargo install wasm-bindgen-cli --version "$bindgen_version" --force --quiet
fi
if ! have node || ! have npm; then
  echo "setup: node and npm are needed for the npm package" >&2
  exit 1
fi
if [ ! -d tools/node_modules ] || [ tools/package-lock.json -nt tools/node_modules ]; then
  echo "setup: installing tools/ (npm ci)"
  (cd tools && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
fi
if [ ! -x /usr/bin/chromium ]; then
  echo "setup: installing chromium (apt) for the browser tests"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
# scripts/real-model.sh makes a venv (the viewer's real-model test); Debian's python3 has no venv
# module without python3-venv.
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  echo "setup: installing python3-venv (apt) for scripts/real-model.sh"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
fi
echo "setup: ok"
