#!/usr/bin/env bash
# End-to-end speed of the paths users touch, on a generated model with one 134M-element Q8_0 and
# one 134M-element Q4_K tensor (benches/make_e2e_model.py), file in the page cache, medians:
#   native `gguf-lens dequant -o /dev/null` and `stats` (1 and 2 threads; vector and scalar
#   kernels), npm `tensorStats` / `readTensor` in Node from a local path (readTensor in a process
#   of its own: first calls, this thread and workers), and the anchors measured
#   in the same run: gguf-py (numpy dequant, + numpy stats) and ggml's to_float.
#
#   bash benches/bench-e2e.sh [--runs 3] [--keep DIR]
#
# Needs the oracle venv (fixtures/setup.sh) at $ORACLE_VENV (default /root/oracle-venv) and the
# npm tools (scripts/setup.sh). Prints one Markdown table; docs/benchmarks.md has the last one.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
VENV="${ORACLE_VENV:-/root/oracle-venv}"
runs=3
dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --keep) dir="$2"; shift 2 ;;
    *) echo "usage: benches/bench-e2e.sh [--runs N] [--keep DIR]" >&2; exit 2 ;;
  esac
done
if [ -z "$dir" ]; then
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
fi
model="$dir/e2e.gguf"
[ -f "$model" ] || "$VENV/bin/python" benches/make_e2e_model.py "$model" >&2
cargo build --release --quiet
bin="$repo/target/release/gguf-lens"
cat "$model" > /dev/null # into the page cache

# median seconds of `runs` runs of a command
median() {
  local times=()
  for _ in $(seq "$runs"); do
    local start end
    start=$(date +%s.%N)
    "$@" > /dev/null
    end=$(date +%s.%N)
    times+=("$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')")
  done
  printf '%s\n' "${times[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

tarball=$(bash scripts/build-npm.sh 2>/dev/null | tail -n 1)
project=$(mktemp -d)
(cd "$project" && npm init -y >/dev/null && npm pkg set type=module >/dev/null &&
  npm install --no-audit --no-fund --loglevel=error "$tarball" >/dev/null 2>&1)
cp benches/npm-stats-bench.mjs benches/npm-read-bench.mjs "$project/"

echo "| tensor | path | seconds | Gelem/s |"
echo "|---|---|---|---|"
row() { awk -v t="$1" -v p="$2" -v s="$3" 'BEGIN { printf "| %s | %s | %.3f | %.2f |\n", t, p, s, 134217728 / s / 1e9 }'; }
for tensor in big_q8_0.weight big_q4_k.weight; do
  for threads in 1 2; do
    row "$tensor" "gguf-lens dequant -o /dev/null, $threads thread(s)" "$(median "$bin" dequant "$model" "$tensor" -o /dev/null --threads "$threads")"
  done
  row "$tensor" "gguf-lens dequant -o /dev/null, 1 thread, scalar kernel" "$(GGUF_LENS_KERNEL=scalar median "$bin" dequant "$model" "$tensor" -o /dev/null --threads 1)"
  for threads in 1 2; do
    row "$tensor" "gguf-lens stats, $threads thread(s)" "$(median "$bin" stats "$model" "$tensor" --threads "$threads")"
    row "$tensor" "gguf-lens stats --no-percentiles, $threads thread(s)" "$(median "$bin" stats "$model" "$tensor" --threads "$threads" --no-percentiles)"
  done
  row "$tensor" "gguf-lens stats --no-percentiles, 1 thread, scalar kernel" "$(GGUF_LENS_KERNEL=scalar median "$bin" stats "$model" "$tensor" --threads 1 --no-percentiles)"
  (cd "$project" && node npm-stats-bench.mjs "$model" "$tensor" --runs "$runs") | while IFS=$'\t' read -r name secs; do row "$tensor" "$name" "$secs"; done
  (cd "$project" && node --expose-gc npm-read-bench.mjs "$model" "$tensor" --runs "$runs") | while IFS=$'\t' read -r name secs; do row "$tensor" "$name" "$secs"; done
  "$VENV/bin/python" benches/e2e_anchors.py "$model" "$tensor" --runs "$runs" | while IFS=$'\t' read -r name secs; do row "$tensor" "$name" "$secs"; done
done
rm -rf "$project"
