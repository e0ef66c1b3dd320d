//! IQ4_NL and IQ4_XS: 4-bit indices into ggml's non-linear level table, looked up with
//! `pshufb`.

use core::arch::x86_64::*;

use super::{f16_to_f32, i8x16_ps, le_u16, load16, nibbles16, safe_kernel, store_all};
use crate::quant::scalar::grids::KVALUES_IQ4NL;

safe_kernel!(dequant_iq4_nl => iq4_nl);
safe_kernel!(dequant_iq4_xs => iq4_xs);

/// The level table as 16 bytes.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn table() -> __m128i {
    let bytes = KVALUES_IQ4NL.map(|v| v as u8);
    // SAFETY: `bytes` is a 16-byte array.
    load16(&bytes, 0)
}

/// Writes 32 values `dl * level` (low nibbles first) to `y[at..at + 32]`.
///
/// # Safety
/// `at + 32 <= y.len()` and `q_at + 16 <= b.len()`.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn put_iq4<const ST: u8>(
    y: &mut [f32],
    at: usize,
    dl: f32,
    b: &[u8],
    q_at: usize,
    table: __m128i,
) {
    let dl = _mm256_set1_ps(dl);
    // SAFETY: the caller guarantees b[q_at..q_at + 16] exists.
    let (lo, hi) = nibbles16(load16(b, q_at));
    let [a0, a1] = i8x16_ps(_mm_shuffle_epi8(table, lo));
    let [a2, a3] = i8x16_ps(_mm_shuffle_epi8(table, hi));
    let v = [a0, a1, a2, a3].map(|a| _mm256_mul_ps(dl, a));
    // SAFETY: the caller guarantees y[at..at + 32] exists.
    store_all::<ST>(y, at, &v);
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn iq4_nl<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    let table = table();
    for (b, y) in blocks.chunks_exact(18).zip(out.chunks_exact_mut(32)) {
        let d = f16_to_f32(le_u16(b, 0));
        // SAFETY: the 18-byte block has its indices at 2..18; y holds 32 values.
        put_iq4::<ST>(y, 0, d, b, 2, table);
    }
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn iq4_xs<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    let table = table();
    for (b, y) in blocks.chunks_exact(136).zip(out.chunks_exact_mut(256)) {
        let d = f16_to_f32(le_u16(b, 0));
        let scales_h = le_u16(b, 2);
        for ib in 0..8 {
            let low = (b[4 + ib / 2] >> (4 * (ib % 2))) & 0x0F;
            let ls = i32::from(low) | (i32::from((scales_h >> (2 * ib)) & 3) << 4);
            let dl = d * (ls - 32) as f32;
            // SAFETY: indices are bytes 8..136 of the 136-byte block and 8 + 16 * ib + 16 <=
            // 136; 32 * ib + 32 <= 256 = y.len().
            put_iq4::<ST>(y, 32 * ib, dl, b, 8 + 16 * ib, table);
        }
    }
}
