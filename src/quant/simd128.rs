//! WebAssembly simd128 kernels. Types without one here fall back to the scalar kernel.
//!
//! Every kernel equals its scalar counterpart bit for bit: integer work (unpacking, offsets)
//! is exact in any order, and the float work is the scalar kernel's own operations in its own
//! order, one `f32x4` op per scalar op (separate multiply and add, never relaxed-simd fused
//! ones). Per-block scales are the scalar kernels' products, computed in scalars or lane by
//! lane in vectors, and splatted. Small integers become f32 exactly by interleaving them into
//! the mantissa of 2^23 and subtracting (see [`widen_biased`]); f16 scales are converted in
//! vectors ([`f16x4_to_f32x4`]), bit for bit as `half`.
//!
//! Shaped by how V8 lowers simd128 on x86: unsigned compares, `extend_high` (which LLVM may
//! turn into a byte shuffle whose mask V8 rebuilds on every use), general shuffles and
//! swizzles cost several instructions each, while interleaves with a vector (`punpck*`),
//! `load16x4` extends, float compares and pseudo-min are one. f32 subnormal operands are
//! avoided (slow on Intel).
//!
//! LLVM leaves loops with large bodies rolled, and then per-iteration shift counts, masks and
//! vector choices become run-time values (variable shifts, splats, spills to the stack and
//! range checks): kernels whose shifts depend on the sub-block write the sub-blocks out as
//! calls of an `#[inline(always)]` helper with constant arguments (see Q3_K).
//!
//! Memory is only touched through [`load`], [`load8`], [`load_i16x4`], [`load_f32x4`],
//! [`load_u32x4`] and [`store`], which check their range against the slice and do nothing (or
//! give zeros) outside it, and through `get` on lookup tables. Kernels work on whole blocks
//! from `for_each_block`, so every offset they pass is a constant inside a fixed-size block and
//! the checks fold away.

use std::sync::OnceLock;

use core::arch::wasm32::*;

use super::KernelFn;
use crate::types::GgmlType;

/// The lane helpers the format kernels outside `quant/` share (MLX, bitsandbytes,
/// compressed-tensors): the same range-checked loads and stores and exact widenings as the
/// ggml kernels here.
pub(crate) mod lanes {
    pub(crate) use super::{
        high_nibbles, load, load_f32x4, low_nibbles, mul_add4, store, store16, widen_biased, MAGIC,
    };
    use core::arch::wasm32::*;

    /// f32 lanes rounded to the nearest bf16 (ties to even) and back, as `half::bf16::from_f32`
    /// for every value but NaN (callers' values are finite; past bf16's range they round to
    /// infinity either way).
    #[inline(always)]
    pub(crate) fn round_bf16(x: v128) -> v128 {
        let odd = v128_and(u32x4_shr(x, 16), u32x4_splat(1));
        let up = i32x4_add(i32x4_add(x, u32x4_splat(0x7fff)), odd);
        v128_and(up, u32x4_splat(0xffff_0000))
    }

    pub(crate) use super::interleave4;

    /// The 32 4-bit codes of 16 bytes in stream order, low nibble first (byte `j` holds codes
    /// `2j` and `2j + 1`): two vectors of 16 bytes.
    #[inline(always)]
    pub(crate) fn nibbles_low_first(x: v128) -> [v128; 2] {
        let (lo, hi) = (low_nibbles(x), high_nibbles(x));
        [
            u8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(lo, hi),
            u8x16_shuffle::<8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31>(lo, hi),
        ]
    }
}

mod float;
mod fp4;
mod grid;
mod iq;
mod k;
mod legacy;
mod tq;

/// This ISA's own kernel for `ty`, if it has one.
pub(super) fn kernel_for(ty: GgmlType) -> Option<KernelFn> {
    Some(match ty {
        GgmlType::F32 => float::dequant_f32,
        GgmlType::F16 => float::dequant_f16,
        GgmlType::F64 => float::dequant_f64,
        GgmlType::I8 => float::dequant_i8,
        GgmlType::I16 => float::dequant_i16,
        GgmlType::I32 => float::dequant_i32,
        GgmlType::BF16 => float::dequant_bf16,
        GgmlType::Q4_0 => legacy::dequant_q4_0,
        GgmlType::Q4_1 => legacy::dequant_q4_1,
        GgmlType::Q5_0 => legacy::dequant_q5_0,
        GgmlType::Q5_1 => legacy::dequant_q5_1,
        GgmlType::Q8_0 => legacy::dequant_q8_0,
        GgmlType::Q8_1 => legacy::dequant_q8_1,
        GgmlType::Q2_K => k::dequant_q2_k,
        GgmlType::Q3_K => k::dequant_q3_k,
        GgmlType::Q4_K => k::dequant_q4_k,
        GgmlType::Q5_K => k::dequant_q5_k,
        GgmlType::Q6_K => k::dequant_q6_k,
        GgmlType::Q8_K => k::dequant_q8_k,
        GgmlType::Q1_0 => legacy::dequant_q1_0,
        GgmlType::Q2_0 => legacy::dequant_q2_0,
        GgmlType::IQ4_NL => iq::dequant_iq4_nl,
        GgmlType::IQ4_XS => iq::dequant_iq4_xs,
        GgmlType::MXFP4 => fp4::dequant_mxfp4,
        GgmlType::NVFP4 => fp4::dequant_nvfp4,
        GgmlType::TQ1_0 => tq::dequant_tq1_0,
        GgmlType::TQ2_0 => tq::dequant_tq2_0,
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

/// Each byte `s` spread to eight sign-bit masks: lane j of entry `s` is 0x8000_0000 where bit
/// j of `s` is set, else 0 (8 KiB, built on first use). XORed into f32 lanes they negate
/// exactly the values whose bit is set. Kernels fetch the table once per call, then index it
/// with [`bit_masks`].
fn bit_mask_table() -> &'static BitMasks {
    static MASKS: OnceLock<BitMasks> = OnceLock::new();
    MASKS.get_or_init(|| {
        let mut masks = [[0u32; 8]; 256];
        for (s, lanes) in (0u32..).zip(masks.iter_mut()) {
            for (j, lane) in (0u32..).zip(lanes.iter_mut()) {
                *lane = ((s >> j) & 1) << 31;
            }
        }
        masks
    })
}

/// See [`bit_mask_table`].
type BitMasks = [[u32; 8]; 256];

/// The eight sign-bit masks of byte `s`.
#[inline(always)]
fn bit_masks(table: &BitMasks, s: u8) -> &[u32; 8] {
    table.get(usize::from(s)).unwrap_or(&[0; 8])
}

/// The 16 bytes of `bytes` at `at..at + 16`, or zeros when they are not all there.
#[inline(always)]
pub(crate) fn load(bytes: &[u8], at: usize) -> v128 {
    match bytes.get(at..at.saturating_add(16)) {
        // SAFETY: `chunk` is a 16-byte subslice of `bytes` (checked by `get`), so the 16 bytes
        // read are in bounds; v128_load has no alignment requirement.
        Some(chunk) if chunk.len() == 16 => unsafe { v128_load(chunk.as_ptr().cast()) },
        _ => u8x16_splat(0),
    }
}

/// The 8 bytes of `bytes` at `at..at + 8` in the low half (high half zero), or zeros when they
/// are not all there.
#[inline(always)]
fn load8(bytes: &[u8], at: usize) -> v128 {
    match bytes.get(at..at.saturating_add(8)) {
        // SAFETY: `chunk` is an 8-byte subslice of `bytes` (checked by `get`), so the 8 bytes
        // read are in bounds; v128_load64_zero has no alignment requirement.
        Some(chunk) if chunk.len() == 8 => unsafe { v128_load64_zero(chunk.as_ptr().cast()) },
        _ => u8x16_splat(0),
    }
}

/// The four little-endian i16 at `bytes[at..at + 8]`, sign-extended to i32 lanes, or zeros when
/// they are not all there.
#[inline(always)]
fn load_i16x4(bytes: &[u8], at: usize) -> v128 {
    match bytes.get(at..at.saturating_add(8)) {
        // SAFETY: `chunk` is an 8-byte subslice of `bytes` (checked by `get`), so the 8 bytes
        // read are in bounds; i32x4_load_extend_i16x4 has no alignment requirement.
        Some(chunk) if chunk.len() == 8 => unsafe {
            i32x4_load_extend_i16x4(chunk.as_ptr().cast())
        },
        _ => u8x16_splat(0),
    }
}

/// The four f32 of `words[at..at + 4]`, or zeros when they are not all there.
#[inline(always)]
pub(crate) fn load_f32x4(words: &[f32], at: usize) -> v128 {
    match words.get(at..at.saturating_add(4)) {
        // SAFETY: `chunk` is a 4-element (16-byte) subslice of `words` (checked by `get`), so
        // the 16 bytes read are in bounds; v128_load has no alignment requirement.
        Some(chunk) if chunk.len() == 4 => unsafe { v128_load(chunk.as_ptr().cast()) },
        _ => u32x4_splat(0),
    }
}

/// The four u32 of `words[at..at + 4]`, or zeros when they are not all there.
#[inline(always)]
fn load_u32x4(words: &[u32], at: usize) -> v128 {
    match words.get(at..at.saturating_add(4)) {
        // SAFETY: `chunk` is a 4-element (16-byte) subslice of `words` (checked by `get`), so
        // the 16 bytes read are in bounds; v128_load has no alignment requirement.
        Some(chunk) if chunk.len() == 4 => unsafe { v128_load(chunk.as_ptr().cast()) },
        _ => u32x4_splat(0),
    }
}

/// Stores four f32 lanes to `out[at..at + 4]`; does nothing when that is out of range.
#[inline(always)]
pub(crate) fn store(out: &mut [f32], at: usize, v: v128) {
    if let Some(chunk) = out.get_mut(at..at.saturating_add(4)) {
        if chunk.len() == 4 {
            // SAFETY: `chunk` is a 4-element (16-byte) subslice of `out` (checked by
            // `get_mut`), so the 16 bytes written are in bounds and exclusively ours;
            // v128_store has no alignment requirement.
            unsafe { v128_store(chunk.as_mut_ptr().cast(), v) }
        }
    }
}

/// Stores 16 f32 (four vectors) to `out[at..at + 16]`.
#[inline(always)]
pub(crate) fn store16(out: &mut [f32], at: usize, v: [v128; 4]) {
    for (k, v) in v.into_iter().enumerate() {
        store(out, at + 4 * k, v);
    }
}

/// 2^23: an f32 whose 23 mantissa bits hold any integer below 2^23 exactly.
pub(crate) const MAGIC: f32 = 8_388_608.0;

/// The 16 unsigned bytes of `u`, each plus `bias − 2^23`, as four vectors of f32 (lanes 0–3,
/// 4–7, 8–11, 12–15). Each byte is interleaved into the low byte of an f32 whose other bytes
/// make 2^23 (0x4B00_0000), which is 2^23 + byte exactly; subtracting `bias` is exact too.
/// Interleaves are one instruction each in V8, where the sign or zero extensions and int
/// conversions they replace take about 13 per 16 values.
#[inline(always)]
pub(crate) fn widen_biased(u: v128, bias: f32) -> [v128; 4] {
    let zero = u8x16_splat(0);
    let lo = u8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(u, zero);
    let hi = u8x16_shuffle::<8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31>(u, zero);
    let exponent = u16x8_splat(0x4B00);
    let bias = f32x4_splat(bias);
    [
        u16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(lo, exponent),
        u16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(lo, exponent),
        u16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(hi, exponent),
        u16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(hi, exponent),
    ]
    .map(|f| f32x4_sub(f, bias))
}

/// The 16 signed bytes of `v` as four vectors of f32 (lanes 0–3, 4–7, 8–11, 12–15): flipping
/// the top bit makes them unsigned `b + 128`, which the bias takes off again.
#[inline(always)]
fn i8x16_to_f32(v: v128) -> [v128; 4] {
    widen_biased(v128_xor(v, i8x16_splat(-128)), MAGIC + 128.0)
}

/// The 16 unsigned bytes of `v` as four vectors of f32.
#[inline(always)]
pub(crate) fn u8x16_to_f32(v: v128) -> [v128; 4] {
    widen_biased(v, MAGIC)
}

/// `q · d` for each vector, as the scalar `q as f32 * d`.
#[inline(always)]
fn mul4(q: [v128; 4], d: v128) -> [v128; 4] {
    q.map(|q| f32x4_mul(q, d))
}

/// `q · d + m` for each vector: a multiply, then an add (no fused multiply-add).
#[inline(always)]
pub(crate) fn mul_add4(q: [v128; 4], d: v128, m: v128) -> [v128; 4] {
    q.map(|q| f32x4_add(f32x4_mul(q, d), m))
}

/// `d · q − m` for each vector: a multiply, then a subtract.
#[inline(always)]
fn mul_sub4(d: v128, q: [v128; 4], m: v128) -> [v128; 4] {
    q.map(|q| f32x4_sub(f32x4_mul(d, q), m))
}

/// Four vectors of 16 bytes interleaved byte by byte: byte `i` of each, in order, for `i` in
/// 0..4, 4..8, 8..12, 12..16 (a 16×4 byte transpose; e.g. four byte planes back to f32s).
#[inline(always)]
pub(crate) fn interleave4(a0: v128, a1: v128, a2: v128, a3: v128) -> [v128; 4] {
    let p01_lo = i8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(a0, a1);
    let p01_hi =
        i8x16_shuffle::<8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31>(a0, a1);
    let p23_lo = i8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(a2, a3);
    let p23_hi =
        i8x16_shuffle::<8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31>(a2, a3);
    [
        i16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(p01_lo, p23_lo),
        i16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(p01_lo, p23_lo),
        i16x8_shuffle::<0, 8, 1, 9, 2, 10, 3, 11>(p01_hi, p23_hi),
        i16x8_shuffle::<4, 12, 5, 13, 6, 14, 7, 15>(p01_hi, p23_hi),
    ]
}

/// Low nibbles of the 16 bytes of `v`.
#[inline(always)]
pub(crate) fn low_nibbles(v: v128) -> v128 {
    v128_and(v, u8x16_splat(0x0F))
}

/// High nibbles of the 16 bytes of `v`, shifted down.
#[inline(always)]
pub(crate) fn high_nibbles(v: v128) -> v128 {
    bits_at(v, 4, 0x0F)
}

/// `(byte >> shift) & mask` for each byte of `v`, for `mask <= 0xFF >> shift`. Shifts 16-bit
/// lanes (x86 and ARM have no byte shifts, so engines emulate `u8x16_shr`, slowly when the
/// count is not a constant): bits moved in from the neighbouring byte are masked off.
#[inline(always)]
pub(crate) fn bits_at(v: v128, shift: u32, mask: u8) -> v128 {
    v128_and(u16x8_shr(v, shift), u8x16_splat(mask))
}

/// `s · q` for each vector (the scale first, as in the scalar kernels that write it so).
#[inline(always)]
fn mul4_dq(s: v128, q: [v128; 4]) -> [v128; 4] {
    q.map(|q| f32x4_mul(s, q))
}

/// 2^-14, the smallest normal f16.
const F16_MIN_NORMAL: f32 = 1.0 / 16_384.0;

/// Four f16s (sign-extended into i32 lanes) to f32 bits exactly as the scalar
/// `half::f16::to_f32`, with no f32 subnormal ever an operand or a result (those are slow on
/// some CPUs):
/// - `a`: the exponent and mantissa moved into f32 position and rebiased. Exact for normals;
///   a subnormal `m · 2^-24` comes out as `2^-15 + m · 2^-25` instead, and `2a − 2^-14` is
///   then its value (exact). For normals `2a − 2^-14 ≥ a`, for subnormals `≤ a`, so the smaller
///   of the two is right in every lane.
/// - infinities and NaNs (exponent 31) come out of `a` with exponent 143: adding 112 to it
///   makes 255 with the mantissa (payload) kept; NaNs then get the quiet bit set.
/// - the sign bit is copied over last.
#[inline(always)]
pub(super) fn f16x4_to_f32x4(h: v128) -> v128 {
    let shifted = i32x4_shl(h, 13);
    let em = v128_and(shifted, u32x4_splat(0x0FFF_E000));
    let a = i32x4_add(em, u32x4_splat(0x3800_0000));
    let twice_less = f32x4_sub(f32x4_add(a, a), f32x4_splat(F16_MIN_NORMAL));
    let finite = f32x4_pmin(a, twice_less);
    let inf_nan = f32x4_ge(a, f32x4_splat(65_536.0));
    let nan = f32x4_gt(a, f32x4_splat(65_536.0));
    let value = i32x4_add(finite, v128_and(inf_nan, u32x4_splat(0x3800_0000)));
    let value = v128_or(value, v128_and(nan, u32x4_splat(0x0040_0000)));
    v128_or(value, v128_and(h, u32x4_splat(0x8000_0000)))
}

/// The f16 at `bytes[at..at + 2]` as f32 in all four lanes (0 when out of range, which whole
/// blocks never are).
#[inline(always)]
fn f16_splat(bytes: &[u8], at: usize) -> v128 {
    let h = match bytes.get(at..at.saturating_add(2)) {
        Some(&[a, b]) => i16::from_le_bytes([a, b]),
        _ => 0,
    };
    f16x4_to_f32x4(i32x4_splat(i32::from(h)))
}

/// The f16 at `bytes[at..at + 2]` as f32 (0 when out of range, which whole blocks never are).
/// Converted in a vector: no branches on the value, unlike the scalar conversion.
#[inline(always)]
fn f16_at(bytes: &[u8], at: usize) -> f32 {
    f32x4_extract_lane::<0>(f16_splat(bytes, at))
}
