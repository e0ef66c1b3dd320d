//! IQ4_NL and IQ4_XS (table lookups), the FP4 types MXFP4 and NVFP4, and the ternary TQ1_0 and
//! TQ2_0. Byte layouts are in src/quant/scalar/{iq,fp4,tq}.rs.

use core::arch::aarch64::*;

use super::{s8x16_to_f32, store_d_times_q, store_q_times_d};
use crate::quant::scalar::fp4::{e8m0_to_f32_half, ue4m3_to_f32_half};
use crate::quant::scalar::grids::KVALUES_IQ4NL;
use crate::quant::scalar::{f16_to_f32, for_each_block, le_u16};

/// The f16 at bytes `at..at + 2` of a block.
#[inline(always)]
fn f16_at<const B: usize>(b: &[u8; B], at: usize) -> f32 {
    f16_to_f32(le_u16([b[at], b[at + 1]]))
}

/// 32 IQ4 values `dl·kvalues[nibble]` from the 16 quant bytes at `qs`: low nibbles first.
///
/// # Safety
/// `qs` must be valid for reading 16 bytes and `y` for writing 32 f32 values.
#[inline(always)]
unsafe fn put_iq4(y: *mut f32, dl: f32, qs: *const u8) {
    let table = vld1q_s8(KVALUES_IQ4NL.as_ptr());
    let dl = vdupq_n_f32(dl);
    let q = vld1q_u8(qs);
    let lo = vqtbl1q_s8(table, vandq_u8(q, vdupq_n_u8(0x0F)));
    let hi = vqtbl1q_s8(table, vshrq_n_u8::<4>(q));
    store_d_times_q(y, dl, s8x16_to_f32(lo));
    store_d_times_q(y.add(16), dl, s8x16_to_f32(hi));
}

pub(crate) fn dequant_iq4_nl(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 18], y: &mut [f32; 32]| {
        let d = f16_at(b, 0);
        // SAFETY: reads bytes 2..18 of the 18-byte block (and the 16-entry table); writes
        // y[0..32] of 32.
        unsafe { put_iq4(y.as_mut_ptr(), d, b.as_ptr().add(2)) }
    });
}

pub(crate) fn dequant_iq4_xs(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 136], y: &mut [f32; 256]| {
        let d = f16_at(b, 0);
        let scales_h = le_u16([b[2], b[3]]);
        for ib in 0..8 {
            let low = (b[4 + ib / 2] >> (4 * (ib % 2))) & 0x0F;
            let ls = i32::from(low) | (i32::from((scales_h >> (2 * ib)) & 3) << 4);
            let dl = d * (ls - 32) as f32;
            // SAFETY: reads bytes 8 + 16ib..8 + 16ib + 16 ≤ 136 of the 136-byte block (ib < 8);
            // writes y[32ib..32ib + 32] ≤ 256.
            unsafe { put_iq4(y.as_mut_ptr().add(32 * ib), dl, b.as_ptr().add(8 + 16 * ib)) }
        }
    });
}

/// E2M1 codes as doubled values (as the scalar `KVALUES_FP4`).
const KVALUES_FP4: [i8; 16] = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12];

pub(crate) fn dequant_mxfp4(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 17], y: &mut [f32; 32]| {
        let d = e8m0_to_f32_half(b[0]);
        // SAFETY: reads bytes 1..17 of the 17-byte block (and the 16-entry table); writes
        // y[0..32] of 32.
        unsafe {
            let table = vld1q_s8(KVALUES_FP4.as_ptr());
            let d = vdupq_n_f32(d);
            let q = vld1q_u8(b.as_ptr().add(1));
            let lo = vqtbl1q_s8(table, vandq_u8(q, vdupq_n_u8(0x0F)));
            let hi = vqtbl1q_s8(table, vshrq_n_u8::<4>(q));
            store_q_times_d(y.as_mut_ptr(), s8x16_to_f32(lo), d);
            store_q_times_d(y.as_mut_ptr().add(16), s8x16_to_f32(hi), d);
        }
    });
}

pub(crate) fn dequant_nvfp4(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 36], y: &mut [f32; 64]| {
        for s in 0..4 {
            let d = ue4m3_to_f32_half(b[s]);
            // SAFETY: reads bytes 4 + 8s..4 + 8s + 8 ≤ 36 of the 36-byte block (s < 4) and the
            // 16-entry table; writes y[16s..16s + 16] ≤ 64.
            unsafe {
                let table = vld1q_s8(KVALUES_FP4.as_ptr());
                let q = vld1_u8(b.as_ptr().add(4 + 8 * s));
                let lo = vqtbl1_s8(table, vand_u8(q, vdup_n_u8(0x0F)));
                let hi = vqtbl1_s8(table, vshr_n_u8::<4>(q));
                let q = s8x16_to_f32(vcombine_s8(lo, hi));
                store_q_times_d(y.as_mut_ptr().add(16 * s), q, vdupq_n_f32(d));
            }
        }
    });
}

pub(crate) fn dequant_tq2_0(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 66], y: &mut [f32; 256]| {
        let d = f16_at(b, 64);
        for c in 0..2 {
            for half in 0..2 {
                // SAFETY: reads bytes 32c + 16·half..+16 ≤ 64 of the 66-byte block; writes
                // y[128c + 32s + 16·half..+16] ≤ 128 + 96 + 32 = 256 (s < 4).
                unsafe {
                    let q = vld1q_u8(b.as_ptr().add(32 * c + 16 * half));
                    let three = vdupq_n_u8(3);
                    let planes = [
                        vandq_u8(q, three),
                        vandq_u8(vshrq_n_u8::<2>(q), three),
                        vandq_u8(vshrq_n_u8::<4>(q), three),
                        vshrq_n_u8::<6>(q),
                    ];
                    for (s, p) in planes.into_iter().enumerate() {
                        let t = vsubq_s8(vreinterpretq_s8_u8(p), vdupq_n_s8(1));
                        let at = 128 * c + 32 * s + 16 * half;
                        store_q_times_d(y.as_mut_ptr().add(at), s8x16_to_f32(t), vdupq_n_f32(d));
                    }
                }
            }
        }
    });
}

/// TQ1_0 trits minus one, for 16 bytes already multiplied by their power of three (mod 256):
/// ((q·3) >> 8) − 1.
///
/// # Safety
/// NEON only; touches no memory.
#[inline(always)]
unsafe fn trits_minus_one(q: uint8x16_t) -> int8x16_t {
    let three = vdup_n_u8(3);
    let lo = vshrn_n_u16::<8>(vmull_u8(vget_low_u8(q), three));
    let t = vshrn_high_n_u16::<8>(lo, vmull_high_u8(q, vdupq_n_u8(3)));
    vsubq_s8(vreinterpretq_s8_u8(t), vdupq_n_s8(1))
}

/// ggml's powers of three.
const POW3: [u8; 5] = [1, 3, 9, 27, 81];

pub(crate) fn dequant_tq1_0(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 54], y: &mut [f32; 256]| {
        let d = f16_at(b, 52);
        let qh = u32::from_le_bytes([b[48], b[49], b[50], b[51]]);
        // SAFETY: loads read bytes 0..32 and 32..48 of the 54-byte block (qh was read above);
        // stores write y[32n + 16h..+16] < 160, y[160 + 16n..+16] < 240 (n < 5) and
        // y[240..256] of 256.
        unsafe {
            let dv = vdupq_n_f32(d);
            let y = y.as_mut_ptr();
            // Bytes 0..32: trit n of byte l goes to 32n + l.
            for h in 0..2 {
                let q = vld1q_u8(b.as_ptr().add(16 * h));
                for (n, &p) in POW3.iter().enumerate() {
                    let t = trits_minus_one(vmulq_u8(q, vdupq_n_u8(p)));
                    store_q_times_d(y.add(32 * n + 16 * h), s8x16_to_f32(t), dv);
                }
            }
            // Bytes 32..48: trit n of byte l goes to 160 + 16n + l.
            let q = vld1q_u8(b.as_ptr().add(32));
            for (n, &p) in POW3.iter().enumerate() {
                let t = trits_minus_one(vmulq_u8(q, vdupq_n_u8(p)));
                store_q_times_d(y.add(160 + 16 * n), s8x16_to_f32(t), dv);
            }
            // qh: trit n of byte l goes to 240 + 4n + l: the 4 bytes repeated, times
            // 1, 3, 9, 27 by runs of four.
            const POW3_BY_FOUR: [u8; 16] = [1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27];
            let q = vreinterpretq_u8_u32(vdupq_n_u32(qh));
            let t = trits_minus_one(vmulq_u8(q, vld1q_u8(POW3_BY_FOUR.as_ptr())));
            store_q_times_d(y.add(240), s8x16_to_f32(t), dv);
        }
    });
}
