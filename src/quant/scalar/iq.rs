//! Scalar kernels for the i-quants (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S,
//! IQ4_NL, IQ4_XS), bit-exact with ggml's `dequantize_row_iq*`.
//!
//! Exactness: every product and sum is the f32 operation ggml does, in ggml's order and grouping
//! (e.g. IQ2 `db = d * (0.5 + s) * 0.25` once per group, then `db * grid * sign`), never fused.
//! Grid rows are read as little-endian bytes, as ggml reads its tables on little-endian hosts.

use super::grids::{
    IQ1S_DELTA, IQ1S_GRID, IQ2S_GRID, IQ2XS_GRID, IQ2XXS_GRID, IQ3S_GRID, IQ3XXS_GRID, KMASK_IQ2XS,
    KSIGNS_IQ2XS, KVALUES_IQ4NL,
};
use super::{assert_block_size, f16_to_f32, le_u16};
use crate::types::GgmlType;

/// A plain-bytes block field: a byte or a (nested) byte array, read in memory order.
trait Field: Copy {
    const ZERO: Self;
    fn read(bytes: &mut core::slice::Iter<'_, u8>) -> Self;
}

impl Field for u8 {
    const ZERO: u8 = 0;
    fn read(bytes: &mut core::slice::Iter<'_, u8>) -> u8 {
        // Blocks come from `chunks_exact` of the asserted block size, so a byte is always there.
        bytes.next().copied().unwrap_or(0)
    }
}

impl<T: Field, const N: usize> Field for [T; N] {
    const ZERO: Self = [T::ZERO; N];
    fn read(bytes: &mut core::slice::Iter<'_, u8>) -> Self {
        let mut array = Self::ZERO;
        for item in &mut array {
            *item = T::read(bytes);
        }
        array
    }
}

/// A ggml block layout: a `#[repr(C)]` struct of byte arrays whose size is asserted against
/// the ggml type table.
trait Block: Sized {
    const TYPE: GgmlType;
    /// Reads the fields in declaration order from exactly one block's bytes.
    fn read(bytes: &mut core::slice::Iter<'_, u8>) -> Self;
}

/// Decodes every whole block of `blocks` into its values in `out`; a trailing partial block
/// (impossible under the caller's length contract) is left alone instead of panicking.
fn for_each_block<B: Block>(blocks: &[u8], out: &mut [f32], decode: impl Fn(&B, &mut [f32])) {
    let type_size = B::TYPE.type_size() as usize;
    let block_size = B::TYPE.block_size() as usize;
    for (bytes, y) in blocks
        .chunks_exact(type_size)
        .zip(out.chunks_exact_mut(block_size))
    {
        decode(&B::read(&mut bytes.iter()), y);
    }
}

/// The low and high nibble of a byte, in the order ggml uses them.
fn nibbles(byte: u8) -> [u8; 2] {
    [byte & 0x0f, byte >> 4]
}

/// Writes `scale * grid[j] * (±1)` for each j, negative where `signs` has `KMASK_IQ2XS[j]`.
///
/// ggml writes `db * grid[j] * (signs & kmask[j] ? -1.f : 1.f)`; its build turns the ±1
/// product into a sign flip, which also flips a NaN's sign, so negate rather than multiply.
fn put_signed(y: &mut [f32], scale: f32, grid: [u8; 8], signs: u8) {
    for ((y, g), mask) in y.iter_mut().zip(grid).zip(KMASK_IQ2XS) {
        let v = scale * f32::from(g);
        *y = if signs & mask != 0 { -v } else { v };
    }
}

/// Two 4-value IQ3 grid rows side by side, as one 8-value row.
fn iq3_rows(first: u32, second: u32) -> [u8; 8] {
    let [a0, a1, a2, a3] = first.to_le_bytes();
    let [b0, b1, b2, b3] = second.to_le_bytes();
    [a0, a1, a2, a3, b0, b1, b2, b3]
}

/// Writes `dl * (grid[j] + delta)` for the 8 values of IQ1 grid row `index` (11 bits).
fn put_iq1(y: &mut [f32], dl: f32, index: usize, delta: f32) {
    let row = IQ1S_GRID[index & 0x7ff].to_le_bytes();
    for (y, g) in y.iter_mut().zip(row) {
        *y = dl * (f32::from(i8::from_le_bytes([g])) + delta);
    }
}

/// IQ1 delta: `+IQ1S_DELTA`, or its negation when the group's flag bit is set. Made without a
/// branch (the flag moved into the sign bit): the flags are data, so a branch would be
/// mispredicted half the time. Negation is exactly a sign-bit flip, so this is bit-identical.
#[inline(always)]
fn iq1_delta(negative: bool) -> f32 {
    f32::from_bits(IQ1S_DELTA.to_bits() ^ (u32::from(negative) << 31))
}

/// Writes 32 IQ4 values: low nibbles of `qs` give the first 16, high nibbles the last 16.
fn put_iq4(y: &mut [f32], dl: f32, qs: &[u8; 16]) {
    for (half, shift) in y.chunks_exact_mut(16).zip([0, 4]) {
        for (y, &q) in half.iter_mut().zip(qs) {
            *y = dl * f32::from(KVALUES_IQ4NL[usize::from((q >> shift) & 0x0f)]);
        }
    }
}

/// IQ2_XXS: 8 groups of 32 values. Per group, 4 grid indices (one byte per 8 values), then a
/// u32 holding four 7-bit sign indices (bits 0..28) and a 4-bit scale (bits 28..32).
#[repr(C)]
struct BlockIq2Xxs {
    d: [u8; 2],
    groups: [[u8; 8]; 8],
}
assert_block_size!(BlockIq2Xxs, GgmlType::IQ2_XXS);

impl Block for BlockIq2Xxs {
    const TYPE: GgmlType = GgmlType::IQ2_XXS;
    fn read(bytes: &mut core::slice::Iter<'_, u8>) -> Self {
        Self {
            d: Field::read(bytes),
            groups: Field::read(bytes),
        }
    }
}

/// ggml's `dequantize_row_iq2_xxs`.
pub(crate) fn dequant_iq2_xxs(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &BlockIq2Xxs, y| {
        let d = f16_to_f32(le_u16(b.d));
        for (group, y) in b.groups.iter().zip(y.chunks_exact_mut(32)) {
            let [i0, i1, i2, i3, s0, s1, s2, s3] = *group;
            let aux = u32::from_le_bytes([s0, s1, s2, s3]);
            let db = d * (0.5 + (aux >> 28) as f32) * 0.25;
            for ((index, shift), y) in [i0, i1, i2, i3]
                .into_iter()
                .zip([0, 7, 14, 21])
                .zip(y.chunks_exact_mut(8))
            {
                let signs = KSIGNS_IQ2XS[((aux >> shift) & 127) as usize];
                put_signed(y, db, IQ2XXS_GRID[usize::from(index)].to_le_bytes(), signs);
            }
        }
    });
}

/// IQ2_XS: per 8 values a u16 of 9-bit grid index and 7-bit sign index; per 32 values a byte
/// of two 4-bit scales (low nibble for the first 16 values).
#[repr(C)]
struct BlockIq2Xs {
    d: [u8; 2],
    qs: [[[u8; 2]; 4]; 8],
    scales: [u8; 8],
}
assert_block_size!(BlockIq2Xs, GgmlType::IQ2_XS);

impl Block for BlockIq2Xs {
    const TYPE: GgmlType = GgmlType::IQ2_XS;
    fn read(bytes: &mut core::slice::Iter<'_, u8>) -> Self {
        Self {
            d: Field::read(bytes),
            qs: Field::read(bytes),
            scales: Field::read(bytes),
        }
    }
}

/// ggml's `dequantize_row_iq2_xs`.
pub(crate) fn dequant_iq2_xs(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &BlockIq2Xs, y| {
        let d = f16_to_f32(le_u16(b.d));
        for ((words, &scales), y) in b.qs.iter().zip(&b.scales).zip(y.chunks_exact_mut(32)) {
            for ((pair, s), y) in words
                .chunks_exact(2)
                .zip(nibbles(scales))
                .zip(y.chunks_exact_mut(16))
            {
                let db = d * (0.5 + f32::from(s)) * 0.25;
                for (&word, y) in pair.iter().zip(y.chunks_exact_mut(8)) {
                    let q = le_u16(word);
                    let grid = IQ2XS_GRID[usize::from(q & 0x1ff)].to_le_bytes();
                    put_signed(y, db, grid, KSIGNS_IQ2XS[usize::from((q >> 9) & 127)]);
                }
            }
        }
    });
}

/// IQ2_S: per 8 values a grid index byte, 2 more index bits in `qh` and an explicit sign
/// byte; per 32 values a byte of two 4-bit scales. ggml's `qs[64]` is `qs` then `signs`.
#[repr(C)]
struct BlockIq2S {
    d: [u8; 2],
    qs: [[u8; 4]; 8],
    signs: [[u8; 4]; 8],
    qh: [u8; 8],
    scales: [u8; 8],
}
assert_block_size!(BlockIq2S, GgmlType::IQ2_S);

impl Block for BlockIq2S {
    const TYPE: GgmlType = GgmlType::IQ2_S;
    fn read(bytes: &mut core::slice::Iter<'_, u8>) -> Self {
        Self {
            d: Field::read(bytes),
            qs: Field::read(bytes),
            signs: Field::read(bytes),
            qh: Field::read(bytes),
            scales: Field::read(bytes),
        }
    }
}

/// ggml's `dequantize_row_iq2_s`.
pub(crate) fn dequant_iq2_s(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &BlockIq2S, y| {
        let d = f16_to_f32(le_u16(b.d));
        let groups = b.qs.iter().zip(&b.signs).zip(&b.qh).zip(&b.scales);
        for ((((qs, signs), &qh), &scales), y) in groups.zip(y.chunks_exact_mut(32)) {
            let [db0, db1] = nibbles(scales).map(|s| d * (0.5 + f32::from(s)) * 0.25);
            let items = qs
                .iter()
                .zip(signs)
                .zip([db0, db0, db1, db1])
                .zip([0, 2, 4, 6]);
            for ((((&q, &sign), db), shift), y) in items.zip(y.chunks_exact_mut(8)) {
                let index = usize::from(q) | (usize::from((qh >> shift) & 3) << 8);
                put_signed(y, db, IQ2S_GRID[index & 0x3ff].to_le_bytes(), sign);
            }
        }
    });
}

/// IQ3_XXS: per 4 values a grid index byte; per 32 values a u32 of four 7-bit sign indices
/// and a 4-bit scale, stored after all the indices.
#[repr(C)]
struct BlockIq3Xxs {
    d: [u8; 2],
    qs: [[u8; 8]; 8],
    scales_signs: [[u8; 4]; 8],
}
assert_block_size!(BlockIq3Xxs, GgmlType::IQ3_XXS);

impl Block for BlockIq3Xxs {
    const TYPE: GgmlType = GgmlType::IQ3_XXS;
    fn read(bytes: &mut core::slice::Iter<'_, u8>) -> Self {
        Self {
            d: Field::read(bytes),
            qs: Field::read(bytes),
            scales_signs: Field::read(bytes),
        }
    }
}

/// ggml's `dequantize_row_iq3_xxs`.
pub(crate) fn dequant_iq3_xxs(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &BlockIq3Xxs, y| {
        let d = f16_to_f32(le_u16(b.d));
        for ((qs, &aux), y) in b.qs.iter().zip(&b.scales_signs).zip(y.chunks_exact_mut(32)) {
            let aux = u32::from_le_bytes(aux);
            let db = d * (0.5 + (aux >> 28) as f32) * 0.5;
            let rows = qs.map(|q| IQ3XXS_GRID[usize::from(q)]);
            for ((pair, shift), y) in rows
                .chunks_exact(2)
                .zip([0, 7, 14, 21])
                .zip(y.chunks_exact_mut(8))
            {
                if let &[first, second] = pair {
                    let signs = KSIGNS_IQ2XS[((aux >> shift) & 127) as usize];
                    put_signed(y, db, iq3_rows(first, second), signs);
                }
            }
        }
    });
}

/// IQ3_S: per 4 values a grid index byte plus a 9th bit in `qh`; explicit sign bytes; per 64
/// values a byte of two 4-bit scales (low nibble for the first 32 values).
#[repr(C)]
struct BlockIq3S {
    d: [u8; 2],
    qs: [[u8; 8]; 8],
    qh: [u8; 8],
    signs: [[u8; 4]; 8],
    scales: [u8; 4],
}
assert_block_size!(BlockIq3S, GgmlType::IQ3_S);

impl Block for BlockIq3S {
    const TYPE: GgmlType = GgmlType::IQ3_S;
    fn read(bytes: &mut core::slice::Iter<'_, u8>) -> Self {
        Self {
            d: Field::read(bytes),
            qs: Field::read(bytes),
            qh: Field::read(bytes),
            signs: Field::read(bytes),
            scales: Field::read(bytes),
        }
    }
}

/// ggml's `dequantize_row_iq3_s`.
pub(crate) fn dequant_iq3_s(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &BlockIq3S, y| {
        let d = f16_to_f32(le_u16(b.d));
        let dbs = b
            .scales
            .map(|s| nibbles(s).map(|s| d * f32::from(1 + 2 * s)));
        let groups = b.qs.iter().zip(&b.qh).zip(&b.signs);
        for (((qs, &qh), signs), (&db, y)) in
            groups.zip(dbs.iter().flatten().zip(y.chunks_exact_mut(32)))
        {
            let mut rows = [0u32; 8];
            for (k, (row, &low)) in rows.iter_mut().zip(qs).enumerate() {
                // Bit k of qh is the 9th index bit of qs[k].
                *row = IQ3S_GRID[(usize::from(low) | (usize::from((qh >> k) & 1) << 8)) & 0x1ff];
            }
            for ((pair, &sign), y) in rows.chunks_exact(2).zip(signs).zip(y.chunks_exact_mut(8)) {
                if let &[first, second] = pair {
                    put_signed(y, db, iq3_rows(first, second), sign);
                }
            }
        }
    });
}

/// IQ1_S: per 8 values a grid index byte; per 32 values a u16 holding four 3-bit high index
/// parts (bits 0..12), a 3-bit scale (bits 12..15) and the delta sign (bit 15).
#[repr(C)]
struct BlockIq1S {
    d: [u8; 2],
    qs: [[u8; 4]; 8],
    qh: [[u8; 2]; 8],
}
assert_block_size!(BlockIq1S, GgmlType::IQ1_S);

impl Block for BlockIq1S {
    const TYPE: GgmlType = GgmlType::IQ1_S;
    fn read(bytes: &mut core::slice::Iter<'_, u8>) -> Self {
        Self {
            d: Field::read(bytes),
            qs: Field::read(bytes),
            qh: Field::read(bytes),
        }
    }
}

/// ggml's `dequantize_row_iq1_s`.
pub(crate) fn dequant_iq1_s(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &BlockIq1S, y| {
        let d = f16_to_f32(le_u16(b.d));
        for ((qs, &qh), y) in b.qs.iter().zip(&b.qh).zip(y.chunks_exact_mut(32)) {
            let qh = le_u16(qh);
            let dl = d * f32::from(2 * ((qh >> 12) & 7) + 1);
            let delta = iq1_delta(qh & 0x8000 != 0);
            for ((&low, shift), y) in qs.iter().zip([0, 3, 6, 9]).zip(y.chunks_exact_mut(8)) {
                let index = usize::from(low) | (usize::from((qh >> shift) & 7) << 8);
                put_iq1(y, dl, index, delta);
            }
        }
    });
}

/// IQ1_M: per 8 values a grid index byte and a nibble of `qh` (3 high index bits, delta
/// sign); four u16 scale words hold sixteen 3-bit scales (one per 16 values, bits 0..12) and,
/// in their top nibbles, the block's f16 scale. There is no `d` field.
#[repr(C)]
struct BlockIq1M {
    qs: [[u8; 2]; 16],
    qh: [u8; 16],
    scales: [[u8; 2]; 4],
}
assert_block_size!(BlockIq1M, GgmlType::IQ1_M);

impl Block for BlockIq1M {
    const TYPE: GgmlType = GgmlType::IQ1_M;
    fn read(bytes: &mut core::slice::Iter<'_, u8>) -> Self {
        Self {
            qs: Field::read(bytes),
            qh: Field::read(bytes),
            scales: Field::read(bytes),
        }
    }
}

/// ggml's `dequantize_row_iq1_m`.
pub(crate) fn dequant_iq1_m(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &BlockIq1M, y| {
        let [s0, s1, s2, s3] = b.scales.map(le_u16);
        let d =
            f16_to_f32((s0 >> 12) | ((s1 >> 8) & 0x00f0) | ((s2 >> 4) & 0x0f00) | (s3 & 0xf000));
        let dls = [s0, s1, s2, s3]
            .map(|s| [0, 3, 6, 9].map(|shift| d * f32::from(2 * ((s >> shift) & 7) + 1)));
        let halves = b.qs.iter().zip(&b.qh).zip(dls.iter().flatten());
        for (((qs, &qh), &dl), y) in halves.zip(y.chunks_exact_mut(16)) {
            for ((&low, h), y) in qs.iter().zip(nibbles(qh)).zip(y.chunks_exact_mut(8)) {
                let index = usize::from(low) | (usize::from(h & 7) << 8);
                put_iq1(y, dl, index, iq1_delta(h & 8 != 0));
            }
        }
    });
}

/// IQ4_NL: 32 values, one f16 scale, 4-bit indices into the non-linear level table.
#[repr(C)]
struct BlockIq4Nl {
    d: [u8; 2],
    qs: [u8; 16],
}
assert_block_size!(BlockIq4Nl, GgmlType::IQ4_NL);

impl Block for BlockIq4Nl {
    const TYPE: GgmlType = GgmlType::IQ4_NL;
    fn read(bytes: &mut core::slice::Iter<'_, u8>) -> Self {
        Self {
            d: Field::read(bytes),
            qs: Field::read(bytes),
        }
    }
}

/// ggml's `dequantize_row_iq4_nl`.
pub(crate) fn dequant_iq4_nl(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &BlockIq4Nl, y| {
        put_iq4(y, f16_to_f32(le_u16(b.d)), &b.qs);
    });
}

/// IQ4_XS: 8 sub-blocks of 32 IQ4_NL-style values, each with a 6-bit scale (offset by 32):
/// low 4 bits in `scales_l` nibbles, high 2 bits in the u16 `scales_h`.
#[repr(C)]
struct BlockIq4Xs {
    d: [u8; 2],
    scales_h: [u8; 2],
    scales_l: [u8; 4],
    qs: [[u8; 16]; 8],
}
assert_block_size!(BlockIq4Xs, GgmlType::IQ4_XS);

impl Block for BlockIq4Xs {
    const TYPE: GgmlType = GgmlType::IQ4_XS;
    fn read(bytes: &mut core::slice::Iter<'_, u8>) -> Self {
        Self {
            d: Field::read(bytes),
            scales_h: Field::read(bytes),
            scales_l: Field::read(bytes),
            qs: Field::read(bytes),
        }
    }
}

/// ggml's `dequantize_row_iq4_xs`.
pub(crate) fn dequant_iq4_xs(blocks: &[u8], out: &mut [f32]) {
    for_each_block(blocks, out, |b: &BlockIq4Xs, y| {
        let d = f16_to_f32(le_u16(b.d));
        let scales = iq4_xs_scales(le_u16(b.scales_h), b.scales_l);
        for ((qs, ls), y) in b.qs.iter().zip(scales).zip(y.chunks_exact_mut(32)) {
            let dl = d * (ls - 32) as f32;
            put_iq4(y, dl, qs);
        }
    });
}

/// IQ4_XS's 8 6-bit sub-block scales: the low 4 bits in the nibbles of `scales_l` (sub-block
/// `2i` the low nibble of byte `i`), the high 2 in bits `2j..2j + 2` of `scales_h`.
pub(crate) fn iq4_xs_scales(scales_h: u16, scales_l: [u8; 4]) -> [i32; 8] {
    let low = scales_l.map(nibbles);
    let mut out = [0; 8];
    for (j, (o, &low)) in out.iter_mut().zip(low.iter().flatten()).enumerate() {
        *o = i32::from(low) | (i32::from((scales_h >> (2 * j)) & 3) << 4);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::grids::{
        IQ1S_GRID, IQ2S_GRID, IQ2XS_GRID, IQ2XXS_GRID, IQ3S_GRID, IQ3XXS_GRID,
    };
    use super::*;

    /// ggml's kvalues_iq4nl, written out independently of the generated table.
    const K: [f32; 16] = [
        -127.0, -104.0, -83.0, -65.0, -49.0, -35.0, -22.0, -10.0, 1.0, 13.0, 25.0, 38.0, 53.0,
        69.0, 89.0, 113.0,
    ];
    const ONE_F16: [u8; 2] = [0x00, 0x3c];

    /// Runs `kernel` on one block of `ty` and returns its values.
    fn run(ty: GgmlType, kernel: KernelFnLocal, bytes: &[u8]) -> Vec<f32> {
        assert_eq!(bytes.len(), ty.type_size() as usize);
        let mut out = vec![f32::NAN; ty.block_size() as usize];
        kernel(bytes, &mut out);
        out
    }
    type KernelFnLocal = fn(&[u8], &mut [f32]);

    #[test]
    fn grid_spot_values_and_lengths_match_ggml_common_h() {
        assert_eq!(IQ2XXS_GRID.len(), 256);
        assert_eq!(IQ2XXS_GRID[5], 0x0808080808190819);
        assert_eq!(IQ2XXS_GRID[255], 0x2b2b2b1908081908);
        assert_eq!(IQ2XS_GRID.len(), 512);
        assert_eq!(IQ2XS_GRID[261], 0x1908080808192b08);
        assert_eq!(IQ2S_GRID.len(), 1024);
        assert_eq!(IQ2S_GRID[300], 0x08191908192b1908);
        assert_eq!(IQ3XXS_GRID.len(), 256);
        assert_eq!(IQ3XXS_GRID[255], 0x3e341c04);
        assert_eq!(IQ3S_GRID.len(), 512);
        assert_eq!(IQ3S_GRID[261], 0x05090f0b);
        assert_eq!(IQ1S_GRID.len(), 2048);
        assert_eq!(IQ1S_GRID[300], 0xff000000ff00ff00);
        assert_eq!(IQ1S_GRID[2047], 0x0101010101010101);
    }

    #[test]
    fn grids_use_only_their_levels_and_have_distinct_rows() {
        fn check(rows: &[u64], width: usize, levels: &[u8]) {
            for row in rows {
                for byte in &row.to_le_bytes()[..width] {
                    assert!(levels.contains(byte), "{row:#x} has byte {byte:#x}");
                }
                let beyond = row.checked_shr(8 * width as u32).unwrap_or(0);
                assert_eq!(beyond, 0, "{row:#x} wider than {width} bytes");
            }
            let mut sorted = rows.to_vec();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), rows.len());
        }
        let iq2 = [0x08, 0x19, 0x2b];
        check(&IQ2XXS_GRID, 8, &iq2);
        check(&IQ2XS_GRID, 8, &iq2);
        check(&IQ2S_GRID, 8, &iq2);
        let widen = |rows: &[u32]| rows.iter().map(|&r| u64::from(r)).collect::<Vec<_>>();
        check(
            &widen(&IQ3XXS_GRID),
            4,
            &[0x04, 0x0c, 0x14, 0x1c, 0x24, 0x2c, 0x34, 0x3e],
        );
        check(&widen(&IQ3S_GRID), 4, &[1, 3, 5, 7, 9, 11, 13, 15]);
        check(&IQ1S_GRID, 8, &[0xff, 0x00, 0x01]);
    }

    #[test]
    fn ksigns_are_7_bits_plus_even_parity_and_kmask_is_one_bit_each() {
        for (i, &s) in KSIGNS_IQ2XS.iter().enumerate() {
            assert_eq!(usize::from(s & 0x7f), i);
            assert_eq!(s.count_ones() % 2, 0, "ksigns[{i}] = {s:#x}");
        }
        assert_eq!(KMASK_IQ2XS, [1, 2, 4, 8, 16, 32, 64, 128]);
        assert_eq!(IQ1S_DELTA, 0.125);
    }

    #[test]
    fn iq4_nl_with_unit_scale_gives_kvalues() {
        let mut b = ONE_F16.to_vec();
        b.extend((0..16u8).map(|j| j | ((15 - j) << 4)));
        let y = run(GgmlType::IQ4_NL, dequant_iq4_nl, &b);
        for j in 0..16 {
            assert_eq!(y[j], K[j]);
            assert_eq!(y[16 + j], K[15 - j]);
        }
    }

    #[test]
    fn iq4_xs_six_bit_scales_are_offset_by_32() {
        // ls per sub-block: 33, 31, 32, 0, 0, 0, 0, 63 (low nibbles in scales_l, high bits in
        // scales_h), every quant byte 0x98: low nibble 8 -> 1, high nibble 9 -> 13.
        let mut b = ONE_F16.to_vec();
        b.extend(0xc026u16.to_le_bytes());
        b.extend([0xf1, 0x00, 0x00, 0xf0]);
        b.extend([0x98; 128]);
        let y = run(GgmlType::IQ4_XS, dequant_iq4_xs, &b);
        for (sub, dl) in [1.0, -1.0, 0.0, -32.0, -32.0, -32.0, -32.0, 31.0]
            .into_iter()
            .enumerate()
        {
            assert_eq!(&y[32 * sub..32 * sub + 16], &[dl; 16], "sub-block {sub}");
            assert_eq!(
                &y[32 * sub + 16..32 * sub + 32],
                &[dl * 13.0; 16],
                "sub-block {sub}"
            );
        }
    }

    #[test]
    fn iq2_xxs_scale_signs_and_grid_rows() {
        // Group 0: indices 0 and 1, sign index 1 (ksigns 0x81) for the first 8, scale 15.
        let mut b = ONE_F16.to_vec();
        b.extend([0, 1, 0, 0, 0x01, 0x00, 0x00, 0xf0]);
        b.extend([0; 56]);
        let y = run(GgmlType::IQ2_XXS, dequant_iq2_xxs, &b);
        // db = 1 * 15.5 * 0.25 = 3.875; grid 0 is all 8s, grid 1 starts with 0x2b = 43.
        assert_eq!(&y[..8], &[-31.0, 31.0, 31.0, 31.0, 31.0, 31.0, 31.0, -31.0]);
        assert_eq!(
            &y[8..16],
            &[166.625, 31.0, 31.0, 31.0, 31.0, 31.0, 31.0, 31.0]
        );
        assert_eq!(&y[16..32], &[31.0; 16]);
        // Other groups: scale 0 -> db = 0.125, times 8.
        assert_eq!(&y[32..], &[1.0; 224]);
    }

    #[test]
    fn iq2_xs_nine_bit_index_seven_bit_signs_and_two_scales() {
        // Word 0: grid 1, sign index 3 (elements 0 and 1 negative); scales 0x21: 1 then 2.
        let mut b = ONE_F16.to_vec();
        b.extend((1u16 | (3 << 9)).to_le_bytes());
        b.extend([0; 62]);
        b.extend([0x21, 0, 0, 0, 0, 0, 0, 0]);
        let y = run(GgmlType::IQ2_XS, dequant_iq2_xs, &b);
        // db = 1.5 * 0.25 = 0.375 for values 0..16, 2.5 * 0.25 = 0.625 for 16..32.
        assert_eq!(&y[..8], &[-16.125, -3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0]);
        assert_eq!(&y[8..16], &[3.0; 8]);
        assert_eq!(&y[16..32], &[5.0; 16]);
        assert_eq!(&y[32..], &[1.0; 224]);
    }

    #[test]
    fn iq2_s_ten_bit_index_and_explicit_signs() {
        // qh 0xc3: index bits 8-9 set for the 1st and 4th row of group 0 -> grid 1023 (all 43).
        let mut b = ONE_F16.to_vec();
        b.extend([0xff, 0x00, 0x00, 0xff]);
        b.extend([0; 28]);
        b.extend([0x80, 0, 0, 0]); // signs: element 7 of the first row negative
        b.extend([0; 28]);
        b.extend([0xc3, 0, 0, 0, 0, 0, 0, 0]);
        b.extend([0x20, 0, 0, 0, 0, 0, 0, 0]);
        let y = run(GgmlType::IQ2_S, dequant_iq2_s, &b);
        // db = 0.125 for values 0..16, 2.5 * 0.25 = 0.625 for 16..32.
        assert_eq!(
            &y[..8],
            &[5.375, 5.375, 5.375, 5.375, 5.375, 5.375, 5.375, -5.375]
        );
        assert_eq!(&y[8..16], &[1.0; 8]);
        assert_eq!(&y[16..24], &[5.0; 8]);
        assert_eq!(&y[24..32], &[26.875; 8]);
        assert_eq!(&y[32..], &[1.0; 224]);
    }

    #[test]
    fn iq3_xxs_pairs_of_rows_share_a_sign_byte() {
        // Rows 5 = [62, 12, 4, 4] and 255 = [4, 28, 52, 62], sign index 127 (all negative),
        // scale 1: db = 1.5 * 0.5 = 0.75.
        let mut b = ONE_F16.to_vec();
        b.extend([5, 255, 0, 0, 0, 0, 0, 0]);
        b.extend([0; 56]);
        b.extend(0x1000_007fu32.to_le_bytes());
        b.extend([0; 28]);
        let y = run(GgmlType::IQ3_XXS, dequant_iq3_xxs, &b);
        assert_eq!(
            &y[..8],
            &[-46.5, -9.0, -3.0, -3.0, -3.0, -21.0, -39.0, -46.5]
        );
        assert_eq!(&y[8..32], &[3.0; 24]);
        // Other groups: db = 0.25, row 0 is all 4s.
        assert_eq!(&y[32..], &[1.0; 224]);
    }

    #[test]
    fn iq3_s_ninth_index_bit_signs_and_odd_scales() {
        // Group 0: qs 5 and 255 with qh bits 0 and 1 -> rows 261 = [11, 15, 9, 5] and
        // 511 = [1, 1, 15, 15]; sign byte 0x11; scales 0x21: db 3 then 5.
        let mut b = ONE_F16.to_vec();
        b.extend([5, 255, 0, 0, 0, 0, 0, 0]);
        b.extend([0; 56]);
        b.extend([0x03, 0, 0, 0, 0, 0, 0, 0]);
        b.extend([0x11, 0, 0, 0]);
        b.extend([0; 28]);
        b.extend([0x21, 0, 0, 0]);
        let y = run(GgmlType::IQ3_S, dequant_iq3_s, &b);
        assert_eq!(&y[..8], &[-33.0, 45.0, 27.0, 15.0, -3.0, 3.0, 45.0, 45.0]);
        assert_eq!(&y[8..32], &[3.0; 24]);
        assert_eq!(&y[32..64], &[5.0; 32]);
        assert_eq!(&y[64..], &[1.0; 192]);
    }

    #[test]
    fn iq1_s_eleven_bit_index_scale_and_delta_sign() {
        // Group 0: qh = delta negative | scale 1 (dl = 3) | high bits 7 for the second row.
        let mut b = ONE_F16.to_vec();
        b.extend([0x00, 0xff, 0x00, 0x00]);
        b.extend([0; 28]);
        b.extend((0x8000u16 | (1 << 12) | (7 << 3)).to_le_bytes());
        b.extend([0; 14]);
        let y = run(GgmlType::IQ1_S, dequant_iq1_s, &b);
        assert_eq!(&y[..8], &[-3.375; 8]); // row 0: all -1
        assert_eq!(&y[8..16], &[2.625; 8]); // row 2047: all +1
        assert_eq!(&y[16..32], &[-3.375; 16]);
        assert_eq!(&y[32..], &[-0.875; 224]); // dl = 1, delta = +0.125
    }

    #[test]
    fn iq1_m_scale_from_top_nibbles_and_per_16_scales() {
        // f16 1.0 = 0x3c00 spread over the top nibbles: word k holds nibble k. Word 0 also holds
        // the 3-bit scales 1 (values 0..16, dl = 3) and 2 (values 16..32, dl = 5).
        let mut b = vec![0xff, 0x00];
        b.extend([0; 30]);
        b.push(0x0f); // row 0: index bits 8..11 = 7 and delta negative; row 1: plain
        b.extend([0; 15]);
        for word in [1u16 | (2 << 3), 0, 0xc000, 0x3000] {
            b.extend(word.to_le_bytes());
        }
        let y = run(GgmlType::IQ1_M, dequant_iq1_m, &b);
        assert_eq!(&y[..8], &[2.625; 8]); // 3 * (1 - 0.125)
        assert_eq!(&y[8..16], &[-2.625; 8]); // 3 * (-1 + 0.125)
        assert_eq!(&y[16..32], &[-4.375; 16]); // 5 * (-1 + 0.125)
        assert_eq!(&y[32..], &[-0.875; 224]);
    }

    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[test]
    fn negated_nan_flips_its_sign_like_ggml() {
        // ggml's build (checked against its to_float) flips the sign of a NaN product where the
        // sign bit is set; numpy-based gguf-py keeps it.
        let mut b = vec![0x00, 0x7e];
        b.extend([0, 0, 0, 0, 0x01, 0, 0, 0]);
        b.extend([0; 56]);
        let y = run(GgmlType::IQ2_XXS, dequant_iq2_xxs, &b);
        assert_eq!(y[0].to_bits(), 0xffc0_0000);
        assert_eq!(y[1].to_bits(), 0x7fc0_0000);
        assert_eq!(y[7].to_bits(), 0xffc0_0000);
    }

    #[test]
    fn only_whole_blocks_are_written() {
        let kernels: [(GgmlType, KernelFnLocal); 9] = [
            (GgmlType::IQ2_XXS, dequant_iq2_xxs),
            (GgmlType::IQ2_XS, dequant_iq2_xs),
            (GgmlType::IQ2_S, dequant_iq2_s),
            (GgmlType::IQ3_XXS, dequant_iq3_xxs),
            (GgmlType::IQ3_S, dequant_iq3_s),
            (GgmlType::IQ1_S, dequant_iq1_s),
            (GgmlType::IQ1_M, dequant_iq1_m),
            (GgmlType::IQ4_NL, dequant_iq4_nl),
            (GgmlType::IQ4_XS, dequant_iq4_xs),
        ];
        for (ty, kernel) in kernels {
            let (ts, bs) = (ty.type_size() as usize, ty.block_size() as usize);
            let bytes = vec![0x11u8; 2 * ts + ts / 2];
            // One and a half output blocks for two and a half input blocks.
            let mut out = vec![f32::INFINITY; bs + bs / 2];
            kernel(&bytes, &mut out);
            assert!(out[..bs].iter().all(|v| v.is_finite()), "{ty:?}");
            assert!(out[bs..].iter().all(|&v| v == f32::INFINITY), "{ty:?}");
            // Too few bytes for a block: nothing written, no panic.
            let mut out = vec![f32::INFINITY; bs];
            kernel(&bytes[..ts - 1], &mut out);
            assert!(out.iter().all(|&v| v == f32::INFINITY), "{ty:?}");
            kernel(&[], &mut []);
        }
    }
}
