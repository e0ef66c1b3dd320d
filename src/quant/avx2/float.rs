//! F16 (F16C's `vcvtph2ps`, which quiets signalling NaNs exactly as the scalar kernel does) and
//! BF16 (a plain 16-bit shift). Elements past the last whole 8 go through the scalar kernel.

use core::arch::x86_64::*;

use super::{load16, safe_kernel, store};
use crate::quant::scalar;
use crate::types::GgmlType;

safe_kernel!(dequant_f16 => f16_kernel);
safe_kernel!(dequant_bf16 => bf16_kernel);

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn f16_kernel<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    let mut bytes = blocks.chunks_exact(16);
    let mut values = out.chunks_exact_mut(8);
    for (b, y) in (&mut bytes).zip(&mut values) {
        // SAFETY: b has 16 bytes and y 8 values (chunks_exact).
        store::<ST>(y, 0, _mm256_cvtph_ps(load16(b, 0)));
    }
    let n = blocks.len().min(out.len() * 2) / 16 * 8;
    tail(GgmlType::F16, blocks.get(n * 2..), out.get_mut(n..));
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn bf16_kernel<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    let mut bytes = blocks.chunks_exact(16);
    let mut values = out.chunks_exact_mut(8);
    for (b, y) in (&mut bytes).zip(&mut values) {
        // SAFETY: b has 16 bytes and y 8 values (chunks_exact).
        let wide = _mm256_cvtepu16_epi32(load16(b, 0));
        store::<ST>(y, 0, _mm256_castsi256_ps(_mm256_slli_epi32::<16>(wide)));
    }
    let n = blocks.len().min(out.len() * 2) / 16 * 8;
    tail(GgmlType::BF16, blocks.get(n * 2..), out.get_mut(n..));
}

/// The last (fewer than 8) elements, with the scalar kernel.
fn tail(ty: GgmlType, bytes: Option<&[u8]>, out: Option<&mut [f32]>) {
    if let (Some(bytes), Some(out)) = (bytes, out) {
        scalar::kernel_for(ty)(bytes, out);
    }
}
