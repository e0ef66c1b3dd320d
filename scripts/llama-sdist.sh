#!/usr/bin/env bash
# Prints the directory of llama.cpp as llama-cpp-python 0.3.36 vendors it (its sdist from PyPI,
# sha256-checked against PyPI's simple index, cached in ~/.cache/gguf-lens), fetching it once.
# The tokenizer and template tests read real inputs from it: models/ggml-vocab-*.gguf with their
# .inp/.out vectors, and models/templates/*.jinja. $LLAMA_CPP_SDIST, when set, is used as it is.
set -euo pipefail
version=0.3.36
if [ -n "${LLAMA_CPP_SDIST:-}" ]; then
  echo "$LLAMA_CPP_SDIST/vendor/llama.cpp"
  exit 0
fi
cache="${GGUF_LENS_CACHE:-$HOME/.cache/gguf-lens}"
dir="$cache/llama_cpp_python-$version"
if [ ! -f "$dir/.complete" ]; then
  mkdir -p "$cache"
  archive="$cache/llama_cpp_python-$version.tar.gz"
  if [ ! -f "$archive" ]; then
    python3 - "$archive" <<'PY' >&2
import hashlib, re, shutil, sys, urllib.request
from pathlib import Path
archive = Path(sys.argv[1])
index = urllib.request.urlopen("https://pypi.org/simple/llama-cpp-python/").read().decode()
found = re.search(rf'href="([^"#]*/{re.escape(archive.name)})#sha256=([0-9a-f]+)"', index)
if found is None:
    sys.exit(f"llama-sdist: {archive.name} is not on PyPI's simple index")
url, digest = found.groups()
partial = archive.with_suffix(".part")
with urllib.request.urlopen(url) as response, open(partial, "wb") as out:
    shutil.copyfileobj(response, out)
if hashlib.sha256(partial.read_bytes()).hexdigest() != digest:
    partial.unlink()
    sys.exit(f"llama-sdist: {url}: sha256 mismatch")
partial.rename(archive)
PY
  fi
  rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
  tar xzf "$archive" -C "$dir.tmp" --strip-components=1 \
    "llama_cpp_python-$version/vendor/llama.cpp/models" \
    "llama_cpp_python-$version/vendor/llama.cpp/src" \
    "llama_cpp_python-$version/vendor/llama.cpp/examples/gguf-hash" \
    "llama_cpp_python-$version/vendor/llama.cpp/gguf-py"
  touch "$dir.tmp/.complete"
  rm -rf "$dir" && mv "$dir.tmp" "$dir"
fi
echo "$dir/vendor/llama.cpp"
