#!/usr/bin/env bash
# Vector against scalar kernels end to end, on the compute-bound types (issue #12): `gguf-lens
# dequant -o /dev/null` and `gguf-lens stats --no-percentiles`, one thread, GGUF_LENS_KERNEL=scalar
# against the default kernel, 134M-element tensors of Q4_0, Q6_K, IQ4_XS and MXFP4
# (benches/make_e2e_model.py --extra-types), file in the page cache (read from disk once). Each cell is the median of 5
# runs' CPU time (`perf stat -e task-clock`, so other load on the machine matters little; wall
# seconds, noisier, where perf is missing), runs of the two kernels alternating.
#
#   bash benches/bench-vector-scalar.sh [--keep DIR]
#
# Needs the oracle venv (fixtures/setup.sh) at $ORACLE_VENV (default /root/oracle-venv).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${ORACLE_VENV:-/root/oracle-venv}"
types=Q4_0,Q6_K,IQ4_XS,MXFP4
dir=""
if [ "${1:-}" = "--keep" ]; then dir="$2"; fi
if [ -z "$dir" ]; then
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
fi
model="$dir/vector-scalar.gguf"
[ -f "$model" ] || "$VENV/bin/python" benches/make_e2e_model.py "$model" --cols 32768 --extra-types "$types" >&2
cargo build --release --quiet
bin="$PWD/target/release/gguf-lens"
# Into the page cache as a first read from disk puts it (readahead: large folios), not as the
# generator's writes left it (4 KiB pages), which were slower to read back (Q6_K, one run:
# 19.5 against 14.9 ms vector, 37 against 33 ms scalar): a defined state, the same for both.
sync "$model"
"$VENV/bin/python" -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$model"
cat "$model" > /dev/null
elements=134217728

if perf stat -x, -e task-clock true > /dev/null 2>&1; then unit="CPU ms"; else unit="wall ms"; fi
# milliseconds of one run: CPU time with perf, else wall time
run_ms() {
  if [ "$unit" = "CPU ms" ]; then
    perf stat -x, -e task-clock -o "$dir/perf.txt" -- "$@" > /dev/null
    awk -F, '/task-clock/ { print $1 }' "$dir/perf.txt"
  else
    local start end
    start=$(date +%s.%N)
    "$@" > /dev/null
    end=$(date +%s.%N)
    awk -v a="$start" -v b="$end" 'BEGIN { print (b - a) * 1000 }'
  fi
}
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

echo "| type | path | vector $unit | scalar $unit | scalar / vector | vector Gelem/s |"
echo "|---|---|---|---|---|---|"
for t in ${types//,/ }; do
  tensor="big_$(echo "$t" | tr '[:upper:]' '[:lower:]').weight"
  for what in dequant stats; do
    if [ "$what" = dequant ]; then args=(dequant "$model" "$tensor" -o /dev/null --threads 1); else args=(stats "$model" "$tensor" --threads 1 --no-percentiles); fi
    vs=() ss=()
    for _ in 1 2 3 4 5; do
      vs+=("$(run_ms "$bin" "${args[@]}")")
      ss+=("$(GGUF_LENS_KERNEL=scalar run_ms "$bin" "${args[@]}")")
    done
    v=$(printf '%s\n' "${vs[@]}" | median)
    s=$(printf '%s\n' "${ss[@]}" | median)
    awk -v t="$t" -v w="$what" -v v="$v" -v s="$s" -v n="$elements" \
      'BEGIN { printf "| %s | %s | %.1f | %.1f | %.2f× | %.1f |\n", t, w, v, s, s / v, n / v / 1e6 }'
  done
done
