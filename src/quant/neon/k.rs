//! The k-quants Q2_K, Q3_K, Q4_K, Q5_K and Q6_K. Byte layouts and the scalar walks these follow
//! are in src/quant/scalar/k.rs; each sub-block's scale (and min) is the same scalar f32 the
//! reference forms, then each value is `scale·q` or `scale·q − min`.

use core::arch::aarch64::*;

use super::{s8x16_to_f32, store_d_times_q, store_d_times_q_minus_m, u8x16_to_f32};
use crate::quant::scalar::{f16_to_f32, for_each_block, le_u16};

/// Values per super-block.
const QK_K: usize = 256;

/// The f16 at bytes `at..at + 2` of a block.
#[inline(always)]
fn f16_at<const B: usize>(b: &[u8; B], at: usize) -> f32 {
    f16_to_f32(le_u16([b[at], b[at + 1]]))
}

/// The 12 bytes at `at..at + 12` of a block.
#[inline(always)]
fn bytes12<const B: usize>(b: &[u8; B], at: usize) -> [u8; 12] {
    core::array::from_fn(|i| b[at + i])
}

/// Q3_K's 16 signed scales (as scalar `unpack_q3_k_scales`).
fn unpack_q3_k_scales(packed: &[u8; 12]) -> [i32; 16] {
    core::array::from_fn(|i| {
        let low = if i < 8 {
            packed[i] & 0x0F
        } else {
            packed[i - 8] >> 4
        };
        let high = (packed[8 + i % 4] >> (2 * (i / 4))) & 3;
        i32::from(low | high << 4) - 32
    })
}

/// Q4_K/Q5_K's 8 (scale, min) pairs (as scalar `unpack_scale_min_k4`).
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

/// `v >> shift` per byte, for a shift known only at run time (0..8).
///
/// # Safety
/// NEON only; touches no memory.
#[inline(always)]
unsafe fn shr_u8(v: uint8x16_t, shift: usize) -> uint8x16_t {
    // A negative left shift is a logical right shift; shift < 8 fits in i8.
    vshlq_u8(v, vdupq_n_s8(-(shift as i8)))
}

pub(crate) fn dequant_q2_k(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 84], y: &mut [f32; QK_K]| {
        let d = f16_at(b, 80);
        let min = f16_at(b, 82);
        for is in 0..16 {
            let sc = b[is];
            let dl = d * f32::from(sc & 0x0F);
            let ml = min * f32::from(sc >> 4);
            let shift = 2 * (is / 2 % 4);
            let start = 16 + 32 * (is / 8) + 16 * (is % 2);
            // SAFETY: start ≤ 16 + 32 + 16 = 64, so the load reads bytes start..start + 16 ≤ 80
            // of the 84-byte block; the store writes y[16·is..16·is + 16], is < 16, of 256.
            unsafe {
                let q = vandq_u8(
                    shr_u8(vld1q_u8(b.as_ptr().add(start)), shift),
                    vdupq_n_u8(3),
                );
                store_d_times_q_minus_m(
                    y.as_mut_ptr().add(16 * is),
                    vdupq_n_f32(dl),
                    u8x16_to_f32(q),
                    vdupq_n_f32(ml),
                );
            }
        }
    });
}

pub(crate) fn dequant_q3_k(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 110], y: &mut [f32; QK_K]| {
        let d_all = f16_at(b, 108);
        let scales = unpack_q3_k_scales(&bytes12(b, 96));
        for (is, &sc) in scales.iter().enumerate() {
            let dl = d_all * sc as f32;
            let shift = 2 * (is / 2 % 4);
            let mask = 1u8 << (is / 2);
            let start = 32 + 32 * (is / 8) + 16 * (is % 2);
            let hstart = 16 * (is % 2);
            // SAFETY: the quant load reads bytes start..start + 16 ≤ 32 + 48 + 16 = 96 and the
            // hmask load bytes hstart..hstart + 16 ≤ 32, both inside the 110-byte block; the
            // store writes y[16·is..16·is + 16], is < 16, of 256.
            unsafe {
                let low = vandq_u8(
                    shr_u8(vld1q_u8(b.as_ptr().add(start)), shift),
                    vdupq_n_u8(3),
                );
                let hmask = vld1q_u8(b.as_ptr().add(hstart));
                // 4 where the high bit is clear, else 0.
                let set = vtstq_u8(hmask, vdupq_n_u8(mask));
                let minus = vbicq_u8(vdupq_n_u8(4), set);
                let q = vsubq_s8(vreinterpretq_s8_u8(low), vreinterpretq_s8_u8(minus));
                store_d_times_q(
                    y.as_mut_ptr().add(16 * is),
                    vdupq_n_f32(dl),
                    s8x16_to_f32(q),
                );
            }
        }
    });
}

/// One 32-value half of a Q4_K/Q5_K group: `d1·q − m1` for the 32 quants `lo` (values 0..16)
/// and `hi` (16..32).
///
/// # Safety
/// `y` must be valid for writing 32 f32 values.
#[inline(always)]
unsafe fn store_k4_half(y: *mut f32, d1: f32, m1: f32, lo: uint8x16_t, hi: uint8x16_t) {
    let d1 = vdupq_n_f32(d1);
    let m1 = vdupq_n_f32(m1);
    store_d_times_q_minus_m(y, d1, u8x16_to_f32(lo), m1);
    store_d_times_q_minus_m(y.add(16), d1, u8x16_to_f32(hi), m1);
}

pub(crate) fn dequant_q4_k(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 144], y: &mut [f32; QK_K]| {
        let d = f16_at(b, 0);
        let min = f16_at(b, 2);
        let pairs = unpack_scale_min_k4(&bytes12(b, 4));
        for j in 0..4 {
            let (sc0, m0) = pairs[2 * j];
            let (sc1, m1) = pairs[2 * j + 1];
            let (d0, min0) = (d * f32::from(sc0), min * f32::from(m0));
            let (d1, min1) = (d * f32::from(sc1), min * f32::from(m1));
            // SAFETY: reads bytes 16 + 32j..16 + 32j + 32 ≤ 144 of the 144-byte block (j < 4);
            // writes y[64j..64j + 64] ≤ 256.
            unsafe {
                let qs = b.as_ptr().add(16 + 32 * j);
                let q0 = vld1q_u8(qs);
                let q1 = vld1q_u8(qs.add(16));
                let nib = vdupq_n_u8(0x0F);
                let y = y.as_mut_ptr().add(64 * j);
                store_k4_half(y, d0, min0, vandq_u8(q0, nib), vandq_u8(q1, nib));
                store_k4_half(
                    y.add(32),
                    d1,
                    min1,
                    vshrq_n_u8::<4>(q0),
                    vshrq_n_u8::<4>(q1),
                );
            }
        }
    });
}

pub(crate) fn dequant_q5_k(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 176], y: &mut [f32; QK_K]| {
        let d = f16_at(b, 0);
        let min = f16_at(b, 2);
        let pairs = unpack_scale_min_k4(&bytes12(b, 4));
        for j in 0..4 {
            let (sc0, m0) = pairs[2 * j];
            let (sc1, m1) = pairs[2 * j + 1];
            let (d0, min0) = (d * f32::from(sc0), min * f32::from(m0));
            let (d1, min1) = (d * f32::from(sc1), min * f32::from(m1));
            // SAFETY: reads qh bytes 16..48 and quant bytes 48 + 32j..48 + 32j + 32 ≤ 176 of
            // the 176-byte block (j < 4); writes y[64j..64j + 64] ≤ 256.
            unsafe {
                let qh0 = vld1q_u8(b.as_ptr().add(16));
                let qh1 = vld1q_u8(b.as_ptr().add(32));
                let qs = b.as_ptr().add(48 + 32 * j);
                let q0 = vld1q_u8(qs);
                let q1 = vld1q_u8(qs.add(16));
                let nib = vdupq_n_u8(0x0F);
                let bit4 = vdupq_n_u8(0x10);
                let high = |qh: uint8x16_t, h: usize| {
                    vandq_u8(vtstq_u8(qh, vdupq_n_u8(1 << (2 * j + h))), bit4)
                };
                let y = y.as_mut_ptr().add(64 * j);
                store_k4_half(
                    y,
                    d0,
                    min0,
                    vorrq_u8(vandq_u8(q0, nib), high(qh0, 0)),
                    vorrq_u8(vandq_u8(q1, nib), high(qh1, 0)),
                );
                store_k4_half(
                    y.add(32),
                    d1,
                    min1,
                    vorrq_u8(vshrq_n_u8::<4>(q0), high(qh0, 1)),
                    vorrq_u8(vshrq_n_u8::<4>(q1), high(qh1, 1)),
                );
            }
        }
    });
}

pub(crate) fn dequant_q6_k(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 210], y: &mut [f32; QK_K]| {
        let d = f16_at(b, 208);
        // d·sc once per sub-block, as the scalar kernel (and ggml) form it.
        let scales: [f32; 16] = core::array::from_fn(|i| d * f32::from(b[192 + i] as i8));
        for n in 0..2 {
            for l0 in [0, 16] {
                // SAFETY: ql loads read bytes 64n + l0 (+32)..+16 ≤ 64 + 16 + 32 + 16 = 128 and
                // the qh load bytes 128 + 32n + l0..+16 ≤ 192, inside the 210-byte block;
                // stores write y[128n + 32k + l0..+16] ≤ 128 + 96 + 16 + 16 = 256 (k < 4).
                unsafe {
                    let ql0 = vld1q_u8(b.as_ptr().add(64 * n + l0));
                    let ql1 = vld1q_u8(b.as_ptr().add(64 * n + 32 + l0));
                    let qh = vld1q_u8(b.as_ptr().add(128 + 32 * n + l0));
                    let nib = vdupq_n_u8(0x0F);
                    let pair = vdupq_n_u8(0x30);
                    // Bit pair k of qh, moved to bits 4..6.
                    let q = [
                        vorrq_u8(vandq_u8(ql0, nib), vandq_u8(vshlq_n_u8::<4>(qh), pair)),
                        vorrq_u8(vandq_u8(ql1, nib), vandq_u8(vshlq_n_u8::<2>(qh), pair)),
                        vorrq_u8(vshrq_n_u8::<4>(ql0), vandq_u8(qh, pair)),
                        vorrq_u8(vshrq_n_u8::<4>(ql1), vandq_u8(vshrq_n_u8::<2>(qh), pair)),
                    ];
                    for (k, q) in q.into_iter().enumerate() {
                        let q = vsubq_s8(vreinterpretq_s8_u8(q), vdupq_n_s8(32));
                        let scale = vdupq_n_f32(scales[8 * n + 2 * k + l0 / 16]);
                        let at = 128 * n + 32 * k + l0;
                        store_d_times_q(y.as_mut_ptr().add(at), scale, s8x16_to_f32(q));
                    }
                }
            }
        }
    });
}

/// As the scalar kernel: d·q with Q8_K's f32 d; the bsums are ignored.
pub(crate) fn dequant_q8_k(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 292], y: &mut [f32; QK_K]| {
        let d = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        for i in 0..16 {
            // SAFETY: reads bytes 4 + 16i..+16 ≤ 260 of the 292-byte block (i < 16); writes
            // y[16i..16i + 16] ≤ 256.
            unsafe {
                let q = vld1q_s8(b.as_ptr().add(4 + 16 * i).cast::<i8>());
                store_d_times_q(y.as_mut_ptr().add(16 * i), vdupq_n_f32(d), s8x16_to_f32(q));
            }
        }
    });
}
