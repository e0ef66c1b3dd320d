//! Ternary quants TQ1_0 (base-3 packed) and TQ2_0 (2-bit), as the scalar kernels.

use core::arch::wasm32::*;

use super::{bits_at, f16_splat, i8x16_to_f32, load, mul4, store16};
use crate::quant::scalar::for_each_block;

/// The trits `((u8)(b·p)·3) >> 8`, minus 1, for the 16 bytes of `v` with per-lane multipliers
/// `pow3` (as u16 lanes for bytes 0–7 and 8–15).
#[inline(always)]
fn trits(v: v128, pow3_lo: v128, pow3_hi: v128) -> v128 {
    let trit = |x: v128, p: v128| {
        let q = v128_and(i16x8_mul(x, p), u16x8_splat(0xFF));
        u16x8_shr(i16x8_mul(q, u16x8_splat(3)), 8)
    };
    let lo = trit(u16x8_extend_low_u8x16(v), pow3_lo);
    let hi = trit(u16x8_extend_high_u8x16(v), pow3_hi);
    i8x16_sub(u8x16_narrow_i16x8(lo, hi), i8x16_splat(1))
}

const POW3: [u16; 5] = [1, 3, 9, 27, 81];

pub(super) fn dequant_tq1_0(blocks: &[u8], out: &mut [f32]) {
    // qs[48], qh[4], d
    for_each_block(blocks, out, |b: &[u8; 54], y: &mut [f32; 256]| {
        let d = f16_splat(b, 52);
        let qs0 = load(b, 0);
        let qs1 = load(b, 16);
        let qs2 = load(b, 32);
        for (n, &p) in POW3.iter().enumerate() {
            let p = u16x8_splat(p);
            store16(y, 32 * n, mul4(i8x16_to_f32(trits(qs0, p, p)), d));
            store16(y, 32 * n + 16, mul4(i8x16_to_f32(trits(qs1, p, p)), d));
            store16(y, 160 + 16 * n, mul4(i8x16_to_f32(trits(qs2, p, p)), d));
        }
        // qh: value 240 + 4n + j is byte j times 3^n; lane 4n + j.
        let qh = u32::from_le_bytes([b[48], b[49], b[50], b[51]]);
        let qh = u32x4_splat(qh);
        let t = trits(
            qh,
            u16x8(1, 1, 1, 1, 3, 3, 3, 3),
            u16x8(9, 9, 9, 9, 27, 27, 27, 27),
        );
        store16(y, 240, mul4(i8x16_to_f32(t), d));
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
