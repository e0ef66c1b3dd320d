//! Quantizers: f32 rows → ggml blocks, bit-exact to what ggml's `ggml_quantize_chunk` writes
//! without an importance matrix (fixtures/make_quantize.py is the oracle).
//!
//! For most types that is ggml's `quantize_row_*_ref`; for IQ4_NL and IQ4_XS it is the scale
//! search `quantize_iq4_nl` / `quantize_iq4_xs` run (ntry = 7), not their `_ref` variant.
//! Arithmetic is f32 in ggml's operation order, with no fused multiply-add (ggml-base is built
//! without `-march`, so its compiler cannot contract), and C's float→integer conversions are
//! reproduced as x86-64 executes them (see [`c_trunc_i32`]).
//!
//! Every block is independent of the others (no state crosses a block), so a row and a chunk of
//! rows quantize the same way: `quantize_row` takes any whole number of blocks.
//!
//! One deliberate difference: ggml stores an f16 block scale that overflows as infinity (which
//! its own validator then rejects); we return [`ErrorKind::ScaleOverflow`] instead. Inputs
//! that are not finite are refused too (ggml's result for them is unspecified).

use crate::error::{Error, ErrorKind};
use crate::types::GgmlType;

mod error;
mod float;
mod fp4;
mod fp4_simd128;
mod iq4;
mod iq4_ref;
mod iq4_simd128;
mod iq4_table;
mod k;
mod k_avx2;
mod k_round_trip;
mod k_simd128;
mod legacy;
mod legacy_simd128;
mod round_trip;
mod tq;
mod tq_simd128;

pub use error::{
    block_mismatch, block_mismatch_message, QuantErrorMeter, QuantErrorReport, QuantErrorSet,
};
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub use error::{tensor_quant_error, Outcome, TensorQuantError};

// The 32-value block quants: simd128 where built with it (the scalar code does not vectorise
// well on wasm), else the portable code (which LLVM vectorises for x86-64 and aarch64).
pub use float::{f32_to_bf16, f32_to_f16};
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
use legacy as legacy_fast;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
use legacy_simd128 as legacy_fast;

/// The types [`quantize_row`] writes, in ggml id order.
pub const SUPPORTED: [GgmlType; 17] = [
    GgmlType::F16,
    GgmlType::Q4_0,
    GgmlType::Q4_1,
    GgmlType::Q5_0,
    GgmlType::Q5_1,
    GgmlType::Q8_0,
    GgmlType::Q2_K,
    GgmlType::Q3_K,
    GgmlType::Q4_K,
    GgmlType::Q5_K,
    GgmlType::Q6_K,
    GgmlType::IQ4_NL,
    GgmlType::IQ4_XS,
    GgmlType::BF16,
    GgmlType::TQ1_0,
    GgmlType::TQ2_0,
    GgmlType::MXFP4,
];

/// True when [`quantize_row`] can write `ty` (F32 too: a copy).
pub fn is_supported(ty: GgmlType) -> bool {
    ty == GgmlType::F32 || SUPPORTED.contains(&ty)
}

/// llama.cpp's `general.file_type` (LLAMA_FTYPE_MOSTLY_*) for a file of `ty` tensors, as
/// `llama-quantize --pure` writes it; the K types take their `_S` variant, MXFP4 `MXFP4_MOE`.
pub fn llama_file_type(ty: GgmlType) -> Option<u32> {
    Some(match ty {
        GgmlType::F32 => 0,
        GgmlType::F16 => 1,
        GgmlType::Q4_0 => 2,
        GgmlType::Q4_1 => 3,
        GgmlType::Q8_0 => 7,
        GgmlType::Q5_0 => 8,
        GgmlType::Q5_1 => 9,
        GgmlType::Q2_K => 10,
        GgmlType::Q3_K => 11,
        GgmlType::Q4_K => 14,
        GgmlType::Q5_K => 16,
        GgmlType::Q6_K => 18,
        GgmlType::IQ4_NL => 25,
        GgmlType::IQ4_XS => 30,
        GgmlType::BF16 => 32,
        GgmlType::TQ1_0 => 36,
        GgmlType::TQ2_0 => 37,
        GgmlType::MXFP4 => 38,
        _ => return None,
    })
}

/// The type llama.cpp's `llama_model_quantize` writes, even with `pure = true`, for a tensor of
/// rows of `row_len` values when `ty` was asked for (its `tensor_type_fallback`): `ty` when the
/// rows are whole blocks of it; otherwise Q2_K, Q3_K, TQ1_0 and TQ2_0 become Q4_0, Q4_K Q5_0,
/// Q5_K Q5_1, Q6_K Q8_0, IQ4_XS IQ4_NL, and F16 when even that type's block does not fit (a
/// 32-value type asked for goes to F16 directly). F32, F16 and BF16 always fit.
pub fn llama_fallback(ty: GgmlType, row_len: u64) -> GgmlType {
    let fits = |t: GgmlType| row_len % u64::from(t.block_size()) == 0;
    if fits(ty) {
        return ty;
    }
    let fallback = match ty {
        GgmlType::Q2_K | GgmlType::Q3_K | GgmlType::TQ1_0 | GgmlType::TQ2_0 => GgmlType::Q4_0,
        GgmlType::Q4_K => GgmlType::Q5_0,
        GgmlType::Q5_K => GgmlType::Q5_1,
        GgmlType::Q6_K => GgmlType::Q8_0,
        GgmlType::IQ4_XS => GgmlType::IQ4_NL,
        other => other,
    };
    if fits(fallback) {
        fallback
    } else {
        GgmlType::F16
    }
}

/// Whether llama.cpp's `llama_model_quantize` would quantize a tensor of this name and number of
/// dims (its `tensor_allows_quantization`, the architecture-independent rules): 2-D or more,
/// named `*weight`, and not a norm, MoE router, position/token-type embedding, conv or
/// RWKV time-mix tensor and the like, which it keeps as they are.
pub fn llama_quantizes(name: &str, n_dims: usize) -> bool {
    const KEPT: [&str; 35] = [
        "_norm.weight",
        "ffn_gate_inp.weight",
        "ffn_gate_tid2eid.weight",
        "altup",
        "laurel",
        "per_layer_model_proj",
        "ssm_conv1d",
        "shortconv.conv.weight",
        "indexer.k_proj.weight",
        "indexer.q_proj.weight",
        "time_mix_first.weight",
        "time_mix_w0.weight",
        "time_mix_w1.weight",
        "time_mix_w2.weight",
        "time_mix_v0.weight",
        "time_mix_v1.weight",
        "time_mix_v2.weight",
        "time_mix_a0.weight",
        "time_mix_a1.weight",
        "time_mix_a2.weight",
        "time_mix_g1.weight",
        "time_mix_g2.weight",
        "time_mix_decay_w1.weight",
        "time_mix_decay_w2.weight",
        "time_mix_lerp_fused.weight",
        "attn_rel_b.weight",
        ".position_embd",
        ".rel_pos",
        ".patch_embd",
        ".patch_merger",
        "a.rvq.codebook",
        "sam.pos_embd",
        "sam.neck.",
        "sam.net_",
        "mm.a.code_embd",
    ];
    n_dims >= 2
        && name.ends_with("weight")
        && name != "position_embd.weight"
        && name != "token_types.weight"
        && !KEPT.iter().any(|k| name.contains(k))
}

fn unsupported(ty: GgmlType) -> Error {
    Error::new(ErrorKind::CannotQuantize { ty })
}

fn row_length(ty: GgmlType, len: usize, block: usize) -> Error {
    Error::new(ErrorKind::QuantizeRowLength { ty, len, block })
}

fn not_finite(ty: GgmlType, index: usize, value: f32) -> Error {
    Error::new(ErrorKind::NotFinite {
        ty,
        index,
        value_bits: value.to_bits(),
    })
}

fn scale_overflow(ty: GgmlType, block: usize, scale: f32) -> Error {
    Error::new(ErrorKind::ScaleOverflow {
        ty,
        block,
        scale_bits: scale.to_bits(),
    })
}

/// `err` of values quantized from `offset` values in: its value or block index counted from
/// `offset` values earlier (for a part of a row set quantized apart).
pub fn shifted(err: Error, offset: usize) -> Error {
    match err.kind {
        ErrorKind::NotFinite {
            ty,
            index,
            value_bits,
        } => Error::new(ErrorKind::NotFinite {
            ty,
            index: index + offset,
            value_bits,
        }),
        ErrorKind::ScaleOverflow {
            ty,
            block,
            scale_bits,
        } => Error::new(ErrorKind::ScaleOverflow {
            ty,
            block: block + offset / (ty.block_size().max(1) as usize),
            scale_bits,
        }),
        _ => err,
    }
}

/// A block's f16 field overflowed: the f32 value that did.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Overflow(pub(crate) f32);

/// A block quantizer: `B` bytes from `N` values.
type BlockFn<const N: usize, const B: usize> = fn(&[f32; N], &mut [u8; B]) -> Result<(), Overflow>;

/// Bytes `src.len()` values of `ty` take, or the reason they cannot.
pub fn quantized_size(ty: GgmlType, len: usize) -> crate::Result<usize> {
    if !is_supported(ty) {
        return Err(unsupported(ty));
    }
    let block = usize::try_from(ty.block_size()).unwrap_or(usize::MAX);
    let size = usize::try_from(ty.type_size()).unwrap_or(usize::MAX);
    if block == 0 || len % block != 0 {
        return Err(row_length(ty, len, block));
    }
    (len / block)
        .checked_mul(size)
        .ok_or(row_length(ty, len, block))
}

/// Quantizes `src` (a whole number of `ty` blocks: one row, or several rows back to back) into
/// `dst`, which must hold exactly the quantized bytes. Bit-exact to `ggml_quantize_chunk` with
/// no importance matrix, except that overflowing scales and non-finite values are errors.
pub fn quantize_row(ty: GgmlType, src: &[f32], dst: &mut [u8]) -> crate::Result<()> {
    quantize_checked(ty, src, dst, true)
}

/// [`quantize_row`] for plain values (`round_trip::is_plain`: finite, below 65504), which none
/// of its refusals of values (non-finite, beyond `MAX_ABS`) can apply to: they are not scanned for.
pub(crate) fn quantize_row_plain(ty: GgmlType, src: &[f32], dst: &mut [u8]) -> crate::Result<()> {
    debug_assert!(round_trip::is_plain(src));
    quantize_checked(ty, src, dst, false)
}

/// [`quantize_row`], scanning the values for what it refuses only when `check`.
fn quantize_checked(ty: GgmlType, src: &[f32], dst: &mut [u8], check: bool) -> crate::Result<()> {
    let expected = quantized_size(ty, src.len())?;
    if dst.len() != expected {
        return Err(Error::new(ErrorKind::QuantizeDestinationSize {
            ty,
            expected,
            actual: dst.len(),
        }));
    }
    match ty {
        GgmlType::F32 => {
            for (out, v) in dst.chunks_exact_mut(4).zip(src) {
                out.copy_from_slice(&v.to_le_bytes());
            }
            Ok(())
        }
        // Element conversions: no block scale, and ggml converts NaN and infinity too.
        GgmlType::F16 => {
            for (out, v) in dst.chunks_exact_mut(2).zip(src) {
                out.copy_from_slice(&f32_to_f16(*v).to_le_bytes());
            }
            Ok(())
        }
        GgmlType::BF16 => {
            for (out, v) in dst.chunks_exact_mut(2).zip(src) {
                out.copy_from_slice(&f32_to_bf16(*v).to_le_bytes());
            }
            Ok(())
        }
        _ => {
            if let Some(index) = check.then(|| first_not_finite(src)).flatten() {
                return Err(not_finite(ty, index, src[index]));
            }
            match ty {
                GgmlType::Q4_0 => blocks(ty, src, dst, check, legacy_fast::q4_0),
                GgmlType::Q4_1 => blocks(ty, src, dst, check, legacy_fast::q4_1),
                GgmlType::Q5_0 => blocks(ty, src, dst, check, legacy_fast::q5_0),
                GgmlType::Q5_1 => blocks(ty, src, dst, check, legacy_fast::q5_1),
                GgmlType::Q8_0 => blocks(ty, src, dst, check, legacy_fast::q8_0),
                GgmlType::Q2_K => blocks(ty, src, dst, check, k::q2_k),
                GgmlType::Q3_K => blocks(ty, src, dst, check, k::q3_k),
                GgmlType::Q4_K => k_pairs(ty, src, dst, check, k::q4_k_fits2, k::q4_k_finish),
                GgmlType::Q5_K => k_pairs(ty, src, dst, check, k::q5_k_fits2, k::q5_k_finish),
                GgmlType::Q6_K => blocks(ty, src, dst, check, k::q6_k),
                GgmlType::IQ4_NL => {
                    if check {
                        check_magnitudes::<32>(ty, src)?;
                    }
                    iq4::iq4_nl_row(src, dst)
                        .map_err(|(block, Overflow(scale))| scale_overflow(ty, block, scale))
                }
                GgmlType::IQ4_XS => blocks(ty, src, dst, check, iq4::iq4_xs),
                GgmlType::TQ1_0 => blocks(ty, src, dst, check, tq::tq1_0),
                GgmlType::TQ2_0 => blocks(ty, src, dst, check, tq::tq2_0),
                GgmlType::MXFP4 => blocks(ty, src, dst, check, fp4::mxfp4),
                _ => Err(unsupported(ty)),
            }
        }
    }
}

/// IQ4_NL into `nl` and IQ4_XS into `xs` from the same `src`: each result (and its bytes) is
/// what [`quantize_row`] gives for that type, but the per-block scale search the two share runs
/// once per 256 values (see `iq4::iq4_nl_xs`). A type that fails stops there; the other goes on.
pub(crate) fn quantize_iq4_pair(
    src: &[f32],
    nl: &mut [u8],
    xs: &mut [u8],
    plain: bool,
) -> [crate::Result<()>; 2] {
    let fits = quantized_size(GgmlType::IQ4_NL, src.len()) == Ok(nl.len())
        && quantized_size(GgmlType::IQ4_XS, src.len()) == Ok(xs.len());
    // Refusals (sizes, non-finite, huge values) as each type alone words them; plain values
    // (`quantize_row_plain`) have none.
    debug_assert!(!plain || round_trip::is_plain(src));
    if !fits || (!plain && (first_not_finite(src).is_some() || abs_max(src) > MAX_ABS)) {
        return [
            quantize_row(GgmlType::IQ4_NL, src, nl),
            quantize_row(GgmlType::IQ4_XS, src, xs),
        ];
    }
    let (mut r_nl, mut r_xs) = (Ok(()), Ok(()));
    let blocks = src
        .chunks_exact(256)
        .zip(nl.chunks_exact_mut(144).zip(xs.chunks_exact_mut(136)));
    for (k, (x, (bn, bx))) in blocks.enumerate() {
        let (Ok(x), Ok(bn), Ok(bx)) = (
            <&[f32; 256]>::try_from(x),
            <&mut [u8; 144]>::try_from(bn),
            <&mut [u8; 136]>::try_from(bx),
        ) else {
            continue;
        };
        let (a, b) = iq4::iq4_nl_xs(x, r_nl.is_ok().then_some(bn), r_xs.is_ok().then_some(bx));
        if let (Ok(()), Err((block, Overflow(scale)))) = (&r_nl, a) {
            let ty = GgmlType::IQ4_NL;
            r_nl = Err(scale_overflow(ty, 8 * k + block, scale));
        }
        if let (Ok(()), Err(Overflow(scale))) = (&r_xs, b) {
            let ty = GgmlType::IQ4_XS;
            r_xs = Err(scale_overflow(ty, k, scale));
        }
        if r_nl.is_err() && r_xs.is_err() {
            break;
        }
    }
    [r_nl, r_xs]
}

/// Beyond this magnitude ggml's searches square values into infinity (and no f16-scaled type
/// can represent them anyway: the largest is about 65504·127·63), so such blocks are refused as
/// overflowing rather than quantized to garbage. MXFP4's E8M0 scale spans all of f32.
const MAX_ABS: f32 = 1.0e18;

/// Refuses a block of `N` values holding a magnitude beyond [`MAX_ABS`] (see there).
fn check_magnitudes<const N: usize>(ty: GgmlType, src: &[f32]) -> crate::Result<()> {
    for (block, values) in src.chunks_exact(N).enumerate() {
        let amax = abs_max(values);
        if amax > MAX_ABS {
            return Err(scale_overflow(ty, block, amax));
        }
    }
    Ok(())
}

/// Refuses one block holding a magnitude beyond [`MAX_ABS`] (unless MXFP4), when `check`.
#[inline(always)]
fn check_block(ty: GgmlType, block: usize, values: &[f32], check: bool) -> crate::Result<()> {
    if !check {
        return Ok(());
    }
    let amax = abs_max(values);
    if amax > MAX_ABS && ty != GgmlType::MXFP4 {
        return Err(scale_overflow(ty, block, amax));
    }
    Ok(())
}

type FitsPair = fn(&[f32; 256], &[f32; 256]) -> [k::Fits; 2];
type FinishFn<const B: usize> = fn(&[f32; 256], k::Fits, &mut [u8; B]) -> Result<(), Overflow>;

/// [`blocks`] for Q4_K/Q5_K: the sub-block searches of two blocks run together (they are
/// independent), then each block is finished in order, so errors name the same block as
/// [`blocks`] would.
fn k_pairs<const B: usize>(
    ty: GgmlType,
    src: &[f32],
    dst: &mut [u8],
    check: bool,
    fits2: FitsPair,
    finish: FinishFn<B>,
) -> crate::Result<()> {
    let overflow = |block| move |Overflow(scale)| scale_overflow(ty, block, scale);
    let mut pairs = src.chunks(512).zip(dst.chunks_mut(2 * B)).enumerate();
    for (pair, (values, bytes)) in &mut pairs {
        let (va, vb) = values.split_at(256.min(values.len()));
        let (ba, bb) = bytes.split_at_mut(B.min(bytes.len()));
        // Always Ok for whole blocks: the caller checked the lengths.
        let (Ok(va), Ok(ba)) = (<&[f32; 256]>::try_from(va), <&mut [u8; B]>::try_from(ba)) else {
            continue;
        };
        check_block(ty, 2 * pair, va, check)?;
        match (<&[f32; 256]>::try_from(vb), <&mut [u8; B]>::try_from(bb)) {
            (Ok(vb), Ok(bb)) => {
                let [fa, fb] = fits2(va, vb);
                finish(va, fa, ba).map_err(overflow(2 * pair))?;
                check_block(ty, 2 * pair + 1, vb, check)?;
                finish(vb, fb, bb).map_err(overflow(2 * pair + 1))?;
            }
            _ => {
                let [fa, _] = fits2(va, va);
                finish(va, fa, ba).map_err(overflow(2 * pair))?;
            }
        }
    }
    Ok(())
}

/// Runs a block quantizer over every block; the lengths were checked by the caller.
fn blocks<const N: usize, const B: usize>(
    ty: GgmlType,
    src: &[f32],
    dst: &mut [u8],
    check: bool,
    quantize: BlockFn<N, B>,
) -> crate::Result<()> {
    for (block, (values, bytes)) in src.chunks_exact(N).zip(dst.chunks_exact_mut(B)).enumerate() {
        // Always Ok: chunks_exact yields exactly N values and B bytes.
        if let (Ok(values), Ok(bytes)) = (
            <&[f32; N]>::try_from(values),
            <&mut [u8; B]>::try_from(bytes),
        ) {
            check_block(ty, block, values, check)?;
            quantize(values, bytes).map_err(|Overflow(scale)| scale_overflow(ty, block, scale))?;
        }
    }
    Ok(())
}

/// The largest magnitude in NaN-free `x` (the same value as folding with `f32::max`; max is
/// exact, so eight running maxima give it too, and vectorise).
#[inline]
pub(crate) fn abs_max(x: &[f32]) -> f32 {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        abs_max_simd128(x)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        abs_max_portable(x)
    }
}

#[inline]
#[cfg_attr(
    all(target_arch = "wasm32", target_feature = "simd128"),
    allow(dead_code)
)]
fn abs_max_portable(x: &[f32]) -> f32 {
    let mut m = [0.0f32; 8];
    let mut chunks = x.chunks_exact(8);
    for c in &mut chunks {
        for k in 0..8 {
            let a = c[k].abs();
            m[k] = if a > m[k] { a } else { m[k] };
        }
    }
    // Selects, not `f32::max`: on wasm that is a call to libm's fmaxf (wasm's own max differs
    // on NaN), which cost more than the whole scan.
    let bigger = |a: f32, v: f32| if v > a { v } else { a };
    let tail = chunks
        .remainder()
        .iter()
        .fold(0.0f32, |a, v| bigger(a, v.abs()));
    m.iter().fold(tail, |a, &v| bigger(a, v))
}

/// [`abs_max_portable`] in simd128: LLVM builds that one from scalar loads and lane inserts on
/// wasm, which cost more than the block quantizers themselves. `pmax(m, a)` is `m < a ? a : m`,
/// the same select (a NaN `a` keeps `m` in both).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline]
fn abs_max_simd128(x: &[f32]) -> f32 {
    use std::arch::wasm32::*;
    let mut m = [f32x4_splat(0.0); 2];
    let mut chunks = x.chunks_exact(8);
    for c in &mut chunks {
        for (k, m) in m.iter_mut().enumerate() {
            // SAFETY: `c` holds 8 floats; v128_load has no alignment requirement.
            let v = unsafe { v128_load(c.as_ptr().add(4 * k).cast()) };
            *m = f32x4_pmax(*m, f32x4_abs(v));
        }
    }
    let v = f32x4_pmax(m[0], m[1]);
    let v = f32x4_pmax(v, i32x4_shuffle::<2, 3, 0, 1>(v, v));
    let v = f32x4_pmax(v, i32x4_shuffle::<1, 0, 3, 2>(v, v));
    let bigger = |a: f32, v: f32| if v > a { v } else { a };
    chunks
        .remainder()
        .iter()
        .fold(f32x4_extract_lane::<0>(v), |a, v| bigger(a, v.abs()))
}

/// The index of the first NaN or infinity, scanning 64 values at a time without branches.
fn first_not_finite(src: &[f32]) -> Option<usize> {
    let bad = |v: &f32| v.to_bits() & 0x7f80_0000 == 0x7f80_0000;
    for (n, chunk) in src.chunks(64).enumerate() {
        if chunk.iter().fold(false, |acc, v| acc | bad(v)) {
            return chunk.iter().position(bad).map(|i| 64 * n + i);
        }
    }
    None
}

/// ggml's `nearest_int`: round to nearest (ties to even) by adding 1.5·2²³ and reading the low
/// mantissa bits. Out of its ±2²² range it returns what the bits say, as ggml does (no assert in
/// release builds), so garbage in gives ggml's garbage out.
#[inline(always)]
pub(crate) fn nearest_int(v: f32) -> i32 {
    let bits = (v + 12_582_912.0f32).to_bits();
    (bits & 0x007f_ffff) as i32 - 0x0040_0000
}

/// C's float→int conversion as x86-64 runs it (`cvttss2si`): truncation toward zero, and
/// i32::MIN for NaN or anything out of range. Narrower C targets (`(int8_t)f`, `(uint8_t)f`)
/// keep the low byte of that, so callers cast with `as i8` / `as u8` (wrapping).
#[inline(always)]
pub(crate) fn c_trunc_i32(v: f32) -> i32 {
    #[cfg(target_arch = "x86_64")]
    {
        // The instruction itself (SSE, always present on x86-64): no range checks.
        #[allow(unused_unsafe)]
        // SAFETY: SSE is part of the x86-64 baseline; the intrinsics only touch registers.
        unsafe {
            use core::arch::x86_64::{_mm_cvttss_si32, _mm_set_ss};
            _mm_cvttss_si32(_mm_set_ss(v))
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        if !(-2_147_483_648.0..2_147_483_648.0).contains(&v) {
            i32::MIN
        } else {
            v as i32
        }
    }
}

/// `c_trunc_i32(roundf(v))`: round half away from zero, then C's conversion, without a call
/// to `roundf` (x86-64's baseline has no rounding instruction). Exact: `v − trunc(v)` is
/// representable, and values of 2²³ or more are already integers.
#[inline(always)]
pub(crate) fn c_round_i32(v: f32) -> i32 {
    let i = c_trunc_i32(v);
    if i == i32::MIN {
        // NaN, out of range, or exactly −2³¹ (whose rounding is itself).
        return i32::MIN;
    }
    let frac = v - i as f32;
    i + i32::from(frac >= 0.5) - i32::from(frac <= -0.5)
}

/// glibc's `lroundf` on x86-64, truncated to C's int as ggml assigns it: half away from zero;
/// NaN and out-of-range give `LONG_MIN`, whose low 32 bits are 0.
#[inline(always)]
pub(crate) fn c_lroundf_int(v: f32) -> i32 {
    if !(-2_147_483_648.0..2_147_483_648.0).contains(&v) {
        // Beyond i32 but within i64, the low 32 bits of the rounded value; beyond i64 (and
        // NaN) LONG_MIN's low bits, 0. Never reached by ggml's ternary types (|x·id| ≤ 1).
        return c_lroundf(v) as i32;
    }
    c_round_i32(v)
}

/// glibc's `lroundf` on x86-64: half away from zero; NaN and out-of-range give `LONG_MIN`.
#[inline(always)]
pub(crate) fn c_lroundf(v: f32) -> i64 {
    if !(-9.223_372e18..9.223_372e18).contains(&v) {
        i64::MIN
    } else {
        v.round() as i64
    }
}

/// Whether the lane searches run their AVX2 build (the process's one switch; the bytes are the
/// same either way, which the oracle test checks under both).
#[cfg(target_arch = "x86_64")]
pub(crate) fn use_avx2() -> bool {
    crate::quant::avx2_chosen()
}

/// An f16 block field, refusing a finite value that would become infinity.
#[inline(always)]
pub(crate) fn f16_field(v: f32) -> Result<[u8; 2], Overflow> {
    let h = f32_to_f16(v);
    if h & 0x7fff == 0x7c00 && v.is_finite() {
        return Err(Overflow(v));
    }
    Ok(h.to_le_bytes())
}

/// The f16 field of `v` read back, or None where [`f16_field`] overflows: below 65504 by
/// float arithmetic (`float::f16_round`, the same value), else through the field's bits.
#[inline(always)]
pub(crate) fn f16_round_trip(v: f32) -> Option<f32> {
    if v.abs() < 65504.0 {
        return Some(float::f16_round(v));
    }
    f16_field(v).ok().map(f16_value)
}

/// An f16 block field read back as ggml does (`GGML_FP16_TO_FP32(y->d)`).
#[inline(always)]
pub(crate) fn f16_value(bytes: [u8; 2]) -> f32 {
    crate::quant::scalar::f16_to_f32(u16::from_le_bytes(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_int_rounds_half_to_even() {
        assert_eq!(nearest_int(0.5), 0);
        assert_eq!(nearest_int(1.5), 2);
        assert_eq!(nearest_int(-2.5), -2);
        assert_eq!(nearest_int(-2.6), -3);
    }

    #[test]
    fn c_conversions_match_x86() {
        assert_eq!(c_trunc_i32(f32::INFINITY) as i8, 0);
        assert_eq!(c_trunc_i32(f32::NAN), i32::MIN);
        assert_eq!(c_trunc_i32(-1.9), -1);
        assert_eq!(c_lroundf(2.5), 3);
        assert_eq!(c_lroundf(-2.5), -3);
        assert_eq!(c_lroundf(f32::INFINITY), i64::MIN);
        assert_eq!(c_trunc_i32(3.0e9), i32::MIN);
        assert_eq!(c_trunc_i32(-2.9), -2);
    }

    #[test]
    fn fast_rounding_equals_roundf() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let check = |v: f32| {
            assert_eq!(c_round_i32(v), c_trunc_i32(v.round()), "{v:e}");
            assert_eq!(c_lroundf_int(v), c_lroundf(v) as i32, "{v:e}");
        };
        for v in [
            0.5,
            -0.5,
            1.5,
            2.5,
            -2.5,
            0.49999997,
            -0.49999997,
            8388607.5,
            2147483520.0,
        ] {
            check(v);
        }
        check(f32::NAN);
        check(f32::INFINITY);
        check(-2_147_483_648.0);
        for _ in 0..1_000_000 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            check(f32::from_bits((state >> 32) as u32));
        }
    }

    #[test]
    fn lengths_are_checked() {
        let mut dst = [0u8; 18];
        assert!(matches!(
            quantize_row(GgmlType::Q4_0, &[0.0; 31], &mut dst),
            Err(Error {
                kind: ErrorKind::QuantizeRowLength { .. },
                ..
            })
        ));
        assert!(matches!(
            quantize_row(GgmlType::Q4_0, &[0.0; 64], &mut dst),
            Err(Error {
                kind: ErrorKind::QuantizeDestinationSize { .. },
                ..
            })
        ));
        assert!(matches!(
            quantize_row(GgmlType::IQ2_XXS, &[0.0; 256], &mut dst),
            Err(Error {
                kind: ErrorKind::CannotQuantize { .. },
                ..
            })
        ));
    }

    /// Any bits, any length: an answer or an error, never a panic.
    #[test]
    fn arbitrary_input_never_panics() {
        let mut state = 0xdead_beef_cafe_f00du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..40 {
            let len = [0usize, 1, 31, 32, 33, 64, 255, 256, 512][round % 9];
            let src: Vec<f32> = (0..len)
                .map(|_| {
                    let r = next();
                    match r % 4 {
                        0 => f32::from_bits(r as u32),
                        1 => f32::from_bits((r >> 32) as u32 & 0x807f_ffff), // subnormal
                        2 => ((r >> 40) as f32 - 8.0e6) * 1.0e-3,
                        _ => 0.0,
                    }
                })
                .collect();
            for ty in crate::types::GgmlType::ALL {
                let size = quantized_size(ty, src.len()).unwrap_or(0);
                for dst_len in [size, size + 1] {
                    let mut dst = vec![0u8; dst_len];
                    let _ = quantize_row(ty, &src, &mut dst);
                }
                // Finite values below the overflow limits always quantize.
                let tame: Vec<f32> = src
                    .iter()
                    .map(|v| {
                        if v.is_finite() && v.abs() < 1.0e3 {
                            *v
                        } else {
                            0.5
                        }
                    })
                    .collect();
                if is_supported(ty) && size > 0 {
                    let mut dst = vec![0u8; size];
                    assert_eq!(quantize_row(ty, &tame, &mut dst), Ok(()), "{ty}");
                }
            }
        }
    }

    #[test]
    fn overflowing_scale_is_an_error() {
        let mut src = [0.0f32; 32];
        src[3] = 1.0e9;
        let mut dst = [0u8; 34];
        assert!(matches!(
            quantize_row(GgmlType::Q8_0, &src, &mut dst),
            Err(Error {
                kind: ErrorKind::ScaleOverflow { block: 0, .. },
                ..
            })
        ));
        src[3] = f32::NAN;
        assert!(matches!(
            quantize_row(GgmlType::Q8_0, &src, &mut dst),
            Err(Error {
                kind: ErrorKind::NotFinite { index: 3, .. },
                ..
            })
        ));
    }

    /// Q4_K/Q5_K search two blocks at once: any block count gives each block's own bytes, and
    /// an error names the same block as quantizing block by block.
    #[test]
    fn paired_k_blocks_equal_single_blocks() {
        let src: Vec<f32> = (0..3 * 256)
            .map(|i| ((i * 7919 % 1000) as f32 - 500.0) * 1.0e-3 * (1 + i / 256) as f32)
            .collect();
        for ty in [GgmlType::Q4_K, GgmlType::Q5_K] {
            let bs = quantized_size(ty, 256).unwrap();
            let mut all = vec![0u8; 3 * bs];
            quantize_row(ty, &src, &mut all).unwrap();
            for b in 0..3 {
                let mut one = vec![0u8; bs];
                quantize_row(ty, &src[256 * b..256 * (b + 1)], &mut one).unwrap();
                assert_eq!(one, all[bs * b..bs * (b + 1)], "{ty:?} block {b}");
            }
            let mut bad = src.clone();
            bad[256 + 5] = 1.0e20; // block 1, the second of the first pair
            assert!(matches!(
                quantize_row(ty, &bad, &mut all),
                Err(Error {
                    kind: ErrorKind::ScaleOverflow { block: 1, .. },
                    ..
                })
            ));
            bad[5] = 1.0e20; // now block 0 fails first
            assert!(matches!(
                quantize_row(ty, &bad, &mut all),
                Err(Error {
                    kind: ErrorKind::ScaleOverflow { block: 0, .. },
                    ..
                })
            ));
        }
    }

    #[test]
    fn llama_fallback_follows_llama_cpps_table() {
        use GgmlType::*;
        // Rows that fit keep the type asked for.
        assert_eq!(llama_fallback(Q4_K, 1536), Q4_K);
        assert_eq!(llama_fallback(Q4_0, 384), Q4_0);
        assert_eq!(llama_fallback(F16, 7), F16);
        // Rows of 384: the 256-value types fall back to 32-value ones.
        for (ty, to) in [
            (Q2_K, Q4_0),
            (Q3_K, Q4_0),
            (TQ1_0, Q4_0),
            (TQ2_0, Q4_0),
            (Q4_K, Q5_0),
            (Q5_K, Q5_1),
            (Q6_K, Q8_0),
            (IQ4_XS, IQ4_NL),
        ] {
            assert_eq!(llama_fallback(ty, 384), to, "{ty}");
            // Not even 32 fits: F16, for 256- and 32-value types alike.
            assert_eq!(llama_fallback(ty, 48), F16, "{ty}");
            assert_eq!(llama_fallback(to, 48), F16, "{to}");
        }
        assert_eq!(llama_fallback(MXFP4, 48), F16);
    }

    #[test]
    fn llama_keeps_bert_position_and_sam_tensors() {
        assert!(llama_quantizes("token_embd.weight", 2));
        assert!(!llama_quantizes("position_embd.weight", 2));
        assert!(!llama_quantizes("token_types.weight", 2));
        assert!(!llama_quantizes("v.sam.pos_embd.weight", 2));
        assert!(!llama_quantizes("v.sam.neck.0.weight", 2));
        assert!(!llama_quantizes("v.sam.net_2.weight", 2));
        assert!(!llama_quantizes("mm.a.code_embd.weight", 2));
    }
}
