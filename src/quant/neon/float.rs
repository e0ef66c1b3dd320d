//! The plain types F16, BF16, F32, F64, I8, I16 and I32: a vector of elements per step, the
//! tail (less than one step) by the scalar kernel. I64 has no exact vector path (NEON converts
//! i64 to f64 only, and going through f64 would round twice), so it stays scalar.

use core::arch::aarch64::*;
use core::arch::asm;

use super::s8x16_to_f32;
use crate::quant::scalar::kernel_for as scalar_kernel_for;
use crate::types::GgmlType;

/// Runs `step` on every whole run of `N` elements (`BYTES` bytes in, `N` f32 out) and the
/// scalar kernel of `ty` on what is left; never touches past either slice.
#[inline(always)]
fn each_run<const BYTES: usize, const N: usize>(
    ty: GgmlType,
    bytes: &[u8],
    out: &mut [f32],
    mut step: impl FnMut(&[u8; BYTES], &mut [f32; N]),
) {
    let width = BYTES / N;
    let n = (bytes.len() / width).min(out.len());
    let whole = n / N * N;
    let (bytes, tail_bytes) = bytes.split_at(whole * width);
    let (out, tail_out) = out.split_at_mut(whole);
    for (b, y) in bytes.chunks_exact(BYTES).zip(out.chunks_exact_mut(N)) {
        // Always Ok: chunks_exact yields exactly BYTES bytes and N values.
        if let (Ok(b), Ok(y)) = (<&[u8; BYTES]>::try_from(b), <&mut [f32; N]>::try_from(y)) {
            step(b, y);
        }
    }
    (scalar_kernel_for(ty))(tail_bytes, tail_out);
}

pub(crate) fn dequant_f16(blocks: &[u8], out: &mut [f32]) {
    each_run(
        GgmlType::F16,
        blocks,
        out,
        |b: &[u8; 16], y: &mut [f32; 8]| {
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
        },
    );
}

pub(crate) fn dequant_bf16(blocks: &[u8], out: &mut [f32]) {
    each_run(
        GgmlType::BF16,
        blocks,
        out,
        |b: &[u8; 16], y: &mut [f32; 8]| {
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
        },
    );
}

pub(crate) fn dequant_f32(blocks: &[u8], out: &mut [f32]) {
    each_run(
        GgmlType::F32,
        blocks,
        out,
        |b: &[u8; 16], y: &mut [f32; 4]| {
            // SAFETY: `b` is 16 readable bytes and `y` 4 writable f32 (fixed-size arrays). A plain
            // bit copy, NaN payloads included.
            unsafe { vst1q_f32(y.as_mut_ptr(), vreinterpretq_f32_u8(vld1q_u8(b.as_ptr()))) }
        },
    );
}

pub(crate) fn dequant_f64(blocks: &[u8], out: &mut [f32]) {
    each_run(
        GgmlType::F64,
        blocks,
        out,
        |b: &[u8; 32], y: &mut [f32; 4]| {
            // SAFETY: `b` is 32 readable bytes and `y` 4 writable f32 (fixed-size arrays). FCVTN
            // rounds like the scalar FCVT that `as f32` compiles to (FPCR's mode, to nearest).
            unsafe {
                let lo = vreinterpretq_f64_u8(vld1q_u8(b.as_ptr()));
                let hi = vreinterpretq_f64_u8(vld1q_u8(b.as_ptr().add(16)));
                vst1q_f32(y.as_mut_ptr(), vcvt_high_f32_f64(vcvt_f32_f64(lo), hi));
            }
        },
    );
}

pub(crate) fn dequant_i8(blocks: &[u8], out: &mut [f32]) {
    each_run(
        GgmlType::I8,
        blocks,
        out,
        |b: &[u8; 16], y: &mut [f32; 16]| {
            // SAFETY: `b` is 16 readable bytes and `y` 16 writable f32 (fixed-size arrays).
            unsafe {
                let q = s8x16_to_f32(vld1q_s8(b.as_ptr().cast::<i8>()));
                for (i, q) in q.into_iter().enumerate() {
                    vst1q_f32(y.as_mut_ptr().add(4 * i), q);
                }
            }
        },
    );
}

pub(crate) fn dequant_i16(blocks: &[u8], out: &mut [f32]) {
    each_run(
        GgmlType::I16,
        blocks,
        out,
        |b: &[u8; 16], y: &mut [f32; 8]| {
            // SAFETY: `b` is 16 readable bytes and `y` 8 writable f32 (fixed-size arrays); i16 to
            // f32 is exact.
            unsafe {
                let v = vreinterpretq_s16_u8(vld1q_u8(b.as_ptr()));
                vst1q_f32(y.as_mut_ptr(), vcvtq_f32_s32(vmovl_s16(vget_low_s16(v))));
                vst1q_f32(y.as_mut_ptr().add(4), vcvtq_f32_s32(vmovl_high_s16(v)));
            }
        },
    );
}

pub(crate) fn dequant_i32(blocks: &[u8], out: &mut [f32]) {
    each_run(
        GgmlType::I32,
        blocks,
        out,
        |b: &[u8; 16], y: &mut [f32; 4]| {
            // SAFETY: `b` is 16 readable bytes and `y` 4 writable f32 (fixed-size arrays). SCVTF
            // rounds like the scalar SCVTF that `as f32` compiles to (to nearest, ties to even).
            unsafe {
                let v = vreinterpretq_s32_u8(vld1q_u8(b.as_ptr()));
                vst1q_f32(y.as_mut_ptr(), vcvtq_f32_s32(v));
            }
        },
    );
}
