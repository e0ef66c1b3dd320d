//! AVX2 (+FMA, F16C) kernels, bit-exact with the scalar ones. Types without one here fall back
//! to the scalar kernel.
//!
//! Every kernel is a safe [`KernelFn`] wrapping a `#[target_feature]` function; the wrappers are
//! only handed out by [`kernel_for`], which `quant::Kernel` calls only after run-time detection.
//! Blocks are walked with `chunks_exact`, so every pointer offset below stays inside one block
//! of `type_size` bytes and one run of `block_size` outputs. Arithmetic keeps the scalar
//! kernels' operations, order and grouping (a separate multiply and add, never a fused one), so
//! results, NaN payloads included, are the same bits.

use core::arch::x86_64::*;

use super::KernelFn;
use crate::types::GgmlType;

mod float;
mod fp4;
mod grid;
mod iq4;
mod k;
mod legacy;
mod tq;

/// This ISA's own kernel for `ty`, if it has one.
pub(super) fn kernel_for(ty: GgmlType) -> Option<KernelFn> {
    Some(match ty {
        GgmlType::F16 => float::dequant_f16,
        GgmlType::BF16 => float::dequant_bf16,
        GgmlType::Q8_0 => legacy::dequant_q8_0,
        GgmlType::Q8_1 => legacy::dequant_q8_1,
        GgmlType::Q8_K => k::dequant_q8_k,
        GgmlType::Q4_0 => legacy::dequant_q4_0,
        GgmlType::Q4_1 => legacy::dequant_q4_1,
        GgmlType::Q5_0 => legacy::dequant_q5_0,
        GgmlType::Q5_1 => legacy::dequant_q5_1,
        GgmlType::Q1_0 => legacy::dequant_q1_0,
        GgmlType::Q2_0 => legacy::dequant_q2_0,
        GgmlType::Q2_K => k::dequant_q2_k,
        GgmlType::Q3_K => k::dequant_q3_k,
        GgmlType::Q4_K => k::dequant_q4_k,
        GgmlType::Q5_K => k::dequant_q5_k,
        GgmlType::Q6_K => k::dequant_q6_k,
        GgmlType::IQ4_NL => iq4::dequant_iq4_nl,
        GgmlType::IQ4_XS => iq4::dequant_iq4_xs,
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

/// Outputs from this many f32 on go out with non-temporal stores (when 16-byte aligned): they
/// cannot stay in cache anyway, and streaming them skips the read-for-ownership.
const STREAM_MIN: usize = 4 << 20;

/// True when `out` is large and aligned enough for non-temporal stores.
#[inline(always)]
fn streaming(out: &[f32]) -> bool {
    out.len() >= STREAM_MIN && out.as_ptr() as usize % 16 == 0
}

/// How a kernel stores its outputs: the const parameter `ST` of every kernel, chosen per call
/// by `safe_kernel`.
///
/// `WHOLE`: one 32-byte store per 8 values, for outputs that start 32-byte aligned (then no
/// store straddles a cache line).
const WHOLE: u8 = 0;
/// `HALVES`: two 16-byte stores per 8 values, for outputs that do not start 32-byte aligned
/// (e.g. 16 bytes into a page, as big allocations are): there, every other 32-byte store
/// straddles two cache lines, which slows writing a buffer beyond L2.
const HALVES: u8 = 1;
/// `STREAM`: two 16-byte non-temporal stores per 8 values, for `streaming` outputs.
const STREAM: u8 = 2;

/// Defines the safe kernel `$name` calling the `#[target_feature]` function `$inner`, with
/// non-temporal stores for large outputs and 16-byte stores for outputs not 32-byte aligned.
macro_rules! safe_kernel {
    ($name:ident => $inner:ident) => {
        pub(super) fn $name(blocks: &[u8], out: &mut [f32]) {
            // SAFETY: only reachable through avx2::kernel_for, which quant::Kernel calls only
            // after is_x86_feature_detected! found avx2, fma and f16c
            unsafe {
                if super::streaming(out) {
                    $inner::<{ super::STREAM }>(blocks, out);
                    core::arch::x86_64::_mm_sfence();
                } else if out.as_ptr() as usize % 32 == 0 {
                    $inner::<{ super::WHOLE }>(blocks, out);
                } else {
                    $inner::<{ super::HALVES }>(blocks, out);
                }
            }
        }
    };
}
pub(super) use safe_kernel;

/// Reads a little-endian u16 at byte `at` of a block.
#[inline(always)]
fn le_u16(block: &[u8], at: usize) -> u16 {
    match (block.get(at), block.get(at + 1)) {
        (Some(&lo), Some(&hi)) => u16::from_le_bytes([lo, hi]),
        _ => 0,
    }
}

/// IEEE half to f32 with F16C, the same bits as the scalar `f16_to_f32`.
///
/// In `asm!`: from intrinsics, LLVM loads the half with `vpinsrw` into whatever vector register
/// is free (only lane 0 is used), and when that register holds the previous block's last
/// result, every block waits for the one before (a false dependency).
/// `vmovd` writes the whole register.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn f16_to_f32(bits: u16) -> f32 {
    let x: __m128;
    // SAFETY: register-only instructions (no memory, no stack, no flags).
    core::arch::asm!(
        "vmovd {x}, {bits:e}",
        "vcvtph2ps {x}, {x}",
        bits = in(reg) u32::from(bits),
        x = out(xmm_reg) x,
        options(pure, nomem, nostack, preserves_flags),
    );
    _mm_cvtss_f32(x)
}

/// The f16 at byte `at` of a block, as f32 in every lane.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn f16_splat(block: &[u8], at: usize) -> __m256 {
    _mm256_set1_ps(f16_to_f32(le_u16(block, at)))
}

/// The low 8 lanes of `v`, as signed bytes, converted to f32 (exactly).
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn i8x8_ps(v: __m128i) -> __m256 {
    _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(v))
}

/// 16 signed bytes as two vectors of 8 f32.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn i8x16_ps(v: __m128i) -> [__m256; 2] {
    [i8x8_ps(v), i8x8_ps(_mm_unpackhi_epi64(v, v))]
}

/// 32 signed bytes as four vectors of 8 f32.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn i8x32_ps(v: __m256i) -> [__m256; 4] {
    let [a, b] = i8x16_ps(_mm256_castsi256_si128(v));
    let [c, d] = i8x16_ps(_mm256_extracti128_si256::<1>(v));
    [a, b, c, d]
}

/// Loads 16 bytes from byte `at` of `block`.
///
/// # Safety
/// `at + 16 <= block.len()`, which every caller gets from its fixed block layout.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn load16(block: &[u8], at: usize) -> __m128i {
    debug_assert!(at + 16 <= block.len());
    // SAFETY: the caller guarantees bytes at..at+16 lie inside `block`; loadu needs no alignment.
    _mm_loadu_si128(block.as_ptr().add(at).cast())
}

/// Loads 8 bytes from byte `at` of `block` into the low half.
///
/// # Safety
/// `at + 8 <= block.len()`.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn load8(block: &[u8], at: usize) -> __m128i {
    debug_assert!(at + 8 <= block.len());
    // SAFETY: the caller guarantees bytes at..at+8 lie inside `block`; no alignment needed.
    _mm_loadl_epi64(block.as_ptr().add(at).cast())
}

/// Loads 32 bytes from byte `at` of `block`.
///
/// # Safety
/// `at + 32 <= block.len()`.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn load32(block: &[u8], at: usize) -> __m256i {
    debug_assert!(at + 32 <= block.len());
    // SAFETY: the caller guarantees bytes at..at+32 lie inside `block`; no alignment needed.
    _mm256_loadu_si256(block.as_ptr().add(at).cast())
}

/// Stores 8 f32 at `y[at..at + 8]` the `ST` way ([`WHOLE`], [`HALVES`] or [`STREAM`]).
///
/// # Safety
/// `at + 8 <= y.len()`; with `STREAM`, `y[at]` is 16-byte aligned (true for every multiple of 8
/// of `at` when `streaming(out)` held for the `out` that `y` starts a multiple of 8 into).
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn store<const ST: u8>(y: &mut [f32], at: usize, v: __m256) {
    debug_assert!(at + 8 <= y.len());
    // SAFETY: the caller guarantees y[at..at+8] exists; storeu needs no alignment.
    let p = y.as_mut_ptr().add(at);
    match ST {
        STREAM => {
            debug_assert!(p as usize % 16 == 0);
            // SAFETY: p is 16-byte aligned (caller) and y[at..at + 8] is the 32 bytes at p.
            stream(p, v);
        }
        // SAFETY: y[at..at + 8] is the 32 bytes at p (caller).
        HALVES => store_halves(p, v),
        _ => _mm256_storeu_ps(p, v),
    }
}

/// The 8 f32 of `v` at `p` as two 16-byte stores. In `asm!`, as LLVM would merge two
/// `_mm_storeu_ps` of the halves of one vector back into a single 32-byte store.
///
/// # Safety
/// `p` is valid for writing 32 bytes (no alignment needed).
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn store_halves(p: *mut f32, v: __m256) {
    // SAFETY: the caller guarantees p..p + 32 bytes is writable; the instructions touch
    // nothing else (no stack, no flags).
    core::arch::asm!(
        "vmovups xmmword ptr [{p}], {v:x}",
        "vextractf128 xmmword ptr [{p} + 16], {v:y}, 1",
        p = in(reg) p,
        v = in(ymm_reg) v,
        options(nostack, preserves_flags),
    );
}

/// Non-temporal stores of the 8 f32 of `v` at `p` (two 16-byte halves), VEX-encoded and in one
/// `asm!` so both use the one address register. (`_mm_stream_ps` is a legacy-SSE `movntps`;
/// between 256-bit AVX instructions that costs an SSE/AVX transition or a false dependency on
/// the upper halves, per store.)
///
/// # Safety
/// `p` is 16-byte aligned and valid for writing 32 bytes.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn stream(p: *mut f32, v: __m256) {
    // SAFETY: the caller guarantees p is aligned and writable for 32 bytes; the instructions
    // touch nothing else (no stack, no flags; `high` is a scratch register).
    core::arch::asm!(
        "vmovntps xmmword ptr [{p}], {v:x}",
        "vextractf128 {high}, {v:y}, 1",
        "vmovntps xmmword ptr [{p} + 16], {high}",
        p = in(reg) p,
        v = in(ymm_reg) v,
        high = out(xmm_reg) _,
        options(nostack, preserves_flags),
    );
}

/// Stores `vs` (8 f32 each) one after another from `y[at]`.
///
/// # Safety
/// `at + 8 * vs.len() <= y.len()`, and `store`'s alignment rule for `ST`.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn store_all<const ST: u8>(y: &mut [f32], at: usize, vs: &[__m256]) {
    for (i, &v) in vs.iter().enumerate() {
        // SAFETY: at + 8 * i + 8 <= at + 8 * vs.len() <= y.len(), by the caller's guarantee.
        store::<ST>(y, at + 8 * i, v);
    }
}

/// Low and high nibbles of 16 bytes, each as 16 bytes 0..16.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn nibbles16(q: __m128i) -> (__m128i, __m128i) {
    let m = _mm_set1_epi8(0x0F);
    (
        _mm_and_si128(q, m),
        _mm_and_si128(_mm_srli_epi16::<4>(q), m),
    )
}

/// `bits` (one per byte lane, LSB first: bit j for lane j) as 0xFF/0x00 bytes.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn bits_to_bytes(bits: u32) -> __m256i {
    let v = _mm256_set1_epi32(bits as i32);
    let shuffle = _mm256_setr_epi8(
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3,
        3, 3,
    );
    let mask = _mm256_set1_epi64x(0x8040_2010_0804_0201_u64 as i64);
    let picked = _mm256_and_si256(_mm256_shuffle_epi8(v, shuffle), mask);
    _mm256_cmpeq_epi8(picked, mask)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quant::scalar;

    /// Whether this CPU runs the AVX2 kernels (the tests below check nothing without it).
    fn cpu_has_avx2() -> bool {
        is_x86_feature_detected!("avx2")
            && is_x86_feature_detected!("fma")
            && is_x86_feature_detected!("f16c")
    }

    /// `len` bytes from a xorshift generator.
    fn random_bytes(seed: &mut u64, len: usize) -> Vec<u8> {
        (0..len)
            .map(|_| {
                *seed ^= *seed << 13;
                *seed ^= *seed >> 7;
                *seed ^= *seed << 17;
                (*seed >> 24) as u8
            })
            .collect()
    }

    /// Where both the scale and the min are NaN (with different payloads and signs), the one
    /// that survives `d·q + m` / `d1·q − m1` must be the scalar kernel's.
    #[test]
    fn two_nan_operands_keep_the_scalar_payload() {
        let cases: [(GgmlType, usize, usize); 5] = [
            (GgmlType::Q4_1, 0, 2),
            (GgmlType::Q5_1, 0, 2),
            (GgmlType::Q2_K, 80, 82),
            (GgmlType::Q4_K, 0, 2),
            (GgmlType::Q5_K, 0, 2),
        ];
        if !cpu_has_avx2() {
            return;
        }
        for (ty, d_at, m_at) in cases {
            let size = ty.type_size() as usize;
            let n = 3 * ty.block_size() as usize;
            let mut blocks: Vec<u8> = (0..3 * size).map(|i| (i * 37 + 11) as u8).collect();
            for (k, block) in blocks.chunks_exact_mut(size).enumerate() {
                block[d_at..d_at + 2].copy_from_slice(&[0x12 + k as u8, 0x7E]);
                block[m_at..m_at + 2].copy_from_slice(&[0x34, 0xFD - k as u8]);
            }
            let mut want = vec![0f32; n];
            let mut got = vec![0f32; n];
            scalar::kernel_for(ty)(&blocks, &mut want);
            kernel_for(ty).expect("an avx2 kernel")(&blocks, &mut got);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want), "{ty}");
        }
    }

    /// Outputs starting 32-byte aligned (32-byte stores), 16 bytes past that and 4 bytes past
    /// it (16-byte stores) give the same bits.
    #[test]
    fn every_store_mode_equals_scalar() {
        if !cpu_has_avx2() {
            return;
        }
        let mut seed = 0x0F1E_2D3C_4B5A_6978u64;
        for ty in GgmlType::ALL {
            let Some(kernel) = kernel_for(ty) else {
                continue;
            };
            let bs = ty.block_size() as usize;
            let n = 4 * bs.max(8);
            let blocks = random_bytes(&mut seed, n / bs * ty.type_size() as usize);
            let mut want = vec![0f32; n];
            scalar::kernel_for(ty)(&blocks, &mut want);
            let mut storage = vec![0f32; n + 16];
            let aligned = storage.as_ptr().align_offset(32);
            for (skip, mode) in [(0, "32-byte"), (4, "16-byte"), (1, "4-byte")] {
                let got = &mut storage[aligned + skip..aligned + skip + n];
                got.fill(0.0);
                kernel(&blocks, got);
                let same = got
                    .iter()
                    .zip(&want)
                    .all(|(g, w)| g.to_bits() == w.to_bits());
                assert!(same, "{ty}: output {mode} aligned differs from scalar");
            }
        }
    }

    /// Outputs large enough for non-temporal stores give the same bits.
    #[test]
    fn streaming_stores_equal_scalar() {
        if !cpu_has_avx2() {
            return;
        }
        let mut seed = 0x1234_5678_9ABC_DEF1u64;
        for ty in GgmlType::ALL {
            let Some(kernel) = kernel_for(ty) else {
                continue;
            };
            let bs = ty.block_size() as usize;
            let n = STREAM_MIN.div_ceil(bs) * bs;
            let blocks = random_bytes(&mut seed, n / bs * ty.type_size() as usize);
            let mut want = vec![0f32; n];
            scalar::kernel_for(ty)(&blocks, &mut want);
            let mut storage = vec![0f32; n + 4];
            let skip = storage.as_ptr().align_offset(16);
            let got = &mut storage[skip..skip + n];
            assert!(streaming(got));
            kernel(&blocks, got);
            let same = got
                .iter()
                .zip(&want)
                .all(|(g, w)| g.to_bits() == w.to_bits());
            assert!(same, "{ty}: streamed output differs from scalar");
        }
    }
}
