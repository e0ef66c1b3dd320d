#!/usr/bin/env bash
# `gguf-lens stats` as wasm32-wasip1 (+simd128) under Node's WASI, 1 thread, on the end-to-end
# model's big_q4_k.weight (134M values; another tensor as a 4th argument): median CPU seconds (user + sys, /usr/bin/time) of 5 runs,
# alternating with an anchor build (e.g. main's) so both see the same machine load. The first
# line is the fixed cost (Node start, wasm compile: `--version`), to subtract.
#
#   RUSTFLAGS="-C target-feature=+simd128" CARGO_TARGET_DIR=target/wasm-simd128 \
#     cargo build --release --target wasm32-wasip1 --bin gguf-lens
#   bash benches/bench-stats-wasm.sh MODEL.gguf THIS.wasm ANCHOR.wasm [TENSOR]
set -euo pipefail
runner="$(cd "$(dirname "$0")/.." && pwd)/scripts/wasi-runner.mjs"
model_dir=$(dirname "$(realpath "$1")")
model=$(basename "$1")
this=$(realpath "$2")
anchor=$(realpath "$3")
tensor="${4:-big_q4_k.weight}"
cd "$model_dir" # the runner preopens the current directory
cpu() { /usr/bin/time -f "%U %S" node "$runner" "$@" 2>&1 >/dev/null | tail -1 | awk '{ print $1 + $2 }'; }
median() { sort -g | sed -n 3p; }
for extra in "--version" "stats $model $tensor" "stats $model $tensor --no-percentiles"; do
  a=() t=()
  for _ in 1 2 3 4 5; do
    # shellcheck disable=SC2086
    a+=("$(cpu "$anchor" $extra)")
    # shellcheck disable=SC2086
    t+=("$(cpu "$this" $extra)")
  done
  am=$(printf '%s\n' "${a[@]}" | median)
  tm=$(printf '%s\n' "${t[@]}" | median)
  awk -v l="$extra" -v a="$am" -v t="$tm" \
    'BEGIN { printf "| %s | %.2f | %.2f | %.2f× |\n", l, a, t, a / t }'
done
