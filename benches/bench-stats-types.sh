#!/usr/bin/env bash
# `gguf-lens stats` on a 128M-value tensor of every type ggml can quantize (the files made by
# benches/make_stats_types.py into $STATS_BENCH_DIR, default /tmp/gguf-lens-stats-bench, reused
# when present), beside `gguf-lens dequant -o /dev/null` of the same tensor and the anchor of
# benches/stats_anchor.py (ggml's to_float + numpy moments and histogram, one thread), all in the
# same run. Median of $RUNS (3) runs of wall time and of CPU time (perf's task-clock, all
# threads); on a shared machine the CPU time is the steadier figure. Give another build (e.g.
# main's) to measure it beside. $ORACLE_PYTHON: the Python with gguf, numpy and llama_cpp's ggml
# (default /root/oracle-venv/bin/python).
#
#   bash benches/bench-stats-types.sh [OTHER_GGUF_LENS_BINARY] [TYPE,TYPE,...]
set -euo pipefail
cd "$(dirname "$0")/.."
other="${1:-}"
types="${2:-}"
runs="${RUNS:-3}"
dir="${STATS_BENCH_DIR:-/tmp/gguf-lens-stats-bench}"
py="${ORACLE_PYTHON:-/root/oracle-venv/bin/python}"
cargo build --release --quiet --bin gguf-lens
bin="$PWD/target/release/gguf-lens"
$py benches/make_stats_types.py "$dir" ${types:+"$types"}
n=134217728
# median wall seconds and CPU seconds of `$runs` runs of a command.
measure() {
  local walls=() cpus=() s e c
  for _ in $(seq "$runs"); do
    s=$(date +%s.%N)
    c=$(perf stat -x, -e task-clock "$@" 2>&1 >/dev/null | grep task-clock | cut -d, -f1)
    e=$(date +%s.%N)
    walls+=("$(awk -v a="$s" -v b="$e" 'BEGIN { print b - a }')")
    cpus+=("$(awk -v c="$c" 'BEGIN { print c / 1e3 }')")
  done
  printf '%s %s\n' "$(printf '%s\n' "${walls[@]}" | sort -g | sed -n "$(((runs + 1) / 2))p")" \
    "$(printf '%s\n' "${cpus[@]}" | sort -g | sed -n "$(((runs + 1) / 2))p")"
}
# "Gelem/s of wall time / Gelem per CPU-second" of a measurement.
cell() { awk -v w="$1" -v c="$2" -v n="$n" 'BEGIN { printf "%.2f / %.2f", n / w / 1e9, n / c / 1e9 }'; }
echo "cells: Gelem/s of wall time / Gelem per CPU-second (perf task-clock, all threads)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
if [ -n "$other" ]; then
  echo "| type | stats Gelem/s | other build's stats | dequant -o /dev/null | ggml to_float + numpy (1 thread) |"
  echo "|---|---|---|---|---|"
else
  echo "| type | stats Gelem/s | dequant -o /dev/null | ggml to_float + numpy (1 thread) |"
  echo "|---|---|---|---|"
fi
list="${types:-$($py -c 'import sys; sys.path.insert(0, "benches"); import make_stats_types as m; print(m.TYPES)')}"
for t in ${list//,/ }; do
  f="$dir/$t.gguf"
  cat "$f" > /dev/null
  read -r sw sc < <(measure "$bin" stats "$f" t)
  row="| $t | $(cell "$sw" "$sc") |"
  if [ -n "$other" ]; then
    read -r ow oc < <(measure "$other" stats "$f" t)
    row="$row $(cell "$ow" "$oc") |"
  fi
  read -r dw dc < <(measure "$bin" dequant "$f" t -o /dev/null)
  read -r aw ac < <($py benches/stats_anchor.py "$f" t)
  echo "$row $(cell "$dw" "$dc") | $(cell "$aw" "$ac") |"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
