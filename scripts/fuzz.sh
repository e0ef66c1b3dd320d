#!/usr/bin/env bash
# Fuzz smoke: builds every cargo-fuzz target once, then runs each for its share of N seconds
# (default 60; at least MIN_SECONDS each), seeded from fixtures/ and, when available, llama.cpp's
# vocabularies and chat templates (scripts/llama-sdist.sh). Prints one line per target with its
# executions; fails on any crash, panic, timeout or out-of-memory.
#   bash scripts/fuzz.sh 30            # the test command's smoke
#   bash scripts/fuzz.sh 1200 plan     # one target, 20 minutes
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
all=(parse_dequant tokenizer template plan edit shard_index safetensors compare)
targets=("${@:-${all[@]}}")
min="${MIN_SECONDS:-3}"
per=$((seconds / ${#targets[@]}))
[ "$per" -lt "$min" ] && per="$min"

sep=$'\n--8<--\n'
seed() { # seed TARGET NAME: stdin becomes one corpus file
  mkdir -p "fuzz/corpus/$1"
  cat >"fuzz/corpus/$1/seed-$2"
}
le16() { printf "\\x$(printf %02x $(($1 & 255)))\\x$(printf %02x $((($1 >> 8) & 255)))"; }

# parse_dequant: GGUF fixtures and the GPTQ checkpoints as they are
mkdir -p fuzz/corpus/parse_dequant
find fixtures -name '*.gguf' -size -256k -exec cp -n {} fuzz/corpus/parse_dequant/ \; 2>/dev/null || true
for f in fixtures/gptq/*/*.safetensors; do
  [ -f "$f" ] && cp -n "$f" "fuzz/corpus/parse_dequant/$(basename "$(dirname "$f")")-$(basename "$f")"
done
# plan: [0][16 option bytes][the header part of a fixture]
for f in fixtures/plan/*.gguf; do
  { printf '\x00'; head -c 16 /dev/zero; head -c 65536 "$f"; } | seed plan "$(basename "$f")"
done
# edit: [edits length u16 = 0][GGUF]
for f in fixtures/edit/input.gguf fixtures/meta/*.gguf fixtures/diff/*.gguf; do
  { printf '\x00\x00'; cat "$f"; } | seed edit "$(basename "$f")"
done
# shard_index: indexes and configs
for f in fixtures/gptq/*/*.json; do
  seed shard_index "$(basename "$(dirname "$f")")-$(basename "$f")" <"$f"
done
# and names that must be refused (URL-, drive-shaped, encoded)
printf '%s' '{"weight_map":{"model.embed_tokens.weight":"https:OTHER-HOST:8443"}}' | seed shard_index url
printf '%s' '{"weight_map":{"a":"C:model.safetensors","b":"..%2fsecret.safetensors"}}' | seed shard_index drive
# safetensors: [q|c config] sep shard sep shard ...
for d in fixtures/gptq/*/; do
  n=$(basename "$d")
  {
    if [ -f "$d/quantize_config.json" ]; then printf q; cat "$d/quantize_config.json"
    elif [ -f "$d/config.json" ]; then printf c; cat "$d/config.json"; fi
    for s in "$d"*.safetensors; do printf '%s' "$sep"; cat "$s"; done
  } | seed safetensors "$n"
done
for f in fixtures/diff/*.safetensors; do
  { printf '%s' "$sep"; cat "$f"; } | seed safetensors "$(basename "$f")"
done
# compare: A sep B
pair() { { cat "fixtures/diff/$1"; printf '%s' "$sep"; cat "fixtures/diff/$2"; } | seed compare "$1-$2"; }
pair arrays-a.gguf arrays-b.gguf
pair arrays-a.safetensors arrays-b.safetensors
pair arrays-a.gguf arrays-a.safetensors
pair gptq-f16.safetensors sample-hf.safetensors
pair split-a-00001-of-00002.gguf split-b-00001-of-00003.gguf
seed compare edges.gguf <fixtures/diff/edges.gguf
# tokenizer: fixtures' small vocabularies as files; llama.cpp's smaller ones loaded once
# (GGUF_LENS_FUZZ_VOCABS) under texts from their test inputs
vocabs=fuzz/corpus/vocabs
mkdir -p "$vocabs"
cp -n fixtures/tokenizer/vocab_extra/*.gguf "$vocabs/" 2>/dev/null || true
llama=$(bash scripts/llama-sdist.sh 2>/dev/null) || llama=""
if [ -n "$llama" ] && [ -d "$llama/models" ]; then
  find "$llama/models" -maxdepth 1 -name 'ggml-vocab-*.gguf' -size -1200k -exec cp -n {} "$vocabs/" \;
  for f in "$llama"/models/templates/*.jinja; do
    seed template "$(basename "$f")" <"$f"
  done
fi
text="Hello world, it's 2024!  \t\n 你好 🙂 <s>[INST] <|im_end|>"
i=0
for f in "$vocabs"/*.gguf; do
  [ -f "$f" ] || continue
  inp="$llama/models/$(basename "$f").inp"
  t=$(head -c 300 "$inp" 2>/dev/null || printf '%s' "$text")
  n=$(printf '%s' "$t" | wc -c)
  # whole files only when small: a mutated megabyte vocabulary runs a few units a second
  if [ "$(wc -c <"$f")" -lt 200000 ]; then
    { printf '\x00\x03'; le16 "$n"; printf '%s' "$t"; cat "$f"; } | seed tokenizer "$(basename "$f")"
  fi
  { printf "\\x02\\x$(printf %02x $i)\\x03"; printf '%s' "$t"; } | seed tokenizer "text-$(basename "$f")"
  i=$((i + 1))
done
export GGUF_LENS_FUZZ_VOCABS="$PWD/$vocabs"
printf '%s' '{{ bos_token }}{% for m in messages %}{{ m.role }}: {{ m.content }}{% endfor %}' | seed template basic
# What earlier runs found stays in every run's corpus (each was fixed; a return is a failure).
for f in fuzz/regressions/*/*; do
  [ -f "$f" ] && seed "$(basename "$(dirname "$f")")" "regression-$(basename "$f")" <"$f"
done

toolchain=+nightly
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  toolchain=""
  export RUSTC_BOOTSTRAP=1
fi
build_log=$(mktemp)
if ! nice cargo $toolchain fuzz build >"$build_log" 2>&1; then
  tail -n 40 "$build_log"
  echo "fuzz: build FAILED"
  exit 1
fi

failed=()
for t in "${targets[@]}"; do
  log=$(mktemp)
  dict=()
  [ -f "fuzz/dicts/$t.dict" ] && dict=("-dict=fuzz/dicts/$t.dict")
  status=0
  # -timeout: a render or plan that runs away is a finding, never a hung smoke
  nice cargo $toolchain fuzz run "$t" "fuzz/corpus/$t" -- "${dict[@]}" \
    -max_total_time="$per" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 >"$log" 2>&1 || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  new=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -n 1)
  if [ "$status" -ne 0 ]; then
    echo "--- $t"
    # the failing unit's text, its stack and how to reproduce it; the input dump is cut short
    grep -v -E '^\s*\[[0-9, ]+\]$' "$log" | cut -c1-300 | tail -n 40
    printf 'fuzz: %-14s FAILED (exit %s) after %s executions in %s s\n' "$t" "$status" "${execs:-?}" "$per"
    failed+=("$t")
  else
    printf 'fuzz: %-14s %10s executions in %s s (%s new units)\n' "$t" "${execs:-?}" "$per" "${new:-0}"
  fi
  rm -f "$log"
done
if [ "${#failed[@]}" -ne 0 ]; then
  echo "fuzz: FAILED: ${failed[*]}"
  exit 1
fi
echo "fuzz: ok"
