//! Grid i-quants: IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S and IQ1_M. Grid rows are
//! looked up with scalar loads (as the scalar kernels do) and put two 8-value rows per vector
//! of 16 bytes; scales, conversion, products and sign flips are vector work. A sign flip is an
//! XOR of the sign bit, as the scalar kernels' negation.

use core::arch::wasm32::*;

use super::{f16_at, i8x16_to_f32, store16, u8x16_to_f32};
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

/// The 16 sign masks (0x8000_0000 where negative) of two 8-value rows with sign bytes `s0` and
/// `s1`: bit j of the row's byte negates value j.
#[inline(always)]
fn sign_masks(s0: u8, s1: u8) -> [v128; 4] {
    let bit = u8x16(1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128);
    let signs = u8x16(
        s0, s0, s0, s0, s0, s0, s0, s0, s1, s1, s1, s1, s1, s1, s1, s1,
    );
    let neg = i8x16_eq(v128_and(signs, bit), bit);
    let lo = i16x8_extend_low_i8x16(neg);
    let hi = i16x8_extend_high_i8x16(neg);
    let sign_bit = u32x4_splat(0x8000_0000);
    [
        v128_and(i32x4_extend_low_i16x8(lo), sign_bit),
        v128_and(i32x4_extend_high_i16x8(lo), sign_bit),
        v128_and(i32x4_extend_low_i16x8(hi), sign_bit),
        v128_and(i32x4_extend_high_i16x8(hi), sign_bit),
    ]
}

/// Writes 16 values `±(scale · grid[j])` at `y[at..at + 16]` from two 8-byte grid rows (u8
/// levels) and their sign bytes.
#[inline(always)]
fn put_signed16(y: &mut [f32], at: usize, scale: f32, rows: [u64; 2], signs: [u8; 2]) {
    let scale = f32x4_splat(scale);
    let grid = u8x16_to_f32(u64x2(rows[0], rows[1]));
    let masks = sign_masks(signs[0], signs[1]);
    let mut v = [u32x4_splat(0); 4];
    for k in 0..4 {
        v[k] = v128_xor(f32x4_mul(scale, grid[k]), masks[k]);
    }
    store16(y, at, v);
}

/// Two 4-value IQ3 rows side by side, as one 8-value row.
#[inline(always)]
fn iq3_row(first: u32, second: u32) -> u64 {
    u64::from(first) | u64::from(second) << 32
}

pub(super) fn dequant_iq2_xxs(blocks: &[u8], out: &mut [f32]) {
    // d, then per group of 32: 4 index bytes and a u32 of signs and scale.
    for_each_block(blocks, out, |b: &[u8; 66], y: &mut [f32; 256]| {
        let d = f16_at(b, 0);
        for g in 0..8 {
            let at = 2 + 8 * g;
            let aux = u32_at(b, at + 4);
            let db = d * (0.5 + (aux >> 28) as f32) * 0.25;
            let sign = |m: u32| KSIGNS_IQ2XS[((aux >> (7 * m)) & 127) as usize];
            let row = |k: usize| IQ2XXS_GRID[usize::from(byte(b, at + k))];
            put_signed16(y, 32 * g, db, [row(0), row(1)], [sign(0), sign(1)]);
            put_signed16(y, 32 * g + 16, db, [row(2), row(3)], [sign(2), sign(3)]);
        }
    });
}

pub(super) fn dequant_iq2_xs(blocks: &[u8], out: &mut [f32]) {
    // d, qs[8][4] (u16: 9-bit index, 7-bit sign index), scales[8]
    for_each_block(blocks, out, |b: &[u8; 74], y: &mut [f32; 256]| {
        let d = f16_at(b, 0);
        for g in 0..8 {
            let scales = byte(b, 66 + g);
            for (h, s) in [scales & 0x0F, scales >> 4].into_iter().enumerate() {
                let db = d * (0.5 + f32::from(s)) * 0.25;
                let q0 = u16_at(b, 2 + 8 * g + 4 * h);
                let q1 = u16_at(b, 2 + 8 * g + 4 * h + 2);
                let rows = [q0, q1].map(|q| IQ2XS_GRID[usize::from(q & 0x1ff)]);
                let signs = [q0, q1].map(|q| KSIGNS_IQ2XS[usize::from((q >> 9) & 127)]);
                put_signed16(y, 32 * g + 16 * h, db, rows, signs);
            }
        }
    });
}

pub(super) fn dequant_iq2_s(blocks: &[u8], out: &mut [f32]) {
    // d, qs[8][4], signs[8][4], qh[8], scales[8]
    for_each_block(blocks, out, |b: &[u8; 82], y: &mut [f32; 256]| {
        let d = f16_at(b, 0);
        for g in 0..8 {
            let qh = byte(b, 66 + g);
            let scales = byte(b, 74 + g);
            for (h, s) in [scales & 0x0F, scales >> 4].into_iter().enumerate() {
                let db = d * (0.5 + f32::from(s)) * 0.25;
                let row = |k: usize| {
                    let index = usize::from(byte(b, 2 + 4 * g + k))
                        | (usize::from((qh >> (2 * k)) & 3) << 8);
                    IQ2S_GRID[index & 0x3ff]
                };
                let sign = |k: usize| byte(b, 34 + 4 * g + k);
                let (k0, k1) = (2 * h, 2 * h + 1);
                put_signed16(
                    y,
                    32 * g + 16 * h,
                    db,
                    [row(k0), row(k1)],
                    [sign(k0), sign(k1)],
                );
            }
        }
    });
}

pub(super) fn dequant_iq3_xxs(blocks: &[u8], out: &mut [f32]) {
    // d, qs[8][8], scales_signs[8] (u32)
    for_each_block(blocks, out, |b: &[u8; 98], y: &mut [f32; 256]| {
        let d = f16_at(b, 0);
        for g in 0..8 {
            let aux = u32_at(b, 66 + 4 * g);
            let db = d * (0.5 + (aux >> 28) as f32) * 0.5;
            let row = |m: usize| {
                let first = IQ3XXS_GRID[usize::from(byte(b, 2 + 8 * g + 2 * m))];
                let second = IQ3XXS_GRID[usize::from(byte(b, 2 + 8 * g + 2 * m + 1))];
                iq3_row(first, second)
            };
            let sign = |m: usize| KSIGNS_IQ2XS[((aux >> (7 * m)) & 127) as usize];
            put_signed16(y, 32 * g, db, [row(0), row(1)], [sign(0), sign(1)]);
            put_signed16(y, 32 * g + 16, db, [row(2), row(3)], [sign(2), sign(3)]);
        }
    });
}

pub(super) fn dequant_iq3_s(blocks: &[u8], out: &mut [f32]) {
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
            let db = d * f32::from(1 + 2 * s);
            let qh = byte(b, 66 + g);
            let grid = |k: usize| {
                let index = usize::from(byte(b, 2 + 8 * g + k)) | (usize::from((qh >> k) & 1) << 8);
                IQ3S_GRID[index & 0x1ff]
            };
            let row = |m: usize| iq3_row(grid(2 * m), grid(2 * m + 1));
            let sign = |m: usize| byte(b, 74 + 4 * g + m);
            put_signed16(y, 32 * g, db, [row(0), row(1)], [sign(0), sign(1)]);
            put_signed16(y, 32 * g + 16, db, [row(2), row(3)], [sign(2), sign(3)]);
        }
    });
}

/// Writes 16 values `dl · (grid[j] + delta)` (i8 levels) at `y[at..at + 16]`, the first 8 from
/// `rows[0]` with `deltas[0]`, the last 8 from `rows[1]` with `deltas[1]`.
#[inline(always)]
fn put_iq1(y: &mut [f32], at: usize, dl: f32, rows: [u64; 2], deltas: [f32; 2]) {
    let dl = f32x4_splat(dl);
    let grid = i8x16_to_f32(u64x2(rows[0], rows[1]));
    let delta = [deltas[0], deltas[0], deltas[1], deltas[1]];
    let mut v = [u32x4_splat(0); 4];
    for k in 0..4 {
        v[k] = f32x4_mul(dl, f32x4_add(grid[k], f32x4_splat(delta[k])));
    }
    store16(y, at, v);
}

/// IQ1 delta: `+IQ1S_DELTA`, or its negation when `flag` (bit 3 of a byte) is set. Made with
/// a shift rather than a select: the flags are data, and a branch on them would be mispredicted
/// half the time.
#[inline(always)]
fn iq1_delta(flag: u8) -> f32 {
    f32::from_bits(IQ1S_DELTA.to_bits() ^ (u32::from(flag & 8) << 28))
}

pub(super) fn dequant_iq1_s(blocks: &[u8], out: &mut [f32]) {
    // d, qs[8][4], qh[8] (u16)
    for_each_block(blocks, out, |b: &[u8; 50], y: &mut [f32; 256]| {
        let d = f16_at(b, 0);
        for g in 0..8 {
            let qh = u16_at(b, 34 + 2 * g);
            let dl = d * f32::from(2 * ((qh >> 12) & 7) + 1);
            let delta = iq1_delta((qh >> 12) as u8);
            let row = |k: usize| {
                let index =
                    usize::from(byte(b, 2 + 4 * g + k)) | (usize::from((qh >> (3 * k)) & 7) << 8);
                IQ1S_GRID[index & 0x7ff]
            };
            put_iq1(y, 32 * g, dl, [row(0), row(1)], [delta, delta]);
            put_iq1(y, 32 * g + 16, dl, [row(2), row(3)], [delta, delta]);
        }
    });
}

pub(super) fn dequant_iq1_m(blocks: &[u8], out: &mut [f32]) {
    // qs[16][2], qh[16], scales[4] (u16; their top nibbles make the f16 d)
    for_each_block(blocks, out, |b: &[u8; 56], y: &mut [f32; 256]| {
        let s = [0, 1, 2, 3].map(|i| u16_at(b, 48 + 2 * i));
        let d = crate::quant::scalar::f16_to_f32(
            (s[0] >> 12) | ((s[1] >> 8) & 0x00f0) | ((s[2] >> 4) & 0x0f00) | (s[3] & 0xf000),
        );
        for h in 0..16 {
            let dl = d * f32::from(2 * ((s[h / 4] >> (3 * (h % 4))) & 7) + 1);
            let qh = byte(b, 32 + h);
            let halves = [qh & 0x0F, qh >> 4];
            let row = |k: usize| {
                let index = usize::from(byte(b, 2 * h + k)) | (usize::from(halves[k] & 7) << 8);
                IQ1S_GRID[index & 0x7ff]
            };
            let deltas = halves.map(iq1_delta);
            put_iq1(y, 16 * h, dl, [row(0), row(1)], deltas);
        }
    });
}
