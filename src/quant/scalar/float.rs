//! Plain types stored one element per "block": F32, F16, BF16, F64 and the integers I8..I64,
//! all little-endian.
//!
//! F16 and BF16 follow ggml's `to_float` (`ggml_fp16_to_fp32_row`, `ggml_bf16_to_fp32_row`).
//! ggml has no `to_float` for F64 and the integers; they are cast to f32 with `as`, which
//! rounds to nearest like C's cast.

use super::{assert_block_size, f16_to_f32, le_u16};
use crate::types::GgmlType;

assert_block_size!(f32, GgmlType::F32);
assert_block_size!(u16, GgmlType::F16);
assert_block_size!(u16, GgmlType::BF16);
assert_block_size!(f64, GgmlType::F64);
assert_block_size!(i8, GgmlType::I8);
assert_block_size!(i16, GgmlType::I16);
assert_block_size!(i32, GgmlType::I32);
assert_block_size!(i64, GgmlType::I64);

/// Converts every whole `N`-byte element of `bytes` with `convert`.
#[inline(always)]
fn convert_each<const N: usize>(bytes: &[u8], out: &mut [f32], convert: impl Fn([u8; N]) -> f32) {
    for (chunk, y) in bytes.chunks_exact(N).zip(out.iter_mut()) {
        // Always Ok: chunks_exact yields exactly N bytes.
        if let Ok(element) = <[u8; N]>::try_from(chunk) {
            *y = convert(element);
        }
    }
}

pub(crate) fn dequant_f32(blocks: &[u8], out: &mut [f32]) {
    // from_le_bytes keeps every bit, NaN payloads included.
    convert_each(blocks, out, f32::from_le_bytes);
}

pub(crate) fn dequant_f16(blocks: &[u8], out: &mut [f32]) {
    convert_each(blocks, out, |b| f16_to_f32(le_u16(b)));
}

pub(crate) fn dequant_bf16(blocks: &[u8], out: &mut [f32]) {
    // A plain shift, as in ggml: signalling NaNs stay signalling.
    convert_each(blocks, out, |b| f32::from_bits(u32::from(le_u16(b)) << 16));
}

pub(crate) fn dequant_f64(blocks: &[u8], out: &mut [f32]) {
    convert_each(blocks, out, |b| f64::from_le_bytes(b) as f32);
}

pub(crate) fn dequant_i8(blocks: &[u8], out: &mut [f32]) {
    convert_each(blocks, out, |b: [u8; 1]| f32::from(i8::from_le_bytes(b)));
}

pub(crate) fn dequant_i16(blocks: &[u8], out: &mut [f32]) {
    convert_each(blocks, out, |b| f32::from(i16::from_le_bytes(b)));
}

pub(crate) fn dequant_i32(blocks: &[u8], out: &mut [f32]) {
    // Above 2^24 this rounds to nearest, ties to even, as C's (float) cast does.
    convert_each(blocks, out, |b| i32::from_le_bytes(b) as f32);
}

pub(crate) fn dequant_i64(blocks: &[u8], out: &mut [f32]) {
    convert_each(blocks, out, |b| i64::from_le_bytes(b) as f32);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(values: &[f32]) -> Vec<u32> {
        values.iter().map(|v| v.to_bits()).collect()
    }

    #[test]
    fn f32_keeps_every_bit() {
        let words = [
            0x3F80_0000u32,
            0x7F80_0001,
            0xFFC1_2345,
            0x0000_0001,
            0x8000_0000,
        ];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut out = [0.0; 5];
        dequant_f32(&bytes, &mut out);
        assert_eq!(bits(&out), words);
    }

    #[test]
    fn f16_exact_including_subnormals_infinities_and_nans() {
        let halves: [u16; 8] = [
            0x3C00, 0xC000, 0x0001, 0x83FF, 0x7C00, 0xFC00, 0x7C01, 0xFE00,
        ];
        let expected: [u32; 8] = [
            0x3F80_0000, // 1.0
            0xC000_0000, // -2.0
            0x3380_0000, // 2^-24, the smallest subnormal
            0xB87F_C000, // -(1023 * 2^-24)
            0x7F80_0000, // +inf
            0xFF80_0000, // -inf
            0x7FC0_2000, // signalling NaN: payload kept, quiet bit set
            0xFFC0_0000, // quiet NaN, sign kept
        ];
        let bytes: Vec<u8> = halves.iter().flat_map(|h| h.to_le_bytes()).collect();
        let mut out = [0.0; 8];
        dequant_f16(&bytes, &mut out);
        assert_eq!(bits(&out), expected);
    }

    #[test]
    fn bf16_is_a_plain_shift() {
        let halves: [u16; 4] = [0x3F80, 0x7F81, 0x0001, 0xC049];
        let bytes: Vec<u8> = halves.iter().flat_map(|h| h.to_le_bytes()).collect();
        let mut out = [0.0; 4];
        dequant_bf16(&bytes, &mut out);
        // 0x7F81 is a signalling NaN and must not be quieted.
        assert_eq!(
            bits(&out),
            [0x3F80_0000, 0x7F81_0000, 0x0001_0000, 0xC049_0000]
        );
    }

    #[test]
    fn f64_rounds_to_nearest() {
        let values = [1.0 + f64::EPSILON, 0.1, 1e300, -1e-300, 3.0];
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut out = [0.0; 5];
        dequant_f64(&bytes, &mut out);
        assert_eq!(out, [1.0, 0.1f32, f32::INFINITY, -0.0, 3.0]);
        assert!(out[3].is_sign_negative());
    }

    #[test]
    fn integers_are_signed_little_endian() {
        let mut out = [0.0; 3];
        dequant_i8(&[0x80, 0x7F, 0xFF], &mut out);
        assert_eq!(out, [-128.0, 127.0, -1.0]);

        let mut out = [0.0; 2];
        dequant_i16(&[0x00, 0x80, 0x34, 0x12], &mut out);
        assert_eq!(out, [-32768.0, 4660.0]);

        // 2^24 + 1 and 2^24 + 3 are ties: they round to the even neighbour.
        let words = [16_777_217i32, 16_777_219, i32::MIN];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut out = [0.0; 3];
        dequant_i32(&bytes, &mut out);
        assert_eq!(out, [16_777_216.0, 16_777_220.0, -2_147_483_648.0]);

        let words = [i64::MAX, -(1i64 << 40) - 1];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut out = [0.0; 2];
        dequant_i64(&bytes, &mut out);
        assert_eq!(out, [9_223_372_036_854_775_808.0, -1_099_511_627_776.0]);
    }

    #[test]
    fn partial_elements_are_ignored() {
        let mut out = [7.0; 2];
        dequant_f32(&[0, 0, 0x80, 0x3F, 0xAA], &mut out);
        assert_eq!(out, [1.0, 7.0]);
        let mut out = [7.0; 1];
        dequant_i64(&[1, 0, 0, 0, 0, 0, 0, 0, 2, 3], &mut out);
        assert_eq!(out, [1.0]);
    }
}
