//! Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and Q8_1: one 32-value block per step.

use core::arch::wasm32::*;

use super::{
    bit_mask_table, bit_masks, bits_at, f16_splat, high_nibbles, i8x16_to_f32, interleave4, load,
    load_u32x4, low_nibbles, mul4, mul_add4, store, store16, u8x16_to_f32,
};
use crate::quant::scalar::for_each_block;

/// Bit 4 of each byte set where Q5's `qh` (the u32 at `bytes[at..at + 4]`) has the bit of
/// that element: values 0–15 in the first vector, 16–31 in the second.
#[inline(always)]
fn q5_high_bits(bytes: &[u8], at: usize) -> (v128, v128) {
    let qh = match bytes.get(at..at + 4) {
        Some(&[a, b, c, d]) => u32::from_le_bytes([a, b, c, d]),
        _ => 0,
    };
    let qh = u32x4_splat(qh);
    let bit = u8x16(1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128);
    let spread = |first: u8| {
        let s = first;
        let bytes = u8x16_swizzle(
            qh,
            u8x16(
                s,
                s,
                s,
                s,
                s,
                s,
                s,
                s,
                s + 1,
                s + 1,
                s + 1,
                s + 1,
                s + 1,
                s + 1,
                s + 1,
                s + 1,
            ),
        );
        let set = i8x16_eq(v128_and(bytes, bit), bit);
        v128_and(set, u8x16_splat(0x10))
    };
    (spread(0), spread(2))
}

pub(super) fn dequant_q4_0(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 18], y: &mut [f32; 32]| {
        let d = f16_splat(b, 0);
        let qs = load(b, 2);
        let eight = i8x16_splat(8);
        let lo = i8x16_sub(low_nibbles(qs), eight);
        let hi = i8x16_sub(high_nibbles(qs), eight);
        store16(y, 0, mul4(i8x16_to_f32(lo), d));
        store16(y, 16, mul4(i8x16_to_f32(hi), d));
    });
}

pub(super) fn dequant_q4_1(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 20], y: &mut [f32; 32]| {
        let d = f16_splat(b, 0);
        let m = f16_splat(b, 2);
        let qs = load(b, 4);
        store16(y, 0, mul_add4(u8x16_to_f32(low_nibbles(qs)), d, m));
        store16(y, 16, mul_add4(u8x16_to_f32(high_nibbles(qs)), d, m));
    });
}

pub(super) fn dequant_q5_0(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 22], y: &mut [f32; 32]| {
        let d = f16_splat(b, 0);
        let (h0, h1) = q5_high_bits(b, 2);
        let qs = load(b, 6);
        let sixteen = i8x16_splat(16);
        let lo = i8x16_sub(v128_or(low_nibbles(qs), h0), sixteen);
        let hi = i8x16_sub(v128_or(high_nibbles(qs), h1), sixteen);
        store16(y, 0, mul4(i8x16_to_f32(lo), d));
        store16(y, 16, mul4(i8x16_to_f32(hi), d));
    });
}

pub(super) fn dequant_q5_1(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 24], y: &mut [f32; 32]| {
        let d = f16_splat(b, 0);
        let m = f16_splat(b, 2);
        let (h0, h1) = q5_high_bits(b, 4);
        let qs = load(b, 8);
        let lo = v128_or(low_nibbles(qs), h0);
        let hi = v128_or(high_nibbles(qs), h1);
        store16(y, 0, mul_add4(u8x16_to_f32(lo), d, m));
        store16(y, 16, mul_add4(u8x16_to_f32(hi), d, m));
    });
}

/// Q8_0 and Q8_1: `q · d` for the 32 signed bytes at `b[at..at + 32]`.
#[inline(always)]
fn dequant_i8_quants(b: &[u8], at: usize, d: v128, y: &mut [f32]) {
    store16(y, 0, mul4(i8x16_to_f32(load(b, at)), d));
    store16(y, 16, mul4(i8x16_to_f32(load(b, at + 16)), d));
}

pub(super) fn dequant_q8_0(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 34], y: &mut [f32; 32]| {
        dequant_i8_quants(b, 2, f16_splat(b, 0), y);
    });
}

pub(super) fn dequant_q8_1(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 36], y: &mut [f32; 32]| {
        dequant_i8_quants(b, 4, f16_splat(b, 0), y);
    });
}

pub(super) fn dequant_q1_0(blocks: &[u8], out: &mut [f32]) {
    let table = bit_mask_table();
    // d, qs[16]: bit j (LSB first) of byte i is value 8i + j, +d when set, else -d.
    for_each_block(blocks, out, |b: &[u8; 18], y: &mut [f32; 128]| {
        // Negation only flips the sign bit, as the scalar `-d`; flipping it back where the
        // bit is set gives +d there.
        let neg_d = v128_xor(f16_splat(b, 0), f32x4_splat(-0.0));
        for (i, &q) in b[2..].iter().enumerate() {
            let masks = bit_masks(table, q);
            for h in 0..2 {
                store(y, 8 * i + 4 * h, v128_xor(neg_d, load_u32x4(masks, 4 * h)));
            }
        }
    });
}

pub(super) fn dequant_q2_0(blocks: &[u8], out: &mut [f32]) {
    // d, qs[16]: bits 2s..2s+2 of byte i are value 4i + s.
    for_each_block(blocks, out, |b: &[u8; 18], y: &mut [f32; 64]| {
        let d = f16_splat(b, 0);
        let qs = load(b, 2);
        let three = u8x16_splat(3);
        let a0 = v128_and(qs, three);
        let a1 = bits_at(qs, 2, 3);
        let a2 = bits_at(qs, 4, 3);
        let a3 = bits_at(qs, 6, 3);
        // Interleave to a0[i], a1[i], a2[i], a3[i] for each byte i.
        let q = interleave4(a0, a1, a2, a3);
        for (c, q) in q.into_iter().enumerate() {
            let q = i8x16_sub(q, i8x16_splat(1));
            store16(y, 16 * c, mul4(i8x16_to_f32(q), d));
        }
    });
}
