#!/usr/bin/env bash
# npm `tensorStats` (or, with --read, `readTensor`) in Node from a local path, two packages in
# the same run: an anchor tarball (e.g. main's target/npm/gguf-lens-*.tgz, copied aside) and this
# tree's (built here), each installed into its own project; benches/npm-stats-bench.mjs (--read:
# benches/npm-read-bench.mjs, a process per tensor and side, so first calls are first calls)
# runs on each in turn, `rounds` times, and the table gives each row's median over the rounds:
# wall seconds, and with --read CPU seconds too (user+sys of every thread of the process). The
# machine's load average is printed: compare the two columns, not runs on other days. An anchor
# without readTensor's `workers` reads those rows on one thread.
#
#   bash benches/npm-stats-ab.sh ANCHOR.tgz MODEL.gguf [--read] [--runs 3] [--rounds 3] [--tensors "a b"]
#
# MODEL: benches/make_e2e_model.py's (big_q8_0.weight, big_q4_k.weight: 134M elements each).
set -euo pipefail
cd "$(dirname "$0")/.."
anchor=$(realpath "$1")
model=$(realpath "$2")
shift 2
runs=3
rounds=3
read=""
tensors="big_q8_0.weight big_q4_k.weight"
while [ $# -gt 0 ]; do
  case "$1" in
    --read) read=1; shift ;;
    --runs) runs="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --tensors) tensors="$2"; shift 2 ;;
    *) echo "usage: benches/npm-stats-ab.sh ANCHOR.tgz MODEL.gguf [--read] [--runs N] [--rounds N] [--tensors LIST]" >&2; exit 2 ;;
  esac
done
if [ -n "$read" ]; then
  bench=(--expose-gc npm-read-bench.mjs) cpu=(--cpu)
else
  bench=(npm-stats-bench.mjs) cpu=()
fi
# NEW_TARBALL: this tree's tarball when already built (else built here).
tarball=${NEW_TARBALL:-$(bash scripts/build-npm.sh 2>/dev/null | tail -n 1)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for side in anchor new; do
  mkdir "$work/$side"
  src=$([ "$side" = anchor ] && echo "$anchor" || echo "$tarball")
  (cd "$work/$side" && npm init -y >/dev/null && npm pkg set type=module >/dev/null &&
    npm install --no-audit --no-fund --loglevel=error "$src" >/dev/null 2>&1)
  cp benches/npm-stats-bench.mjs benches/npm-read-bench.mjs "$work/$side/"
done
cat "$model" > /dev/null # into the page cache
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for tensor in $tensors; do
  for round in $(seq "$rounds"); do
    for side in anchor new; do
      (cd "$work/$side" && node "${bench[@]}" "$model" "$tensor" --runs "$runs" "${cpu[@]}") |
        awk -F'\t' -v s="$side" -v t="$tensor" '{ print t "\t" $1 "\t" s "\t" $2 "\t" $3 }'
    done
  done
done > "$work/rows.tsv"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
if [ -n "$read" ]; then
  echo "| tensor | path | anchor s | new s | new Gelem/s | anchor CPU s | new CPU s | CPU anchor / new |"
  echo "|---|---|---|---|---|---|---|---|"
else
  echo "| tensor | path | anchor s | new s | new Gelem/s | anchor / new |"
  echo "|---|---|---|---|---|---|"
fi
# Median over the rounds of each (tensor, path, side), rows in first-seen order.
awk -F'\t' -v read="$read" '
  { key = $1 "\t" $2; if (!(key in seen)) { seen[key] = ++n; order[n] = key }
    m = ++c[key, $3]; wall[key, $3, m] = $4; cpu[key, $3, m] = $5 }
  function med(arr, key, side,   m, i, j, t, a) {
    m = c[key, side]; for (i = 1; i <= m; i++) a[i] = arr[key, side, i]
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return a[int((m + 1) / 2)] }
  END { for (i = 1; i <= n; i++) { key = order[i]; split(key, k, "\t")
    x = med(wall, key, "anchor"); y = med(wall, key, "new")
    if (read) { cx = med(cpu, key, "anchor"); cy = med(cpu, key, "new")
      printf "| %s | %s | %.3f | %.3f | %.2f | %.3f | %.3f | %.2f× |\n", k[1], k[2], x, y, 134217728 / y / 1e9, cx, cy, cx / cy }
    else printf "| %s | %s | %.3f | %.3f | %.2f | %.2f× |\n", k[1], k[2], x, y, 134217728 / y / 1e9, x / y } }
' "$work/rows.tsv"
[ -n "$read" ] && exit 0
echo
echo "CPU seconds per call (every thread; benches/npm-stats-calls.mjs, 7 calls, median of the last 6):"
for tensor in $tensors; do
  for workers in 0 2; do
    for side in anchor new; do
      echo "$tensor $side: $(node benches/npm-stats-calls.mjs "$work/$side/node_modules/gguf-lens" "$model" "$tensor" "$workers" 7)"
    done
  done
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
