//! IQ4_NL and IQ4_XS: nibbles looked up in `kvalues_iq4nl` with a byte swizzle.

use core::arch::wasm32::*;

use super::{
    f16_at, f16_splat, high_nibbles, load, low_nibbles, mul4_dq, store16, widen_biased, MAGIC,
};
use crate::quant::scalar::for_each_block;
use crate::quant::scalar::grids::KVALUES_IQ4NL;

/// `kvalues_iq4nl` as a swizzle table, each value plus 128 as an unsigned byte (the top bit
/// flipped): what [`widen_biased`] takes, with `MAGIC + 128` as the bias.
#[inline(always)]
fn kvalues() -> v128 {
    let k = KVALUES_IQ4NL;
    let table = i8x16(
        k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7], k[8], k[9], k[10], k[11], k[12], k[13],
        k[14], k[15],
    );
    v128_xor(table, i8x16_splat(-128))
}

/// The 16 looked-up values of `biased` (from [`kvalues`]) as four vectors of f32.
#[inline(always)]
fn kvalues_f32(biased: v128) -> [v128; 4] {
    widen_biased(biased, MAGIC + 128.0)
}

/// 32 values `dl · kvalues[nibble]` from the 16 bytes at `b[at..at + 16]`: low nibbles first.
#[inline(always)]
fn put_iq4(b: &[u8], at: usize, dl: v128, table: v128, y: &mut [f32], y_at: usize) {
    let qs = load(b, at);
    let lo = i8x16_swizzle(table, low_nibbles(qs));
    let hi = i8x16_swizzle(table, high_nibbles(qs));
    store16(y, y_at, mul4_dq(dl, kvalues_f32(lo)));
    store16(y, y_at + 16, mul4_dq(dl, kvalues_f32(hi)));
}

pub(super) fn dequant_iq4_nl(blocks: &[u8], out: &mut [f32]) {
    let table = kvalues();
    for_each_block(blocks, out, |b: &[u8; 18], y: &mut [f32; 32]| {
        put_iq4(b, 2, f16_splat(b, 0), table, y, 0);
    });
}

pub(super) fn dequant_iq4_xs(blocks: &[u8], out: &mut [f32]) {
    let table = kvalues();
    // d, scales_h (u16), scales_l[4], qs[8][16]
    for_each_block(blocks, out, |b: &[u8; 136], y: &mut [f32; 256]| {
        let d = f16_at(b, 0);
        let scales_h = u16::from_le_bytes([b[2], b[3]]);
        for ib in 0..8 {
            let low = (b[4 + ib / 2] >> (4 * (ib % 2))) & 0x0F;
            let ls = i32::from(low) | (i32::from((scales_h >> (2 * ib)) & 3) << 4);
            let dl = f32x4_splat(d * (ls - 32) as f32);
            put_iq4(b, 8 + 16 * ib, dl, table, y, 32 * ib);
        }
    });
}
