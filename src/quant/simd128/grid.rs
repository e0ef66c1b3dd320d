//! Grid i-quants: IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S and IQ1_M. A sign flip is an
//! XOR of the sign bit, as the scalar kernels' negation.
//!
//! Grid rows come from tables built once per process ([`tables`]), each row already as f32
//! (exact: the levels are small integers), and IQ2/IQ3 sign bytes from eight sign-bit masks
//! each ([`bit_mask_table`]), so a row of 8 values is four 16-byte loads, two multiplies and
//! two XORs. (The byte-to-f32 widening and the sign-bit spreading they replace cost about 25
//! shuffles, shifts and conversions per 16 values in V8.) IQ1 rows hold the level plus the
//! delta for both delta signs, so a row of 8 values is two loads and two multiplies.

use std::sync::OnceLock;

use core::arch::wasm32::*;

use super::{
    bit_mask_table, bit_masks, f16_at, f16x4_to_f32x4, load_f32x4, load_u32x4, store, store16,
};
use crate::quant::scalar::for_each_block;
use crate::quant::scalar::grids::{
    IQ1S_DELTA, IQ1S_GRID, IQ2S_GRID, IQ2XS_GRID, IQ2XXS_GRID, IQ3S_GRID, IQ3XXS_GRID, KSIGNS_IQ2XS,
};

/// `u8` at `b[at]`, 0 when out of range (whole blocks never are).
#[inline(always)]
fn byte(b: &[u8], at: usize) -> u8 {
    b.get(at).copied().unwrap_or(0)
}

#[inline(always)]
fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([byte(b, at), byte(b, at + 1)])
}

#[inline(always)]
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([
        byte(b, at),
        byte(b, at + 1),
        byte(b, at + 2),
        byte(b, at + 3),
    ])
}

/// Grid rows as f32 and sign bytes as sign-bit masks.
struct Tables {
    iq2xxs: [[f32; 8]; 256],
    iq2xs: [[f32; 8]; 512],
    iq2s: [[f32; 8]; 1024],
    iq3xxs: [[f32; 4]; 256],
    iq3s: [[f32; 4]; 512],
    /// IQ1 rows with the delta added: row `r` is grid row `r & 0x7ff` (levels -1, 0, 1) plus
    /// `IQ1S_DELTA`, negated when bit 11 of `r` is set.
    iq1: [[f32; 8]; 4096],
}

/// Each byte of a grid row (`to_le_bytes` of the entry) as f32, read by `level`.
fn rows_f32<const N: usize, const W: usize>(
    grid: &[impl Copy + Into<u64>; N],
    level: fn(u8) -> f32,
) -> [[f32; W]; N] {
    let mut out = [[0.0; W]; N];
    for (row, &entry) in out.iter_mut().zip(grid) {
        let bytes = entry.into().to_le_bytes();
        for (x, &byte) in row.iter_mut().zip(&bytes) {
            *x = level(byte);
        }
    }
    out
}

/// [`Tables::iq1`]: each level plus the delta, the scalar kernels' `level as f32 + delta` (the
/// same f32 addition, so the same bits).
fn iq1_rows() -> [[f32; 8]; 4096] {
    let mut out = [[0.0; 8]; 4096];
    for (r, row) in out.iter_mut().enumerate() {
        let delta = iq1_delta((r >> 8) as u8);
        let levels = IQ1S_GRID.get(r & 0x7ff).copied().unwrap_or(0).to_le_bytes();
        for (x, &level) in row.iter_mut().zip(&levels) {
            *x = signed(level) + delta;
        }
    }
    out
}

/// A grid level stored as an unsigned byte.
fn unsigned(byte: u8) -> f32 {
    f32::from(byte)
}

/// A grid level stored as a signed byte.
fn signed(byte: u8) -> f32 {
    f32::from(i8::from_le_bytes([byte]))
}

/// The tables, built on first use (about 196 KiB, some microseconds).
fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| Tables {
        iq2xxs: rows_f32::<256, 8>(&IQ2XXS_GRID, unsigned),
        iq2xs: rows_f32::<512, 8>(&IQ2XS_GRID, unsigned),
        iq2s: rows_f32::<1024, 8>(&IQ2S_GRID, unsigned),
        iq3xxs: rows_f32::<256, 4>(&IQ3XXS_GRID, unsigned),
        iq3s: rows_f32::<512, 4>(&IQ3S_GRID, unsigned),
        iq1: iq1_rows(),
    })
}

/// Row `i` of `table` (zeros when out of range, which masked indices never are).
#[inline(always)]
fn row<const W: usize, const N: usize>(table: &[[f32; W]; N], i: usize) -> &[f32; W] {
    table.get(i).unwrap_or(&[0.0; W])
}

/// Writes 8 values `±(scale · grid[j])` at `y[at..at + 8]` from the two 4-value halves of a
/// row and the row's sign masks.
#[inline(always)]
fn put_signed8(y: &mut [f32], at: usize, scale: v128, halves: [v128; 2], signs: &[u32; 8]) {
    for (h, grid) in halves.into_iter().enumerate() {
        let v = v128_xor(f32x4_mul(scale, grid), load_u32x4(signs, 4 * h));
        store(y, at + 4 * h, v);
    }
}

/// The two halves of an 8-value f32 row.
#[inline(always)]
fn halves8(row: &[f32; 8]) -> [v128; 2] {
    [load_f32x4(row, 0), load_f32x4(row, 4)]
}

pub(super) fn dequant_iq2_xxs(blocks: &[u8], out: &mut [f32]) {
    let t = tables();
    let masks = bit_mask_table();
    // d, then per group of 32: 4 index bytes and a u32 of signs and scale.
    for_each_block(blocks, out, |b: &[u8; 66], y: &mut [f32; 256]| {
        let d = f16_at(b, 0);
        for g in 0..8 {
            let at = 2 + 8 * g;
            let aux = u32_at(b, at + 4);
            let db = f32x4_splat(d * (0.5 + (aux >> 28) as f32) * 0.25);
            for k in 0..4 {
                let grid = row(&t.iq2xxs, usize::from(byte(b, at + k)));
                let sign = KSIGNS_IQ2XS[((aux >> (7 * k)) & 127) as usize];
                put_signed8(y, 32 * g + 8 * k, db, halves8(grid), bit_masks(masks, sign));
            }
        }
    });
}

pub(super) fn dequant_iq2_xs(blocks: &[u8], out: &mut [f32]) {
    let t = tables();
    let masks = bit_mask_table();
    // d, qs[8][4] (u16: 9-bit index, 7-bit sign index), scales[8]
    for_each_block(blocks, out, |b: &[u8; 74], y: &mut [f32; 256]| {
        let d = f16_at(b, 0);
        for g in 0..8 {
            let scales = byte(b, 66 + g);
            for (h, s) in [scales & 0x0F, scales >> 4].into_iter().enumerate() {
                let db = f32x4_splat(d * (0.5 + f32::from(s)) * 0.25);
                for k in 0..2 {
                    let q = u16_at(b, 2 + 8 * g + 4 * h + 2 * k);
                    let grid = row(&t.iq2xs, usize::from(q & 0x1ff));
                    let sign = KSIGNS_IQ2XS[usize::from((q >> 9) & 127)];
                    let at = 32 * g + 16 * h + 8 * k;
                    put_signed8(y, at, db, halves8(grid), bit_masks(masks, sign));
                }
            }
        }
    });
}

pub(super) fn dequant_iq2_s(blocks: &[u8], out: &mut [f32]) {
    let t = tables();
    let masks = bit_mask_table();
    // d, qs[8][4], signs[8][4], qh[8], scales[8]
    for_each_block(blocks, out, |b: &[u8; 82], y: &mut [f32; 256]| {
        let d = f16_at(b, 0);
        for g in 0..8 {
            let qh = byte(b, 66 + g);
            let scales = byte(b, 74 + g);
            for (h, s) in [scales & 0x0F, scales >> 4].into_iter().enumerate() {
                let db = f32x4_splat(d * (0.5 + f32::from(s)) * 0.25);
                for k in [2 * h, 2 * h + 1] {
                    let index = usize::from(byte(b, 2 + 4 * g + k))
                        | (usize::from((qh >> (2 * k)) & 3) << 8);
                    let grid = row(&t.iq2s, index & 0x3ff);
                    let sign = byte(b, 34 + 4 * g + k);
                    put_signed8(y, 32 * g + 8 * k, db, halves8(grid), bit_masks(masks, sign));
                }
            }
        }
    });
}

pub(super) fn dequant_iq3_xxs(blocks: &[u8], out: &mut [f32]) {
    let t = tables();
    let masks = bit_mask_table();
    // d, qs[8][8], scales_signs[8] (u32)
    for_each_block(blocks, out, |b: &[u8; 98], y: &mut [f32; 256]| {
        let d = f16_at(b, 0);
        for g in 0..8 {
            let aux = u32_at(b, 66 + 4 * g);
            let db = f32x4_splat(d * (0.5 + (aux >> 28) as f32) * 0.5);
            for m in 0..4 {
                let half = |k: usize| {
                    let grid = row(&t.iq3xxs, usize::from(byte(b, 2 + 8 * g + 2 * m + k)));
                    load_f32x4(grid, 0)
                };
                let sign = KSIGNS_IQ2XS[((aux >> (7 * m)) & 127) as usize];
                put_signed8(
                    y,
                    32 * g + 8 * m,
                    db,
                    [half(0), half(1)],
                    bit_masks(masks, sign),
                );
            }
        }
    });
}

pub(super) fn dequant_iq3_s(blocks: &[u8], out: &mut [f32]) {
    let t = tables();
    let masks = bit_mask_table();
    // d, qs[8][8], qh[8], signs[8][4], scales[4]
    for_each_block(blocks, out, |b: &[u8; 110], y: &mut [f32; 256]| {
        let d = f16_at(b, 0);
        for g in 0..8 {
            let scales = byte(b, 106 + g / 2);
            let s = if g % 2 == 0 {
                scales & 0x0F
            } else {
                scales >> 4
            };
            let db = f32x4_splat(d * f32::from(1 + 2 * s));
            let qh = byte(b, 66 + g);
            let half = |k: usize| {
                let index = usize::from(byte(b, 2 + 8 * g + k)) | (usize::from((qh >> k) & 1) << 8);
                load_f32x4(row(&t.iq3s, index & 0x1ff), 0)
            };
            for m in 0..4 {
                let sign = byte(b, 74 + 4 * g + m);
                let halves = [half(2 * m), half(2 * m + 1)];
                put_signed8(y, 32 * g + 8 * m, db, halves, bit_masks(masks, sign));
            }
        }
    });
}

/// Writes 16 values `dl · row[j]` at `y[at..at + 16]`, the first 8 from `rows[0]`, the last 8
/// from `rows[1]` (rows of [`Tables::iq1`], the delta already added).
#[inline(always)]
fn put_iq1(y: &mut [f32], at: usize, dl: v128, rows: [&[f32; 8]; 2]) {
    let [a, b] = halves8(rows[0]);
    let [c, e] = halves8(rows[1]);
    store16(y, at, [a, b, c, e].map(|grid| f32x4_mul(dl, grid)));
}

/// IQ1 delta: `+IQ1S_DELTA`, or its negation when `flag` (bit 3 of a byte) is set. Made with
/// a shift rather than a select: the flags are data, and a branch on them would be mispredicted
/// half the time.
#[inline(always)]
fn iq1_delta(flag: u8) -> f32 {
    f32::from_bits(IQ1S_DELTA.to_bits() ^ (u32::from(flag & 8) << 28))
}

pub(super) fn dequant_iq1_s(blocks: &[u8], out: &mut [f32]) {
    let t = tables();
    // d, qs[8][4], qh[8] (u16)
    for_each_block(blocks, out, |b: &[u8; 50], y: &mut [f32; 256]| {
        let d = f16_at(b, 0);
        for g in 0..8 {
            let qh = u16_at(b, 34 + 2 * g);
            let dl = f32x4_splat(d * f32::from(2 * ((qh >> 12) & 7) + 1));
            // Bit 15 (the delta's sign) to bit 11 of each row index.
            let flag = usize::from(qh >> 15) << 11;
            let row = |k: usize| {
                let index = usize::from(byte(b, 2 + 4 * g + k))
                    | (usize::from((qh >> (3 * k)) & 7) << 8)
                    | flag;
                row(&t.iq1, index & 0xfff)
            };
            put_iq1(y, 32 * g, dl, [row(0), row(1)]);
            put_iq1(y, 32 * g + 16, dl, [row(2), row(3)]);
        }
    });
}

/// IQ1_M: 16 values per `put`, with the scale of half-group `h` in lane `h % 4` of `dls[h / 4]`.
#[inline(always)]
fn iq1_m_quarter(y: &mut [f32; 256], b: &[u8; 56], t: &Tables, i: usize, dls: v128) {
    let dl = [
        i32x4_shuffle::<0, 0, 0, 0>(dls, dls),
        i32x4_shuffle::<1, 1, 1, 1>(dls, dls),
        i32x4_shuffle::<2, 2, 2, 2>(dls, dls),
        i32x4_shuffle::<3, 3, 3, 3>(dls, dls),
    ];
    for (j, dl) in dl.into_iter().enumerate() {
        let h = 4 * i + j;
        // A qh nibble: 3 high index bits and the delta's sign, bits 8..12 of the row index.
        let qh = usize::from(byte(b, 32 + h));
        let rows = [
            row(&t.iq1, usize::from(byte(b, 2 * h)) | (qh & 0x0F) << 8),
            row(&t.iq1, usize::from(byte(b, 2 * h + 1)) | (qh & 0xF0) << 4),
        ];
        put_iq1(y, 16 * h, dl, rows);
    }
}

pub(super) fn dequant_iq1_m(blocks: &[u8], out: &mut [f32]) {
    let t = tables();
    // qs[16][2], qh[16], scales[4] (u16; their top nibbles make the f16 d)
    for_each_block(blocks, out, |b: &[u8; 56], y: &mut [f32; 256]| {
        let s = [0, 1, 2, 3].map(|i| u16_at(b, 48 + 2 * i));
        let d = (s[0] >> 12) | ((s[1] >> 8) & 0x00f0) | ((s[2] >> 4) & 0x0f00) | (s[3] & 0xf000);
        let d = f16x4_to_f32x4(i32x4_splat(i32::from(d as i16)));
        // Half-group h = 4i + j has the 3 bits at 3j of scales[i]: lane j of vector i after
        // multiplying by 2^(9 − 3j) (a left shift) and shifting all lanes right by 9.
        let dls = s.map(|s| {
            let bits = i32x4_mul(u32x4_splat(u32::from(s)), u32x4(512, 64, 8, 1));
            let bits = v128_and(u32x4_shr(bits, 9), u32x4_splat(7));
            // d · (2·bits + 1), as the scalar product.
            let odd = v128_or(i32x4_shl(bits, 1), u32x4_splat(1));
            f32x4_mul(d, f32x4_convert_i32x4(odd))
        });
        for (i, dls) in dls.into_iter().enumerate() {
            iq1_m_quarter(y, b, t, i, dls);
        }
    });
}
