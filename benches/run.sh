#!/usr/bin/env bash
# Dequantization speed: llama.cpp's ggml to_float vs gguf-lens scalar and AVX2, one table.
#
#   bash benches/run.sh [--size 1M,64M] [--types Q4_0,Q6_K]
#
# Needs the oracle venv (fixtures/setup.sh) at $ORACLE_VENV (default /tmp/oracle/venv).
# Single thread, Gelem/s = f32 outputs per second, median of several runs.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${ORACLE_VENV:-/tmp/oracle/venv}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

cargo build --release --quiet --example bench_dequant
./target/release/examples/bench_dequant "$@" >"$tmp/ours.tsv"
"$VENV/bin/python" benches/bench_ggml.py "$@" >"$tmp/ggml.tsv"

"$VENV/bin/python" - "$tmp/ours.tsv" "$tmp/ggml.tsv" <<'PY'
import sys
ours, ggml, fills = {}, {}, {}
simd = "simd"
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if line.startswith("#"):
        continue
    if f[0] == "size":
        simd = f[3]
    elif f[0].startswith("fill_"):
        fills[f[0]] = float(f[1])
    else:
        ours[(f[0], f[1])] = (float(f[2]), float(f[3]))
for line in open(sys.argv[2]):
    f = line.rstrip("\n").split("\t")
    if f[0] != "size":
        ggml[(f[0], f[1])] = f[2]
nt = fills.get("fill_nt")
print(f"| size | type | llama.cpp | scalar | {simd} | {simd}/llama.cpp |"
      + (" % of NT fill |" if nt else ""))
print("|---|---|---:|---:|---:|---:|" + ("---:|" if nt else ""))
for (size, ty), (scalar, best) in ours.items():
    g = ggml.get((size, ty), "n/a")
    ratio = f"{best / float(g):.2f}x" if g not in ("n/a",) and float(g) > 0 else "n/a"
    row = f"| {size} | {ty} | {g} | {scalar:.3f} | {best:.3f} | {ratio} |"
    if nt:
        row += f" {100 * best / nt:.0f}% |"
    print(row)
if fills:
    print()
    print("f32 store ceiling, 1 GiB, Gelem/s: plain fill "
          f"{fills.get('fill_plain', 0):.3f}, non-temporal fill {fills.get('fill_nt', 0):.3f}")
PY
