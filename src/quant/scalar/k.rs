//! The k-quants: super-blocks of 256 values split into sub-blocks with their own quantized
//! scales (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K) and Q8_K, the f32-scaled 8-bit intermediate type.
//!
//! Arithmetic follows ggml's `dequantize_row_*_K` operation for operation: the sub-block
//! scale (and min) is formed once as `d·sc` (`dmin·m`), then each value is `scale·q − min`.
//! Regrouping these products would change rounding.

use super::{assert_block_size, f16_to_f32, for_each_block, le_u16};
use crate::types::GgmlType;

/// Values per super-block.
const QK_K: usize = 256;

/// 16 sub-blocks of 16 with 4-bit scales and mins; 2-bit quants.
#[repr(C)]
struct BlockQ2K {
    /// Low nibble: scale; high nibble: min.
    scales: [u8; QK_K / 16],
    qs: [u8; QK_K / 4],
    d: [u8; 2],
    dmin: [u8; 2],
}
assert_block_size!(BlockQ2K, GgmlType::Q2_K);

/// 16 sub-blocks of 16 with 6-bit scales; 2-bit quants plus a high bit from `hmask`.
#[repr(C)]
struct BlockQ3K {
    hmask: [u8; QK_K / 8],
    qs: [u8; QK_K / 4],
    /// 16 6-bit scales: low nibbles in bytes 0..8, high bit pairs in bytes 8..12.
    scales: [u8; 12],
    d: [u8; 2],
}
assert_block_size!(BlockQ3K, GgmlType::Q3_K);

/// 8 sub-blocks of 32 with 6-bit scales and mins; 4-bit quants.
#[repr(C)]
struct BlockQ4K {
    d: [u8; 2],
    dmin: [u8; 2],
    scales: [u8; 12],
    qs: [u8; QK_K / 2],
}
assert_block_size!(BlockQ4K, GgmlType::Q4_K);

/// Q4_K plus a 5th bit per value in `qh`.
#[repr(C)]
struct BlockQ5K {
    d: [u8; 2],
    dmin: [u8; 2],
    scales: [u8; 12],
    qh: [u8; QK_K / 8],
    qs: [u8; QK_K / 2],
}
assert_block_size!(BlockQ5K, GgmlType::Q5_K);

/// 16 sub-blocks of 16 with i8 scales; 6-bit quants split into low nibbles and high pairs.
#[repr(C)]
struct BlockQ6K {
    ql: [u8; QK_K / 2],
    qh: [u8; QK_K / 4],
    scales: [u8; QK_K / 16],
    d: [u8; 2],
}
assert_block_size!(BlockQ6K, GgmlType::Q6_K);

/// i8 quants with an f32 scale, plus per-16 sums that only dot products use.
#[repr(C)]
struct BlockQ8K {
    d: [u8; 4],
    qs: [u8; QK_K],
    #[allow(dead_code)] // only dot products use it
    bsums: [u8; QK_K / 8],
}
assert_block_size!(BlockQ8K, GgmlType::Q8_K);

/// Reads a block's fields front to back.
struct Fields<'a>(&'a [u8]);

impl Fields<'_> {
    /// The next `N` bytes. Block sizes are asserted at compile time, so a field never runs past
    /// the end of its block (if it did, it would read as zeros rather than panic).
    #[inline(always)]
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut field = [0; N];
        if let (Some(head), Some(tail)) = (self.0.get(..N), self.0.get(N..)) {
            field.copy_from_slice(head);
            self.0 = tail;
        }
        field
    }
}

// Struct expressions evaluate their fields in source order, so each `take` reads the next field.
impl BlockQ2K {
    fn from_bytes(bytes: &[u8; 84]) -> Self {
        let mut f = Fields(bytes);
        Self {
            scales: f.take(),
            qs: f.take(),
            d: f.take(),
            dmin: f.take(),
        }
    }
}

impl BlockQ3K {
    fn from_bytes(bytes: &[u8; 110]) -> Self {
        let mut f = Fields(bytes);
        Self {
            hmask: f.take(),
            qs: f.take(),
            scales: f.take(),
            d: f.take(),
        }
    }
}

impl BlockQ4K {
    fn from_bytes(bytes: &[u8; 144]) -> Self {
        let mut f = Fields(bytes);
        Self {
            d: f.take(),
            dmin: f.take(),
            scales: f.take(),
            qs: f.take(),
        }
    }
}

impl BlockQ5K {
    fn from_bytes(bytes: &[u8; 176]) -> Self {
        let mut f = Fields(bytes);
        Self {
            d: f.take(),
            dmin: f.take(),
            scales: f.take(),
            qh: f.take(),
            qs: f.take(),
        }
    }
}

impl BlockQ6K {
    fn from_bytes(bytes: &[u8; 210]) -> Self {
        let mut f = Fields(bytes);
        Self {
            ql: f.take(),
            qh: f.take(),
            scales: f.take(),
            d: f.take(),
        }
    }
}

impl BlockQ8K {
    fn from_bytes(bytes: &[u8; 292]) -> Self {
        let mut f = Fields(bytes);
        Self {
            d: f.take(),
            qs: f.take(),
            bsums: f.take(),
        }
    }
}

/// Q3_K's 16 signed scales: a low nibble (bytes 0..8, low then high nibbles) and two high bits
/// (bytes 8..12, bit pair i/4 of byte 8 + i%4), minus 32.
fn unpack_q3_k_scales(packed: &[u8; 12]) -> [i32; 16] {
    let mut scales = [0; 16];
    for (i, scale) in scales.iter_mut().enumerate() {
        let low = if i < 8 {
            packed[i] & 0x0F
        } else {
            packed[i - 8] >> 4
        };
        let high = (packed[8 + i % 4] >> (2 * (i / 4))) & 3;
        *scale = i32::from(low | high << 4) - 32;
    }
    scales
}

/// Q4_K/Q5_K's 8 (scale, min) pairs of 6 bits each. Pairs 0..4 are the low 6 bits of bytes
/// 0..4 and 4..8; pairs 4..8 take nibbles of bytes 8..12 and the top two bits of bytes 0..8.
pub(crate) fn unpack_scale_min_k4(packed: &[u8; 12]) -> [(u8, u8); 8] {
    let mut pairs = [(0, 0); 8];
    for (j, pair) in pairs.iter_mut().enumerate() {
        *pair = if j < 4 {
            (packed[j] & 63, packed[j + 4] & 63)
        } else {
            (
                (packed[j + 4] & 0x0F) | (packed[j - 4] >> 6) << 4,
                (packed[j + 4] >> 4) | (packed[j] >> 6) << 4,
            )
        };
    }
    pairs
}

pub(crate) fn dequant_q2_k(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |bytes, y: &mut [f32; QK_K]| {
        let block = BlockQ2K::from_bytes(bytes);
        let d = f16_to_f32(le_u16(block.d));
        let min = f16_to_f32(le_u16(block.dmin));
        // Sub-block `is` (16 values, in output order) reads 2-bit plane `is/2 % 4` of quant
        // bytes 32·(is/8) + 16·(is%2) ..+16.
        for (is, (y, &sc)) in y.chunks_exact_mut(16).zip(&block.scales).enumerate() {
            let dl = d * f32::from(sc & 0x0F);
            let ml = min * f32::from(sc >> 4);
            let shift = 2 * (is / 2 % 4);
            let start = 32 * (is / 8) + 16 * (is % 2);
            for (l, y) in y.iter_mut().enumerate() {
                *y = dl * f32::from((block.qs[start + l] >> shift) & 3) - ml;
            }
        }
    });
}

pub(crate) fn dequant_q3_k(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |bytes, y: &mut [f32; QK_K]| {
        let block = BlockQ3K::from_bytes(bytes);
        let d_all = f16_to_f32(le_u16(block.d));
        let scales = unpack_q3_k_scales(&block.scales);
        // Same walk as Q2_K; the high bit of value l within its 128-value half is bit
        // (is/2) of hmask[l % 32], and a clear bit subtracts 4.
        for (is, (y, &sc)) in y.chunks_exact_mut(16).zip(&scales).enumerate() {
            let dl = d_all * sc as f32;
            let shift = 2 * (is / 2 % 4);
            let mask = 1u8 << (is / 2);
            let start = 32 * (is / 8) + 16 * (is % 2);
            let hstart = 16 * (is % 2);
            for (l, y) in y.iter_mut().enumerate() {
                let low = i32::from((block.qs[start + l] >> shift) & 3);
                let high_clear = block.hmask[hstart + l] & mask == 0;
                *y = dl * (low - if high_clear { 4 } else { 0 }) as f32;
            }
        }
    });
}

pub(crate) fn dequant_q4_k(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |bytes, y: &mut [f32; QK_K]| {
        let block = BlockQ4K::from_bytes(bytes);
        let d = f16_to_f32(le_u16(block.d));
        let min = f16_to_f32(le_u16(block.dmin));
        let pairs = unpack_scale_min_k4(&block.scales);
        // Each 64 values: 32 low nibbles of 32 quant bytes, then their 32 high nibbles.
        let groups = y.chunks_exact_mut(64).zip(block.qs.chunks_exact(32));
        for ((y, qs), pairs) in groups.zip(pairs.chunks_exact(2)) {
            let (lo, hi) = y.split_at_mut(32);
            for ((y, &(sc, m)), nibble_shift) in [lo, hi].into_iter().zip(pairs).zip([0, 4]) {
                let d1 = d * f32::from(sc);
                let m1 = min * f32::from(m);
                for (y, &q) in y.iter_mut().zip(qs) {
                    *y = d1 * f32::from((q >> nibble_shift) & 0x0F) - m1;
                }
            }
        }
    });
}

pub(crate) fn dequant_q5_k(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |bytes, y: &mut [f32; QK_K]| {
        let block = BlockQ5K::from_bytes(bytes);
        let d = f16_to_f32(le_u16(block.d));
        let min = f16_to_f32(le_u16(block.dmin));
        let pairs = unpack_scale_min_k4(&block.scales);
        // As Q4_K; the 32 values from nibble half h of group j take their 5th bit from bit
        // 2j + h of qh[l].
        let groups = y.chunks_exact_mut(64).zip(block.qs.chunks_exact(32));
        for (j, ((y, qs), pairs)) in groups.zip(pairs.chunks_exact(2)).enumerate() {
            let (lo, hi) = y.split_at_mut(32);
            for (h, (y, &(sc, m))) in [lo, hi].into_iter().zip(pairs).enumerate() {
                let d1 = d * f32::from(sc);
                let m1 = min * f32::from(m);
                let high_bit = 1u8 << (2 * j + h);
                for ((y, &q), &qh) in y.iter_mut().zip(qs).zip(&block.qh) {
                    let low = (q >> (4 * h)) & 0x0F;
                    let high = if qh & high_bit != 0 { 16 } else { 0 };
                    *y = d1 * f32::from(low + high) - m1;
                }
            }
        }
    });
}

pub(crate) fn dequant_q6_k(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |bytes, y: &mut [f32; QK_K]| {
        let block = BlockQ6K::from_bytes(bytes);
        let d = f16_to_f32(le_u16(block.d));
        // ggml computes (d·sc)·q per value; d·sc is the same f32 every time, so form it once.
        let scales: [f32; 16] = core::array::from_fn(|i| d * f32::from(block.scales[i] as i8));
        // Each 128 values use 64 ql bytes and 32 qh bytes: value 32k + l (k = 0..4) takes
        // nibble k/2 of ql[l + 32·(k%2)] and bit pair k of qh[l]; its scale is 2k + l/16.
        for n in 0..2 {
            for l in 0..32 {
                let qh = block.qh[32 * n + l];
                for k in 0..4 {
                    let ql = block.ql[64 * n + 32 * (k % 2) + l];
                    let low = (ql >> (4 * (k / 2))) & 0x0F;
                    let high = (qh >> (2 * k)) & 3;
                    let q = i32::from(low | high << 4) - 32;
                    y[128 * n + 32 * k + l] = scales[8 * n + 2 * k + l / 16] * q as f32;
                }
            }
        }
    });
}

/// ggml registers no `to_float` for Q8_K (it is a dot-product operand), but its
/// `dequantize_row_q8_K` is d·q with the f32 d, which this matches.
pub(crate) fn dequant_q8_k(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |bytes, y: &mut [f32; QK_K]| {
        let block = BlockQ8K::from_bytes(bytes);
        let d = f32::from_le_bytes(block.d);
        for (y, &q) in y.iter_mut().zip(&block.qs) {
            *y = d * f32::from(q as i8);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: [u8; 2] = [0x00, 0x3C]; // f16 1.0
    const HALF: [u8; 2] = [0x00, 0x38]; // f16 0.5
    const TWO: [u8; 2] = [0x00, 0x40]; // f16 2.0

    fn run(kernel: fn(&[u8], &mut [f32]), bytes: &[u8]) -> Vec<f32> {
        let mut out = vec![f32::NAN; QK_K];
        kernel(bytes, &mut out);
        out
    }

    #[test]
    fn q2_k_planes_scales_and_mins() {
        let mut scales = [0u8; 16];
        scales[0] = 0x13; // sub-block 0: scale 3, min 1
        scales[3] = 0x02; // sub-block 3: plane 1 of quant bytes 16..32
        scales[15] = 0xF1; // sub-block 15: plane 3 of quant bytes 48..64
        let mut qs = [0u8; 64];
        qs[0] = 0b01_00_10_11; // plane 0 (bits 0-1) = 3
        qs[17] = 0b00_00_10_00; // plane 1 = 2
        qs[63] = 0b11_00_00_00; // plane 3 = 3
        let bytes = [&scales[..], &qs, &TWO, &HALF].concat();
        let out = run(dequant_q2_k, &bytes);
        assert_eq!(out[0], 2.0 * 3.0 * 3.0 - 0.5);
        assert_eq!(out[1], -0.5);
        assert_eq!(out[48 + 1], 2.0 * 2.0 * 2.0);
        assert_eq!(out[255], 2.0 * 1.0 * 3.0 - 0.5 * 15.0);
        assert_eq!(out[16], 0.0);
    }

    #[test]
    fn q3_k_scale_unpacking() {
        // Scale i gets low nibble i+1 and high bits (i % 4) so no two scales are equal.
        let mut packed = [0u8; 12];
        for i in 0..16 {
            let low = (i as u8 + 1) & 0x0F;
            if i < 8 {
                packed[i] |= low;
            } else {
                packed[i - 8] |= low << 4;
            }
            packed[8 + i % 4] |= ((i / 4) as u8) << (2 * (i / 4));
        }
        let expected: Vec<i32> = (0..16)
            .map(|i| (((i + 1) & 15) | (i / 4) << 4) - 32)
            .collect();
        assert_eq!(unpack_q3_k_scales(&packed).to_vec(), expected);
    }

    #[test]
    fn q3_k_high_bit_and_offset() {
        let mut scales = [0u8; 12];
        scales[0] = 0x01; // scale 0: low 1, high 0 → 1 - 32 = -31
        scales[8] = 0b10 | 0b10 << 2; // scale 0 and 4 high bits: 2 → +32
        scales[4] = 0x01; // scale 4: 1 | 32 → 1
        let mut hmask = [0u8; 32];
        hmask[0] = 0b0000_0001; // value 0 has its high bit (plane 0)
        hmask[1] = 0b0000_0100; // value 64 + 1 has its high bit (plane 2)
        let mut qs = [0u8; 64];
        qs[0] = 0b0000_0010;
        qs[1] = 0b0010_0000; // plane 2 of byte 1 = 2
        let bytes = [&hmask[..], &qs, &scales, &ONE].concat();
        let out = run(dequant_q3_k, &bytes);
        // scale 0 is 33 - 32 = 1; value 0: q=2, high bit set → 2.
        assert_eq!(out[0], 2.0);
        // value 1: q=0, high bit clear → -4.
        assert_eq!(out[1], -4.0);
        // value 65 is in sub-block 4 (scale 1 | 32 = 33 → 1): q=2, high set → 2.
        assert_eq!(out[65], 2.0);
        assert_eq!(out[64], -4.0);
        // Sub-block 1 has scale 0 - 32 = -32: value 16 = -32·(0 - 4) = 128.
        assert_eq!(out[16], 128.0);
    }

    #[test]
    fn scale_min_k4_unpacking() {
        let packed = [
            0xC1, 0x42, 0x83, 0x04, 0x45, 0x86, 0xC7, 0x08, 0x9A, 0xBC, 0xDE, 0xF0,
        ];
        let pairs = unpack_scale_min_k4(&packed);
        assert_eq!(&pairs[..4], &[(1, 5), (2, 6), (3, 7), (4, 8)]);
        // j = 4: scale = (0x9A & 15) | (0xC1 >> 6) << 4 = 10 | 48; min = 9 | (0x45 >> 6) << 4.
        assert_eq!(pairs[4], (58, 25));
        assert_eq!(pairs[5], (12 | 1 << 4, 11 | 2 << 4));
        assert_eq!(pairs[6], (14 | 2 << 4, 13 | 3 << 4));
        assert_eq!(pairs[7], (0, 15));
    }

    #[test]
    fn q4_k_low_then_high_nibbles() {
        let mut scales = [0u8; 12];
        scales[0] = 3; // sub-block 0 scale
        scales[4] = 1; // sub-block 0 min
        scales[1] = 5; // sub-block 1 scale
        scales[11] = 0x20; // sub-block 7: scale 0, min 2
        let mut qs = [0u8; 128];
        qs[0] = 0x72;
        qs[127] = 0xF0;
        let bytes = [&TWO[..], &HALF, &scales, &qs].concat();
        let out = run(dequant_q4_k, &bytes);
        assert_eq!(out[0], 2.0 * 3.0 * 2.0 - 0.5);
        assert_eq!(out[32], 2.0 * 5.0 * 7.0);
        assert_eq!(out[1], -0.5);
        assert_eq!(out[255], 0.0 * 15.0 - 1.0);
    }

    #[test]
    fn q5_k_fifth_bit() {
        let mut scales = [0u8; 12];
        scales[2] = 1; // sub-block 2 (values 64..96) scale 1
        scales[3] = 1; // sub-block 3 (values 96..128) scale 1
        let mut qh = [0u8; 32];
        qh[5] = 0b0000_1000; // bit 3: group 1, high nibbles → value 96 + 5
        let mut qs = [0u8; 128];
        qs[32 + 5] = 0x21;
        let bytes = [&ONE[..], &ONE, &scales, &qh, &qs].concat();
        let out = run(dequant_q5_k, &bytes);
        assert_eq!(out[64 + 5], 1.0);
        assert_eq!(out[96 + 5], 18.0);
    }

    #[test]
    fn q6_k_layout_and_signed_scales() {
        let mut ql = [0u8; 128];
        let mut qh = [0u8; 64];
        let mut scales = [0u8; 16];
        scales[0] = (-2i8) as u8;
        scales[7] = 3; // values 96 + 16.. of the first half
        scales[15] = 1;
        ql[0] = 0x0F; // value 0 low nibble 15
        qh[0] = 0b0000_0010; // value 0 high pair 2 → 47 - 32 = 15
        ql[32 + 17] = 0xA0; // value 96 + 17 low nibble 10
        qh[17] = 0b1100_0000; // value 96 + 17 high pair 3 → 58 - 32 = 26
        let bytes = [&ql[..], &qh, &scales, &HALF].concat();
        let out = run(dequant_q6_k, &bytes);
        assert_eq!(out[0], 0.5 * -2.0 * 15.0);
        assert_eq!(out[96 + 17], 0.5 * 3.0 * 26.0);
        assert_eq!(out[255], 0.5 * -32.0);
    }

    #[test]
    fn q8_k_f32_scale_and_ignored_bsums() {
        let qs: Vec<u8> = (0..QK_K).map(|j| j as u8).collect();
        let bytes = [&0.25f32.to_le_bytes()[..], &qs, &[0xFF; 32]].concat();
        let out = run(dequant_q8_k, &bytes);
        assert_eq!(out[1], 0.25);
        assert_eq!(out[255], -0.25);
        assert_eq!(out[128], -32.0);
    }

    #[test]
    fn whole_blocks_only() {
        let mut out = vec![7.0; QK_K];
        dequant_q4_k(&[0; 143], &mut out);
        dequant_q6_k(&[0; 210], &mut out[..255]);
        assert!(out.iter().all(|&v| v == 7.0));
    }
}
