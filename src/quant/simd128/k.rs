//! K-quants (256-value super-blocks): Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and Q8_K, 16 values per
//! vector step with the sub-block's scale (computed as the scalar kernel does) splatted.

use core::arch::wasm32::*;

use super::{
    bits_at, f16_at, f16_splat, high_nibbles, i8x16_to_f32, load, low_nibbles, mul4_dq, mul_sub4,
    store16, u8x16_to_f32, widen_biased, MAGIC,
};
use crate::quant::scalar::for_each_block;

const QK_K: usize = 256;

/// The 12 packed scale bytes at `bytes[at..at + 12]`.
#[inline(always)]
fn scale_bytes(bytes: &[u8], at: usize) -> [u8; 12] {
    let mut packed = [0; 12];
    if let Some(src) = bytes.get(at..at + 12) {
        packed.copy_from_slice(src);
    }
    packed
}

/// Q4_K/Q5_K's eight (scale, min) pairs of 6 bits (ggml's `get_scale_min_k4`).
#[inline(always)]
fn unpack_scale_min_k4(packed: &[u8; 12]) -> [(u8, u8); 8] {
    core::array::from_fn(|j| {
        if j < 4 {
            (packed[j] & 63, packed[j + 4] & 63)
        } else {
            (
                (packed[j + 4] & 0x0F) | (packed[j - 4] >> 6) << 4,
                (packed[j + 4] >> 4) | (packed[j] >> 6) << 4,
            )
        }
    })
}

/// Bytes of `v` that have all bits of `mask` set become 0xFF, the others 0.
#[inline(always)]
fn has_bits(v: v128, mask: u8) -> v128 {
    let mask = u8x16_splat(mask);
    i8x16_eq(v128_and(v, mask), mask)
}

/// Lane `L` of `v` in all four lanes.
#[inline(always)]
fn lane<const L: usize>(v: v128) -> v128 {
    i32x4_shuffle::<L, L, L, L>(v, v)
}

/// The four scale vectors (sub-blocks `4k..4k + 4` in vector `k`) as lane splats, in order.
#[inline(always)]
fn lanes(v: v128) -> [v128; 4] {
    [lane::<0>(v), lane::<1>(v), lane::<2>(v), lane::<3>(v)]
}

pub(super) fn dequant_q2_k(blocks: &[u8], out: &mut [f32]) {
    // scales[16], qs[64], d, dmin
    for_each_block(blocks, out, |b: &[u8; 84], y: &mut [f32; QK_K]| {
        let sc = load(b, 0);
        // Sub-block `is` has d · (sc & 15) and dmin · (sc >> 4), as the scalar products.
        let dls = mul4_dq(f16_splat(b, 80), u8x16_to_f32(low_nibbles(sc)));
        let mls = mul4_dq(f16_splat(b, 82), u8x16_to_f32(high_nibbles(sc)));
        for k in 0..4 {
            // Sub-block is = 4k + m: bytes 16 + 32·(is / 8) + 16·(is % 2), bits at
            // 2·((is / 2) % 4).
            let qa = load(b, 16 + 32 * (k / 2));
            let qb = load(b, 32 + 32 * (k / 2));
            let shift = 4 * (k % 2) as u32;
            let qs = [
                bits_at(qa, shift, 3),
                bits_at(qb, shift, 3),
                bits_at(qa, shift + 2, 3),
                bits_at(qb, shift + 2, 3),
            ];
            let (dl, ml) = (lanes(dls[k]), lanes(mls[k]));
            for m in 0..4 {
                store16(
                    y,
                    64 * k + 16 * m,
                    mul_sub4(dl[m], u8x16_to_f32(qs[m]), ml[m]),
                );
            }
        }
    });
}

/// Q3_K's sixteen 6-bit scales (unsigned, before the −32) as bytes 0..16. Scale i has its low
/// nibble in byte i % 8 (bits 4·(i / 8)) and its top 2 bits in byte 8 + i % 4 (bits
/// 2·(i / 4)) of the 12 packed bytes at 96..108: four scales per u32, in scalar arithmetic.
#[inline(always)]
fn q3_k_scales(b: &[u8; 110]) -> v128 {
    let word = |at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
    let (a0, a1, top) = (word(96), word(100), word(104));
    let (nibble, crumb) = (0x0F0F_0F0F, 0x0303_0303);
    u32x4(
        (a0 & nibble) | (top & crumb) << 4,
        (a1 & nibble) | (top >> 2 & crumb) << 4,
        (a0 >> 4 & nibble) | (top >> 4 & crumb) << 4,
        (a1 >> 4 & nibble) | (top >> 6 & crumb) << 4,
    )
}

/// Q3_K sub-block `is` (16 values): the 2 low bits from `qs` (the 64 quant bytes), the high bit
/// from `hmask`, as the 3-bit `u` = low + 4·high, then `dl · (u − 4)`: the scalar
/// `dl · (low − 4 if the high bit is clear)`. `is` is a constant at each call, so the choice of
/// vectors and the shifts fold away.
#[inline(always)]
fn q3_k_sub_block(y: &mut [f32; QK_K], is: usize, qs: &[v128; 4], hmask: &[v128; 2], dl: v128) {
    // Low bits: byte 32·(is / 8) + 16·(is % 2) + l, bits 2·((is / 2) % 4).
    let low = bits_at(qs[2 * (is / 8) + is % 2], 2 * (is / 2 % 4) as u32, 3);
    // High bit: bit is / 2 of hmask byte 16·(is % 2) + l, moved to bit 2 (16-bit shifts: the
    // mask drops whatever crosses from the neighbouring byte).
    let (h, bit) = (hmask[is % 2], is / 2);
    let high = if bit < 2 {
        v128_and(i16x8_shl(h, (2 - bit) as u32), u8x16_splat(4))
    } else {
        bits_at(h, (bit - 2) as u32, 4)
    };
    let q = widen_biased(v128_or(low, high), MAGIC + 4.0);
    store16(y, 16 * is, mul4_dq(dl, q));
}

/// Q3_K sub-blocks `4k..4k + 4`, with their scales in the lanes of `dls`.
#[inline(always)]
fn q3_k_sub_blocks(y: &mut [f32; QK_K], k: usize, qs: &[v128; 4], hmask: &[v128; 2], dls: v128) {
    let [d0, d1, d2, d3] = lanes(dls);
    q3_k_sub_block(y, 4 * k, qs, hmask, d0);
    q3_k_sub_block(y, 4 * k + 1, qs, hmask, d1);
    q3_k_sub_block(y, 4 * k + 2, qs, hmask, d2);
    q3_k_sub_block(y, 4 * k + 3, qs, hmask, d3);
}

pub(super) fn dequant_q3_k(blocks: &[u8], out: &mut [f32]) {
    // hmask[32], qs[64], scales[12], d
    for_each_block(blocks, out, |b: &[u8; 110], y: &mut [f32; QK_K]| {
        // d_all · scale for each sub-block, as the scalar products (scales are -32..=31).
        let dls = mul4_dq(
            f16_splat(b, 108),
            widen_biased(q3_k_scales(b), MAGIC + 32.0),
        );
        let hmask = [load(b, 0), load(b, 16)];
        let qs = [load(b, 32), load(b, 48), load(b, 64), load(b, 80)];
        // Written out rather than looped: LLVM keeps a loop here rolled, with the shifts,
        // masks and vector choices as run-time values.
        q3_k_sub_blocks(y, 0, &qs, &hmask, dls[0]);
        q3_k_sub_blocks(y, 1, &qs, &hmask, dls[1]);
        q3_k_sub_blocks(y, 2, &qs, &hmask, dls[2]);
        q3_k_sub_blocks(y, 3, &qs, &hmask, dls[3]);
    });
}

pub(super) fn dequant_q4_k(blocks: &[u8], out: &mut [f32]) {
    // d, dmin, scales[12], qs[128]
    for_each_block(blocks, out, |b: &[u8; 144], y: &mut [f32; QK_K]| {
        let d = f16_at(b, 0);
        let min = f16_at(b, 2);
        let pairs = unpack_scale_min_k4(&scale_bytes(b, 4));
        for (j, &(sc, m)) in pairs.iter().enumerate() {
            let d1 = f32x4_splat(d * f32::from(sc));
            let m1 = f32x4_splat(min * f32::from(m));
            let group = 16 + 32 * (j / 2);
            for c in 0..2 {
                let qs = load(b, group + 16 * c);
                let q = if j % 2 == 0 {
                    low_nibbles(qs)
                } else {
                    high_nibbles(qs)
                };
                store16(y, 32 * j + 16 * c, mul_sub4(d1, u8x16_to_f32(q), m1));
            }
        }
    });
}

pub(super) fn dequant_q5_k(blocks: &[u8], out: &mut [f32]) {
    // d, dmin, scales[12], qh[32], qs[128]
    for_each_block(blocks, out, |b: &[u8; 176], y: &mut [f32; QK_K]| {
        let d = f16_at(b, 0);
        let min = f16_at(b, 2);
        let pairs = unpack_scale_min_k4(&scale_bytes(b, 4));
        for (j, &(sc, m)) in pairs.iter().enumerate() {
            let d1 = f32x4_splat(d * f32::from(sc));
            let m1 = f32x4_splat(min * f32::from(m));
            let group = 48 + 32 * (j / 2);
            for c in 0..2 {
                let qs = load(b, group + 16 * c);
                let low = if j % 2 == 0 {
                    low_nibbles(qs)
                } else {
                    high_nibbles(qs)
                };
                let high = v128_and(has_bits(load(b, 16 + 16 * c), 1 << j), u8x16_splat(16));
                let q = v128_or(low, high);
                store16(y, 32 * j + 16 * c, mul_sub4(d1, u8x16_to_f32(q), m1));
            }
        }
    });
}

pub(super) fn dequant_q6_k(blocks: &[u8], out: &mut [f32]) {
    // ql[128], qh[64], scales[16] (i8), d
    for_each_block(blocks, out, |b: &[u8; 210], y: &mut [f32; QK_K]| {
        let d = f16_at(b, 208);
        let scales: [f32; 16] = core::array::from_fn(|i| d * f32::from(b[192 + i] as i8));
        for n in 0..2 {
            for k in 0..4 {
                for c in 0..2 {
                    let ql = load(b, 64 * n + 32 * (k % 2) + 16 * c);
                    let low = if k < 2 {
                        low_nibbles(ql)
                    } else {
                        high_nibbles(ql)
                    };
                    let qh = load(b, 128 + 32 * n + 16 * c);
                    let high = bits_at(qh, (2 * k) as u32, 3);
                    // A 16-bit shift: each byte is at most 3, so nothing crosses bytes.
                    let q = i8x16_sub(v128_or(low, i16x8_shl(high, 4)), i8x16_splat(32));
                    let scale = f32x4_splat(scales[8 * n + 2 * k + c]);
                    store16(
                        y,
                        128 * n + 32 * k + 16 * c,
                        mul4_dq(scale, i8x16_to_f32(q)),
                    );
                }
            }
        }
    });
}

pub(super) fn dequant_q8_k(blocks: &[u8], out: &mut [f32]) {
    // d (f32), qs[256] (i8), bsums
    for_each_block(blocks, out, |b: &[u8; 292], y: &mut [f32; QK_K]| {
        let d = f32x4_splat(f32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        for c in 0..16 {
            store16(y, 16 * c, mul4_dq(d, i8x16_to_f32(load(b, 4 + 16 * c))));
        }
    });
}
