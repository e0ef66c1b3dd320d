//! The ternary types: TQ1_0 (base-3 packed, 1.6875 bits per value) and TQ2_0 (2 bits per
//! value). Both give d·(t − 1) for a trit t in 0..3, d being the block's f16 scale.

use super::{assert_block_size, f16_to_f32, for_each_block, le_u16};
use crate::types::GgmlType;

/// Values per block.
const QK_K: usize = 256;

/// Trits packed five per byte in `qs` and four per byte in `qh`, as fixed-point fractions:
/// trit n of byte b is the top "digit" of b·3ⁿ (mod 256) scaled by 3.
#[repr(C)]
struct BlockTq1_0 {
    qs: [u8; 48],
    qh: [u8; 4],
    d: [u8; 2],
}
assert_block_size!(BlockTq1_0, GgmlType::TQ1_0);

impl BlockTq1_0 {
    fn from_bytes(bytes: &[u8; 54]) -> Self {
        let [rest @ .., d0, d1] = *bytes;
        let [qs @ .., h0, h1, h2, h3] = rest;
        Self {
            qs,
            qh: [h0, h1, h2, h3],
            d: [d0, d1],
        }
    }
}

/// 2-bit values q giving d·(q − 1), four per byte. ggml's quantizer writes only 0..=2; a 3
/// still decodes (to 2d).
#[repr(C)]
struct BlockTq2_0 {
    qs: [u8; QK_K / 4],
    d: [u8; 2],
}
assert_block_size!(BlockTq2_0, GgmlType::TQ2_0);

impl BlockTq2_0 {
    fn from_bytes(bytes: &[u8; 66]) -> Self {
        let [qs @ .., d0, d1] = *bytes;
        Self { qs, d: [d0, d1] }
    }
}

/// ggml's powers of three (its table also holds 243, which no loop reaches).
const POW3: [u8; 5] = [1, 3, 9, 27, 81];

/// Unpacks trit 0 of every byte of `packed`, then trit 1 of every byte, and so on, until `out`
/// (a multiple of `packed.len()` long) is full.
#[inline(always)]
fn dequant_trits(packed: &[u8], d: f32, out: &mut [f32]) {
    for (y, &pow3) in out.chunks_exact_mut(packed.len()).zip(&POW3) {
        for (y, &byte) in y.iter_mut().zip(packed) {
            // The multiply wraps mod 256 on purpose: it shifts trit n to the top.
            let q = byte.wrapping_mul(pow3);
            let t = (u16::from(q) * 3) >> 8;
            *y = (i32::from(t) - 1) as f32 * d;
        }
    }
}

pub(crate) fn dequant_tq1_0(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |bytes, y: &mut [f32; QK_K]| {
        let block = BlockTq1_0::from_bytes(bytes);
        let d = f16_to_f32(le_u16(block.d));
        // ggml walks qs in a 32-byte run then a 16-byte run (5 trits each), then qh (4 trits).
        let (qs32, qs16) = block.qs.split_at(32);
        let (y160, rest) = y.split_at_mut(160);
        let (y80, y16) = rest.split_at_mut(80);
        dequant_trits(qs32, d, y160);
        dequant_trits(qs16, d, y80);
        dequant_trits(&block.qh, d, y16);
    });
}

pub(crate) fn dequant_tq2_0(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |bytes, y: &mut [f32; QK_K]| {
        let block = BlockTq2_0::from_bytes(bytes);
        let d = f16_to_f32(le_u16(block.d));
        // Each 128 values: bit pair 0 of 32 bytes, then pair 1 of the same bytes, and so on.
        for (y, qs) in y.chunks_exact_mut(128).zip(block.qs.chunks_exact(32)) {
            for (y, shift) in y.chunks_exact_mut(32).zip((0..8).step_by(2)) {
                for (y, &q) in y.iter_mut().zip(qs) {
                    *y = (i32::from((q >> shift) & 3) - 1) as f32 * d;
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: [u8; 2] = [0x00, 0x40]; // f16 2.0

    /// Packs five trits the way ggml's quantizer does: as a base-3 number scaled to 0..256,
    /// rounded up.
    fn pack5(trits: [u8; 5]) -> u8 {
        let n = trits.iter().fold(0u16, |acc, &t| acc * 3 + u16::from(t));
        (n * 256).div_ceil(243) as u8
    }

    #[test]
    fn tq1_0_trit_order() {
        let mut qs = [pack5([1; 5]); 48];
        qs[0] = pack5([2, 0, 1, 2, 0]);
        qs[47] = pack5([0, 1, 2, 2, 1]);
        // Four trits per qh byte, packed the same way with a fifth trit of 0.
        let qh = [
            pack5([2, 1, 0, 2, 0]),
            pack5([1; 5]),
            pack5([1; 5]),
            pack5([0, 0, 0, 0, 0]),
        ];
        let bytes = [&qs[..], &qh, &TWO].concat();
        let mut out = [f32::NAN; QK_K];
        dequant_tq1_0(&bytes, &mut out);
        // Byte 0's trits land 32 apart.
        for (n, t) in [2.0, 0.0, 1.0, 2.0, 0.0].into_iter().enumerate() {
            assert_eq!(out[32 * n], 2.0 * (t - 1.0));
        }
        // Byte 47 is byte 15 of the 16-byte run: its trits land 16 apart from 160 + 15.
        for (n, t) in [0.0, 1.0, 2.0, 2.0, 1.0].into_iter().enumerate() {
            assert_eq!(out[175 + 16 * n], 2.0 * (t - 1.0));
        }
        // qh byte 0's trits land 4 apart from 240.
        for (n, t) in [2.0, 1.0, 0.0, 2.0].into_iter().enumerate() {
            assert_eq!(out[240 + 4 * n], 2.0 * (t - 1.0));
        }
        assert_eq!(out[243], -2.0);
        assert_eq!(out[1], 0.0);
    }

    #[test]
    fn tq2_0_pairs_lsb_first() {
        let mut qs = [0x55u8; 64]; // every value 1 → 0
        qs[0] = 0b11_10_00_01;
        qs[63] = 0b10_01_01_01;
        let bytes = [&qs[..], &TWO].concat();
        let mut out = [f32::NAN; QK_K];
        dequant_tq2_0(&bytes, &mut out);
        assert_eq!([out[0], out[32], out[64], out[96]], [0.0, -2.0, 2.0, 4.0]);
        assert_eq!(out[255], 2.0);
        assert_eq!(out[1], 0.0);
    }

    #[test]
    fn whole_blocks_only() {
        let mut out = [5.0; QK_K];
        dequant_tq1_0(&[0; 53], &mut out);
        dequant_tq2_0(&[0; 66], &mut out[..100]);
        assert!(out.iter().all(|&v| v == 5.0));
    }
}
