#!/usr/bin/env bash
# Builds for aarch64 and runs the kernels' tests under qemu user-mode emulation, with the NEON
# kernels required (REQUIRE_SIMD=1); `--all` runs the whole suite. Idempotent: installs the rustup target and the Debian
# packages gcc-aarch64-linux-gnu, libc6-dev-arm64-cross (the aarch64 C runtime the linker needs:
# crti.o, Scrt1.o, libc) and qemu-user-static only when they are missing. Recommended packages
# are installed too: libc6-dev-arm64-cross is only a recommendation of gcc-aarch64-linux-gnu.
# .cargo/config.toml names the linker and the qemu runner.
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=aarch64-unknown-linux-gnu

if ! rustup target list --installed | grep -qx "$TARGET"; then
    rustup target add "$TARGET"
fi

missing=()
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || missing+=(gcc-aarch64-linux-gnu)
[ -e /usr/aarch64-linux-gnu/lib/crti.o ] || missing+=(libc6-dev-arm64-cross)
command -v qemu-aarch64-static >/dev/null 2>&1 || missing+=(qemu-user-static)
if [ "${#missing[@]}" -gt 0 ]; then
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        sudo="sudo"
    fi
    $sudo apt-get update
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y "${missing[@]}"
fi

if [ ! -e /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ]; then
    echo "error: no aarch64 sysroot at /usr/aarch64-linux-gnu (from gcc-aarch64-linux-gnu's libc6-dev-arm64-cross)" >&2
    exit 1
fi

# What differs on aarch64 is the NEON kernels (src/quant/); the rest is the same 64-bit
# little-endian Rust the native run tests, and under qemu it would take most of the budget.
# `--all` runs every test here too.
if [ "${1:-}" = --all ]; then
    shift
    REQUIRE_SIMD=1 cargo test --target "$TARGET" "$@"
    exit 0
fi
REQUIRE_SIMD=1 cargo test --target "$TARGET" "$@" --lib -- quant::
REQUIRE_SIMD=1 cargo test --target "$TARGET" "$@" \
    --test simd_equivalence --test oracle_dequant --test differential_dequant --test cli_stats_types
