//! F16 and BF16: eight elements per step, the tail (fewer than eight) by the scalar kernel.

use core::arch::aarch64::*;
use core::arch::asm;

use crate::quant::scalar::kernel_for as scalar_kernel_for;
use crate::types::GgmlType;

/// Elements per vector step.
const STEP: usize = 8;

/// Runs `step` on every whole run of 8 elements (16 bytes in, 8 f32 out) and the scalar kernel
/// of `ty` on what is left; never touches past either slice.
#[inline(always)]
fn each_eight(
    ty: GgmlType,
    bytes: &[u8],
    out: &mut [f32],
    mut step: impl FnMut(&[u8; 2 * STEP], &mut [f32; STEP]),
) {
    let n = (bytes.len() / 2).min(out.len());
    let whole = n / STEP * STEP;
    let (bytes, tail_bytes) = bytes.split_at(2 * whole);
    let (out, tail_out) = out.split_at_mut(whole);
    for (b, y) in bytes.chunks_exact(2 * STEP).zip(out.chunks_exact_mut(STEP)) {
        // Always Ok: chunks_exact yields exactly 16 bytes and 8 values.
        if let (Ok(b), Ok(y)) = (<&[u8; 16]>::try_from(b), <&mut [f32; 8]>::try_from(y)) {
            step(b, y);
        }
    }
    (scalar_kernel_for(ty))(tail_bytes, tail_out);
}

pub(crate) fn dequant_f16(blocks: &[u8], out: &mut [f32]) {
    each_eight(GgmlType::F16, blocks, out, |b, y| {
        // SAFETY: `b` is 16 readable bytes and `y` 8 writable f32 (fixed-size arrays); the
        // byte load has no alignment requirement and `y` is f32-aligned. FCVTL/FCVTL2 only
        // read and write registers. Like F16C (and `half` on aarch64) they keep the payload of
        // a NaN and set its quiet bit: 0x7C01 becomes 0x7FC02000 (FPCR.DN is clear on Linux).
        unsafe {
            let h = vld1q_u8(b.as_ptr());
            let lo: float32x4_t;
            let hi: float32x4_t;
            asm!(
                "fcvtl {lo:v}.4s, {h:v}.4h",
                "fcvtl2 {hi:v}.4s, {h:v}.8h",
                h = in(vreg) h,
                lo = out(vreg) lo,
                hi = out(vreg) hi,
                options(pure, nomem, nostack, preserves_flags),
            );
            vst1q_f32(y.as_mut_ptr(), lo);
            vst1q_f32(y.as_mut_ptr().add(4), hi);
        }
    });
}

pub(crate) fn dequant_bf16(blocks: &[u8], out: &mut [f32]) {
    each_eight(GgmlType::BF16, blocks, out, |b, y| {
        // SAFETY: `b` is 16 readable bytes and `y` 8 writable f32 (fixed-size arrays). The
        // widening shift moves each u16 to the top of a u32, a plain bit copy like the scalar
        // `bits << 16` (signalling NaNs stay signalling).
        unsafe {
            let h = vreinterpretq_u16_u8(vld1q_u8(b.as_ptr()));
            let lo = vshll_n_u16::<16>(vget_low_u16(h));
            let hi = vshll_high_n_u16::<16>(h);
            vst1q_f32(y.as_mut_ptr(), vreinterpretq_f32_u32(lo));
            vst1q_f32(y.as_mut_ptr().add(4), vreinterpretq_f32_u32(hi));
        }
    });
}
