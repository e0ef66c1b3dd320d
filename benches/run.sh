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

# Arguments: --size LIST and --types LIST (as the benchmarks take them).
sizes=1M,64M
types=""
while [ $# -gt 0 ]; do
  case "$1" in
    --size) sizes="$2"; shift 2 ;;
    --types) types="$2"; shift 2 ;;
    *) echo "usage: benches/run.sh [--size 1M,64M] [--types Q4_0,Q6_K]" >&2; exit 2 ;;
  esac
done

cargo build --release --quiet --example bench_dequant
[ -n "$types" ] || types=$(./target/release/examples/bench_dequant --list-types)
wasm=0
if [ "${BENCH_WASM:-1}" != 0 ] && command -v node >/dev/null 2>&1; then
  if ! rustup target list --installed | grep -qx "$TARGET"; then
    rustup target add "$TARGET" >&2
  fi
  env -u RUSTFLAGS cargo build --release --quiet --target "$TARGET" --example bench_dequant
  # Own target dir: different RUSTFLAGS would otherwise rebuild everything on each switch.
  RUSTFLAGS="-C target-feature=+simd128" CARGO_TARGET_DIR=target/wasm-simd128 \
    cargo build --release --quiet --target "$TARGET" --example bench_dequant
  wasm=1
elif [ "${BENCH_WASM:-1}" != 0 ]; then
  echo "bench: node not found, no wasm columns" >&2
fi
wasm_scalar=target/$TARGET/release/examples/bench_dequant.wasm
wasm_simd=target/wasm-simd128/$TARGET/release/examples/bench_dequant.wasm

# One type at a time, every column back to back: the machine may be shared, and contention
# then hits all columns of a row alike rather than whichever ran during a busy minute. All of
# it BENCH_PASSES times (default 2); each cell is the best of its per-pass medians.
IFS=, read -ra type_list <<<"$types"
for pass in $(seq "${BENCH_PASSES:-2}"); do
  for ty in "${type_list[@]}"; do
    echo "bench: pass $pass, $ty" >&2
    ./target/release/examples/bench_dequant --no-fill --size "$sizes" --types "$ty" >>"$tmp/native.tsv"
    "$VENV/bin/python" benches/bench_ggml.py --size "$sizes" --types "$ty" >>"$tmp/ggml.tsv"
    if [ "$wasm" = 1 ]; then
      # One size per Node process. Node 20 sometimes segfaults on exit after a run with a large
      # wasm memory, when the results are already printed: a row that is there counts.
      IFS=, read -ra size_list <<<"$sizes"
      for size in "${size_list[@]}"; do
        for kernel in scalar simd128; do
          bin=$wasm_scalar
          [ "$kernel" = scalar ] || bin=$wasm_simd
          # (`; exit` keeps bash from exec'ing node, so its crash report goes to /dev/null too.)
          (node scripts/wasi-runner.mjs "$bin" --no-fill --kernels "$kernel" --size "$size" \
            --types "$ty" >"$tmp/one.tsv"; exit $?) 2>/dev/null || true
          if ! grep -q "^$size	" "$tmp/one.tsv"; then
            echo "bench: wasm $kernel failed for $ty at $size" >&2
          fi
          if [ "$kernel" = scalar ]; then
            sed '/^size/s/\tscalar/\twasm scalar/' "$tmp/one.tsv" >>"$tmp/wasm.tsv"
          else
            cat "$tmp/one.tsv" >>"$tmp/wasm-simd.tsv"
          fi
        done
      done
    fi
  done
done
echo "bench: store ceilings" >&2
./target/release/examples/bench_dequant --size "$sizes" --fill-only | grep '^fill' >>"$tmp/native.tsv"

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
                    rows[key][c] = max(float(v), rows[key].get(c, 0.0))
                except ValueError:
                    pass

simd = "avx2"
nt = fills.get("fill_nt")


def num(v):
    return "n/a" if v is None else f"{v:.2f}"


def ratio(a, b):
    return "n/a" if a is None or not b else f"{a / b:.1f}x"


head = ["size", "type", "llama.cpp", "scalar", simd, f"{simd}/llama.cpp"]
head += ["% of NT fill"] if nt else []
head += ["wasm scalar", "wasm simd128", "simd128/wasm scalar", "simd128/avx2"]
print("| " + " | ".join(head) + " |")
print("|---|---|" + "---:|" * (len(head) - 2))
for key in order:
    r = rows[key]
    g, s, a = r.get("llama.cpp"), r.get("scalar"), r.get(simd)
    ws, wv = r.get("wasm scalar"), r.get("simd128")
    cells = [key[0], key[1], num(g), num(s), num(a), ratio(a, g)]
    if nt:
        # Only outputs far bigger than the caches are bound by the store ceiling; the fill is
        # the one timed beside this kernel (same buffer, same moment), else the 1 GiB one.
        big = key[0].upper().endswith("M") and int(key[0][:-1]) >= 16
        ceiling = r.get("nt_fill") or nt
        cells.append("-" if a is None or not big else f"{100 * a / ceiling:.0f}%")
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
    ceiling = r.get("nt_fill") or nt
    if ceiling and size.upper() == "64M" and a is not None and a / ceiling < 0.7:
        miss.append(f"{size} {ty}: {simd} {100 * a / ceiling:.0f}% of NT fill (target 70%)")
    if ws and wv is not None and wv / ws < 3:
        miss.append(f"{size} {ty}: simd128 {wv / ws:.2f}x wasm scalar (target 3x)")
    if a and wv is not None and wv / a < 0.5:
        miss.append(f"{size} {ty}: simd128 {100 * wv / a:.0f}% of {simd} (target 50%)")
print()
print("Targets missed in this run:" if miss else "Every target met in this run.")
for m in miss:
    print(f"- {m}")
PY
