#!/usr/bin/env bash
# Vector against scalar kernels end to end, on the compute-bound types (issue #12): `gguf-lens
# dequant -o /dev/null` and `gguf-lens stats --no-percentiles`, one thread, GGUF_LENS_KERNEL=scalar
# against the default kernel, 134M-element tensors of Q4_0, Q6_K, IQ4_XS and MXFP4
# (benches/make_e2e_model.py --extra-types), file in the page cache, medians of 5.
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
cat "$model" > /dev/null

median() {
  local times=()
  for _ in 1 2 3 4 5; do
    local start end
    start=$(date +%s.%N)
    "$@" > /dev/null
    end=$(date +%s.%N)
    times+=("$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')")
  done
  printf '%s\n' "${times[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

echo "| type | path | vector s | scalar s | vector / scalar |"
echo "|---|---|---|---|---|"
for t in ${types//,/ }; do
  tensor="big_$(echo "$t" | tr '[:upper:]' '[:lower:]').weight"
  for what in dequant stats; do
    if [ "$what" = dequant ]; then args=(dequant "$model" "$tensor" -o /dev/null --threads 1); else args=(stats "$model" "$tensor" --threads 1 --no-percentiles); fi
    v=$(median "$bin" "${args[@]}")
    s=$(GGUF_LENS_KERNEL=scalar median "$bin" "${args[@]}")
    awk -v t="$t" -v w="$what" -v v="$v" -v s="$s" 'BEGIN { printf "| %s | %s | %.3f | %.3f | %.2f× |\n", t, w, v, s, s / v }'
  done
done
