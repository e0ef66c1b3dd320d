#!/usr/bin/env bash
# `gguf-lens stats` on the end-to-end model (benches/make_e2e_model.py), 1 and 2 threads, with and
# without percentiles: median wall seconds and median CPU time (perf's task-clock, all threads) of
# 3 runs each. On a shared machine the CPU time is the steadier figure (on an idle one, wall ≈
# CPU / threads); give another build (e.g. main's) as an anchor measured in the same run.
#
#   bash benches/bench-stats-cpu.sh MODEL.gguf [ANCHOR_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
model="$1"
anchor="${2:-}"
cargo build --release --quiet
bin="$PWD/target/release/gguf-lens"
cat "$model" > /dev/null
n=134217728
run() { # label command...
  local label=$1 walls=() cpus=() s e
  shift
  for _ in 1 2 3; do
    cpus+=("$(perf stat -x, -e task-clock "$@" 2>&1 >/dev/null | grep task-clock | cut -d, -f1)")
    s=$(date +%s.%N); "$@" > /dev/null; e=$(date +%s.%N)
    walls+=("$(awk -v a="$s" -v b="$e" 'BEGIN { print b - a }')")
  done
  local w c
  w=$(printf '%s\n' "${walls[@]}" | sort -g | sed -n 2p)
  c=$(printf '%s\n' "${cpus[@]}" | sort -g | sed -n 2p)
  awk -v l="$label" -v w="$w" -v c="$c" -v n="$n" 'BEGIN { printf "| %s | %.3f | %.2f | %.0f | %.2f |\n", l, w, n / w / 1e9, c, n / (c / 1e3) / 1e9 }'
}
echo "| run | wall s | Gelem/s (wall) | CPU ms | Gelem per CPU-second |"
echo "|---|---|---|---|---|"
for t in big_q8_0.weight big_q4_k.weight; do
  for th in 1 2; do
    for extra in "" "--no-percentiles"; do
      [ -n "$anchor" ] && run "$t anchor stats $extra, $th thread(s)" "$anchor" stats "$model" "$t" --threads "$th" $extra
      run "$t stats $extra, $th thread(s)" "$bin" stats "$model" "$t" --threads "$th" $extra
    done
  done
  run "$t stats, 1 thread, scalar kernel" env GGUF_LENS_KERNEL=scalar "$bin" stats "$model" "$t" --threads 1
done
