#!/usr/bin/env bash
# Quantizer speed before and after a change, in the same run: examples/quantize_bench built at
# BASE (a git ref, exported with `git archive` into target/ab-base, sharing nothing with the work
# tree) and from the work tree, each native and as wasm32-wasip1 with simd128 under Node's WASI.
# The four binaries run interleaved ROUNDS times (default 3) on 1M values N(0, 0.02), each run
# the best of 5 by CPU time (GGUF_LENS_BENCH_CPU=1: the thread for native, the Node process for
# wasm), so a busy machine slows every column alike; the best per cell is printed in Gelem/s,
# with `uptime`'s load.
#
#   bash benches/bench-quantize-ab.sh BASE [TYPE...]      (default types: IQ4_NL IQ4_XS)
#
# Needs the oracle venv's numpy ($ORACLE_VENV, default /root/oracle-venv) and node.
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:?usage: bench-quantize-ab.sh BASE [TYPE...]}"
shift
types=("$@")
[ ${#types[@]} -gt 0 ] || types=(IQ4_NL IQ4_XS)
rounds="${ROUNDS:-3}"
venv="${ORACLE_VENV:-/root/oracle-venv}"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"

src=target/ab-base/src
commit=$(git rev-parse "$base^{commit}")
# Re-exported only when BASE changes (fresh files would rebuild the crate).
if [ "$(cat target/ab-base/commit 2>/dev/null)" != "$commit" ]; then
  rm -rf "$src" && mkdir -p "$src"
  git archive "$commit" | tar -x -C "$src"
  echo "$commit" >target/ab-base/commit
fi
build() { # DIR TARGET_DIR SIMD128_TARGET_DIR
  (cd "$1" && CARGO_TARGET_DIR="$2" cargo build --release --quiet --example quantize_bench &&
    RUSTFLAGS="-C target-feature=+simd128" CARGO_TARGET_DIR="$3" \
      cargo build --release --quiet --target wasm32-wasip1 --example quantize_bench)
}
build "$src" "$PWD/target/ab-base/target" "$PWD/target/ab-base/target-simd128"
# The work tree in its usual target directories (those benches/bench_quantize.py uses).
build . "$PWD/target" "$PWD/target/wasm-simd128"
input=target/ab-base/input.f32
"$venv/bin/python" -c 'import numpy as np, sys
(np.random.default_rng(0).standard_normal(1 << 20) * 0.02).astype(np.float32).tofile(sys.argv[1])' "$input"

declare -A best
run() { # NAME COMMAND...
  local name=$1
  shift
  while read -r ty secs _; do
    local key="$name $ty"
    if [ -z "${best[$key]:-}" ] || awk "BEGIN { exit !($secs < ${best[$key]}) }"; then
      best[$key]=$secs
    fi
  done < <(GGUF_LENS_BENCH_CPU=1 GGUF_LENS_BENCH_REPS=5 "$@")
}
for _ in $(seq "$rounds"); do
  for side in base new; do
    native=target/release/examples/quantize_bench
    wasm=target/wasm-simd128/wasm32-wasip1/release/examples/quantize_bench.wasm
    if [ $side = base ]; then
      native=target/ab-base/target/release/examples/quantize_bench
      wasm=target/ab-base/target-simd128/wasm32-wasip1/release/examples/quantize_bench.wasm
    fi
    run "native-$side" "$native" "$input" "${types[@]}"
    run "wasm-$side" node scripts/wasi-runner.mjs "$wasm" "$input" "${types[@]}"
  done
done
echo "1M values, one thread, CPU time, best of $rounds interleaved rounds (5 runs each); base $base;$(uptime | sed 's/.*load/ load/')"
echo "| type | native before | native after | × | wasm before | wasm after | × |"
echo "|---|---|---|---|---|---|---|"
for ty in "${types[@]}"; do
  awk -v n=1048576 -v ty="$ty" -v nb="${best[native-base $ty]}" -v na="${best[native-new $ty]}" \
    -v wb="${best[wasm-base $ty]}" -v wa="${best[wasm-new $ty]}" 'BEGIN {
      printf "| %s | %.3f | %.3f | %.1f | %.3f | %.3f | %.1f |\n", ty, n / nb / 1e9, n / na / 1e9,
        nb / na, n / wb / 1e9, n / wa / 1e9, wb / wa }'
done
rm -f "$input"
