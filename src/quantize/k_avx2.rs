//! AVX2 versions of the K-quant scale searches, written with intrinsics: one 8-wide vector
//! holds 8 sub-blocks (lanes), each lane doing exactly the f32 operations of ggml's scalar
//! search in the same order (compares and blends where the C code branches, no FMA). LLVM's
//! auto-vectoriser split the portable lane code into scalar pieces; this is what it should be.
//! Tested bit for bit against ggml's scalar algorithm in `k.rs`.
#![cfg(target_arch = "x86_64")]

use std::arch::x86_64::*;

/// ggml's `nearest_int` (the 1.5·2²³ trick, ties to even) and then a clamp to `lo..=hi`, as f32.
#[inline(always)]
unsafe fn quant(v: __m256, lo: __m256i, hi: __m256i) -> __m256 {
    let t = _mm256_castps_si256(_mm256_add_ps(v, _mm256_set1_ps(12_582_912.0)));
    let i = _mm256_sub_epi32(
        _mm256_and_si256(t, _mm256_set1_epi32(0x007f_ffff)),
        _mm256_set1_epi32(0x0040_0000),
    );
    _mm256_cvtepi32_ps(_mm256_min_epi32(_mm256_max_epi32(i, lo), hi))
}

/// The error of one difference: |d| (`MAD`) or d².
#[inline(always)]
unsafe fn err<const MAD: bool>(d: __m256) -> __m256 {
    if MAD {
        _mm256_andnot_ps(_mm256_set1_ps(-0.0), d)
    } else {
        _mm256_mul_ps(d, d)
    }
}

#[inline(always)]
unsafe fn ld<const L: usize>(row: &[f32; L], c: usize) -> __m256 {
    _mm256_loadu_ps(row.as_ptr().add(c))
}

/// `if m { b } else { a }` per lane.
#[inline(always)]
unsafe fn sel(a: __m256, b: __m256, m: __m256) -> __m256 {
    _mm256_blendv_ps(a, b, m)
}

/// ggml's `make_qkx2_quants` (no early exit: nstep ≥ 1) for `L` sub-blocks (a multiple of 8)
/// of `N` values, transposed (`xt[i][lane]`). `MAD` picks |diff| over diff² as the error.
/// Returns (scale, −min) per lane and the quants in `lt`.
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn qkx2<const L: usize, const N: usize, const MAD: bool>(
    xt: &[[f32; L]; N],
    wt: &[[f32; L]; N],
    (nmax, rmin, rdelta, nstep): (i32, f32, f32, i32),
    lt: &mut [[u8; L]; N],
) -> ([f32; L], [f32; L]) {
    debug_assert!(L % 8 == 0 && N > 0 && nstep >= 1);
    let mut scales = [0.0f32; L];
    let mut the_mins = [0.0f32; L];
    let zero = _mm256_setzero_ps();
    let sign = _mm256_set1_ps(-0.0);
    let (lo, hi) = (_mm256_setzero_si256(), _mm256_set1_epi32(nmax));
    let nmaxf = _mm256_set1_ps(nmax as f32);
    for c in (0..L).step_by(8) {
        let mut min = ld(&xt[0], c);
        let mut max = min;
        let mut sum_w = ld(&wt[0], c);
        let mut sum_x = _mm256_mul_ps(sum_w, min);
        for i in 1..N {
            let x = ld(&xt[i], c);
            let w = ld(&wt[i], c);
            min = _mm256_min_ps(x, min); // x < min ? x : min
            max = _mm256_max_ps(x, max); // x > max ? x : max
            sum_w = _mm256_add_ps(sum_w, w);
            sum_x = _mm256_add_ps(sum_x, _mm256_mul_ps(w, x));
        }
        // `if (min > 0) min = 0;` (a blend keeps −0.0 as C does).
        min = sel(min, zero, _mm256_cmp_ps::<_CMP_GT_OQ>(min, zero));
        let flat = _mm256_cmp_ps::<_CMP_EQ_OQ>(max, min);
        let flat_min = min;
        let mut iscale = _mm256_div_ps(nmaxf, _mm256_sub_ps(max, min));
        let mut scale = _mm256_div_ps(_mm256_set1_ps(1.0), iscale);
        let mut best_iscale = iscale;
        let mut best_qmin = min;
        let mut best_error = zero;
        for i in 0..N {
            let x = ld(&xt[i], c);
            let l = quant(_mm256_mul_ps(iscale, _mm256_sub_ps(x, min)), lo, hi);
            let diff = _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(scale, l), min), x);
            best_error = _mm256_add_ps(best_error, _mm256_mul_ps(ld(&wt[i], c), err::<MAD>(diff)));
        }
        let mut laux = [zero; N];
        for is in 0..=nstep {
            let num = rmin + rdelta * is as f32 + nmax as f32;
            iscale = _mm256_div_ps(_mm256_set1_ps(num), _mm256_sub_ps(max, min));
            let (mut sum_l, mut sum_l2, mut sum_xl) = (zero, zero, zero);
            for i in 0..N {
                let x = ld(&xt[i], c);
                let lf = quant(_mm256_mul_ps(iscale, _mm256_sub_ps(x, min)), lo, hi);
                laux[i] = lf;
                let wl = _mm256_mul_ps(ld(&wt[i], c), lf);
                sum_l = _mm256_add_ps(sum_l, wl);
                sum_l2 = _mm256_add_ps(sum_l2, _mm256_mul_ps(wl, lf));
                sum_xl = _mm256_add_ps(sum_xl, _mm256_mul_ps(wl, x));
            }
            let d = _mm256_sub_ps(_mm256_mul_ps(sum_w, sum_l2), _mm256_mul_ps(sum_l, sum_l));
            let positive = _mm256_cmp_ps::<_CMP_GT_OQ>(d, zero);
            let mut this_scale = _mm256_div_ps(
                _mm256_sub_ps(_mm256_mul_ps(sum_w, sum_xl), _mm256_mul_ps(sum_x, sum_l)),
                d,
            );
            let mut this_min = _mm256_div_ps(
                _mm256_sub_ps(_mm256_mul_ps(sum_l2, sum_x), _mm256_mul_ps(sum_l, sum_xl)),
                d,
            );
            let above = _mm256_cmp_ps::<_CMP_GT_OQ>(this_min, zero);
            this_min = sel(this_min, zero, above);
            this_scale = sel(this_scale, _mm256_div_ps(sum_xl, sum_l2), above);
            let mut cur_error = zero;
            for i in 0..N {
                let x = ld(&xt[i], c);
                let diff = _mm256_sub_ps(
                    _mm256_add_ps(_mm256_mul_ps(this_scale, laux[i]), this_min),
                    x,
                );
                cur_error =
                    _mm256_add_ps(cur_error, _mm256_mul_ps(ld(&wt[i], c), err::<MAD>(diff)));
            }
            let take = _mm256_and_ps(positive, _mm256_cmp_ps::<_CMP_LT_OQ>(cur_error, best_error));
            best_iscale = sel(best_iscale, iscale, take);
            best_qmin = sel(best_qmin, min, take);
            best_error = sel(best_error, cur_error, take);
            scale = sel(scale, this_scale, take);
            min = sel(min, this_min, take);
        }
        // The quants of the best step, recomputed from its (iscale, min); flat lanes are 0.
        let keep = _mm256_castps_si256(_mm256_xor_ps(
            flat,
            _mm256_castsi256_ps(_mm256_set1_epi32(-1)),
        ));
        for i in 0..N {
            let x = ld(&xt[i], c);
            let l = quant(
                _mm256_mul_ps(best_iscale, _mm256_sub_ps(x, best_qmin)),
                lo,
                hi,
            );
            let q = _mm256_and_si256(_mm256_cvtps_epi32(l), keep);
            let mut out = [0i32; 8];
            _mm256_storeu_si256(out.as_mut_ptr().cast(), q);
            for k in 0..8 {
                lt[i][c + k] = out[k] as u8;
            }
        }
        scale = sel(scale, zero, flat);
        let the_min = sel(
            _mm256_xor_ps(min, sign),
            _mm256_xor_ps(flat_min, sign),
            flat,
        );
        _mm256_storeu_ps(scales.as_mut_ptr().add(c), scale);
        _mm256_storeu_ps(the_mins.as_mut_ptr().add(c), the_min);
    }
    (scales, the_mins)
}

/// ggml's `make_qx_quants` with `rmse_type = 1` and no weights (weights x²), for `L` sub-blocks
/// (a multiple of 8) of `N` values, transposed. Quants (0..2·nmax) into `lt`, scales returned.
/// As in `qkx2`, the search keeps each lane's best inverse scale and recomputes its quants once.
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn qx<const L: usize, const N: usize>(
    xt: &[[f32; L]; N],
    nmax: i32,
    group_max_eps: f32,
    lt: &mut [[i8; L]; N],
) -> [f32; L] {
    debug_assert!(L % 8 == 0);
    let mut scales = [0.0f32; L];
    let zero = _mm256_setzero_ps();
    let (lo, hi) = (_mm256_set1_epi32(-nmax), _mm256_set1_epi32(nmax - 1));
    for c in (0..L).step_by(8) {
        let mut max = zero;
        let mut amax = zero;
        let mut w = [zero; N];
        let mut wv = [zero; N];
        for i in 0..N {
            let v = ld(&xt[i], c);
            let ax = _mm256_andnot_ps(_mm256_set1_ps(-0.0), v);
            let bigger = _mm256_cmp_ps::<_CMP_GT_OQ>(ax, amax);
            amax = sel(amax, ax, bigger);
            max = sel(max, v, bigger);
            w[i] = _mm256_mul_ps(v, v);
            wv[i] = _mm256_mul_ps(w[i], v);
        }
        // One step's sums: Σ (w·x)·l and Σ (w·l)·l with l = clamp(nearest_int(iscale·x)).
        let sums = |iscale: __m256| {
            let (mut sumlx, mut suml2) = (zero, zero);
            for i in 0..N {
                let l = quant(_mm256_mul_ps(iscale, ld(&xt[i], c)), lo, hi);
                sumlx = _mm256_add_ps(sumlx, _mm256_mul_ps(wv[i], l));
                suml2 = _mm256_add_ps(suml2, _mm256_mul_ps(_mm256_mul_ps(w[i], l), l));
            }
            (sumlx, suml2)
        };
        let iscale0 = _mm256_div_ps(_mm256_set1_ps(-(nmax as f32)), max);
        let (sumlx, suml2) = sums(iscale0);
        let nonzero = _mm256_cmp_ps::<_CMP_NEQ_UQ>(suml2, zero);
        let mut scale = _mm256_and_ps(_mm256_div_ps(sumlx, suml2), nonzero);
        let mut best = _mm256_mul_ps(scale, sumlx);
        let mut best_iscale = iscale0;
        for is in -9i32..=9 {
            if is == 0 {
                continue;
            }
            let num = -(nmax as f32 + 0.1f32 * is as f32);
            let iscale = _mm256_div_ps(_mm256_set1_ps(num), max);
            let (sumlx, suml2) = sums(iscale);
            let take = _mm256_and_ps(
                _mm256_cmp_ps::<_CMP_GT_OQ>(suml2, zero),
                _mm256_cmp_ps::<_CMP_GT_OQ>(
                    _mm256_mul_ps(sumlx, sumlx),
                    _mm256_mul_ps(best, suml2),
                ),
            );
            best_iscale = sel(best_iscale, iscale, take);
            scale = sel(scale, _mm256_div_ps(sumlx, suml2), take);
            best = sel(best, _mm256_mul_ps(scale, sumlx), take);
        }
        // ggml returns quants 0 and scale 0 for an all-zero group.
        let live = _mm256_cmp_ps::<_CMP_NLT_UQ>(amax, _mm256_set1_ps(group_max_eps));
        let keep = _mm256_castps_si256(live);
        for i in 0..N {
            let l = quant(_mm256_mul_ps(best_iscale, ld(&xt[i], c)), lo, hi);
            let q = _mm256_and_si256(
                _mm256_add_epi32(_mm256_cvtps_epi32(l), _mm256_set1_epi32(nmax)),
                keep,
            );
            let mut out = [0i32; 8];
            _mm256_storeu_si256(out.as_mut_ptr().cast(), q);
            for k in 0..8 {
                lt[i][c + k] = out[k] as i8;
            }
        }
        _mm256_storeu_ps(scales.as_mut_ptr().add(c), _mm256_and_ps(scale, live));
    }
    scales
}
