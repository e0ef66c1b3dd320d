//! wasm simd128 forms of TQ1_0 and TQ2_0 (`tq.rs`): four values per operation, the same
//! integers. A trit is `lroundf(x·id) + 1`; with a finite `id = 1/amax` every |x·id| is at most
//! `fl(amax·fl(1/amax)) ≤ 1 + 2⁻²³ < 1.5`, where lroundf is −1 below −0.5, 1 from 0.5, else 0:
//! two comparisons. Blocks whose `id` is infinite (amax below 2⁻¹²⁸) take the scalar code.
//! Tested against it in `tq.rs` under scripts/test-wasm.sh.
#![cfg(all(target_arch = "wasm32", target_feature = "simd128"))]

use std::arch::wasm32::*;

/// Trits (0..=2, i32 lanes) of `x[at..at + 4]`.
#[inline(always)]
unsafe fn trits(x: &[f32; 256], at: usize, id: v128) -> v128 {
    let y = f32x4_mul(v128_load(x.as_ptr().add(at).cast()), id);
    // Masks are −1 where true: 1 − (y ≥ 0.5) + (y ≤ −0.5).
    let up = f32x4_ge(y, f32x4_splat(0.5));
    let down = f32x4_le(y, f32x4_splat(-0.5));
    i32x4_add(i32x4_sub(i32x4_splat(1), up), down)
}

/// `⌈q·256/243⌉` of base-3 numbers q ≤ 242: the quotient is an integer only for q = 0, else
/// at least 1/243 from one, far more than f32's rounding of it, so ceil of the f32 quotient.
#[inline(always)]
unsafe fn to_fraction(q: v128) -> v128 {
    let f = f32x4_div(f32x4_convert_i32x4(i32x4_shl(q, 8)), f32x4_splat(243.0));
    i32x4_trunc_sat_f32x4(f32x4_ceil(f))
}

/// Stores four i32 lanes holding 0..=255 as four bytes.
#[inline(always)]
unsafe fn store4(out: &mut [u8], at: usize, q: v128) {
    assert!(at + 4 <= out.len());
    let h = i16x8_narrow_i32x4(q, q);
    v128_store32_lane::<0>(u8x16_narrow_i16x8(h, h), out.as_mut_ptr().add(at).cast());
}

/// The 52 trit bytes of a TQ1_0 block (before its f16 scale), `id` = 1/amax finite.
///
/// # Safety
/// Built only with simd128 enabled (no runtime check needed).
pub(super) unsafe fn tq1_0(x: &[f32; 256], id: f32, y: &mut [u8]) {
    let id = f32x4_splat(id);
    let three = i32x4_splat(3);
    // Five trits, the first most significant: bytes m of x[base + m + stride·n].
    let pack5 = |base: usize, stride: usize, m: usize| {
        let mut q = trits(x, base + m, id);
        for n in 1..5 {
            q = i32x4_add(i32x4_mul(q, three), trits(x, base + m + stride * n, id));
        }
        to_fraction(q)
    };
    for m in (0..32).step_by(4) {
        store4(y, m, pack5(0, 32, m));
    }
    for m in (0..16).step_by(4) {
        store4(y, 32 + m, pack5(160, 16, m));
    }
    // qh: four trits each of x[240 + j + 4m], then ×3.
    let mut q = trits(x, 240, id);
    for m in 1..4 {
        q = i32x4_add(i32x4_mul(q, three), trits(x, 240 + 4 * m, id));
    }
    store4(y, 48, to_fraction(i32x4_mul(q, three)));
}

/// The 64 trit bytes of a TQ2_0 block (before its f16 scale), `id` = 1/amax finite.
///
/// # Safety
/// Built only with simd128 enabled (no runtime check needed).
pub(super) unsafe fn tq2_0(x: &[f32; 256], id: f32, y: &mut [u8]) {
    let id = f32x4_splat(id);
    for j in [0, 32] {
        for m in (0..32).step_by(4) {
            let mut q = i32x4_splat(0);
            for n in 0..4 {
                let t = trits(x, 4 * j + m + 32 * n, id);
                q = v128_or(q, i32x4_shl(t, 2 * n as u32));
            }
            store4(y, j + m, q);
        }
    }
}
