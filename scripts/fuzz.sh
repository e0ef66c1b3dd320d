#!/usr/bin/env bash
# Runs the parse+dequant fuzz target (GGUF and safetensors/GPTQ) for N seconds (default 60), seeded with the fixtures.
# Fails on any crash, panic, timeout or out-of-memory.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
corpus=fuzz/corpus/parse_dequant
mkdir -p "$corpus"
find fixtures -name '*.gguf' -size -256k -exec cp -n {} "$corpus/" \; 2>/dev/null || true
for f in fixtures/gptq/*/*.safetensors; do
  [ -f "$f" ] && cp -n "$f" "$corpus/$(basename "$(dirname "$f")")-$(basename "$f")"
done
toolchain=+nightly
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  toolchain=""
  export RUSTC_BOOTSTRAP=1
fi
log=$(mktemp)
status=0
cargo $toolchain fuzz run parse_dequant "$corpus" -- \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1 || status=$?
grep -E "^(stat::number_of_executed_units|stat::new_units_added|Done)" "$log" || true
if [ "$status" -ne 0 ]; then
  tail -n 60 "$log"
  echo "fuzz: FAILED (exit $status)"
  exit "$status"
fi
echo "fuzz: ok"
