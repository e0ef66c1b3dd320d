//! The k-quants Q2_K, Q3_K, Q4_K, Q5_K and Q6_K: 256 values a block, in sub-blocks of 16 or 32
//! sharing a scale (and a min). Scales are made in f32 exactly as the scalar kernels make them,
//! then broadcast.

use core::arch::x86_64::*;

use super::{f16_to_f32, i8x32_ps, le_u16, load32, safe_kernel, store_all};

safe_kernel!(dequant_q2_k => q2_k);
safe_kernel!(dequant_q3_k => q3_k);
safe_kernel!(dequant_q4_k => q4_k);
safe_kernel!(dequant_q5_k => q5_k);
safe_kernel!(dequant_q6_k => q6_k);
safe_kernel!(dequant_q8_k => q8_k);

/// Writes 32 values `y[at..at + 32]`: the first 16 as `s0 * q - m0`, the last 16 with `s1, m1`
/// (a separate multiply and subtract, as the scalar code).
///
/// # Safety
/// `at + 32 <= y.len()`.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn put32_min<const NT: bool>(
    y: &mut [f32],
    at: usize,
    q: __m256i,
    s: [f32; 2],
    m: [f32; 2],
) {
    let [a, b, c, d] = i8x32_ps(q);
    let (s0, s1) = (_mm256_set1_ps(s[0]), _mm256_set1_ps(s[1]));
    let (m0, m1) = (_mm256_set1_ps(m[0]), _mm256_set1_ps(m[1]));
    let v = [
        _mm256_sub_ps(_mm256_mul_ps(s0, a), m0),
        _mm256_sub_ps(_mm256_mul_ps(s0, b), m0),
        _mm256_sub_ps(_mm256_mul_ps(s1, c), m1),
        _mm256_sub_ps(_mm256_mul_ps(s1, d), m1),
    ];
    // SAFETY: the caller guarantees y[at..at + 32] exists.
    store_all::<NT>(y, at, &v);
}

/// Writes 32 values `y[at..at + 32]`: the first 16 as `s0 * q`, the last 16 as `s1 * q`.
///
/// # Safety
/// `at + 32 <= y.len()`.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn put32<const NT: bool>(y: &mut [f32], at: usize, q: __m256i, s: [f32; 2]) {
    let [a, b, c, d] = i8x32_ps(q);
    let (s0, s1) = (_mm256_set1_ps(s[0]), _mm256_set1_ps(s[1]));
    let v = [
        _mm256_mul_ps(s0, a),
        _mm256_mul_ps(s0, b),
        _mm256_mul_ps(s1, c),
        _mm256_mul_ps(s1, d),
    ];
    // SAFETY: the caller guarantees y[at..at + 32] exists.
    store_all::<NT>(y, at, &v);
}

/// 2-bit fields at `shift` (0, 2, 4 or 6) of 32 bytes, as bytes 0..4.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn crumbs(q: __m256i, shift: usize) -> __m256i {
    let shifted = _mm256_srl_epi16(q, _mm_cvtsi32_si128(shift as i32));
    _mm256_and_si256(shifted, _mm256_set1_epi8(3))
}

/// 0xFF bytes where `bits & mask` is non-zero.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn has_bit(bits: __m256i, mask: u8) -> __m256i {
    let m = _mm256_set1_epi8(mask as i8);
    _mm256_cmpeq_epi8(_mm256_and_si256(bits, m), m)
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn q2_k<const NT: bool>(blocks: &[u8], out: &mut [f32]) {
    for (b, y) in blocks.chunks_exact(84).zip(out.chunks_exact_mut(256)) {
        let d = f16_to_f32(le_u16(b, 80));
        let min = f16_to_f32(le_u16(b, 82));
        for p in 0..8 {
            let (sc0, sc1) = (b[2 * p], b[2 * p + 1]);
            let dl = [d * f32::from(sc0 & 0x0F), d * f32::from(sc1 & 0x0F)];
            let ml = [min * f32::from(sc0 >> 4), min * f32::from(sc1 >> 4)];
            // SAFETY: quants are bytes 16..80 of the 84-byte block; p / 4 < 2.
            let qs = load32(b, 16 + 32 * (p / 4));
            // SAFETY: p < 8, so 32 * p + 32 <= 256 = y.len().
            put32_min::<NT>(y, 32 * p, crumbs(qs, 2 * (p % 4)), dl, ml);
        }
    }
}

/// Q3_K's sixteen 6-bit scales, minus 32.
fn q3_k_scales(packed: &[u8]) -> [i32; 16] {
    let mut scales = [0; 16];
    if let Ok(packed) = <&[u8; 12]>::try_from(packed) {
        for (i, scale) in scales.iter_mut().enumerate() {
            let low = if i < 8 {
                packed[i] & 0x0F
            } else {
                packed[i - 8] >> 4
            };
            let high = (packed[8 + i % 4] >> (2 * (i / 4))) & 3;
            *scale = i32::from(low | high << 4) - 32;
        }
    }
    scales
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn q3_k<const NT: bool>(blocks: &[u8], out: &mut [f32]) {
    for (b, y) in blocks.chunks_exact(110).zip(out.chunks_exact_mut(256)) {
        let d_all = f16_to_f32(le_u16(b, 108));
        let scales = q3_k_scales(&b[96..108]);
        // SAFETY: hmask is bytes 0..32 of the 110-byte block.
        let hmask = load32(b, 0);
        for p in 0..8 {
            let dl = [
                d_all * scales[2 * p] as f32,
                d_all * scales[2 * p + 1] as f32,
            ];
            // SAFETY: quants are bytes 32..96; p / 4 < 2.
            let low = crumbs(load32(b, 32 + 32 * (p / 4)), 2 * (p % 4));
            let four = _mm256_andnot_si256(has_bit(hmask, 1 << p), _mm256_set1_epi8(4));
            // SAFETY: p < 8, so 32 * p + 32 <= 256 = y.len().
            put32::<NT>(y, 32 * p, _mm256_sub_epi8(low, four), dl);
        }
    }
}

/// Q4_K/Q5_K's eight (scale, min) pairs of 6 bits.
fn scale_min_k4(packed: &[u8]) -> [(u8, u8); 8] {
    let mut pairs = [(0, 0); 8];
    if let Ok(packed) = <&[u8; 12]>::try_from(packed) {
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
    }
    pairs
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn q4_k<const NT: bool>(blocks: &[u8], out: &mut [f32]) {
    let low4 = _mm256_set1_epi8(0x0F);
    for (b, y) in blocks.chunks_exact(144).zip(out.chunks_exact_mut(256)) {
        let d = f16_to_f32(le_u16(b, 0));
        let min = f16_to_f32(le_u16(b, 2));
        let pairs = scale_min_k4(&b[4..16]);
        for j in 0..4 {
            // SAFETY: quants are bytes 16..144 of the 144-byte block; j < 4.
            let qs = load32(b, 16 + 32 * j);
            let lo = _mm256_and_si256(qs, low4);
            let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(qs), low4);
            for (h, q) in [lo, hi].into_iter().enumerate() {
                let (sc, m) = pairs[2 * j + h];
                let d1 = d * f32::from(sc);
                let m1 = min * f32::from(m);
                // SAFETY: 64 * j + 32 * h + 32 <= 256 = y.len().
                put32_min::<NT>(y, 64 * j + 32 * h, q, [d1; 2], [m1; 2]);
            }
        }
    }
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn q5_k<const NT: bool>(blocks: &[u8], out: &mut [f32]) {
    let low4 = _mm256_set1_epi8(0x0F);
    let sixteen = _mm256_set1_epi8(16);
    for (b, y) in blocks.chunks_exact(176).zip(out.chunks_exact_mut(256)) {
        let d = f16_to_f32(le_u16(b, 0));
        let min = f16_to_f32(le_u16(b, 2));
        let pairs = scale_min_k4(&b[4..16]);
        // SAFETY: qh is bytes 16..48 of the 176-byte block.
        let qh = load32(b, 16);
        for j in 0..4 {
            // SAFETY: quants are bytes 48..176; j < 4.
            let qs = load32(b, 48 + 32 * j);
            let lo = _mm256_and_si256(qs, low4);
            let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(qs), low4);
            for (h, q) in [lo, hi].into_iter().enumerate() {
                let high = _mm256_and_si256(has_bit(qh, 1 << (2 * j + h)), sixteen);
                let (sc, m) = pairs[2 * j + h];
                let d1 = d * f32::from(sc);
                let m1 = min * f32::from(m);
                let q = _mm256_or_si256(q, high);
                // SAFETY: 64 * j + 32 * h + 32 <= 256 = y.len().
                put32_min::<NT>(y, 64 * j + 32 * h, q, [d1; 2], [m1; 2]);
            }
        }
    }
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn q6_k<const NT: bool>(blocks: &[u8], out: &mut [f32]) {
    let low4 = _mm256_set1_epi8(0x0F);
    let three = _mm256_set1_epi8(3);
    let offset = _mm256_set1_epi8(32);
    for (b, y) in blocks.chunks_exact(210).zip(out.chunks_exact_mut(256)) {
        let d = f16_to_f32(le_u16(b, 208));
        let mut scales = [0f32; 16];
        for (s, &sc) in scales.iter_mut().zip(&b[192..208]) {
            *s = d * f32::from(sc as i8);
        }
        for n in 0..2 {
            // SAFETY: ql is bytes 0..128 and qh 128..192 of the 210-byte block; n < 2.
            let ql = [load32(b, 64 * n), load32(b, 64 * n + 32)];
            let qh = load32(b, 128 + 32 * n);
            for k in 0..4 {
                let low = _mm256_srl_epi16(ql[k % 2], _mm_cvtsi32_si128(4 * (k as i32 / 2)));
                let low = _mm256_and_si256(low, low4);
                let high = _mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * k as i32));
                let high = _mm256_slli_epi16::<4>(_mm256_and_si256(high, three));
                let q = _mm256_sub_epi8(_mm256_or_si256(low, high), offset);
                let s = [scales[8 * n + 2 * k], scales[8 * n + 2 * k + 1]];
                // SAFETY: 128 * n + 32 * k + 32 <= 256 = y.len().
                put32::<NT>(y, 128 * n + 32 * k, q, s);
            }
        }
    }
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn q8_k<const NT: bool>(blocks: &[u8], out: &mut [f32]) {
    for (b, y) in blocks.chunks_exact(292).zip(out.chunks_exact_mut(256)) {
        let lo = u32::from(le_u16(b, 0));
        let hi = u32::from(le_u16(b, 2));
        let d = _mm256_set1_ps(f32::from_bits(lo | hi << 16));
        for j in 0..8 {
            // SAFETY: quants are bytes 4..260 of the 292-byte block and 4 + 32 * j + 32 <= 260;
            // 32 * j + 32 <= 256 = y.len().
            let q = i8x32_ps(load32(b, 4 + 32 * j)).map(|q| _mm256_mul_ps(d, q));
            store_all::<NT>(y, 32 * j, &q);
        }
    }
}
