#!/usr/bin/env bash
# Long differential runs: N fresh seeds, each drawing 64 random tensors of every ggml type
# (fixtures/make_differential.py, dequantized by every kernel here and compared with ggml) and
# 120 random texts (fixtures/make_differential_text.py, tokenized with every llama.cpp vocabulary
# in both modes and compared with llama.cpp). What a seed finds is kept and checked by the test
# command from then on: failing tensors in fixtures/differential/dequant-found-SEED.json, a
# failing text seed's whole file as fixtures/differential/tokenizer-found-SEED.json.
#   bash scripts/soak.sh N        (ORACLE_VENV: the venv of fixtures/setup.sh, default /tmp/oracle/venv)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:?usage: bash scripts/soak.sh N}"
venv="${ORACLE_VENV:-/tmp/oracle/venv}"
[ -x "$venv/bin/python" ] || { echo "no oracle venv at $venv: run fixtures/setup.sh $venv" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cargo test --quiet --release --test differential_dequant --test oracle_tokenizer --no-run
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
  "$venv/bin/python" fixtures/make_differential_text.py --seed "$seed" --out "$work/texts.json" >/dev/null 2>&1
  if GGUF_LENS_DIFFERENTIAL_TEXT="$work/texts.json" cargo test --quiet --release --test oracle_tokenizer \
      seeded_random_texts >"$work/out.txt" 2>&1 && grep -q '1 passed' "$work/out.txt"; then
    echo "seed $seed: 120 texts tokenize as in llama.cpp with every vocabulary"
  else
    found=$((found + 1))
    cp "$work/texts.json" "fixtures/differential/tokenizer-found-$seed.json"
    grep -E 'ggml-vocab|differ|!=' "$work/out.txt" | head -5
  fi
done
echo "soak: $n seeds, $found with differences"
[ "$found" -eq 0 ]
