#!/usr/bin/env bash
# npm `tensorStats` / `readTensor` in Node from a local path, two packages in the same run: an
# anchor tarball (e.g. main's target/npm/gguf-lens-*.tgz, copied aside) and this tree's (built
# here), each installed into its own project; benches/npm-stats-bench.mjs runs on each in turn,
# `rounds` times, and the table gives each row's median over the rounds (wall seconds; the
# machine's load average is printed: compare the two columns, not runs on other days).
#
#   bash benches/npm-stats-ab.sh ANCHOR.tgz MODEL.gguf [--runs 3] [--rounds 3] [--tensors "a b"]
#
# MODEL: benches/make_e2e_model.py's (big_q8_0.weight, big_q4_k.weight: 134M elements each).
set -euo pipefail
cd "$(dirname "$0")/.."
anchor=$(realpath "$1")
model=$(realpath "$2")
shift 2
runs=3
rounds=3
tensors="big_q8_0.weight big_q4_k.weight"
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --tensors) tensors="$2"; shift 2 ;;
    *) echo "usage: benches/npm-stats-ab.sh ANCHOR.tgz MODEL.gguf [--runs N] [--rounds N] [--tensors LIST]" >&2; exit 2 ;;
  esac
done
# NEW_TARBALL: this tree's tarball when already built (else built here).
tarball=${NEW_TARBALL:-$(bash scripts/build-npm.sh 2>/dev/null | tail -n 1)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for side in anchor new; do
  mkdir "$work/$side"
  src=$([ "$side" = anchor ] && echo "$anchor" || echo "$tarball")
  (cd "$work/$side" && npm init -y >/dev/null && npm pkg set type=module >/dev/null &&
    npm install --no-audit --no-fund --loglevel=error "$src" >/dev/null 2>&1)
  cp benches/npm-stats-bench.mjs "$work/$side/"
done
cat "$model" > /dev/null # into the page cache
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for tensor in $tensors; do
  for round in $(seq "$rounds"); do
    for side in anchor new; do
      (cd "$work/$side" && node npm-stats-bench.mjs "$model" "$tensor" --runs "$runs") |
        awk -F'\t' -v s="$side" -v t="$tensor" -v r="$round" '{ print t "\t" $1 "\t" s "\t" r "\t" $2 }'
    done
  done
done > "$work/rows.tsv"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| tensor | path | anchor s | new s | new Gelem/s | anchor / new |"
echo "|---|---|---|---|---|---|"
# Median over the rounds of each (tensor, path, side), rows in first-seen order.
awk -F'\t' '
  { key = $1 "\t" $2; if (!(key in seen)) { seen[key] = ++n; order[n] = key }
    v[key, $3, ++c[key, $3]] = $5 }
  function med(key, side,   m, i, j, t, a) {
    m = c[key, side]; for (i = 1; i <= m; i++) a[i] = v[key, side, i]
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return a[int((m + 1) / 2)] }
  END { for (i = 1; i <= n; i++) { key = order[i]; split(key, k, "\t")
    x = med(key, "anchor"); y = med(key, "new")
    printf "| %s | %s | %.3f | %.3f | %.2f | %.2f× |\n", k[1], k[2], x, y, 134217728 / y / 1e9, x / y } }
' "$work/rows.tsv"
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
