#!/usr/bin/env bash
# Tensor-data hashing speed: gguf-lens hash (1 thread and every core) against llama.cpp's
# llama-gguf-hash and coreutils' sha256sum, all in this run, on a dense random GGUF of SIZE_MIB
# (default 2048) F32 data, read from the page cache (one warm-up read first).
# Target (#16): sha256 >= 1 GB/s per core.
#
#   bash benches/hash.sh [SIZE_MIB]
#
# Needs the oracle venv at $ORACLE_VENV (default /root/oracle-venv) for gguf-py and for
# building llama-gguf-hash (fixtures/build_gguf_hash.sh); without it only our rows are shown.
set -euo pipefail
cd "$(dirname "$0")/.."
mib=${1:-2048}
venv=${ORACLE_VENV:-/root/oracle-venv}
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
file=$dir/dense.gguf
python3 - "$file" "$mib" <<'PY'
import os, struct, sys
path, mib = sys.argv[1], int(sys.argv[2])
n = mib << 18                       # f32 elements
name = b"big.weight"
# GGUF v3 header by hand (one tensor, no metadata): magic, version, counts, tensor info.
head = b"GGUF" + struct.pack("<IQQ", 3, 1, 0)
head += struct.pack("<Q", len(name)) + name + struct.pack("<IQIQ", 1, n, 0, 0)
head += b"\0" * ((-len(head)) % 32)
with open(path, "wb") as f:
    f.write(head)
    chunk = os.urandom(64 << 20)
    for _ in range(mib // 64):
        f.write(chunk)               # repeating 64 MiB of random bytes: incompressible enough
PY
cargo build --release --bin gguf-lens -q
bytes=$(( mib << 20 ))
cat "$file" > /dev/null
gbps() { echo "scale=2; $bytes / $1 / 1000000000" | bc; }
time_of() { local s e; s=$(date +%s.%N); "$@" > /dev/null; e=$(date +%s.%N); echo "$e - $s" | bc; }
printf '%-44s %8s %8s\n' "hashing $mib MiB of tensor data" "s" "GB/s"
row() { local t; t=$(time_of "${@:2}"); printf '%-44s %8.2f %8s\n' "$1" "$t" "$(gguf_gbps "$t")"; }
gguf_gbps() { gbps "$1"; }
row "gguf-lens --sha256 --no-layer, 1 thread" target/release/gguf-lens hash --sha256 --no-layer --threads 1 "$file"
row "gguf-lens --sha256 (layer + model), all cores" target/release/gguf-lens hash --sha256 "$file"
row "gguf-lens --xxh64 --no-layer, 1 thread" target/release/gguf-lens hash --xxh64 --no-layer --threads 1 "$file"
row "gguf-lens --all --uuid, all cores" target/release/gguf-lens hash --all --uuid "$file"
row "sha256sum (whole file, anchor)" sha256sum "$file"
if [ -x "$venv/bin/python" ]; then
  tool=$(bash fixtures/build_gguf_hash.sh "$venv" | tail -1)
  row "llama-gguf-hash --sha256 --no-layer" "$tool" --sha256 --no-layer "$file"
  row "llama-gguf-hash --xxh64 --no-layer" "$tool" --xxh64 --no-layer "$file"
  row "llama-gguf-hash --all --uuid" "$tool" --all --uuid "$file"
fi
