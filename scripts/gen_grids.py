#!/usr/bin/env python3
"""Generate src/quant/scalar/grids.rs, the IQ lookup tables, from PyPI gguf-py.

gguf-py keeps each IQ grid as `grid_hex` (packed 2- or 3-bit codes, hex-encoded) plus
`grid_map` (code -> byte value) on its IQ classes in gguf/quants.py. This script decodes those
itself (without gguf-py's numpy helpers) and packs each grid row little-endian into the u64/u32
entries ggml uses. ksigns_iq2xs and kmask_iq2xs are computed, kvalues_iq4nl and the IQ1 delta
come from gguf-py.

Given ggml's ggml-common.h (optional), every table is cross-checked against ggml's C arrays so
that two independent sources agree; any mismatch aborts without writing.

Usage (with a Python that has `gguf` installed, e.g. gguf==0.19.0):
    python scripts/gen_grids.py [--ggml-common ggml/src/ggml-common.h] [--out grids.rs]
"""

import argparse
import math
import re
import sys
from pathlib import Path

import gguf
from gguf import quants

# (rust name, ggml name, gguf-py class, entry width in bits, doc line)
GRIDS = [
    ("IQ2XXS_GRID", "iq2xxs_grid", "IQ2_XXS", 64, "IQ2_XXS: 256 rows of 8 magnitudes."),
    ("IQ2XS_GRID", "iq2xs_grid", "IQ2_XS", 64, "IQ2_XS: 512 rows of 8 magnitudes."),
    ("IQ2S_GRID", "iq2s_grid", "IQ2_S", 64, "IQ2_S: 1024 rows of 8 magnitudes."),
    ("IQ3XXS_GRID", "iq3xxs_grid", "IQ3_XXS", 32, "IQ3_XXS: 256 rows of 4 magnitudes."),
    ("IQ3S_GRID", "iq3s_grid", "IQ3_S", 32, "IQ3_S: 512 rows of 4 magnitudes."),
    ("IQ1S_GRID", "iq1s_grid", "IQ1_S", 64, "IQ1_S, IQ1_M: 2048 rows of 8 i8 in {-1, 0, 1}."),
]


def decode_grid(cls) -> list[list[int]]:
    """Rows of byte values (as signed or unsigned ints) from a gguf-py grid_hex/grid_map pair."""
    rows, cols = cls.grid_shape
    grid_map = cls.grid_map
    bits = math.ceil(math.log2(len(grid_map)))
    per_byte = 8 // bits  # 3-bit codes sit at nibble boundaries, 2 per byte
    step = 8 // per_byte
    packed = bytes.fromhex(cls.grid_hex.decode("ascii"))
    codes = [(byte >> (step * k)) & ((1 << bits) - 1) for byte in packed for k in range(per_byte)]
    if len(codes) != rows * cols:
        sys.exit(f"{cls.__name__}: {len(codes)} codes, expected {rows}x{cols}")
    values = [int(grid_map[c]) for c in codes]
    return [values[r * cols : (r + 1) * cols] for r in range(rows)]


def pack_row(row: list[int]) -> int:
    """Little-endian packing: element j is byte j, negative values as two's complement."""
    return sum((v & 0xFF) << (8 * j) for j, v in enumerate(row))


def ksigns() -> list[int]:
    """7 sign bits plus an 8th that makes the number of set bits even."""
    return [i | ((bin(i).count("1") & 1) << 7) for i in range(128)]


def parse_ggml_common(path: Path) -> tuple[dict[str, list[int]], dict[str, str]]:
    text = path.read_text()
    defines = dict(re.findall(r"^#define\s+(\w+)\s+(\S+)", text, re.M))
    tables = {}
    pattern = r"^GGML_TABLE_BEGIN\(\s*(\w+)\s*,\s*(\w+)\s*,\s*(\w+)\s*\)(.*?)GGML_TABLE_END\(\)"
    for ctype, name, size, body in re.findall(pattern, text, re.S | re.M):
        body = re.sub(r"//[^\n]*", "", body)
        values = [int(tok, 0) for tok in re.findall(r"-?(?:0x[0-9a-fA-F]+|\d+)", body)]
        n = int(defines.get(size, size), 0)
        if len(values) != n:
            sys.exit(f"ggml-common.h: {name} has {len(values)} entries, declared {n}")
        if ctype.startswith("int"):  # keep our unsigned packing comparable
            bits = int(ctype[3:-2])
            values = [v & ((1 << bits) - 1) for v in values]
        tables[name] = values
    return tables, defines


def rust_array(name: str, rtype: str, values: list[int], per_line: int, width: int, doc: str):
    """A documented static array; `width` hex digits per entry, or decimal when 0."""
    # rustfmt would put each long literal on its own line; keep the table compact instead.
    lines = [f"/// {doc}", "#[rustfmt::skip]"]
    lines.append(f"pub(crate) static {name}: [{rtype}; {len(values)}] = [")
    for i in range(0, len(values), per_line):
        chunk = values[i : i + per_line]
        if width:
            lines.append("    " + " ".join(f"0x{v:0{width}x}," for v in chunk))
        else:
            lines.append("    " + " ".join(f"{v}," for v in chunk))
    lines.append("];")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ggml-common", type=Path, help="ggml-common.h to cross-check against")
    default_out = Path(__file__).resolve().parent.parent / "src/quant/scalar/grids.rs"
    ap.add_argument("--out", type=Path, default=default_out)
    args = ap.parse_args()

    version = getattr(gguf, "__version__", None)
    if version is None:
        from importlib.metadata import version as dist_version

        version = dist_version("gguf")

    grids = {}
    for _, ggml_name, cls_name, _, _ in GRIDS:
        grids[ggml_name] = [pack_row(row) for row in decode_grid(getattr(quants, cls_name))]

    signs = ksigns()
    if bytes(signs) != quants.IQ2_XXS.ksigns:
        sys.exit("computed ksigns_iq2xs differs from gguf-py's IQ2_XXS.ksigns")
    kmask = [1 << j for j in range(8)]
    kvalues = list(quants.IQ4_NL.kvalues)
    delta = float(quants.IQ1_S.delta)
    if float(quants.IQ1_M.delta) != delta:
        sys.exit("gguf-py: IQ1_M.delta differs from IQ1_S.delta")

    source = f"PyPI gguf-py {version} (gguf/quants.py)"
    checked = "Not cross-checked against ggml (run with --ggml-common to do so)."
    if args.ggml_common:
        tables, defines = parse_ggml_common(args.ggml_common)
        ours = dict(grids)
        ours["ksigns_iq2xs"] = signs
        ours["kmask_iq2xs"] = kmask
        ours["kvalues_iq4nl"] = [v & 0xFF for v in kvalues]
        for name, values in ours.items():
            if tables.get(name) != values:
                sys.exit(f"mismatch with ggml-common.h: {name}")
        for define in ("IQ1S_DELTA", "IQ1M_DELTA"):
            if float(defines[define].rstrip("f")) != delta:
                sys.exit(f"mismatch with ggml-common.h: {define}")
        checked = "Cross-checked against ggml's ggml-common.h: both sources agree."
        print(f"cross-check against {args.ggml_common}: {len(ours) + 2} tables/constants agree")

    out = [
        "//! IQ lookup tables for the i-quant kernels.",
        "//!",
        f"//! generated by scripts/gen_grids.py from {source}; do not edit.",
        f"//! {checked}",
        "//!",
        "//! Grid entries pack one row little-endian: element j is byte j (`to_le_bytes()[j]`), as",
        "//! ggml reads its u64/u32 tables through a byte pointer on little-endian machines.",
        "",
    ]
    for rust_name, ggml_name, _, bits, doc in GRIDS:
        rtype = f"u{bits}"
        per_line = 4 if bits == 64 else 8
        out.append(rust_array(rust_name, rtype, grids[ggml_name], per_line, bits // 4, doc))
    out.append(
        rust_array(
            "KSIGNS_IQ2XS", "u8", signs, 8, 2,
            "IQ2/IQ3 sign bytes: 7 bits by index plus bit 7 making the count of minus signs even.",
        )
    )
    out.append(rust_array("KMASK_IQ2XS", "u8", kmask, 8, 2, "Bit j selects the sign of element j."))
    levels_doc = "The 16 non-linear IQ4_NL/IQ4_XS levels."
    out.append(rust_array("KVALUES_IQ4NL", "i8", kvalues, 8, 0, levels_doc))
    out.append(
        "/// Offset added to every IQ1 grid value, negated by a per-group bit. ggml's IQ1_M\n"
        "/// dequantizer uses this one too (its IQ1M_DELTA has the same value).\n"
        f"pub(crate) const IQ1S_DELTA: f32 = {delta!r};\n"
    )
    args.out.write_text("\n".join(out))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
