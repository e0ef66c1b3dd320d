//! Scalar reference kernels, one per ggml type. Every SIMD kernel is tested bit for bit against
//! these, and these are tested bit for bit against ggml's own `to_float` (fixtures/).
//!
//! Contract shared by every kernel of every ISA: `blocks.len()` is a whole number `n` of blocks
//! of the type and `out.len() == n * block_size`; the caller (`quant::dequantize`) checks it.
//! Kernels still never panic when it does not hold: they process whole blocks only.

use crate::types::GgmlType;

mod float;
pub(crate) mod fp4;
pub(crate) mod grids;
mod iq;
mod k;
pub(crate) use iq::iq4_xs_scales;
pub(crate) use k::unpack_scale_min_k4;
mod legacy;
mod tq;

/// A dequantization kernel: whole blocks in, f32 out.
pub type KernelFn = fn(blocks: &[u8], out: &mut [f32]);

/// The scalar kernel for `ty`.
pub fn kernel_for(ty: GgmlType) -> KernelFn {
    match ty {
        GgmlType::F32 => float::dequant_f32,
        GgmlType::F16 => float::dequant_f16,
        GgmlType::BF16 => float::dequant_bf16,
        GgmlType::F64 => float::dequant_f64,
        GgmlType::I8 => float::dequant_i8,
        GgmlType::I16 => float::dequant_i16,
        GgmlType::I32 => float::dequant_i32,
        GgmlType::I64 => float::dequant_i64,
        GgmlType::Q4_0 => legacy::dequant_q4_0,
        GgmlType::Q4_1 => legacy::dequant_q4_1,
        GgmlType::Q5_0 => legacy::dequant_q5_0,
        GgmlType::Q5_1 => legacy::dequant_q5_1,
        GgmlType::Q8_0 => legacy::dequant_q8_0,
        GgmlType::Q8_1 => legacy::dequant_q8_1,
        GgmlType::Q1_0 => legacy::dequant_q1_0,
        GgmlType::Q2_0 => legacy::dequant_q2_0,
        GgmlType::Q2_K => k::dequant_q2_k,
        GgmlType::Q3_K => k::dequant_q3_k,
        GgmlType::Q4_K => k::dequant_q4_k,
        GgmlType::Q5_K => k::dequant_q5_k,
        GgmlType::Q6_K => k::dequant_q6_k,
        GgmlType::Q8_K => k::dequant_q8_k,
        GgmlType::IQ2_XXS => iq::dequant_iq2_xxs,
        GgmlType::IQ2_XS => iq::dequant_iq2_xs,
        GgmlType::IQ2_S => iq::dequant_iq2_s,
        GgmlType::IQ3_XXS => iq::dequant_iq3_xxs,
        GgmlType::IQ3_S => iq::dequant_iq3_s,
        GgmlType::IQ1_S => iq::dequant_iq1_s,
        GgmlType::IQ1_M => iq::dequant_iq1_m,
        GgmlType::IQ4_NL => iq::dequant_iq4_nl,
        GgmlType::IQ4_XS => iq::dequant_iq4_xs,
        GgmlType::TQ1_0 => tq::dequant_tq1_0,
        GgmlType::TQ2_0 => tq::dequant_tq2_0,
        GgmlType::MXFP4 => fp4::dequant_mxfp4,
        GgmlType::NVFP4 => fp4::dequant_nvfp4,
    }
}

/// IEEE half to f32 exactly as ggml does it: subnormals and infinities exact, NaN payload kept
/// with the quiet bit set (a signalling 0x7C01 becomes 0x7FC02000, like F16C's `vcvtph2ps`).
#[inline(always)]
pub(crate) fn f16_to_f32(bits: u16) -> f32 {
    half::f16::from_bits(bits).to_f32()
}

/// Reads a little-endian u16 from a fixed pair of bytes.
#[inline(always)]
pub(crate) fn le_u16(bytes: [u8; 2]) -> u16 {
    u16::from_le_bytes(bytes)
}

/// Calls `dequant` on every whole block of `blocks`: its `B` bytes and its `N` outputs. Trailing
/// partial blocks (of either slice) are left alone, so a kernel never panics on bad lengths.
#[inline(always)]
pub(crate) fn for_each_block<const B: usize, const N: usize>(
    blocks: &[u8],
    out: &mut [f32],
    mut dequant: impl FnMut(&[u8; B], &mut [f32; N]),
) {
    for (bytes, values) in blocks.chunks_exact(B).zip(out.chunks_exact_mut(N)) {
        // Always Ok: chunks_exact yields exactly B bytes and N values.
        if let (Ok(bytes), Ok(values)) = (
            <&[u8; B]>::try_from(bytes),
            <&mut [f32; N]>::try_from(values),
        ) {
            dequant(bytes, values);
        }
    }
}

/// Asserts at compile time that a block struct has the byte size of its ggml type.
macro_rules! assert_block_size {
    ($block:ty, $ty:expr) => {
        const _: () = assert!(core::mem::size_of::<$block>() == $ty.type_size() as usize);
    };
}
pub(crate) use assert_block_size;
