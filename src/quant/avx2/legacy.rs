//! Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 (32 values a block), Q1_0 (128) and Q2_0 (64).

use core::arch::x86_64::*;

use super::{
    bits_to_bytes, f16_splat, f16_to_f32, i8x16_ps, i8x32_ps, load16, nibbles16, safe_kernel,
    store, store_all,
};

safe_kernel!(dequant_q8_0 => q8_0);
safe_kernel!(dequant_q8_1 => q8_1);
safe_kernel!(dequant_q4_0 => q4_0);
safe_kernel!(dequant_q4_1 => q4_1);
safe_kernel!(dequant_q5_0 => q5_0);
safe_kernel!(dequant_q5_1 => q5_1);
safe_kernel!(dequant_q1_0 => q1_0);
safe_kernel!(dequant_q2_0 => q2_0);

/// `q * d` for each vector, as the scalar `q as f32 * d`.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn scale<const N: usize>(qs: [__m256; N], d: __m256) -> [__m256; N] {
    qs.map(|q| _mm256_mul_ps(q, d))
}

/// `q * d + m` for each vector: a separate multiply and add, as the scalar code.
///
/// When both `q * d` and `m` are NaN, x86's `addss` (what the scalar code runs) returns its
/// first operand's NaN. LLVM may swap the operands of a vector add, so that choice is made
/// explicit: where the product is NaN, it is the result. With one NaN operand (or none) the
/// order does not matter, so blocks whose `m` is a number (all real ones) skip that blend.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn scale_min<const N: usize>(qs: [__m256; N], d: __m256, m: __m256) -> [__m256; N] {
    qs.map(|q| {
        let product = _mm256_mul_ps(q, d);
        let sum = _mm256_add_ps(product, m);
        let product_is_nan = _mm256_cmp_ps::<_CMP_UNORD_Q>(product, product);
        _mm256_blendv_ps(sum, product, product_is_nan)
    })
}

/// [`scale_min`] for an `m` that is not NaN, where the add's operand order cannot matter.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn scale_add<const N: usize>(qs: [__m256; N], d: __m256, m: __m256) -> [__m256; N] {
    qs.map(|q| _mm256_add_ps(_mm256_mul_ps(q, d), m))
}

/// Stores `q * d + m` for the 32 values (`q` as bytes) of a Q4_1/Q5_1 block.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn store_scaled_min<const ST: u8>(y: &mut [f32], q: __m256i, d: __m256, m: f32) {
    if m.is_nan() {
        store_scaled_nan_min::<ST>(y, q, d, m);
    } else {
        store_all::<ST>(y, 0, &scale_add(i8x32_ps(q), d, _mm256_set1_ps(m)));
    }
}

/// [`store_scaled_min`]'s rare case, out of line so its NaN blend costs the common path no
/// registers or stack stores.
#[cold]
#[inline(never)]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn store_scaled_nan_min<const ST: u8>(y: &mut [f32], q: __m256i, d: __m256, m: f32) {
    store_all::<ST>(y, 0, &scale_min(i8x32_ps(q), d, _mm256_set1_ps(m)));
}

/// Q4/Q5 value order: the 16 low nibbles, then the 16 high nibbles, as one 32-byte vector.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn nibbles32(q: __m128i) -> __m256i {
    let (lo, hi) = nibbles16(q);
    _mm256_set_m128i(hi, lo)
}

/// Adds 16 to each value whose bit is set in Q5's `qh` (bit j for value j).
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn with_fifth_bit(q: __m256i, qh: u32) -> __m256i {
    _mm256_or_si256(
        q,
        _mm256_and_si256(bits_to_bytes(qh), _mm256_set1_epi8(0x10)),
    )
}

#[inline(always)]
fn le_u32(b: &[u8], at: usize) -> u32 {
    let lo = u32::from(super::le_u16(b, at));
    let hi = u32::from(super::le_u16(b, at + 2));
    lo | hi << 16
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn q8_0<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    for (b, y) in blocks.chunks_exact(34).zip(out.chunks_exact_mut(32)) {
        let d = f16_splat(b, 0);
        // SAFETY: a block is 34 bytes: quants at 2..18 and 18..34; y holds 32 values.
        let [a0, a1] = i8x16_ps(load16(b, 2));
        let [a2, a3] = i8x16_ps(load16(b, 18));
        store_all::<ST>(y, 0, &scale([a0, a1, a2, a3], d));
    }
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn q8_1<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    for (b, y) in blocks.chunks_exact(36).zip(out.chunks_exact_mut(32)) {
        let d = f16_splat(b, 0);
        // SAFETY: a block is 36 bytes: d, s, then quants at 4..20 and 20..36; y holds 32 values.
        let [a0, a1] = i8x16_ps(load16(b, 4));
        let [a2, a3] = i8x16_ps(load16(b, 20));
        store_all::<ST>(y, 0, &scale([a0, a1, a2, a3], d));
    }
}

/// The `vpshufb` control putting byte `o + i` of a 16-byte row (present in both 128-bit
/// lanes) into the top byte of dword lane i, zeros (0x80) elsewhere.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn top_bytes(o: i8) -> __m256i {
    let mut control = [i8::MIN; 32];
    for (i, dword) in (0..).zip(control.chunks_exact_mut(4)) {
        if let Some(top) = dword.last_mut() {
            *top = o + i;
        }
    }
    // SAFETY: `control` is 32 bytes; loadu needs no alignment.
    _mm256_loadu_si256(control.as_ptr().cast())
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn q4_0<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    // A nibble n with bit 3 flipped, read as a signed 4-bit number, is n − 8. Each output
    // vector takes one nibble per lane to the top of the dword, where an arithmetic shift by 28
    // sign-extends it: no widening shuffles, and the −8 comes free.
    let flip = _mm256_set1_epi8(0x88u8 as i8);
    let (first, second) = (top_bytes(0), top_bytes(8));
    for (b, y) in blocks.chunks_exact(18).zip(out.chunks_exact_mut(32)) {
        let d = f16_splat(b, 0);
        // SAFETY: a block is 18 bytes, quants at 2..18; y holds 32 values.
        let high = _mm256_xor_si256(_mm256_broadcastsi128_si256(load16(b, 2)), flip);
        // Each byte's low nibble moved up to its high nibble.
        let low = _mm256_slli_epi16::<4>(high);
        // Values 0..16 are the low nibbles of bytes 0..16, values 16..32 the high nibbles.
        let q = [
            _mm256_shuffle_epi8(low, first),
            _mm256_shuffle_epi8(low, second),
            _mm256_shuffle_epi8(high, first),
            _mm256_shuffle_epi8(high, second),
        ]
        .map(|t| _mm256_cvtepi32_ps(_mm256_srai_epi32::<28>(t)));
        store_all::<ST>(y, 0, &scale(q, d));
    }
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn q4_1<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    for (b, y) in blocks.chunks_exact(20).zip(out.chunks_exact_mut(32)) {
        let d = f16_splat(b, 0);
        let m = f16_to_f32(super::le_u16(b, 2));
        // SAFETY: a block is 20 bytes, quants at 4..20; y holds 32 values.
        let q = nibbles32(load16(b, 4));
        store_scaled_min::<ST>(y, q, d, m);
    }
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn q5_0<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    for (b, y) in blocks.chunks_exact(22).zip(out.chunks_exact_mut(32)) {
        let d = f16_splat(b, 0);
        // SAFETY: a block is 22 bytes, qh at 2..6, quants at 6..22; y holds 32 values.
        let q = with_fifth_bit(nibbles32(load16(b, 6)), le_u32(b, 2));
        let q = _mm256_sub_epi8(q, _mm256_set1_epi8(16));
        store_all::<ST>(y, 0, &scale(i8x32_ps(q), d));
    }
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn q5_1<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    for (b, y) in blocks.chunks_exact(24).zip(out.chunks_exact_mut(32)) {
        let d = f16_splat(b, 0);
        let m = f16_to_f32(super::le_u16(b, 2));
        // SAFETY: a block is 24 bytes, qh at 4..8, quants at 8..24; y holds 32 values.
        let q = with_fifth_bit(nibbles32(load16(b, 8)), le_u32(b, 4));
        store_scaled_min::<ST>(y, q, d, m);
    }
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn q1_0<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    let bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    for (b, y) in blocks.chunks_exact(18).zip(out.chunks_exact_mut(128)) {
        let d = f16_splat(b, 0);
        // Negation flips the sign bit only, like the scalar `-d`.
        let neg_d = _mm256_xor_ps(d, _mm256_set1_ps(-0.0));
        for (i, &byte) in b[2..].iter().enumerate() {
            let set =
                _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(byte.into()), bit), bit);
            let v = _mm256_blendv_ps(neg_d, d, _mm256_castsi256_ps(set));
            // SAFETY: i < 16, so 8 * i + 8 <= 128 = y.len().
            store::<ST>(y, 8 * i, v);
        }
    }
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn q2_0<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    let shifts = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
    for (b, y) in blocks.chunks_exact(18).zip(out.chunks_exact_mut(64)) {
        // (q - 1) * d for q = 0..4, picked per lane by vpermps (which reads the low 3 bits of
        // each index lane: the 2-bit quant plus the next quant's low bit, so mask it).
        let table = super::tq::level_table(f16_to_f32(super::le_u16(b, 0)));
        let three = _mm256_set1_epi32(3);
        for i in 0..8 {
            let pair = i32::from(super::le_u16(b, 2 + 2 * i));
            let q = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(pair), shifts), three);
            // SAFETY: i < 8, so 8 * i + 8 <= 64 = y.len().
            store::<ST>(y, 8 * i, _mm256_permutevar8x32_ps(table, q));
        }
    }
}
