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
