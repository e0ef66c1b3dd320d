//! Ternary quants TQ1_0 (base-3 packed, 5 trits a byte) and TQ2_0 (2 bits a trit).

use core::arch::x86_64::*;

use super::{f16_to_f32, le_u16, load16, load32, safe_kernel, store_all};

safe_kernel!(dequant_tq1_0 => tq1_0);
safe_kernel!(dequant_tq2_0 => tq2_0);

/// `[-1·d, 0·d, 1·d, 2·d, …]`: every value `(q - 1) as f32 * d` a trit or 2-bit quant can
/// give, made with the scalar kernels' multiply, to be picked per lane with `vpermps` (an exact
/// lookup: each output is one of these products, the same bits as the scalar one).
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) unsafe fn level_table(d: f32) -> __m256 {
    let q = _mm256_setr_ps(-1.0, 0.0, 1.0, 2.0, 0.0, 0.0, 0.0, 0.0);
    _mm256_mul_ps(q, _mm256_set1_ps(d))
}

/// The levels of 32 quants 0..4 (one per byte) as four vectors of 8 f32.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn lookup32(q: __m256i, table: __m256) -> [__m256; 4] {
    let lo = _mm256_castsi256_si128(q);
    let hi = _mm256_extracti128_si256::<1>(q);
    [
        lo,
        _mm_unpackhi_epi64(lo, lo),
        hi,
        _mm_unpackhi_epi64(hi, hi),
    ]
    .map(|b| _mm256_permutevar8x32_ps(table, _mm256_cvtepu8_epi32(b)))
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn tq2_0<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    let three = _mm256_set1_epi8(3);
    for (b, y) in blocks.chunks_exact(66).zip(out.chunks_exact_mut(256)) {
        let table = level_table(f16_to_f32(le_u16(b, 64)));
        for c in 0..2 {
            // SAFETY: quants are bytes 0..64 of the 66-byte block; c < 2.
            let qs = load32(b, 32 * c);
            for k in 0..4 {
                let q = _mm256_srl_epi16(qs, _mm_cvtsi32_si128(2 * k as i32));
                let v = lookup32(_mm256_and_si256(q, three), table);
                // SAFETY: 128 * c + 32 * k + 32 <= 256 = y.len().
                store_all::<ST>(y, 128 * c + 32 * k, &v);
            }
        }
    }
}

/// The trits `t = (byte * 3^n mod 256) * 3 >> 8` of 16 bytes, as `(t - 1) * d` looked up in
/// `table` (`pow3_hi` is 3^n · 256 per 16-bit lane).
///
/// `mullo(byte, 3^n · 256)` leaves `(byte · 3^n mod 256) << 8` in a 16-bit lane, and
/// `mulhi_epu16(that, 3)` is `(x << 8) · 3 >> 16 = x · 3 >> 8`: the scalar integer steps.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn trits16(bytes: __m128i, pow3_hi: __m256i, table: __m256) -> [__m256; 2] {
    let q = _mm256_mullo_epi16(_mm256_cvtepu8_epi16(bytes), pow3_hi);
    let t = _mm256_mulhi_epu16(q, _mm256_set1_epi16(3));
    let lo = _mm256_cvtepu16_epi32(_mm256_castsi256_si128(t));
    let hi = _mm256_cvtepu16_epi32(_mm256_extracti128_si256::<1>(t));
    [
        _mm256_permutevar8x32_ps(table, lo),
        _mm256_permutevar8x32_ps(table, hi),
    ]
}

const POW3: [i16; 5] = [1, 3, 9, 27, 81];

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn tq1_0<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    for (b, y) in blocks.chunks_exact(54).zip(out.chunks_exact_mut(256)) {
        let table = level_table(f16_to_f32(le_u16(b, 52)));
        // SAFETY: the 54-byte block has qs at 0..48.
        let (q0, q1, q2) = (load16(b, 0), load16(b, 16), load16(b, 32));
        // Bytes 0..32 give y[32 n..32 n + 32], bytes 32..48 give y[160 + 16 n..]: two passes
        // over the powers, so the stores go out in order (non-temporal stores that skip about
        // leave write-combining buffers half full, and those are slow to flush).
        for (n, &pow3) in POW3.iter().enumerate() {
            let p = _mm256_set1_epi16(pow3 << 8);
            let [a, c] = trits16(q0, p, table);
            let [e, f] = trits16(q1, p, table);
            // SAFETY: 32 * n + 32 <= 160 <= y.len().
            store_all::<ST>(y, 32 * n, &[a, c, e, f]);
        }
        for (n, &pow3) in POW3.iter().enumerate() {
            let p = _mm256_set1_epi16(pow3 << 8);
            // SAFETY: 160 + 16 * n + 16 <= 240 <= y.len().
            store_all::<ST>(y, 160 + 16 * n, &trits16(q2, p, table));
        }
        // The last 16 values, 4 per power (only 4 of the 5 fit), from qh (bytes 48..52):
        // y[240 + 4 n + l] from qh[l] and 3^n.
        let qh = _mm_set1_epi32(super::le_u16(b, 48) as i32 | (super::le_u16(b, 50) as i32) << 16);
        let pow3 = _mm256_setr_epi16(
            1 << 8,
            1 << 8,
            1 << 8,
            1 << 8,
            3 << 8,
            3 << 8,
            3 << 8,
            3 << 8,
            9 << 8,
            9 << 8,
            9 << 8,
            9 << 8,
            27 << 8,
            27 << 8,
            27 << 8,
            27 << 8,
        );
        // SAFETY: 240 + 16 <= 256 = y.len().
        store_all::<ST>(y, 240, &trits16(qh, pow3, table));
    }
}
