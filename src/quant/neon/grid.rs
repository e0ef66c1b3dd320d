//! The grid i-quants IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S and IQ1_M. Grid rows are
//! fetched from the shared tables as in the scalar kernels (src/quant/scalar/iq.rs), whose
//! byte layouts and scale formulas these follow; the per-value arithmetic is vectorised.

use core::arch::aarch64::*;

use super::{u8x16_to_f32, widen_mask, BIT_MASKS};
use crate::quant::scalar::grids::{
    IQ1S_DELTA, IQ1S_GRID, IQ2S_GRID, IQ2XS_GRID, IQ2XXS_GRID, IQ3S_GRID, IQ3XXS_GRID, KSIGNS_IQ2XS,
};
use crate::quant::scalar::{f16_to_f32, for_each_block, le_u16};

/// The f16 at bytes `at..at + 2` of a block.
#[inline(always)]
fn f16_at<const B: usize>(b: &[u8; B], at: usize) -> f32 {
    f16_to_f32(le_u16([b[at], b[at + 1]]))
}

/// The little-endian u32 at bytes `at..at + 4` of a block.
#[inline(always)]
fn u32_at<const B: usize>(b: &[u8; B], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Two 4-value IQ3 grid rows side by side, as one 8-byte row (first in the low bytes).
#[inline(always)]
fn iq3_rows(first: u32, second: u32) -> u64 {
    u64::from(first) | u64::from(second) << 32
}

/// 16 values sharing `scale`: `scale·grid` per byte of the two 8-byte rows, its sign bit
/// flipped where bit j of the row's sign byte is set (ggml's ±1 product is a sign flip, as in
/// the scalar `put_signed`).
///
/// # Safety
/// `y` must be valid for writing 16 f32 values.
#[inline(always)]
unsafe fn put_signed16(y: *mut f32, scale: f32, rows: [u64; 2], signs: [u8; 2]) {
    let grid = vcombine_u8(vcreate_u8(rows[0]), vcreate_u8(rows[1]));
    let flip = vtstq_u8(
        vcombine_u8(vdup_n_u8(signs[0]), vdup_n_u8(signs[1])),
        vld1q_u8(BIT_MASKS.as_ptr()),
    );
    let scale = vdupq_n_f32(scale);
    let sign_bit = vdupq_n_u32(0x8000_0000);
    for (i, (g, m)) in u8x16_to_f32(grid)
        .into_iter()
        .zip(widen_mask(flip))
        .enumerate()
    {
        let v = vreinterpretq_u32_f32(vmulq_f32(scale, g));
        let v = veorq_u32(v, vandq_u32(m, sign_bit));
        vst1q_f32(y.add(4 * i), vreinterpretq_f32_u32(v));
    }
}

pub(crate) fn dequant_iq2_xxs(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 66], y: &mut [f32; 256]| {
        let d = f16_at(b, 0);
        for g in 0..8 {
            let at = 2 + 8 * g;
            let aux = u32_at(b, at + 4);
            let db = d * (0.5 + (aux >> 28) as f32) * 0.25;
            let row = |k: usize| IQ2XXS_GRID[usize::from(b[at + k])];
            let sign = |k: usize| KSIGNS_IQ2XS[((aux >> (7 * k)) & 127) as usize];
            for p in 0..2 {
                let (k0, k1) = (2 * p, 2 * p + 1);
                // SAFETY: writes y[32g + 16p..+16] ≤ 256 (g < 8, p < 2).
                unsafe {
                    put_signed16(
                        y.as_mut_ptr().add(32 * g + 16 * p),
                        db,
                        [row(k0), row(k1)],
                        [sign(k0), sign(k1)],
                    );
                }
            }
        }
    });
}

pub(crate) fn dequant_iq2_xs(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 74], y: &mut [f32; 256]| {
        let d = f16_at(b, 0);
        for g in 0..8 {
            let scales = b[66 + g];
            for p in 0..2 {
                let s = (scales >> (4 * p)) & 0x0F;
                let db = d * (0.5 + f32::from(s)) * 0.25;
                let word = |w: usize| le_u16([b[2 + 8 * g + 2 * w], b[3 + 8 * g + 2 * w]]);
                let (q0, q1) = (word(2 * p), word(2 * p + 1));
                let row = |q: u16| IQ2XS_GRID[usize::from(q & 0x1ff)];
                let sign = |q: u16| KSIGNS_IQ2XS[usize::from((q >> 9) & 127)];
                // SAFETY: writes y[32g + 16p..+16] ≤ 256 (g < 8, p < 2).
                unsafe {
                    put_signed16(
                        y.as_mut_ptr().add(32 * g + 16 * p),
                        db,
                        [row(q0), row(q1)],
                        [sign(q0), sign(q1)],
                    );
                }
            }
        }
    });
}

pub(crate) fn dequant_iq2_s(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 82], y: &mut [f32; 256]| {
        let d = f16_at(b, 0);
        for g in 0..8 {
            let qh = b[66 + g];
            let scales = b[74 + g];
            let row = |k: usize| {
                let index = usize::from(b[2 + 4 * g + k]) | (usize::from((qh >> (2 * k)) & 3) << 8);
                IQ2S_GRID[index & 0x3ff]
            };
            let sign = |k: usize| b[34 + 4 * g + k];
            for p in 0..2 {
                let s = (scales >> (4 * p)) & 0x0F;
                let db = d * (0.5 + f32::from(s)) * 0.25;
                let (k0, k1) = (2 * p, 2 * p + 1);
                // SAFETY: writes y[32g + 16p..+16] ≤ 256 (g < 8, p < 2).
                unsafe {
                    put_signed16(
                        y.as_mut_ptr().add(32 * g + 16 * p),
                        db,
                        [row(k0), row(k1)],
                        [sign(k0), sign(k1)],
                    );
                }
            }
        }
    });
}

pub(crate) fn dequant_iq3_xxs(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 98], y: &mut [f32; 256]| {
        let d = f16_at(b, 0);
        for g in 0..8 {
            let aux = u32_at(b, 66 + 4 * g);
            let db = d * (0.5 + (aux >> 28) as f32) * 0.5;
            let grid = |k: usize| IQ3XXS_GRID[usize::from(b[2 + 8 * g + k])];
            let row = |r: usize| iq3_rows(grid(2 * r), grid(2 * r + 1));
            let sign = |r: usize| KSIGNS_IQ2XS[((aux >> (7 * r)) & 127) as usize];
            for p in 0..2 {
                let (r0, r1) = (2 * p, 2 * p + 1);
                // SAFETY: writes y[32g + 16p..+16] ≤ 256 (g < 8, p < 2).
                unsafe {
                    put_signed16(
                        y.as_mut_ptr().add(32 * g + 16 * p),
                        db,
                        [row(r0), row(r1)],
                        [sign(r0), sign(r1)],
                    );
                }
            }
        }
    });
}

pub(crate) fn dequant_iq3_s(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 110], y: &mut [f32; 256]| {
        let d = f16_at(b, 0);
        for g in 0..8 {
            let s = (b[106 + g / 2] >> (4 * (g % 2))) & 0x0F;
            let db = d * f32::from(1 + 2 * s);
            let qh = b[66 + g];
            // Bit k of qh is the 9th index bit of qs[k].
            let grid = |k: usize| {
                let index = usize::from(b[2 + 8 * g + k]) | (usize::from((qh >> k) & 1) << 8);
                IQ3S_GRID[index & 0x1ff]
            };
            let row = |r: usize| iq3_rows(grid(2 * r), grid(2 * r + 1));
            let sign = |r: usize| b[74 + 4 * g + r];
            for p in 0..2 {
                let (r0, r1) = (2 * p, 2 * p + 1);
                // SAFETY: writes y[32g + 16p..+16] ≤ 256 (g < 8, p < 2).
                unsafe {
                    put_signed16(
                        y.as_mut_ptr().add(32 * g + 16 * p),
                        db,
                        [row(r0), row(r1)],
                        [sign(r0), sign(r1)],
                    );
                }
            }
        }
    });
}

/// 8 values `dl·(grid + delta)` (add, then multiply, as the scalar `put_iq1`) from IQ1 grid row
/// `index` (11 bits), whose bytes are signed.
///
/// # Safety
/// `y` must be valid for writing 8 f32 values.
#[inline(always)]
unsafe fn put_iq1(y: *mut f32, dl: f32, index: usize, delta: f32) {
    let row = vreinterpret_s8_u8(vcreate_u8(IQ1S_GRID[index & 0x7ff]));
    let row = vmovl_s8(row);
    let dl = vdupq_n_f32(dl);
    let delta = vdupq_n_f32(delta);
    let lo = vcvtq_f32_s32(vmovl_s16(vget_low_s16(row)));
    let hi = vcvtq_f32_s32(vmovl_high_s16(row));
    vst1q_f32(y, vmulq_f32(dl, vaddq_f32(lo, delta)));
    vst1q_f32(y.add(4), vmulq_f32(dl, vaddq_f32(hi, delta)));
}

/// IQ1 delta: `+IQ1S_DELTA`, or its negation when the flag is set (as the scalar `iq1_delta`),
/// without a branch: the flag goes into the sign bit (the flags are data, so a branch would be
/// mispredicted half the time; negation is exactly a sign-bit flip).
#[inline(always)]
fn iq1_delta(negative: bool) -> f32 {
    f32::from_bits(IQ1S_DELTA.to_bits() ^ (u32::from(negative) << 31))
}

pub(crate) fn dequant_iq1_s(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 50], y: &mut [f32; 256]| {
        let d = f16_at(b, 0);
        for g in 0..8 {
            let qh = le_u16([b[34 + 2 * g], b[35 + 2 * g]]);
            let dl = d * f32::from(2 * ((qh >> 12) & 7) + 1);
            let delta = iq1_delta(qh & 0x8000 != 0);
            for k in 0..4 {
                let index = usize::from(b[2 + 4 * g + k]) | (usize::from((qh >> (3 * k)) & 7) << 8);
                // SAFETY: writes y[32g + 8k..+8] ≤ 256 (g < 8, k < 4).
                unsafe { put_iq1(y.as_mut_ptr().add(32 * g + 8 * k), dl, index, delta) }
            }
        }
    });
}

pub(crate) fn dequant_iq1_m(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &[u8; 56], y: &mut [f32; 256]| {
        let s: [u16; 4] = core::array::from_fn(|i| le_u16([b[48 + 2 * i], b[49 + 2 * i]]));
        let d = f16_to_f32(
            (s[0] >> 12) | ((s[1] >> 8) & 0x00f0) | ((s[2] >> 4) & 0x0f00) | (s[3] & 0xf000),
        );
        for h in 0..16 {
            let dl = d * f32::from(2 * ((s[h / 4] >> (3 * (h % 4))) & 7) + 1);
            let qh = b[32 + h];
            for r in 0..2 {
                let nib = (qh >> (4 * r)) & 0x0F;
                let index = usize::from(b[2 * h + r]) | (usize::from(nib & 7) << 8);
                // SAFETY: writes y[16h + 8r..+8] ≤ 256 (h < 16, r < 2).
                unsafe {
                    put_iq1(
                        y.as_mut_ptr().add(16 * h + 8 * r),
                        dl,
                        index,
                        iq1_delta(nib & 8 != 0),
                    );
                }
            }
        }
    });
}
