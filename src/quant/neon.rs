//! NEON kernels for aarch64, where NEON is always present. Types without one here fall back to
//! the scalar kernel.
//!
//! Every kernel equals its scalar counterpart (src/quant/scalar) bit for bit: the same f32
//! operations on the same operands in the same order, never fused (no `vfmaq`/`vmlaq`), with
//! exact integer→f32 conversions. Scales are formed with the very scalar code the reference
//! uses. AArch64's Advanced SIMD honours FPCR like scalar code does (no flush to zero, no default
//! NaN under Linux), so a vector lane rounds exactly like the scalar instruction.
//!
//! Kernels walk whole blocks only, as fixed-size arrays (`for_each_block`), so every load and
//! store stays inside one block's bytes and one block's outputs.

mod float;
mod grid;
mod k;
mod legacy;
mod other;

use core::arch::aarch64::*;

use super::KernelFn;
use crate::types::GgmlType;

/// This ISA's own kernel for `ty`, if it has one.
pub(super) fn kernel_for(ty: GgmlType) -> Option<KernelFn> {
    Some(match ty {
        GgmlType::F16 => float::dequant_f16,
        GgmlType::BF16 => float::dequant_bf16,
        GgmlType::F32 => float::dequant_f32,
        GgmlType::F64 => float::dequant_f64,
        GgmlType::I8 => float::dequant_i8,
        GgmlType::I16 => float::dequant_i16,
        GgmlType::I32 => float::dequant_i32,
        GgmlType::Q8_1 => legacy::dequant_q8_1,
        GgmlType::Q8_K => k::dequant_q8_k,
        GgmlType::Q8_0 => legacy::dequant_q8_0,
        GgmlType::Q4_0 => legacy::dequant_q4_0,
        GgmlType::Q4_1 => legacy::dequant_q4_1,
        GgmlType::Q5_0 => legacy::dequant_q5_0,
        GgmlType::Q5_1 => legacy::dequant_q5_1,
        GgmlType::Q6_K => k::dequant_q6_k,
        GgmlType::Q4_K => k::dequant_q4_k,
        GgmlType::Q5_K => k::dequant_q5_k,
        GgmlType::Q3_K => k::dequant_q3_k,
        GgmlType::Q2_K => k::dequant_q2_k,
        GgmlType::IQ4_NL => other::dequant_iq4_nl,
        GgmlType::IQ4_XS => other::dequant_iq4_xs,
        GgmlType::MXFP4 => other::dequant_mxfp4,
        GgmlType::NVFP4 => other::dequant_nvfp4,
        GgmlType::TQ2_0 => other::dequant_tq2_0,
        GgmlType::TQ1_0 => other::dequant_tq1_0,
        GgmlType::Q1_0 => legacy::dequant_q1_0,
        GgmlType::Q2_0 => legacy::dequant_q2_0,
        GgmlType::IQ2_XXS => grid::dequant_iq2_xxs,
        GgmlType::IQ2_XS => grid::dequant_iq2_xs,
        GgmlType::IQ2_S => grid::dequant_iq2_s,
        GgmlType::IQ3_XXS => grid::dequant_iq3_xxs,
        GgmlType::IQ3_S => grid::dequant_iq3_s,
        GgmlType::IQ1_S => grid::dequant_iq1_s,
        GgmlType::IQ1_M => grid::dequant_iq1_m,
        _ => return None,
    })
}

/// Bit j % 8 in byte j, for testing one bit of a broadcast byte per lane.
const BIT_MASKS: [u8; 16] = [1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128];

/// 16 unsigned bytes as four f32 vectors (lanes 0..4, 4..8, 8..12, 12..16); exact.
///
/// # Safety
/// NEON only (baseline on aarch64); touches no memory.
#[inline(always)]
unsafe fn u8x16_to_f32(v: uint8x16_t) -> [float32x4_t; 4] {
    let lo = vmovl_u8(vget_low_u8(v));
    let hi = vmovl_high_u8(v);
    [
        vcvtq_f32_u32(vmovl_u16(vget_low_u16(lo))),
        vcvtq_f32_u32(vmovl_high_u16(lo)),
        vcvtq_f32_u32(vmovl_u16(vget_low_u16(hi))),
        vcvtq_f32_u32(vmovl_high_u16(hi)),
    ]
}

/// 16 signed bytes as four f32 vectors (lanes 0..4, 4..8, 8..12, 12..16); exact.
///
/// # Safety
/// NEON only (baseline on aarch64); touches no memory.
#[inline(always)]
unsafe fn s8x16_to_f32(v: int8x16_t) -> [float32x4_t; 4] {
    let lo = vmovl_s8(vget_low_s8(v));
    let hi = vmovl_high_s8(v);
    [
        vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo))),
        vcvtq_f32_s32(vmovl_high_s16(lo)),
        vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi))),
        vcvtq_f32_s32(vmovl_high_s16(hi)),
    ]
}

/// Widens a byte mask (0xFF or 0 per lane) to four u32 lane masks (lanes 0..4, .., 12..16).
///
/// # Safety
/// NEON only; touches no memory.
#[inline(always)]
unsafe fn widen_mask(m: uint8x16_t) -> [uint32x4_t; 4] {
    let m = vreinterpretq_s8_u8(m);
    let lo = vmovl_s8(vget_low_s8(m));
    let hi = vmovl_high_s8(m);
    [
        vreinterpretq_u32_s32(vmovl_s16(vget_low_s16(lo))),
        vreinterpretq_u32_s32(vmovl_high_s16(lo)),
        vreinterpretq_u32_s32(vmovl_s16(vget_low_s16(hi))),
        vreinterpretq_u32_s32(vmovl_high_s16(hi)),
    ]
}

/// Stores `q[i]·d` (in that operand order, as the scalar `q as f32 * d`) to `y[4i..4i+4]`.
///
/// # Safety
/// `y` must be valid for writing 16 f32 values.
#[inline(always)]
unsafe fn store_q_times_d(y: *mut f32, q: [float32x4_t; 4], d: float32x4_t) {
    for (i, q) in q.into_iter().enumerate() {
        vst1q_f32(y.add(4 * i), vmulq_f32(q, d));
    }
}

/// Stores `d·q[i]` (scale first, as the scalar `dl * q as f32`) to `y[4i..4i+4]`.
///
/// # Safety
/// `y` must be valid for writing 16 f32 values.
#[inline(always)]
unsafe fn store_d_times_q(y: *mut f32, d: float32x4_t, q: [float32x4_t; 4]) {
    for (i, q) in q.into_iter().enumerate() {
        vst1q_f32(y.add(4 * i), vmulq_f32(d, q));
    }
}

/// Stores `d·q[i] − m` (a separate multiply and subtract, as the scalar `dl * q - ml`) to
/// `y[4i..4i+4]`.
///
/// # Safety
/// `y` must be valid for writing 16 f32 values.
#[inline(always)]
unsafe fn store_d_times_q_minus_m(
    y: *mut f32,
    d: float32x4_t,
    q: [float32x4_t; 4],
    m: float32x4_t,
) {
    for (i, q) in q.into_iter().enumerate() {
        vst1q_f32(y.add(4 * i), vsubq_f32(vmulq_f32(d, q), m));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_quiets_signalling_nans_like_scalar() {
        // Eight halves: one vector step, then one more for the scalar tail.
        let halves: [u16; 9] = [
            0x7C01, 0xFC01, 0x7D55, 0x7E00, 0xFFFF, 0x0001, 0x7C00, 0x8000, 0x7C01,
        ];
        let expected: [u32; 9] = [
            0x7FC0_2000,
            0xFFC0_2000,
            0x7FEA_A000,
            0x7FC0_0000,
            0xFFFF_E000,
            0x3380_0000,
            0x7F80_0000,
            0x8000_0000,
            0x7FC0_2000,
        ];
        let bytes: Vec<u8> = halves.iter().flat_map(|h| h.to_le_bytes()).collect();
        let mut out = [0f32; 9];
        float::dequant_f16(&bytes, &mut out);
        let bits: Vec<u32> = out.iter().map(|v| v.to_bits()).collect();
        assert_eq!(bits, expected);
    }

    #[test]
    fn mismatched_lengths_write_whole_blocks_only() {
        for ty in GgmlType::ALL {
            let Some(kernel) = kernel_for(ty) else {
                continue;
            };
            let size = ty.type_size() as usize;
            let block = ty.block_size() as usize;
            // 3 blocks and a half in, room for 2 blocks and a bit out: only 2 are written.
            let bytes = vec![0x11u8; 3 * size + size / 2];
            let mut out = vec![f32::from_bits(0x7FBA_DBAD); 2 * block + block / 2];
            let mut want = out.clone();
            kernel(&bytes, &mut out);
            (crate::quant::scalar::kernel_for(ty))(&bytes, &mut want);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&out), bits(&want), "{ty}");
            // And the other way round: fewer bytes than outputs.
            let mut out = vec![f32::from_bits(0x7FBA_DBAD); 4 * block];
            let mut want = out.clone();
            kernel(&bytes[..size + 1], &mut out);
            (crate::quant::scalar::kernel_for(ty))(&bytes[..size + 1], &mut want);
            assert_eq!(bits(&out), bits(&want), "{ty}");
            if block > 1 {
                assert!(out[block..].iter().all(|v| v.to_bits() == 0x7FBA_DBAD));
            }
        }
    }
}
