//! The FP4 (E2M1) microscaling types: MXFP4 (32 values, one E8M0 power-of-two scale) and NVFP4
//! (64 values, one UE4M3 scale per 16).
//!
//! ggml stores E2M1 values doubled as small integers (`kvalues_fp4`) and halves the scales to
//! compensate, so each value is one f32 product: (2·e2m1)·(scale/2).

use super::{assert_block_size, for_each_block};
use crate::types::GgmlType;

/// E2M1 codes 0..16 as doubled values: ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}·2.
const KVALUES_FP4: [i8; 16] = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12];

/// 32 values: low nibbles are values 0..16, high nibbles 16..32.
#[repr(C)]
struct BlockMxfp4 {
    e: u8,
    qs: [u8; 16],
}
assert_block_size!(BlockMxfp4, GgmlType::MXFP4);

impl BlockMxfp4 {
    fn from_bytes(bytes: &[u8; 17]) -> Self {
        let [e, qs @ ..] = *bytes;
        Self { e, qs }
    }
}

/// 64 values in 4 sub-blocks of 16; within a sub-block, low nibbles first.
#[repr(C)]
struct BlockNvfp4 {
    d: [u8; 4],
    qs: [u8; 32],
}
assert_block_size!(BlockNvfp4, GgmlType::NVFP4);

impl BlockNvfp4 {
    fn from_bytes(bytes: &[u8; 36]) -> Self {
        let [d0, d1, d2, d3, qs @ ..] = *bytes;
        Self {
            d: [d0, d1, d2, d3],
            qs,
        }
    }
}

/// Half of the E8M0 scale 2^(e − 127), built from bits like ggml's `ggml_e8m0_to_fp32_half`:
/// e = 0 and 1 are subnormal, and e = 255 is 2^127 (no NaN).
#[inline(always)]
pub(crate) fn e8m0_to_f32_half(e: u8) -> f32 {
    if e < 2 {
        f32::from_bits(0x0020_0000 << e)
    } else {
        f32::from_bits(u32::from(e - 1) << 23)
    }
}

/// 2^exp for exp within the normal f32 range.
#[inline(always)]
fn pow2(exp: i32) -> f32 {
    f32::from_bits(((exp + 127) as u32) << 23)
}

/// Half of a UE4M3 scale, like ggml's `ggml_ue4m3_to_fp32`: bit 7 is ignored except that only
/// 0x7F (not 0xFF) reads as 0, and exponent 0 is subnormal. ggml builds the value with `ldexpf`;
/// every step here is exact in f32 as there, so the results are identical.
#[inline(always)]
pub(crate) fn ue4m3_to_f32_half(x: u8) -> f32 {
    if x == 0 || x == 0x7F {
        return 0.0;
    }
    let exp = i32::from((x >> 3) & 0x0F);
    let man = f32::from(x & 0x07);
    let raw = if exp == 0 {
        man * pow2(-9)
    } else {
        (1.0 + man / 8.0) * pow2(exp - 7)
    };
    raw * 0.5
}

/// Writes the two E2M1 codes of each byte of `qs`, times `d`: low nibbles to the first half of
/// `out`, high nibbles to the second.
#[inline(always)]
fn dequant_nibbles(qs: &[u8], d: f32, out: &mut [f32]) {
    let half = out.len() / 2;
    let (lo, hi) = out.split_at_mut(half);
    for ((lo, hi), &q) in lo.iter_mut().zip(hi).zip(qs) {
        *lo = f32::from(KVALUES_FP4[usize::from(q & 0x0F)]) * d;
        *hi = f32::from(KVALUES_FP4[usize::from(q >> 4)]) * d;
    }
}

pub(crate) fn dequant_mxfp4(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |bytes, y: &mut [f32; 32]| {
        let block = BlockMxfp4::from_bytes(bytes);
        dequant_nibbles(&block.qs, e8m0_to_f32_half(block.e), y);
    });
}

pub(crate) fn dequant_nvfp4(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |bytes, y: &mut [f32; 64]| {
        let block = BlockNvfp4::from_bytes(bytes);
        let subs = y.chunks_exact_mut(16).zip(block.qs.chunks_exact(8));
        for ((y, qs), &d) in subs.zip(&block.d) {
            dequant_nibbles(qs, ue4m3_to_f32_half(d), y);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e8m0_half_scales() {
        assert_eq!(e8m0_to_f32_half(127), 0.5);
        assert_eq!(e8m0_to_f32_half(128), 1.0);
        assert_eq!(e8m0_to_f32_half(2), f32::MIN_POSITIVE);
        assert_eq!(e8m0_to_f32_half(1).to_bits(), 0x0040_0000); // 2^-127
        assert_eq!(e8m0_to_f32_half(0).to_bits(), 0x0020_0000); // 2^-128
        assert_eq!(e8m0_to_f32_half(255), 2f32.powi(127));
    }

    #[test]
    fn ue4m3_half_scales() {
        assert_eq!(ue4m3_to_f32_half(0x38), 0.5); // exponent 7: 1.0
        assert_eq!(ue4m3_to_f32_half(0x3C), 0.75); // 1.5
        assert_eq!(ue4m3_to_f32_half(0x01), 2f32.powi(-10)); // smallest subnormal
        assert_eq!(ue4m3_to_f32_half(0x07), 7.0 * 2f32.powi(-10));
        assert_eq!(ue4m3_to_f32_half(0x7E), 224.0); // 448 / 2, the largest
        assert_eq!(ue4m3_to_f32_half(0x7F).to_bits(), 0);
        assert_eq!(ue4m3_to_f32_half(0xB8), 0.5); // bit 7 ignored
        assert_eq!(ue4m3_to_f32_half(0xFF), 240.0); // only 0x7F is special
        assert_eq!(ue4m3_to_f32_half(0x80).to_bits(), 0);
    }

    #[test]
    fn mxfp4_values_and_nibble_order() {
        let mut bytes = [0u8; 17];
        bytes[0] = 128; // scale 2, halved to 1.0 against the doubled values
        for (j, b) in bytes[1..].iter_mut().enumerate() {
            *b = (15 - j as u8) << 4 | j as u8;
        }
        let mut out = [f32::NAN; 32];
        dequant_mxfp4(&bytes, &mut out);
        let fp4 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
        for j in 0..16 {
            let expect = |code: usize| if code < 8 { fp4[code] } else { -fp4[code - 8] } * 2.0;
            assert_eq!(out[j], expect(j));
            assert_eq!(out[j + 16], expect(15 - j));
        }
        // Code 8 (E2M1 −0) is a plain 0 in ggml's table, so it dequantizes to +0.
        assert_eq!(out[8].to_bits(), 0);
    }

    #[test]
    fn mxfp4_e255_is_finite() {
        let mut bytes = [0u8; 17];
        bytes[0] = 255;
        bytes[1] = 0x71; // value 0: code 1, value 16: code 7
        let mut out = [f32::NAN; 32];
        dequant_mxfp4(&bytes, &mut out);
        assert_eq!(out[0], 2f32.powi(127)); // doubled 0.5 = 1, times 2^127
        assert_eq!(out[16], f32::INFINITY); // doubled 6 = 12, times 2^127 overflows
    }

    #[test]
    fn nvfp4_sub_block_scales() {
        let mut bytes = [0u8; 36];
        bytes[..4].copy_from_slice(&[0x38, 0x40, 0x7F, 0x30]); // 1.0, 2.0, 0, 0.5
        bytes[4] = 0xF1; // sub-block 0: value 0 code 1, value 8 code 15
        bytes[4 + 8] = 0x07; // sub-block 1: value 16 code 7
        bytes[4 + 16] = 0x77; // sub-block 2: scale 0
        bytes[4 + 31] = 0x30; // sub-block 3: value 63 code 3
        let mut out = [f32::NAN; 64];
        dequant_nvfp4(&bytes, &mut out);
        assert_eq!(out[0], 0.5);
        assert_eq!(out[8], -6.0);
        assert_eq!(out[16], 12.0);
        assert_eq!(out[32], 0.0);
        assert_eq!(out[40], 0.0);
        assert_eq!(out[63], 0.75);
        assert_eq!(out[1], 0.0);
    }

    #[test]
    fn whole_blocks_only() {
        let mut out = [3.0; 64];
        dequant_mxfp4(&[0; 16], &mut out);
        dequant_nvfp4(&[0; 36], &mut out[..63]);
        assert!(out.iter().all(|&v| v == 3.0));
    }
}
