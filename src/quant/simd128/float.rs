//! Plain types F32, F16, BF16, F64, I8, I16 and I32: whole vectors per step, the remainder
//! one by one as the scalar kernels. (I64 has no vector conversion in simd128: scalar.)

use core::arch::wasm32::*;

use super::{f16x4_to_f32x4, load, load_i16x4, store};
use crate::quant::scalar::{f16_to_f32, le_u16};

/// Elements handled by the vector loop: whole steps of 8 that both slices hold.
#[inline(always)]
fn vector_elements(blocks: &[u8], out: &[f32]) -> usize {
    (blocks.len() / 16).min(out.len() / 8) * 8
}

pub(super) fn dequant_f16(blocks: &[u8], out: &mut [f32]) {
    const STEP: usize = 16;
    let n = (blocks.len() / (2 * STEP)).min(out.len() / STEP) * STEP;
    let (Some(head), Some(out_head)) = (blocks.get(..2 * n), out.get_mut(..n)) else {
        return;
    };
    for (b, y) in head
        .chunks_exact(2 * STEP)
        .zip(out_head.chunks_exact_mut(STEP))
    {
        for k in 0..STEP / 4 {
            store(y, 4 * k, f16x4_to_f32x4(load_i16x4(b, 8 * k)));
        }
    }
    let (Some(bytes), Some(out)) = (blocks.get(2 * n..), out.get_mut(n..)) else {
        return;
    };
    for (b, y) in bytes.chunks_exact(2).zip(out) {
        *y = f16_to_f32(le_u16([b[0], b[1]]));
    }
}

pub(super) fn dequant_bf16(blocks: &[u8], out: &mut [f32]) {
    let n = vector_elements(blocks, out);
    for (i, at) in (0..n).step_by(8).enumerate() {
        let h = load(blocks, 16 * i);
        store(out, at, i32x4_shl(u32x4_extend_low_u16x8(h), 16));
        store(out, at + 4, i32x4_shl(u32x4_extend_high_u16x8(h), 16));
    }
    let (Some(bytes), Some(out)) = (blocks.get(2 * n..), out.get_mut(n..)) else {
        return;
    };
    for (b, y) in bytes.chunks_exact(2).zip(out) {
        *y = f32::from_bits(u32::from(le_u16([b[0], b[1]])) << 16);
    }
}

/// Converts `out.len().min(blocks.len() / N)` elements: `STEP` per call of `vector` (which gets
/// the element index and writes `out[at..at + STEP]` from `blocks[N * at..]`), the rest with
/// `scalar`.
#[inline(always)]
fn convert<const N: usize, const STEP: usize>(
    blocks: &[u8],
    out: &mut [f32],
    vector: impl Fn(&[u8], &mut [f32], usize),
    scalar: impl Fn([u8; N]) -> f32,
) {
    let n = (blocks.len() / (N * STEP)).min(out.len() / STEP) * STEP;
    for at in (0..n).step_by(STEP) {
        vector(blocks, out, at);
    }
    let (Some(bytes), Some(out)) = (blocks.get(N * n..), out.get_mut(n..)) else {
        return;
    };
    for (chunk, y) in bytes.chunks_exact(N).zip(out) {
        if let Ok(element) = <[u8; N]>::try_from(chunk) {
            *y = scalar(element);
        }
    }
}

pub(super) fn dequant_f32(blocks: &[u8], out: &mut [f32]) {
    convert::<4, 4>(
        blocks,
        out,
        |b, y, at| store(y, at, load(b, 4 * at)),
        f32::from_le_bytes,
    );
}

pub(super) fn dequant_f64(blocks: &[u8], out: &mut [f32]) {
    convert::<8, 4>(
        blocks,
        out,
        |b, y, at| {
            let lo = f32x4_demote_f64x2_zero(load(b, 8 * at));
            let hi = f32x4_demote_f64x2_zero(load(b, 8 * at + 16));
            store(y, at, i64x2_shuffle::<0, 2>(lo, hi));
        },
        |b| f64::from_le_bytes(b) as f32,
    );
}

pub(super) fn dequant_i8(blocks: &[u8], out: &mut [f32]) {
    convert::<1, 16>(
        blocks,
        out,
        |b, y, at| super::store16(y, at, super::i8x16_to_f32(load(b, at))),
        |b| f32::from(i8::from_le_bytes(b)),
    );
}

pub(super) fn dequant_i16(blocks: &[u8], out: &mut [f32]) {
    convert::<2, 8>(
        blocks,
        out,
        |b, y, at| {
            let v = load(b, 2 * at);
            store(y, at, f32x4_convert_i32x4(i32x4_extend_low_i16x8(v)));
            store(y, at + 4, f32x4_convert_i32x4(i32x4_extend_high_i16x8(v)));
        },
        |b| f32::from(i16::from_le_bytes(b)),
    );
}

pub(super) fn dequant_i32(blocks: &[u8], out: &mut [f32]) {
    // Rounds to nearest, ties to even, like the scalar `as f32`.
    convert::<4, 4>(
        blocks,
        out,
        |b, y, at| store(y, at, f32x4_convert_i32x4(load(b, 4 * at))),
        |b| i32::from_le_bytes(b) as f32,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every one of the 65536 halves, at every position of a vector and in the scalar tail.
    #[test]
    fn f16_equals_scalar_for_every_half() {
        let bytes: Vec<u8> = (0..=u16::MAX).flat_map(|h| h.to_le_bytes()).collect();
        for skip in [0usize, 2, 6] {
            let bytes = &bytes[skip..];
            let n = bytes.len() / 2;
            let mut got = vec![0f32; n];
            dequant_f16(bytes, &mut got);
            for (i, (g, b)) in got.iter().zip(bytes.chunks_exact(2)).enumerate() {
                let want = f16_to_f32(le_u16([b[0], b[1]]));
                assert_eq!(g.to_bits(), want.to_bits(), "half {i} (skip {skip})");
            }
        }
    }

    #[test]
    fn bf16_is_a_plain_shift_for_every_half() {
        let bytes: Vec<u8> = (0..=u16::MAX).flat_map(|h| h.to_le_bytes()).collect();
        let mut got = vec![0f32; 65536];
        dequant_bf16(&bytes[2..], &mut got[..65535]);
        for (h, g) in (1..=u16::MAX).zip(&got) {
            assert_eq!(g.to_bits(), u32::from(h) << 16);
        }
    }

    #[test]
    fn short_slices_are_left_alone() {
        let bytes = [0x00, 0x3C, 0x00, 0x40, 0x00];
        let mut out = [9.0; 1];
        dequant_f16(&bytes, &mut out);
        assert_eq!(out, [1.0]);
        let mut out = [9.0; 4];
        dequant_f16(&bytes, &mut out);
        assert_eq!(out, [1.0, 2.0, 9.0, 9.0]);
    }

    /// NaNs (signalling, quiet, with payloads, either sign), infinities, overflow, underflow
    /// and ties: the vector demotion equals the scalar `as f32` bit for bit.
    #[test]
    fn f64_equals_scalar_including_nans() {
        let words: [u64; 12] = [
            0x7FF0_0000_0000_0001,
            0xFFF0_0000_0000_0001,
            0x7FF8_0000_0000_0000,
            0xFFFF_FFFF_FFFF_FFFF,
            0x7FF4_5678_9ABC_DEF0,
            0x7FF0_0000_0000_0000,
            0x47F0_0000_0000_0000, // 2^128: overflows to +inf
            0x3690_0000_0000_0000, // 2^-150: a tie, rounds to 0
            0x36A8_0000_0000_0000, // 1.5 · 2^-149: a tie, rounds to 2^-148
            0x3FF0_0000_1000_0000, // 1 + 2^-24: a tie, rounds to 1
            0x8000_0000_0000_0000,
            0x3FB9_9999_9999_999A, // 0.1
        ];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut got = [0f32; 12];
        dequant_f64(&bytes, &mut got);
        for (w, g) in words.iter().zip(&got) {
            let want = f64::from_bits(*w) as f32;
            assert_eq!(g.to_bits(), want.to_bits(), "f64 {w:#018x}");
        }
    }
}
