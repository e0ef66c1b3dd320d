//! F16 and BF16: eight elements (16 bytes) per step, the remainder one by one.

use core::arch::wasm32::*;

use super::{load, store};
use crate::quant::scalar::{f16_to_f32, le_u16};

/// 2^-24, the value of the smallest f16 subnormal.
const F16_SUBNORMAL_UNIT: f32 = 1.0 / 16_777_216.0;

/// Four f16s (in the low 16 bits of u32 lanes) to f32 bits exactly as the scalar
/// `half::f16::to_f32`: normals by rebiasing the exponent, subnormals (and zero) as
/// `mantissa · 2^-24` (exact), infinities exact, NaNs with their payload kept and the quiet bit
/// set; the sign bit copied over in every case.
#[inline(always)]
fn f16x4_to_f32x4(h: v128) -> v128 {
    let em = v128_and(h, u32x4_splat(0x7FFF));
    let sign = i32x4_shl(v128_and(h, u32x4_splat(0x8000)), 16);
    let shifted = i32x4_shl(em, 13);
    let normal = i32x4_add(shifted, u32x4_splat(0x3800_0000));
    let subnormal = f32x4_mul(f32x4_convert_i32x4(em), f32x4_splat(F16_SUBNORMAL_UNIT));
    let quiet = v128_and(i32x4_gt(em, i32x4_splat(0x7C00)), u32x4_splat(0x0040_0000));
    let inf_nan = v128_or(v128_or(shifted, u32x4_splat(0x7F80_0000)), quiet);
    let is_subnormal = i32x4_lt(em, i32x4_splat(0x0400));
    let is_inf_nan = i32x4_ge(em, i32x4_splat(0x7C00));
    let value = v128_bitselect(subnormal, normal, is_subnormal);
    v128_or(v128_bitselect(inf_nan, value, is_inf_nan), sign)
}

/// Elements handled by the vector loop: whole steps of 8 that both slices hold.
#[inline(always)]
fn vector_elements(blocks: &[u8], out: &[f32]) -> usize {
    (blocks.len() / 16).min(out.len() / 8) * 8
}

pub(super) fn dequant_f16(blocks: &[u8], out: &mut [f32]) {
    let n = vector_elements(blocks, out);
    for (i, at) in (0..n).step_by(8).enumerate() {
        let h = load(blocks, 16 * i);
        store(out, at, f16x4_to_f32x4(u32x4_extend_low_u16x8(h)));
        store(out, at + 4, f16x4_to_f32x4(u32x4_extend_high_u16x8(h)));
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
}
