//! wasm simd128 form of MXFP4's index search (`fp4::fast_index`, four values per operation:
//! the same f32 comparisons, so the same indices). Tested through `fp4`'s tests under
//! scripts/test-wasm.sh.
#![cfg(all(target_arch = "wasm32", target_feature = "simd128"))]

use std::arch::wasm32::*;

/// `fast_index` of four values (i32 lanes).
#[inline(always)]
unsafe fn indices(x: v128, lv: &[v128; 8]) -> v128 {
    let a = f32x4_abs(x);
    let mut best = i32x4_splat(0);
    let mut best_err = a;
    for (k, &l) in lv.iter().enumerate().skip(1) {
        let err = f32x4_abs(f32x4_sub(l, a));
        let better = f32x4_lt(err, best_err);
        best_err = v128_bitselect(err, best_err, better);
        best = v128_bitselect(i32x4_splat(k as i32), best, better);
    }
    // +8 where x < 0 and the index is not 0.
    let neg = v128_andnot(
        f32x4_lt(x, f32x4_splat(0.0)),
        i32x4_eq(best, i32x4_splat(0)),
    );
    v128_or(best, v128_and(neg, i32x4_splat(8)))
}

/// `mid_index` of four values (i32 lanes): masks are −1 where |x| is above a midpoint.
#[inline(always)]
unsafe fn mid_indices(x: v128, mids: &[v128; 7]) -> v128 {
    let a = f32x4_abs(x);
    let mut k = i32x4_splat(0);
    for &m in mids {
        k = i32x4_sub(k, f32x4_gt(a, m));
    }
    let neg = v128_andnot(f32x4_lt(x, f32x4_splat(0.0)), i32x4_eq(k, i32x4_splat(0)));
    v128_or(k, v128_and(neg, i32x4_splat(8)))
}

/// The 16 packed bytes of a block: byte j holds value j's index and value 16 + j's above it.
/// `lv[k]` is level k of the non-negative half times the block's scale, `mids` the midpoints
/// between them, used when `use_mids` (`fp4::mids_apply`).
///
/// # Safety
/// Built only with simd128 enabled (no runtime check needed).
pub(super) unsafe fn pack(
    x: &[f32; 32],
    lv: &[f32; 8],
    mids: &[f32; 7],
    use_mids: bool,
    out: &mut [u8],
) {
    assert!(out.len() >= 16);
    let mut words = [i32x4_splat(0); 4];
    let load = |j: usize| v128_load(x.as_ptr().add(j).cast());
    if use_mids {
        let mids = mids.map(|m| f32x4_splat(m));
        for (j, w) in words.iter_mut().enumerate() {
            let lo = mid_indices(load(4 * j), &mids);
            let hi = mid_indices(load(16 + 4 * j), &mids);
            *w = v128_or(lo, i32x4_shl(hi, 4));
        }
    } else {
        let lv = lv.map(|l| f32x4_splat(l));
        for (j, w) in words.iter_mut().enumerate() {
            let lo = indices(load(4 * j), &lv);
            let hi = indices(load(16 + 4 * j), &lv);
            *w = v128_or(lo, i32x4_shl(hi, 4));
        }
    }
    let a = i16x8_narrow_i32x4(words[0], words[1]);
    let b = i16x8_narrow_i32x4(words[2], words[3]);
    v128_store(out.as_mut_ptr().cast(), u8x16_narrow_i16x8(a, b));
}
