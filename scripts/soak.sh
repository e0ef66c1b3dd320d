#!/usr/bin/env bash
# Long differential runs: N fresh seeds, each drawing 64 random tensors of every ggml type
# (fixtures/make_differential.py), dequantized by every kernel here and compared with ggml.
# A seed whose cases fail is kept: its failing cases go to fixtures/differential/found-SEED.json,
# which the test command then checks on every run.
#   bash scripts/soak.sh N        (ORACLE_VENV: the venv of fixtures/setup.sh, default /tmp/oracle/venv)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:?usage: bash scripts/soak.sh N}"
venv="${ORACLE_VENV:-/tmp/oracle/venv}"
[ -x "$venv/bin/python" ] || { echo "no oracle venv at $venv: run fixtures/setup.sh $venv" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cargo test --quiet --release --test differential_dequant --no-run
found=0
for i in $(seq 1 "$n"); do
  seed=$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')
  "$venv/bin/python" fixtures/make_differential.py --seed "$seed" --out "$work/cases.json" >/dev/null
  if GGUF_LENS_DIFFERENTIAL="$work/cases.json" cargo test --quiet --release --test differential_dequant \
      -- --nocapture >"$work/out.txt" 2>&1; then
    echo "seed $seed: $(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['cases']))" "$work/cases.json") cases agree with ggml"
  else
    found=$((found + 1))
    grep -E '^[0-9]+$' "$work/out.txt" | "$venv/bin/python" fixtures/make_differential.py --keep "$work/cases.json"
    grep -E '^case ' "$work/out.txt" | head -5
  fi
done
echo "soak: $n seeds, $found with differences"
[ "$found" -eq 0 ]
