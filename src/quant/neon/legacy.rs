//! The 32-value legacy quants Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, plus Q1_0 and Q2_0. Byte layouts
//! are in src/quant/scalar/legacy.rs.

use core::arch::aarch64::*;

use super::{s8x16_to_f32, store_q_times_d, u8x16_to_f32, widen_mask, BIT_MASKS};
use crate::quant::scalar::{f16_to_f32, for_each_block, le_u16};

/// The f16 scale at bytes `at..at + 2` of a block.
#[inline(always)]
fn f16_at<const B: usize>(b: &[u8; B], at: usize) -> f32 {
    f16_to_f32(le_u16([b[at], b[at + 1]]))
}

pub(crate) fn dequant_q8_0(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 34], y: &mut [f32; 32]| {
        let d = f16_at(b, 0);
        // SAFETY: reads bytes 2..18 and 18..34 of the 34-byte block, writes y[0..32] of 32.
        unsafe {
            let d = vdupq_n_f32(d);
            for half in 0..2 {
                let q = vld1q_s8(b.as_ptr().add(2 + 16 * half).cast::<i8>());
                store_q_times_d(y.as_mut_ptr().add(16 * half), s8x16_to_f32(q), d);
            }
        }
    });
}

/// ggml has no `to_float` for Q8_1; as the scalar kernel: d·q like Q8_0, `s` ignored.
pub(crate) fn dequant_q8_1(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 36], y: &mut [f32; 32]| {
        let d = f16_at(b, 0);
        // SAFETY: reads bytes 4..20 and 20..36 of the 36-byte block, writes y[0..32] of 32.
        unsafe {
            let d = vdupq_n_f32(d);
            for half in 0..2 {
                let q = vld1q_s8(b.as_ptr().add(4 + 16 * half).cast::<i8>());
                store_q_times_d(y.as_mut_ptr().add(16 * half), s8x16_to_f32(q), d);
            }
        }
    });
}

pub(crate) fn dequant_q4_0(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 18], y: &mut [f32; 32]| {
        let d = f16_at(b, 0);
        // SAFETY: reads bytes 2..18 of the 18-byte block, writes y[0..32] of 32.
        unsafe {
            let d = vdupq_n_f32(d);
            let q = vld1q_u8(b.as_ptr().add(2));
            let eight = vdupq_n_s8(8);
            let lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q, vdupq_n_u8(0x0F))), eight);
            let hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8::<4>(q)), eight);
            store_q_times_d(y.as_mut_ptr(), s8x16_to_f32(lo), d);
            store_q_times_d(y.as_mut_ptr().add(16), s8x16_to_f32(hi), d);
        }
    });
}

/// Stores `q[i]·d + m` (multiply, then add, as the scalar `q as f32 * d + m`) for 16 values.
///
/// # Safety
/// `y` must be valid for writing 16 f32 values.
#[inline(always)]
unsafe fn store_q_times_d_plus_m(y: *mut f32, q: [float32x4_t; 4], d: float32x4_t, m: float32x4_t) {
    for (i, q) in q.into_iter().enumerate() {
        vst1q_f32(y.add(4 * i), vaddq_f32(vmulq_f32(q, d), m));
    }
}

pub(crate) fn dequant_q4_1(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 20], y: &mut [f32; 32]| {
        let d = f16_at(b, 0);
        let m = f16_at(b, 2);
        // SAFETY: reads bytes 4..20 of the 20-byte block, writes y[0..32] of 32.
        unsafe {
            let d = vdupq_n_f32(d);
            let m = vdupq_n_f32(m);
            let q = vld1q_u8(b.as_ptr().add(4));
            let lo = vandq_u8(q, vdupq_n_u8(0x0F));
            let hi = vshrq_n_u8::<4>(q);
            store_q_times_d_plus_m(y.as_mut_ptr(), u8x16_to_f32(lo), d, m);
            store_q_times_d_plus_m(y.as_mut_ptr().add(16), u8x16_to_f32(hi), d, m);
        }
    });
}

/// Q5's 5th bits, as 0x10 per lane: bit j of `qh` for value j (low) and j + 16 (high).
///
/// # Safety
/// NEON only; reads `BIT_MASKS` (16 bytes) and nothing else.
#[inline(always)]
unsafe fn q5_high_bits(qh: [u8; 4]) -> (uint8x16_t, uint8x16_t) {
    let masks = vld1q_u8(BIT_MASKS.as_ptr());
    let bit4 = vdupq_n_u8(0x10);
    let lo = vcombine_u8(vdup_n_u8(qh[0]), vdup_n_u8(qh[1]));
    let hi = vcombine_u8(vdup_n_u8(qh[2]), vdup_n_u8(qh[3]));
    (
        vandq_u8(vtstq_u8(lo, masks), bit4),
        vandq_u8(vtstq_u8(hi, masks), bit4),
    )
}

pub(crate) fn dequant_q5_0(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 22], y: &mut [f32; 32]| {
        let d = f16_at(b, 0);
        let qh = [b[2], b[3], b[4], b[5]];
        // SAFETY: reads bytes 6..22 of the 22-byte block, writes y[0..32] of 32.
        unsafe {
            let d = vdupq_n_f32(d);
            let (h0, h1) = q5_high_bits(qh);
            let q = vld1q_u8(b.as_ptr().add(6));
            let sixteen = vdupq_n_s8(16);
            let lo = vorrq_u8(vandq_u8(q, vdupq_n_u8(0x0F)), h0);
            let hi = vorrq_u8(vshrq_n_u8::<4>(q), h1);
            let lo = vsubq_s8(vreinterpretq_s8_u8(lo), sixteen);
            let hi = vsubq_s8(vreinterpretq_s8_u8(hi), sixteen);
            store_q_times_d(y.as_mut_ptr(), s8x16_to_f32(lo), d);
            store_q_times_d(y.as_mut_ptr().add(16), s8x16_to_f32(hi), d);
        }
    });
}

pub(crate) fn dequant_q5_1(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 24], y: &mut [f32; 32]| {
        let d = f16_at(b, 0);
        let m = f16_at(b, 2);
        let qh = [b[4], b[5], b[6], b[7]];
        // SAFETY: reads bytes 8..24 of the 24-byte block, writes y[0..32] of 32.
        unsafe {
            let d = vdupq_n_f32(d);
            let m = vdupq_n_f32(m);
            let (h0, h1) = q5_high_bits(qh);
            let q = vld1q_u8(b.as_ptr().add(8));
            let lo = vorrq_u8(vandq_u8(q, vdupq_n_u8(0x0F)), h0);
            let hi = vorrq_u8(vshrq_n_u8::<4>(q), h1);
            store_q_times_d_plus_m(y.as_mut_ptr(), u8x16_to_f32(lo), d, m);
            store_q_times_d_plus_m(y.as_mut_ptr().add(16), u8x16_to_f32(hi), d, m);
        }
    });
}

pub(crate) fn dequant_q1_0(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 18], y: &mut [f32; 128]| {
        let d = f16_at(b, 0);
        // Negation only flips the sign bit, as in the scalar kernel; lanes then pick one of the
        // two bit patterns whole.
        let neg_d = -d;
        for p in 0..8 {
            let (b0, b1) = (b[2 + 2 * p], b[3 + 2 * p]);
            // SAFETY: reads the 16-byte BIT_MASKS; writes y[16p..16p + 16] ≤ 128 (p < 8).
            unsafe {
                let masks = vld1q_u8(BIT_MASKS.as_ptr());
                let bits = vtstq_u8(vcombine_u8(vdup_n_u8(b0), vdup_n_u8(b1)), masks);
                let (dv, nv) = (vdupq_n_f32(d), vdupq_n_f32(neg_d));
                for (i, m) in widen_mask(bits).into_iter().enumerate() {
                    vst1q_f32(y.as_mut_ptr().add(16 * p + 4 * i), vbslq_f32(m, dv, nv));
                }
            }
        }
    });
}

pub(crate) fn dequant_q2_0(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 18], y: &mut [f32; 64]| {
        let d = f16_at(b, 0);
        // SAFETY: reads bytes 2..18 of the 18-byte block; writes y[16i..16i + 16], i < 4, of 64.
        unsafe {
            let d = vdupq_n_f32(d);
            let q = vld1q_u8(b.as_ptr().add(2));
            let three = vdupq_n_u8(3);
            let p0 = vandq_u8(q, three);
            let p1 = vandq_u8(vshrq_n_u8::<2>(q), three);
            let p2 = vandq_u8(vshrq_n_u8::<4>(q), three);
            let p3 = vshrq_n_u8::<6>(q);
            // Value 4j + s is pair s of byte j: interleave the four planes byte by byte.
            let (a0, a1) = (vzip1q_u8(p0, p1), vzip2q_u8(p0, p1));
            let (c0, c1) = (vzip1q_u8(p2, p3), vzip2q_u8(p2, p3));
            let (a0, a1) = (vreinterpretq_u16_u8(a0), vreinterpretq_u16_u8(a1));
            let (c0, c1) = (vreinterpretq_u16_u8(c0), vreinterpretq_u16_u8(c1));
            let runs = [
                vzip1q_u16(a0, c0),
                vzip2q_u16(a0, c0),
                vzip1q_u16(a1, c1),
                vzip2q_u16(a1, c1),
            ];
            for (i, run) in runs.into_iter().enumerate() {
                let q = vsubq_s8(vreinterpretq_s8_u16(run), vdupq_n_s8(1));
                store_q_times_d(y.as_mut_ptr().add(16 * i), s8x16_to_f32(q), d);
            }
        }
    });
}
