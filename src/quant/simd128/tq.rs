//! Ternary quants TQ1_0 (base-3 packed) and TQ2_0 (2-bit), as the scalar kernels.

use core::arch::wasm32::*;

use super::{bits_at, f16_splat, i8x16_to_f32, load, mul4, store16};
use crate::quant::scalar::for_each_block;

/// The trits `((u8)(b·p)·3) >> 8` of u16 lanes `x` (bytes widened) with per-lane multipliers
/// `p`, minus 1, as two vectors of f32: each trit (0..=2) is interleaved into the low half of
/// an f32 with high half 0x4B00, which is 2^23 + trit exactly, and 2^23 + 1 is subtracted.
#[inline(always)]
fn trits_f32(x: v128, p: v128) -> [v128; 2] {
    let q = v128_and(i16x8_mul(x, p), u16x8_splat(0xFF));
    let t = u16x8_shr(i16x8_mul(q, u16x8_splat(3)), 8);
    let exponent = u16x8_splat(0x4B00);
    let bias = f32x4_splat(8_388_609.0);
    [
        f32x4_sub(u16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(t, exponent), bias),
        f32x4_sub(
            u16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(t, exponent),
            bias,
        ),
    ]
}

/// `(trit − 1) · d` for the 16 bytes widened into `lo` and `hi` (u16 lanes), stored at
/// `y[at..at + 16]`.
#[inline(always)]
fn put_trits(
    y: &mut [f32],
    at: usize,
    (lo, hi): (v128, v128),
    (p_lo, p_hi): (v128, v128),
    d: v128,
) {
    let [a, b] = trits_f32(lo, p_lo);
    let [c, e] = trits_f32(hi, p_hi);
    store16(y, at, mul4([a, b, c, e], d));
}

/// The 16 bytes of `v` widened to u16 lanes: bytes 0–7, bytes 8–15. Interleaves with zero
/// (one instruction each in V8, where `u16x8_extend_high_u8x16` becomes a byte shuffle whose
/// mask is rebuilt every time).
#[inline(always)]
fn widen(v: v128) -> (v128, v128) {
    let zero = u8x16_splat(0);
    (
        u8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(v, zero),
        u8x16_shuffle::<8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31>(v, zero),
    )
}

const POW3: [u16; 5] = [1, 3, 9, 27, 81];

pub(super) fn dequant_tq1_0(blocks: &[u8], out: &mut [f32]) {
    // qs[48], qh[4], d
    for_each_block(blocks, out, |b: &[u8; 54], y: &mut [f32; 256]| {
        let d = f16_splat(b, 52);
        let qs0 = widen(load(b, 0));
        let qs1 = widen(load(b, 16));
        let qs2 = widen(load(b, 32));
        for (n, &p) in POW3.iter().enumerate() {
            let p = (u16x8_splat(p), u16x8_splat(p));
            put_trits(y, 32 * n, qs0, p, d);
            put_trits(y, 32 * n + 16, qs1, p, d);
            put_trits(y, 160 + 16 * n, qs2, p, d);
        }
        // qh: value 240 + 4n + j is byte j times 3^n; lane 4n + j.
        let qh = u32::from_le_bytes([b[48], b[49], b[50], b[51]]);
        let qh = widen(u32x4_splat(qh));
        let p = (
            u16x8(1, 1, 1, 1, 3, 3, 3, 3),
            u16x8(9, 9, 9, 9, 27, 27, 27, 27),
        );
        put_trits(y, 240, qh, p, d);
    });
}

pub(super) fn dequant_tq2_0(blocks: &[u8], out: &mut [f32]) {
    // qs[64], d
    for_each_block(blocks, out, |b: &[u8; 66], y: &mut [f32; 256]| {
        let d = f16_splat(b, 64);
        for c in 0..4 {
            // Bytes 16c..16c+16 give values 128·(c/2) + 32k + 16·(c%2) + l.
            let qs = load(b, 16 * c);
            for k in 0..4 {
                let q = bits_at(qs, 2 * k as u32, 3);
                let q = i8x16_sub(q, i8x16_splat(1));
                let at = 128 * (c / 2) + 32 * k + 16 * (c % 2);
                store16(y, at, mul4(i8x16_to_f32(q), d));
            }
        }
    });
}
