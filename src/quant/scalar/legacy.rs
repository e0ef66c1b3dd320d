//! The original block quants with one f16 scale per block: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1
//! (32 values each), Q1_0 (128 values) and Q2_0 (64 values).
//!
//! Arithmetic follows ggml's `dequantize_row_*`: the integer quant is converted to f32, then
//! multiplied by the scale (and the min added, for the `_1` types).

use super::{assert_block_size, f16_to_f32, for_each_block, le_u16};
use crate::types::GgmlType;

/// Values per block of the 32-value types.
const QK: usize = 32;

/// 4-bit quants: value = d·(nibble − 8). Low nibbles are values 0..16, high nibbles 16..32.
#[repr(C)]
struct BlockQ4_0 {
    d: [u8; 2],
    qs: [u8; QK / 2],
}
assert_block_size!(BlockQ4_0, GgmlType::Q4_0);

impl BlockQ4_0 {
    fn from_bytes(bytes: &[u8; 18]) -> Self {
        let [d0, d1, qs @ ..] = *bytes;
        Self { d: [d0, d1], qs }
    }
}

/// 4-bit quants with a min: value = d·nibble + m.
#[repr(C)]
struct BlockQ4_1 {
    d: [u8; 2],
    m: [u8; 2],
    qs: [u8; QK / 2],
}
assert_block_size!(BlockQ4_1, GgmlType::Q4_1);

impl BlockQ4_1 {
    fn from_bytes(bytes: &[u8; 20]) -> Self {
        let [d0, d1, m0, m1, qs @ ..] = *bytes;
        Self {
            d: [d0, d1],
            m: [m0, m1],
            qs,
        }
    }
}

/// 5-bit quants: a nibble plus bit j of the little-endian u32 `qh` for value j.
#[repr(C)]
struct BlockQ5_0 {
    d: [u8; 2],
    qh: [u8; 4],
    qs: [u8; QK / 2],
}
assert_block_size!(BlockQ5_0, GgmlType::Q5_0);

impl BlockQ5_0 {
    fn from_bytes(bytes: &[u8; 22]) -> Self {
        let [d0, d1, h0, h1, h2, h3, qs @ ..] = *bytes;
        Self {
            d: [d0, d1],
            qh: [h0, h1, h2, h3],
            qs,
        }
    }
}

/// 5-bit quants with a min.
#[repr(C)]
struct BlockQ5_1 {
    d: [u8; 2],
    m: [u8; 2],
    qh: [u8; 4],
    qs: [u8; QK / 2],
}
assert_block_size!(BlockQ5_1, GgmlType::Q5_1);

impl BlockQ5_1 {
    fn from_bytes(bytes: &[u8; 24]) -> Self {
        let [d0, d1, m0, m1, h0, h1, h2, h3, qs @ ..] = *bytes;
        Self {
            d: [d0, d1],
            m: [m0, m1],
            qh: [h0, h1, h2, h3],
            qs,
        }
    }
}

/// 8-bit quants: value = d·(i8 quant).
#[repr(C)]
struct BlockQ8_0 {
    d: [u8; 2],
    qs: [u8; QK],
}
assert_block_size!(BlockQ8_0, GgmlType::Q8_0);

impl BlockQ8_0 {
    fn from_bytes(bytes: &[u8; 34]) -> Self {
        let [d0, d1, qs @ ..] = *bytes;
        Self { d: [d0, d1], qs }
    }
}

/// 8-bit quants plus `s` = d·Σq, which only matters for dot products.
#[repr(C)]
struct BlockQ8_1 {
    d: [u8; 2],
    #[allow(dead_code)] // only dot products use it
    s: [u8; 2],
    qs: [u8; QK],
}
assert_block_size!(BlockQ8_1, GgmlType::Q8_1);

impl BlockQ8_1 {
    fn from_bytes(bytes: &[u8; 36]) -> Self {
        let [d0, d1, s0, s1, qs @ ..] = *bytes;
        Self {
            d: [d0, d1],
            s: [s0, s1],
            qs,
        }
    }
}

/// 1-bit quants: bit j (LSB first) set gives +d, clear gives −d.
#[repr(C)]
struct BlockQ1_0 {
    d: [u8; 2],
    qs: [u8; 16],
}
assert_block_size!(BlockQ1_0, GgmlType::Q1_0);

impl BlockQ1_0 {
    fn from_bytes(bytes: &[u8; 18]) -> Self {
        let [d0, d1, qs @ ..] = *bytes;
        Self { d: [d0, d1], qs }
    }
}

/// 2-bit quants: value = d·(q − 1), four per byte, LSB first.
#[repr(C)]
struct BlockQ2_0 {
    d: [u8; 2],
    qs: [u8; 16],
}
assert_block_size!(BlockQ2_0, GgmlType::Q2_0);

impl BlockQ2_0 {
    fn from_bytes(bytes: &[u8; 18]) -> Self {
        let [d0, d1, qs @ ..] = *bytes;
        Self { d: [d0, d1], qs }
    }
}

/// The 5th bits of values j and j + 16, placed at bit 4, from Q5's `qh`.
#[inline(always)]
fn q5_high_bits(qh: u32, j: usize) -> (u8, u8) {
    let low = ((qh >> j) << 4) & 0x10;
    let high = (qh >> (j + 12)) & 0x10;
    (low as u8, high as u8)
}

pub(crate) fn dequant_q4_0(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |bytes, y: &mut [f32; QK]| {
        let block = BlockQ4_0::from_bytes(bytes);
        let d = f16_to_f32(le_u16(block.d));
        for j in 0..QK / 2 {
            let q = block.qs[j];
            y[j] = (i32::from(q & 0x0F) - 8) as f32 * d;
            y[j + QK / 2] = (i32::from(q >> 4) - 8) as f32 * d;
        }
    });
}

pub(crate) fn dequant_q4_1(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |bytes, y: &mut [f32; QK]| {
        let block = BlockQ4_1::from_bytes(bytes);
        let d = f16_to_f32(le_u16(block.d));
        let m = f16_to_f32(le_u16(block.m));
        for j in 0..QK / 2 {
            let q = block.qs[j];
            y[j] = f32::from(q & 0x0F) * d + m;
            y[j + QK / 2] = f32::from(q >> 4) * d + m;
        }
    });
}

pub(crate) fn dequant_q5_0(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |bytes, y: &mut [f32; QK]| {
        let block = BlockQ5_0::from_bytes(bytes);
        let d = f16_to_f32(le_u16(block.d));
        let qh = u32::from_le_bytes(block.qh);
        for j in 0..QK / 2 {
            let q = block.qs[j];
            let (h0, h1) = q5_high_bits(qh, j);
            y[j] = (i32::from((q & 0x0F) | h0) - 16) as f32 * d;
            y[j + QK / 2] = (i32::from((q >> 4) | h1) - 16) as f32 * d;
        }
    });
}

pub(crate) fn dequant_q5_1(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |bytes, y: &mut [f32; QK]| {
        let block = BlockQ5_1::from_bytes(bytes);
        let d = f16_to_f32(le_u16(block.d));
        let m = f16_to_f32(le_u16(block.m));
        let qh = u32::from_le_bytes(block.qh);
        for j in 0..QK / 2 {
            let q = block.qs[j];
            let (h0, h1) = q5_high_bits(qh, j);
            y[j] = f32::from((q & 0x0F) | h0) * d + m;
            y[j + QK / 2] = f32::from((q >> 4) | h1) * d + m;
        }
    });
}

/// Q8_0 and Q8_1 share this: value = d·q.
#[inline(always)]
fn dequant_i8_quants(d: [u8; 2], qs: &[u8; QK], y: &mut [f32; QK]) {
    let d = f16_to_f32(le_u16(d));
    for (y, &q) in y.iter_mut().zip(qs) {
        *y = f32::from(q as i8) * d;
    }
}

pub(crate) fn dequant_q8_0(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |bytes, y: &mut [f32; QK]| {
        let block = BlockQ8_0::from_bytes(bytes);
        dequant_i8_quants(block.d, &block.qs, y);
    });
}

/// ggml has no `to_float` for Q8_1 (it only exists as a dot-product operand); its values are
/// d·q like Q8_0, and `s` is redundant.
pub(crate) fn dequant_q8_1(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |bytes, y: &mut [f32; QK]| {
        let block = BlockQ8_1::from_bytes(bytes);
        dequant_i8_quants(block.d, &block.qs, y);
    });
}

pub(crate) fn dequant_q1_0(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |bytes, y: &mut [f32; 128]| {
        let block = BlockQ1_0::from_bytes(bytes);
        let d = f16_to_f32(le_u16(block.d));
        // Negation only flips the sign bit, so a NaN scale keeps its payload either way.
        let neg_d = -d;
        for (y, &bits) in y.chunks_exact_mut(8).zip(&block.qs) {
            for (y, shift) in y.iter_mut().zip(0..8) {
                *y = if (bits >> shift) & 1 == 1 { d } else { neg_d };
            }
        }
    });
}

pub(crate) fn dequant_q2_0(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |bytes, y: &mut [f32; 64]| {
        let block = BlockQ2_0::from_bytes(bytes);
        let d = f16_to_f32(le_u16(block.d));
        for (y, &q) in y.chunks_exact_mut(4).zip(&block.qs) {
            for (y, shift) in y.iter_mut().zip((0..8).step_by(2)) {
                *y = (i32::from((q >> shift) & 3) - 1) as f32 * d;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: [u8; 2] = [0x00, 0x3C]; // f16 1.0
    const HALF: [u8; 2] = [0x00, 0x38]; // f16 0.5
    const TWO: [u8; 2] = [0x00, 0x40]; // f16 2.0
    const NAN: [u8; 2] = [0x01, 0x7C]; // f16 signalling NaN

    fn block(header: &[u8], body: &[u8]) -> Vec<u8> {
        [header, body].concat()
    }

    #[test]
    fn q4_0_low_nibbles_first() {
        let qs: Vec<u8> = (0..16).map(|j| (15 - j) << 4 | j).collect();
        let mut out = [0.0; 32];
        dequant_q4_0(&block(&TWO, &qs), &mut out);
        for j in 0..16 {
            assert_eq!(out[j], 2.0 * (j as f32 - 8.0));
            assert_eq!(out[j + 16], 2.0 * (7.0 - j as f32));
        }
    }

    #[test]
    fn q4_1_adds_the_min() {
        let qs = [0x51u8; 16];
        let mut out = [0.0; 32];
        dequant_q4_1(&block(&[HALF, TWO].concat(), &qs), &mut out);
        assert!(out[..16].iter().all(|&v| v == 2.5));
        assert!(out[16..].iter().all(|&v| v == 4.5));
    }

    #[test]
    fn q5_0_high_bits_come_from_qh() {
        // qh bit 0 → value 0, bit 16 → value 16, bit 31 → value 31.
        let qh = (1u32 | 1 << 16 | 1 << 31).to_le_bytes();
        let mut qs = [0u8; 16];
        qs[0] = 0xF3; // value 0: 3 | 16, value 16: 15 | 16
        qs[15] = 0x21; // value 15: 1, value 31: 2 | 16
        let mut out = [0.0; 32];
        dequant_q5_0(&[&ONE[..], &qh, &qs].concat(), &mut out);
        assert_eq!(out[0], 3.0);
        assert_eq!(out[16], 15.0);
        assert_eq!(out[15], -15.0);
        assert_eq!(out[31], 2.0);
        assert_eq!(out[1], -16.0);
    }

    #[test]
    fn q5_1_unsigned_with_min() {
        let qh = (1u32 << 17).to_le_bytes();
        let qs = [0x11u8; 16];
        let mut out = [0.0; 32];
        dequant_q5_1(&[&ONE[..], &TWO, &qh, &qs].concat(), &mut out);
        assert_eq!(out[0], 3.0);
        assert_eq!(out[17], 19.0);
        assert_eq!(out[16], 3.0);
    }

    #[test]
    fn q8_0_signed_quants() {
        let qs: Vec<u8> = (0..32).map(|j| (j as i8 - 16) as u8).collect();
        let mut out = [0.0; 32];
        dequant_q8_0(&block(&HALF, &qs), &mut out);
        for (j, v) in out.iter().enumerate() {
            assert_eq!(*v, (j as f32 - 16.0) * 0.5);
        }
    }

    #[test]
    fn q8_1_ignores_s() {
        let qs: Vec<u8> = (0..32).map(|j| (j * 7) as u8).collect();
        let mut with_s = [0.0; 32];
        let mut without_s = [0.0; 32];
        dequant_q8_1(&block(&[TWO, NAN].concat(), &qs), &mut with_s);
        dequant_q8_0(&block(&TWO, &qs), &mut without_s);
        assert_eq!(with_s, without_s);
        assert_eq!(with_s[19], 2.0 * f32::from((19 * 7) as u8 as i8));
    }

    #[test]
    fn q1_0_bits_lsb_first() {
        let mut qs = [0u8; 16];
        qs[0] = 0b0000_0101;
        qs[15] = 0x80;
        let mut out = [0.0; 128];
        dequant_q1_0(&block(&HALF, &qs), &mut out);
        assert_eq!(&out[..4], &[0.5, -0.5, 0.5, -0.5]);
        assert_eq!(out[126], -0.5);
        assert_eq!(out[127], 0.5);
        // A NaN scale is negated by flipping its sign bit only.
        dequant_q1_0(&block(&NAN, &qs), &mut out);
        assert_eq!(out[0].to_bits(), 0x7FC0_2000);
        assert_eq!(out[1].to_bits(), 0xFFC0_2000);
    }

    #[test]
    fn q2_0_four_per_byte() {
        let mut qs = [0u8; 16];
        qs[0] = 0b11_10_01_00;
        qs[15] = 0b10_00_00_00;
        let mut out = [0.0; 64];
        dequant_q2_0(&block(&TWO, &qs), &mut out);
        assert_eq!(&out[..4], &[-2.0, 0.0, 2.0, 4.0]);
        assert_eq!(out[62], -2.0);
        assert_eq!(out[63], 2.0);
        // 0·(−2) is −0 in f32, as in ggml.
        dequant_q2_0(&block(&[0x00, 0xC0], &qs), &mut out);
        assert_eq!(out[1].to_bits(), 0x8000_0000);
    }

    #[test]
    fn whole_blocks_only() {
        let mut bytes = block(&ONE, &[0x88; 16]);
        bytes.extend_from_slice(&[0x00, 0x3C, 0x00]);
        let mut out = [9.0; 40];
        dequant_q4_0(&bytes, &mut out);
        assert!(out[..32].iter().all(|&v| v == 0.0));
        assert!(out[32..].iter().all(|&v| v == 9.0));
        let mut short = [9.0; 31];
        dequant_q4_0(&bytes, &mut short);
        assert!(short.iter().all(|&v| v == 9.0));
    }
}
