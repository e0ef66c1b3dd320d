//! MXFP4 (32 values, an E8M0 scale) and NVFP4 (64 values, four UE4M3 scales): FP4 (E2M1)
//! levels looked up with `pshufb`, times the scale.

use core::arch::x86_64::*;

use super::{i8x16_ps, i8x8_ps, load16, load8, nibbles16, safe_kernel, store, store_all};
use crate::quant::scalar::fp4::{e8m0_to_f32_half, ue4m3_to_f32_half};

safe_kernel!(dequant_mxfp4 => mxfp4);
safe_kernel!(dequant_nvfp4 => nvfp4);

/// ggml's kvalues_mxfp4: the E2M1 values, doubled (the scales are halved to match).
const KVALUES_FP4: [i8; 16] = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12];

#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn table() -> __m128i {
    let bytes = KVALUES_FP4.map(|v| v as u8);
    // SAFETY: `bytes` is a 16-byte array.
    load16(&bytes, 0)
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn mxfp4<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    let table = table();
    for (b, y) in blocks.chunks_exact(17).zip(out.chunks_exact_mut(32)) {
        let d = _mm256_set1_ps(e8m0_to_f32_half(b[0]));
        // SAFETY: the 17-byte block has its quants at 1..17.
        let (lo, hi) = nibbles16(load16(b, 1));
        let [a0, a1] = i8x16_ps(_mm_shuffle_epi8(table, lo));
        let [a2, a3] = i8x16_ps(_mm_shuffle_epi8(table, hi));
        let v = [a0, a1, a2, a3].map(|a| _mm256_mul_ps(a, d));
        // SAFETY: y holds 32 values.
        store_all::<ST>(y, 0, &v);
    }
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn nvfp4<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    let table = table();
    for (b, y) in blocks.chunks_exact(36).zip(out.chunks_exact_mut(64)) {
        for s in 0..4 {
            let d = _mm256_set1_ps(ue4m3_to_f32_half(b[s]));
            // SAFETY: the 36-byte block has its quants at 4..36; 4 + 8 * s + 8 <= 36.
            let (lo, hi) = nibbles16(load8(b, 4 + 8 * s));
            let lo = _mm256_mul_ps(i8x8_ps(_mm_shuffle_epi8(table, lo)), d);
            let hi = _mm256_mul_ps(i8x8_ps(_mm_shuffle_epi8(table, hi)), d);
            // SAFETY: 16 * s + 16 <= 64 = y.len().
            store::<ST>(y, 16 * s, lo);
            // SAFETY: as above.
            store::<ST>(y, 16 * s + 8, hi);
        }
    }
}
