//! Ternary quants TQ1_0 (base-3 packed, 5 trits a byte) and TQ2_0 (2 bits a trit).

use core::arch::x86_64::*;

use super::{f16_to_f32, i8x32_ps, le_u16, load16, load32, safe_kernel, store_all};

safe_kernel!(dequant_tq1_0 => tq1_0);
safe_kernel!(dequant_tq2_0 => tq2_0);

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn tq2_0<const NT: bool>(blocks: &[u8], out: &mut [f32]) {
    let three = _mm256_set1_epi8(3);
    let one = _mm256_set1_epi8(1);
    for (b, y) in blocks.chunks_exact(66).zip(out.chunks_exact_mut(256)) {
        let d = _mm256_set1_ps(f16_to_f32(le_u16(b, 64)));
        for c in 0..2 {
            // SAFETY: quants are bytes 0..64 of the 66-byte block; c < 2.
            let qs = load32(b, 32 * c);
            for k in 0..4 {
                let q = _mm256_srl_epi16(qs, _mm_cvtsi32_si128(2 * k as i32));
                let q = _mm256_sub_epi8(_mm256_and_si256(q, three), one);
                let v = i8x32_ps(q).map(|q| _mm256_mul_ps(q, d));
                // SAFETY: 128 * c + 32 * k + 32 <= 256 = y.len().
                store_all::<NT>(y, 128 * c + 32 * k, &v);
            }
        }
    }
}

/// The trit `(byte * pow3 mod 256) * 3 >> 8` of 16 bytes, minus 1, times `d` (`pow3` per
/// 16-bit lane).
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn trits16(bytes: __m128i, pow3: __m256i, d: __m256) -> [__m256; 2] {
    let wide = _mm256_cvtepu8_epi16(bytes);
    let q = _mm256_and_si256(_mm256_mullo_epi16(wide, pow3), _mm256_set1_epi16(0xFF));
    let t = _mm256_srli_epi16::<8>(_mm256_mullo_epi16(q, _mm256_set1_epi16(3)));
    let t = _mm256_sub_epi16(t, _mm256_set1_epi16(1));
    let lo = _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(t)));
    let hi = _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(_mm256_extracti128_si256::<1>(t)));
    [_mm256_mul_ps(lo, d), _mm256_mul_ps(hi, d)]
}

const POW3: [u8; 5] = [1, 3, 9, 27, 81];

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn tq1_0<const NT: bool>(blocks: &[u8], out: &mut [f32]) {
    for (b, y) in blocks.chunks_exact(54).zip(out.chunks_exact_mut(256)) {
        let d = _mm256_set1_ps(f16_to_f32(le_u16(b, 52)));
        // SAFETY: the 54-byte block has qs at 0..48.
        let (q0, q1, q2) = (load16(b, 0), load16(b, 16), load16(b, 32));
        for (n, &pow3) in POW3.iter().enumerate() {
            let p = _mm256_set1_epi16(i16::from(pow3));
            // Bytes 0..32 give y[32 n..32 n + 32], bytes 32..48 give y[160 + 16 n..].
            let [a, c] = trits16(q0, p, d);
            let [e, f] = trits16(q1, p, d);
            // SAFETY: 32 * n + 32 <= 160 <= y.len().
            store_all::<NT>(y, 32 * n, &[a, c, e, f]);
            // SAFETY: 160 + 16 * n + 16 <= 240 <= y.len().
            store_all::<NT>(y, 160 + 16 * n, &trits16(q2, p, d));
        }
        // The last 16 values, 4 per power (only 4 of the 5 fit), from qh (bytes 48..52):
        // y[240 + 4 n + l] from qh[l] and 3^n.
        let qh = _mm_set1_epi32(super::le_u16(b, 48) as i32 | (super::le_u16(b, 50) as i32) << 16);
        let pow3 = _mm256_setr_epi16(1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27);
        // SAFETY: 240 + 16 <= 256 = y.len().
        store_all::<NT>(y, 240, &trits16(qh, pow3, d));
    }
}
