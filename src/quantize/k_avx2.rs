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

/// [`quant`] for |v| < 2²² (so v + 1.5·2²³ is an exact integer in [2²³, 2²⁴)): the clamp done
/// on that sum in f32, and the offset taken back off, exactly — two operations fewer.
#[inline(always)]
unsafe fn quant_small(v: __m256, hi: __m256) -> __m256 {
    let magic = _mm256_set1_ps(12_582_912.0);
    let t = _mm256_add_ps(v, magic);
    let t = _mm256_min_ps(_mm256_max_ps(t, magic), _mm256_add_ps(hi, magic));
    _mm256_sub_ps(t, magic)
}

/// One step's sums of `make_qkx2_quants` (Σ w·l, Σ (w·l)·l, Σ (w·l)·x, in `sums`) with the quants
/// l into `laux`; `SMALL` when every iscale·(x − min) is within ±2²¹.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn step_sums<const L: usize, const N: usize, const V: usize, const SMALL: bool>(
    xt: &[[f32; L]; N],
    wt: &[[f32; L]; N],
    iscale: &[__m256; V],
    min: &[__m256; V],
    nmaxf: __m256,
    laux: &mut [[__m256; V]; N],
    sums: &mut [[__m256; V]; 3],
) {
    let (lo, hi) = (_mm256_setzero_si256(), _mm256_cvtps_epi32(nmaxf));
    let [sum_l, sum_l2, sum_xl] = sums;
    for i in 0..N {
        for v in 0..V {
            let x = ld(&xt[i], 8 * v);
            let y = _mm256_mul_ps(iscale[v], _mm256_sub_ps(x, min[v]));
            let lf = if SMALL {
                quant_small(y, nmaxf)
            } else {
                quant(y, lo, hi)
            };
            laux[i][v] = lf;
            let wl = _mm256_mul_ps(ld(&wt[i], 8 * v), lf);
            sum_l[v] = _mm256_add_ps(sum_l[v], wl);
            sum_l2[v] = _mm256_add_ps(sum_l2[v], _mm256_mul_ps(wl, lf));
            sum_xl[v] = _mm256_add_ps(sum_xl[v], _mm256_mul_ps(wl, x));
        }
    }
}

/// ggml's `make_qkx2_quants` (no early exit: nstep ≥ 1) for `L = 8·V` sub-blocks of `N`
/// values, transposed (`xt[i][lane]`). `MAD` picks |diff| over diff² as the error. The `V`
/// vectors are independent and stepped together, so their sequential sums overlap in the
/// pipeline (one vector alone is bound by the add latency). Returns (scale, −min) per lane
/// and the quants in `lt`.
///
/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn qkx2<const L: usize, const N: usize, const V: usize, const MAD: bool>(
    xt: &[[f32; L]; N],
    wt: &[[f32; L]; N],
    (nmax, rmin, rdelta, nstep): (i32, f32, f32, i32),
    lt: &mut [[u8; L]; N],
) -> ([f32; L], [f32; L]) {
    assert!(L == 8 * V && N > 0 && nstep >= 1);
    let zero = _mm256_setzero_ps();
    let sign = _mm256_set1_ps(-0.0);
    let (lo, hi) = (_mm256_setzero_si256(), _mm256_set1_epi32(nmax));
    let nmaxf = _mm256_set1_ps(nmax as f32);
    let mut min = [zero; V];
    let mut max = [zero; V];
    let mut sum_w = [zero; V];
    let mut sum_x = [zero; V];
    for v in 0..V {
        min[v] = ld(&xt[0], 8 * v);
        max[v] = min[v];
        sum_w[v] = ld(&wt[0], 8 * v);
        sum_x[v] = _mm256_mul_ps(sum_w[v], min[v]);
    }
    for i in 1..N {
        for v in 0..V {
            let x = ld(&xt[i], 8 * v);
            let w = ld(&wt[i], 8 * v);
            min[v] = _mm256_min_ps(x, min[v]); // x < min ? x : min
            max[v] = _mm256_max_ps(x, max[v]); // x > max ? x : max
            sum_w[v] = _mm256_add_ps(sum_w[v], w);
            sum_x[v] = _mm256_add_ps(sum_x[v], _mm256_mul_ps(w, x));
        }
    }
    let xmin = min;
    let limit = _mm256_set1_ps(2_097_152.0); // 2²¹
    let mut flat = [zero; V];
    let mut iscale = [zero; V];
    let mut scale = [zero; V];
    for v in 0..V {
        // `if (min > 0) min = 0;` (a blend keeps −0.0 as C does).
        min[v] = sel(min[v], zero, _mm256_cmp_ps::<_CMP_GT_OQ>(min[v], zero));
        flat[v] = _mm256_cmp_ps::<_CMP_EQ_OQ>(max[v], min[v]);
        iscale[v] = _mm256_div_ps(nmaxf, _mm256_sub_ps(max[v], min[v]));
        scale[v] = _mm256_div_ps(_mm256_set1_ps(1.0), iscale[v]);
    }
    let flat_min = min;
    let mut best_iscale = iscale;
    let mut best_qmin = min;
    let mut best_error = [zero; V];
    for i in 0..N {
        for v in 0..V {
            let x = ld(&xt[i], 8 * v);
            let l = quant(_mm256_mul_ps(iscale[v], _mm256_sub_ps(x, min[v])), lo, hi);
            let diff = _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(scale[v], l), min[v]), x);
            let e = _mm256_mul_ps(ld(&wt[i], 8 * v), err::<MAD>(diff));
            best_error[v] = _mm256_add_ps(best_error[v], e);
        }
    }
    let mut laux = [[zero; V]; N];
    for is in 0..=nstep {
        let num = _mm256_set1_ps(rmin + rdelta * is as f32 + nmax as f32);
        let mut sums = [[zero; V]; 3];
        for v in 0..V {
            iscale[v] = _mm256_div_ps(num, _mm256_sub_ps(max[v], min[v]));
        }
        // Every iscale·(x − min) of the step lies between the two bounds (rounding is
        // monotonic); when all are well inside ±2²², nearest_int-and-clamp equals the cheaper
        // float form (see `quant_small`).
        let mut small = -1i32;
        for v in 0..V {
            let a = _mm256_mul_ps(iscale[v], _mm256_sub_ps(xmin[v], min[v]));
            let b = _mm256_mul_ps(iscale[v], _mm256_sub_ps(max[v], min[v]));
            let m = _mm256_max_ps(_mm256_andnot_ps(sign, a), _mm256_andnot_ps(sign, b));
            small &= _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LT_OQ>(m, limit));
        }
        if small == 0xff {
            step_sums::<L, N, V, true>(xt, wt, &iscale, &min, nmaxf, &mut laux, &mut sums);
        } else {
            step_sums::<L, N, V, false>(xt, wt, &iscale, &min, nmaxf, &mut laux, &mut sums);
        }
        let [sum_l, sum_l2, sum_xl] = sums;
        let mut positive = [zero; V];
        let mut this_scale = [zero; V];
        let mut this_min = [zero; V];
        for v in 0..V {
            let (sw, sl, sl2, sxl) = (sum_w[v], sum_l[v], sum_l2[v], sum_xl[v]);
            let d = _mm256_sub_ps(_mm256_mul_ps(sw, sl2), _mm256_mul_ps(sl, sl));
            positive[v] = _mm256_cmp_ps::<_CMP_GT_OQ>(d, zero);
            let ts = _mm256_div_ps(
                _mm256_sub_ps(_mm256_mul_ps(sw, sxl), _mm256_mul_ps(sum_x[v], sl)),
                d,
            );
            let tm = _mm256_div_ps(
                _mm256_sub_ps(_mm256_mul_ps(sl2, sum_x[v]), _mm256_mul_ps(sl, sxl)),
                d,
            );
            let above = _mm256_cmp_ps::<_CMP_GT_OQ>(tm, zero);
            this_min[v] = sel(tm, zero, above);
            this_scale[v] = sel(ts, _mm256_div_ps(sxl, sl2), above);
        }
        let mut cur_error = [zero; V];
        for i in 0..N {
            for v in 0..V {
                let x = ld(&xt[i], 8 * v);
                let fit = _mm256_add_ps(_mm256_mul_ps(this_scale[v], laux[i][v]), this_min[v]);
                let e = _mm256_mul_ps(ld(&wt[i], 8 * v), err::<MAD>(_mm256_sub_ps(fit, x)));
                cur_error[v] = _mm256_add_ps(cur_error[v], e);
            }
        }
        for v in 0..V {
            let better = _mm256_cmp_ps::<_CMP_LT_OQ>(cur_error[v], best_error[v]);
            let take = _mm256_and_ps(positive[v], better);
            best_iscale[v] = sel(best_iscale[v], iscale[v], take);
            best_qmin[v] = sel(best_qmin[v], min[v], take);
            best_error[v] = sel(best_error[v], cur_error[v], take);
            scale[v] = sel(scale[v], this_scale[v], take);
            min[v] = sel(min[v], this_min[v], take);
        }
    }
    // The quants of the best step, recomputed from its (iscale, min); flat lanes are 0.
    let mut scales = [0.0f32; L];
    let mut the_mins = [0.0f32; L];
    for v in 0..V {
        let c = 8 * v;
        let keep = _mm256_castps_si256(_mm256_xor_ps(
            flat[v],
            _mm256_castsi256_ps(_mm256_set1_epi32(-1)),
        ));
        for i in 0..N {
            let x = ld(&xt[i], c);
            let l = quant(
                _mm256_mul_ps(best_iscale[v], _mm256_sub_ps(x, best_qmin[v])),
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
        let s = sel(scale[v], zero, flat[v]);
        let m = sel(
            _mm256_xor_ps(min[v], sign),
            _mm256_xor_ps(flat_min[v], sign),
            flat[v],
        );
        _mm256_storeu_ps(scales.as_mut_ptr().add(c), s);
        _mm256_storeu_ps(the_mins.as_mut_ptr().add(c), m);
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
        // When every |iscale·x| (at most |iscale·max|: rounding is monotonic) is well inside
        // ±2²², the clamp is done on x + 1.5·2²³ in f32 as in `quant_small` (same integers).
        let magic = _mm256_set1_ps(12_582_912.0);
        let (flo, fhi) = (
            _mm256_add_ps(magic, _mm256_set1_ps(-(nmax as f32))),
            _mm256_add_ps(magic, _mm256_set1_ps((nmax - 1) as f32)),
        );
        let sums = |iscale: __m256| {
            let bound = _mm256_andnot_ps(_mm256_set1_ps(-0.0), _mm256_mul_ps(iscale, max));
            let small = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LT_OQ>(
                bound,
                _mm256_set1_ps(2_097_152.0),
            )) == 0xff;
            let (mut sumlx, mut suml2) = (zero, zero);
            macro_rules! step {
                ($l:expr) => {
                    for i in 0..N {
                        let y = _mm256_mul_ps(iscale, ld(&xt[i], c));
                        let l = $l(y);
                        sumlx = _mm256_add_ps(sumlx, _mm256_mul_ps(wv[i], l));
                        suml2 = _mm256_add_ps(suml2, _mm256_mul_ps(_mm256_mul_ps(w[i], l), l));
                    }
                };
            }
            if small {
                // min/max with the sum second: ordered, no NaN here (the bound is finite).
                step!(|y| _mm256_sub_ps(
                    _mm256_min_ps(fhi, _mm256_max_ps(flo, _mm256_add_ps(y, magic))),
                    magic
                ));
            } else {
                step!(|y| quant(y, lo, hi));
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
