//! The k-quants Q2_K, Q3_K, Q4_K, Q5_K and Q6_K: 256 values a block, in sub-blocks of 16 or 32
//! sharing a scale (and a min). Scales are made in f32 exactly as the scalar kernels make them,
//! then broadcast.

use core::arch::x86_64::*;

use super::{f16_to_f32, i8x32_ps, le_u16, load16, load32, load8, safe_kernel, store, store_all};

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
unsafe fn put32_min<const ST: u8>(y: &mut [f32], at: usize, q: __m256i, s: [f32; 2], m: [f32; 2]) {
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
    store_all::<ST>(y, at, &v);
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
unsafe fn q2_k<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
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
            put32_min::<ST>(y, 32 * p, crumbs(qs, 2 * (p % 4)), dl, ml);
        }
    }
}

/// Q3_K's sixteen 6-bit scales, minus 32, each times `d_all` (the scalar `d_all * sc as f32`).
/// Scale i has its low nibble in byte i % 8 (bits 4·(i / 8)) and its top 2 bits in byte
/// 8 + i % 4 (bits 2·(i / 4)) of the 12 packed bytes at 96..108.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn q3_k_dls(b: &[u8], d_all: f32) -> [f32; 16] {
    // SAFETY: bytes 96..104 are inside the 110-byte block.
    let low = load8(b, 96);
    let low = _mm_and_si128(
        _mm_unpacklo_epi64(low, _mm_srli_epi16::<4>(low)),
        _mm_set1_epi8(0x0F),
    );
    // Dword k holds bytes 104..108 shifted right by 2k: byte 4k + m is byte 8 + m >> 2k.
    let top = u32::from(le_u16(b, 104)) | u32::from(le_u16(b, 106)) << 16;
    let high = _mm_srlv_epi32(_mm_set1_epi32(top as i32), _mm_setr_epi32(0, 2, 4, 6));
    let high = _mm_slli_epi16::<4>(_mm_and_si128(high, _mm_set1_epi8(3)));
    let sc = _mm_sub_epi8(_mm_or_si128(low, high), _mm_set1_epi8(32));
    let d = _mm256_set1_ps(d_all);
    let mut dls = [0f32; 16];
    for (h, sc) in [sc, _mm_unpackhi_epi64(sc, sc)].into_iter().enumerate() {
        let v = _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(sc)));
        // SAFETY: dls[8h..8h + 8] exists (h < 2); storeu needs no alignment.
        _mm256_storeu_ps(dls.as_mut_ptr().add(8 * h), v);
    }
    dls
}

/// 32 bytes "transposed" so that dword lane i holds bytes i, i + 8, i + 16 and i + 24 (low
/// byte first): shifting the dwords right by 8k then puts byte 8k + i in the low bits of lane i.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn transpose32(v: __m256i) -> __m256i {
    let v = _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
    let order = _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    _mm256_shuffle_epi8(v, _mm256_broadcastsi128_si256(order))
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn q3_k<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    // Lane j of a table is dl·(j − 4), the 8 possible values; a 3-bit index (2 quant bits, the
    // hmask bit as bit 2) picks one with a permute, in place of a convert and a multiply.
    let levels = _mm256_setr_ps(-4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0);
    let three = _mm256_set1_epi8(3);
    let four = _mm256_set1_epi8(4);
    for (b, y) in blocks.chunks_exact(110).zip(out.chunks_exact_mut(256)) {
        let dls = q3_k_dls(b, f16_to_f32(le_u16(b, 108)));
        // SAFETY: hmask is bytes 0..32 and the quants 32..96 of the 110-byte block.
        let hmask = transpose32(load32(b, 0));
        let qs = [transpose32(load32(b, 32)), transpose32(load32(b, 64))];
        for p in 0..8 {
            let low = _mm256_srl_epi32(qs[p / 4], _mm_cvtsi32_si128(2 * (p as i32 % 4)));
            // Bit p of hmask to bit 2.
            let high = if p < 2 {
                _mm256_sll_epi32(hmask, _mm_cvtsi32_si128(2 - p as i32))
            } else {
                _mm256_srl_epi32(hmask, _mm_cvtsi32_si128(p as i32 - 2))
            };
            let index = _mm256_or_si256(_mm256_and_si256(low, three), _mm256_and_si256(high, four));
            for h in 0..2 {
                // levels·dl is the scalar dl·q for each q (the same single rounding).
                let table = _mm256_mul_ps(_mm256_broadcast_ss(&dls[2 * p + h]), levels);
                for k in 2 * h..2 * h + 2 {
                    let idx = _mm256_srl_epi32(index, _mm_cvtsi32_si128(8 * k as i32));
                    // SAFETY: 32 * p + 8 * k + 8 <= 256 = y.len() (p < 8, k < 4).
                    store::<ST>(y, 32 * p + 8 * k, _mm256_permutevar8x32_ps(table, idx));
                }
            }
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
unsafe fn q4_k<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
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
                put32_min::<ST>(y, 64 * j + 32 * h, q, [d1; 2], [m1; 2]);
            }
        }
    }
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn q5_k<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
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
                put32_min::<ST>(y, 64 * j + 32 * h, q, [d1; 2], [m1; 2]);
            }
        }
    }
}

/// The 8 signed bytes at `p` as 8 i32, with `vpmovsxbd` reading memory. In `asm!`, as LLVM
/// would forward the bytes just stored there from registers, through shuffles.
///
/// # Safety
/// `p` is valid for reading 8 bytes (no alignment needed).
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn widen8(p: *const u8) -> __m256i {
    let v: __m256i;
    // SAFETY: the caller guarantees p..p + 8 is readable; nothing else is touched.
    core::arch::asm!(
        "vpmovsxbd {v}, qword ptr [{p}]",
        p = in(reg) p,
        v = out(ymm_reg) v,
        options(pure, readonly, nostack, preserves_flags),
    );
    v
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn q6_k<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    let low4 = _mm256_set1_epi8(0x0F);
    let three = _mm256_set1_epi8(3);
    let offset = _mm256_set1_epi8(32);
    // The block's 256 values q − 32 as bytes, in order. They are widened 8 at a time straight
    // from here (`vpmovsxbd` with a memory operand): from registers each 32 also cost an
    // extract and two unpacks on the vector ports, which bound this kernel.
    let mut qs = [_mm256_setzero_si256(); 8];
    for (b, y) in blocks.chunks_exact(210).zip(out.chunks_exact_mut(256)) {
        let d = _mm256_set1_ps(f16_to_f32(le_u16(b, 208)));
        // The scalar `d * f32::from(sc as i8)`, 8 at a time (only d can be NaN: same bits).
        let mut scales = [0f32; 16];
        // SAFETY: the 16 scales are bytes 192..208 of the 210-byte block.
        let sc = load16(b, 192);
        for (h, sc) in [sc, _mm_unpackhi_epi64(sc, sc)].into_iter().enumerate() {
            let v = _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(sc)));
            // SAFETY: scales[8h..8h + 8] exists (h < 2); storeu needs no alignment.
            _mm256_storeu_ps(scales.as_mut_ptr().add(8 * h), v);
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
                // Values 128n + 32k.. (scales 8n + 2k and 8n + 2k + 1).
                qs[4 * n + k] = _mm256_sub_epi8(_mm256_or_si256(low, high), offset);
            }
        }
        let bytes = qs.as_ptr().cast::<u8>();
        for (g, &s) in scales.iter().enumerate() {
            let s = _mm256_set1_ps(s);
            for h in 0..2 {
                // SAFETY: 16g + 8h + 8 <= 256 bytes of `qs`.
                let q = widen8(bytes.add(16 * g + 8 * h));
                let v = _mm256_mul_ps(s, _mm256_cvtepi32_ps(q));
                // SAFETY: 16g + 8h + 8 <= 256 = y.len().
                store::<ST>(y, 16 * g + 8 * h, v);
            }
        }
    }
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn q8_k<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    for (b, y) in blocks.chunks_exact(292).zip(out.chunks_exact_mut(256)) {
        let lo = u32::from(le_u16(b, 0));
        let hi = u32::from(le_u16(b, 2));
        let d = _mm256_set1_ps(f32::from_bits(lo | hi << 16));
        for j in 0..8 {
            // SAFETY: quants are bytes 4..260 of the 292-byte block and 4 + 32 * j + 32 <= 260;
            // 32 * j + 32 <= 256 = y.len().
            let q = i8x32_ps(load32(b, 4 + 32 * j)).map(|q| _mm256_mul_ps(d, q));
            store_all::<ST>(y, 32 * j, &q);
        }
    }
}
