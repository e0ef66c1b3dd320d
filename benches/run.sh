#!/usr/bin/env bash
# Dequantization speed, one table: llama.cpp's ggml to_float, gguf-lens scalar and AVX2 (native),
# and gguf-lens as wasm32-wasip1 under Node, plain (scalar) and with simd128 — all measured in
# this run, then the issue #3 targets that the run missed.
#
#   bash benches/run.sh [--size 1M,64M] [--types Q4_0,Q6_K]
#
# Single thread, Gelem/s = f32 outputs per second, median of several runs into a reused output
# buffer (examples/bench_dequant.rs for ours, natively and under Node; benches/bench_ggml.py for
# ggml). Needs the oracle venv (fixtures/setup.sh) at $ORACLE_VENV (default /tmp/oracle/venv)
# and, for the wasm columns, Node >= 20 (the rustup target is installed if missing).
# BENCH_WASM=0 leaves the wasm columns out.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${ORACLE_VENV:-/tmp/oracle/venv}"
TARGET=wasm32-wasip1
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

cargo build --release --quiet --example bench_dequant
echo "bench: native (scalar, simd) ..." >&2
./target/release/examples/bench_dequant "$@" >"$tmp/native.tsv"
echo "bench: llama.cpp to_float ..." >&2
"$VENV/bin/python" benches/bench_ggml.py "$@" >"$tmp/ggml.tsv"

if [ "${BENCH_WASM:-1}" != 0 ] && command -v node >/dev/null 2>&1; then
  if ! rustup target list --installed | grep -qx "$TARGET"; then
    rustup target add "$TARGET" >&2
  fi
  echo "bench: wasm scalar under Node ..." >&2
  env -u RUSTFLAGS cargo run -q --release --target "$TARGET" --example bench_dequant -- \
    --no-fill --kernels scalar "$@" | sed '/^size/s/\tscalar/\twasm scalar/' >"$tmp/wasm.tsv"
  echo "bench: wasm simd128 under Node ..." >&2
  # Own target dir: different RUSTFLAGS would otherwise rebuild everything on each switch.
  RUSTFLAGS="-C target-feature=+simd128" CARGO_TARGET_DIR=target/wasm-simd128 \
    cargo run -q --release --target "$TARGET" --example bench_dequant -- \
    --no-fill --kernels simd128 "$@" >"$tmp/wasm-simd.tsv"
elif [ "${BENCH_WASM:-1}" != 0 ]; then
  echo "bench: node not found, no wasm columns" >&2
fi

"$VENV/bin/python" - "$tmp" <<'PY'
import sys
from pathlib import Path

rows, fills, order = {}, {}, []
for name in ("native.tsv", "ggml.tsv", "wasm.tsv", "wasm-simd.tsv"):
    path = Path(sys.argv[1]) / name
    if not path.exists():
        continue
    cols = []
    for line in path.read_text().splitlines():
        f = line.split("\t")
        if line.startswith("#") or not line:
            continue
        if f[0] == "size":
            cols = f[2:]
        elif f[0].startswith("fill_"):
            fills[f[0]] = float(f[1])
        else:
            key = (f[0], f[1])
            if key not in rows:
                rows[key] = {}
                order.append(key)
            for c, v in zip(cols, f[2:]):
                try:
                    rows[key][c] = float(v)
                except ValueError:
                    pass

simd = "avx2"
nt = fills.get("fill_nt")


def num(v):
    return "n/a" if v is None else f"{v:.2f}"


def ratio(a, b):
    return "n/a" if a is None or not b else f"{a / b:.1f}x"


head = ["size", "type", "llama.cpp", "scalar", simd, f"{simd}/llama.cpp"]
head += ["% NT fill"] if nt else []
head += ["wasm scalar", "wasm simd128", "simd128/wasm scalar", "simd128/avx2"]
print("| " + " | ".join(head) + " |")
print("|---|---|" + "---:|" * (len(head) - 2))
for key in order:
    r = rows[key]
    g, s, a = r.get("llama.cpp"), r.get("scalar"), r.get(simd)
    ws, wv = r.get("wasm scalar"), r.get("simd128")
    cells = [key[0], key[1], num(g), num(s), num(a), ratio(a, g)]
    if nt:
        # Only outputs far bigger than the caches are bound by the store ceiling.
        big = key[0].upper().endswith("M") and int(key[0][:-1]) >= 16
        cells.append("-" if a is None or not big else f"{100 * a / nt:.0f}%")
    cells += [num(ws), num(wv), ratio(wv, ws),
              "n/a" if wv is None or not a else f"{100 * wv / a:.0f}%"]
    print("| " + " | ".join(cells) + " |")
if fills:
    print()
    print("f32 store ceiling, 1 GiB, Gelem/s: plain fill "
          f"{fills.get('fill_plain', 0):.2f}, non-temporal fill {fills.get('fill_nt', 0):.2f}")
    same = [f"{k.split('@')[1]} {v:.2f}" for k, v in fills.items() if "@" in k]
    if same:
        print("plain fill of one reused output buffer of the benchmarked size, Gelem/s: "
              + ", ".join(same))

# Issue #3 targets missed in this run.
ARITH = {"Q4_0", "Q3_K", "Q6_K", "MXFP4", "NVFP4", "Q1_0"}
miss = []
for (size, ty), r in ((k, rows[k]) for k in order):
    g, a = r.get("llama.cpp"), r.get(simd)
    ws, wv = r.get("wasm scalar"), r.get("simd128")
    want = 3.0 if ty in ARITH or ty.startswith("IQ") else 1.5
    if g and a is not None and a / g < want:
        miss.append(f"{size} {ty}: {simd} {a / g:.2f}x llama.cpp (target {want}x)")
    if nt and size.upper() == "64M" and a is not None and a / nt < 0.7:
        miss.append(f"{size} {ty}: {simd} {100 * a / nt:.0f}% of NT fill (target 70%)")
    if ws and wv is not None and wv / ws < 3:
        miss.append(f"{size} {ty}: simd128 {wv / ws:.2f}x wasm scalar (target 3x)")
    if a and wv is not None and wv / a < 0.5:
        miss.append(f"{size} {ty}: simd128 {100 * wv / a:.0f}% of {simd} (target 50%)")
print()
print("Targets missed in this run:" if miss else "Every target met in this run.")
for m in miss:
    print(f"- {m}")
PY
