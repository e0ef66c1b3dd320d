//! The K-quants (256-value super-blocks): Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, as ggml's
//! `quantize_row_*_ref` (the path `ggml_quantize_chunk` takes without an importance matrix).
//! Layouts are those of `quant::scalar::k`.
#![allow(clippy::needless_range_loop)] // index arithmetic kept as in ggml, for review against it

use super::{f16_field, f16_value, nearest_int, Overflow};

const QK_K: usize = 256;

/// ggml's GROUP_MAX_EPS: a group whose largest magnitude is below it is all zeros.
pub(super) const GROUP_MAX_EPS: f32 = 1e-15;

/// ggml's `make_qx_quants` as written (the reference the lane version is tested against), with `rmse_type = 1` and no weights (Q6_K): signed quants in
/// 0..2·nmax, weights x², the scale searched over 18 nudged inverse scales.
#[cfg(test)]
fn make_qx_quants(x: &[f32], nmax: i32, l_out: &mut [i8]) -> f32 {
    let mut max = 0.0f32;
    let mut amax = 0.0f32;
    for &v in x {
        let ax = v.abs();
        if ax > amax {
            amax = ax;
            max = v;
        }
    }
    if amax < GROUP_MAX_EPS {
        l_out.iter_mut().for_each(|l| *l = 0);
        return 0.0;
    }
    let clamp = |l: i32| l.min(nmax - 1).max(-nmax);
    let mut iscale = -(nmax as f32) / max;
    let mut sumlx = 0.0f32;
    let mut suml2 = 0.0f32;
    for (&v, out) in x.iter().zip(l_out.iter_mut()) {
        let l = clamp(nearest_int(iscale * v));
        *out = (l + nmax) as i8;
        let w = v * v;
        sumlx += w * v * l as f32;
        suml2 += w * l as f32 * l as f32;
    }
    let mut scale = if suml2 != 0.0 { sumlx / suml2 } else { 0.0 };
    let mut best = scale * sumlx;
    for is in -9i32..=9 {
        if is == 0 {
            continue;
        }
        iscale = -(nmax as f32 + 0.1f32 * is as f32) / max;
        sumlx = 0.0;
        suml2 = 0.0;
        for &v in x {
            let l = clamp(nearest_int(iscale * v));
            let w = v * v;
            sumlx += w * v * l as f32;
            suml2 += w * l as f32 * l as f32;
        }
        if suml2 > 0.0 && sumlx * sumlx > best * suml2 {
            for (&v, out) in x.iter().zip(l_out.iter_mut()) {
                *out = (nmax + clamp(nearest_int(iscale * v))) as i8;
            }
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    scale
}

/// [`make_qx_quants`] (nmax 32, weights x²) for `L` sub-blocks at once, one per lane, each
/// lane running the scalar sequence of f32 operations (selects for branches): bit-identical,
/// vectorised across lanes. `xt[i][lane]`; quants (0..64) into `lt`, scales returned.
#[inline(always)]
fn make_qx_lanes<const L: usize, const N: usize>(
    xt: &[[f32; L]; N],
    nmax: i32,
    lt: &mut [[i8; L]; N],
) -> [f32; L] {
    let clamp = |l: i32| l.min(nmax - 1).max(-nmax);
    let mut max = [0.0f32; L];
    let mut amax = [0.0f32; L];
    for row in xt {
        for k in 0..L {
            let ax = row[k].abs();
            if ax > amax[k] {
                amax[k] = ax;
                max[k] = row[k];
            }
        }
    }
    let mut iscale = [0.0f32; L];
    let mut sumlx = [0.0f32; L];
    let mut suml2 = [0.0f32; L];
    for k in 0..L {
        iscale[k] = -(nmax as f32) / max[k];
    }
    for i in 0..N {
        for k in 0..L {
            let v = xt[i][k];
            let l = clamp(nearest_int(iscale[k] * v));
            lt[i][k] = (l + nmax) as i8;
            let w = v * v;
            sumlx[k] += w * v * l as f32;
            suml2[k] += w * l as f32 * l as f32;
        }
    }
    let mut scale = [0.0f32; L];
    let mut best = [0.0f32; L];
    for k in 0..L {
        scale[k] = if suml2[k] != 0.0 {
            sumlx[k] / suml2[k]
        } else {
            0.0
        };
        best[k] = scale[k] * sumlx[k];
    }
    let mut laux = [[0i8; L]; N];
    for is in -9i32..=9 {
        if is == 0 {
            continue;
        }
        for k in 0..L {
            iscale[k] = -(nmax as f32 + 0.1f32 * is as f32) / max[k];
            sumlx[k] = 0.0;
            suml2[k] = 0.0;
        }
        for i in 0..N {
            for k in 0..L {
                let v = xt[i][k];
                let l = clamp(nearest_int(iscale[k] * v));
                laux[i][k] = (nmax + l) as i8;
                let w = v * v;
                sumlx[k] += w * v * l as f32;
                suml2[k] += w * l as f32 * l as f32;
            }
        }
        let mut take = [false; L];
        for k in 0..L {
            take[k] = suml2[k] > 0.0 && sumlx[k] * sumlx[k] > best[k] * suml2[k];
        }
        for i in 0..N {
            for k in 0..L {
                if take[k] {
                    lt[i][k] = laux[i][k];
                }
            }
        }
        for k in 0..L {
            if take[k] {
                scale[k] = sumlx[k] / suml2[k];
                best[k] = scale[k] * sumlx[k];
            }
        }
    }
    for k in 0..L {
        // An all-zero lane: quants 0 and scale 0, as ggml's early return.
        if amax[k] < GROUP_MAX_EPS {
            scale[k] = 0.0;
            for row in lt.iter_mut() {
                row[k] = 0;
            }
        }
    }
    scale
}

/// [`make_qx_lanes`], or its AVX2 intrinsics version (`k_avx2::qx`, same bits) with AVX2.
/// Unless `quants`, the simd128 build leaves the quants of groups that are not all zero as
/// they were (other builds compute them anyway).
fn qx_lanes<const L: usize, const N: usize>(
    xt: &[[f32; L]; N],
    nmax: i32,
    quants: bool,
    lt: &mut [[i8; L]; N],
) -> [f32; L] {
    // Only the simd128 search can leave them out.
    let _ = quants;
    #[cfg(target_arch = "x86_64")]
    if super::use_avx2() && L % 8 == 0 {
        // SAFETY: the CPU has AVX2 (`use_avx2` checked it).
        return unsafe { super::k_avx2::qx(xt, nmax, GROUP_MAX_EPS, lt) };
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    if L % 8 == 0 {
        // SAFETY: built with simd128.
        // Two vectors (8 lanes) at a time: their sums overlap in the pipeline; four spill.
        return unsafe { super::k_simd128::qx::<L, N, 2>(xt, nmax, GROUP_MAX_EPS, quants, lt) };
    }
    make_qx_lanes(xt, nmax, lt)
}

/// ggml's `make_q3_quants` as written (the reference the lane version is tested against), with `do_rmse` (Q3_K): start from the max-based scale, then move
/// single quants while the weighted fit improves (at most five passes).
#[cfg(test)]
fn make_q3_quants(x: &[f32], nmax: i32, l_out: &mut [i8]) -> f32 {
    let mut max = 0.0f32;
    let mut amax = 0.0f32;
    for &v in x {
        let ax = v.abs();
        if ax > amax {
            amax = ax;
            max = v;
        }
    }
    if amax < GROUP_MAX_EPS {
        l_out.iter_mut().for_each(|l| *l = 0);
        return 0.0;
    }
    let clamp = |l: i32| l.min(nmax - 1).max(-nmax);
    let iscale = -(nmax as f32) / max;
    let mut sumlx = 0.0f32;
    let mut suml2 = 0.0f32;
    for (&v, out) in x.iter().zip(l_out.iter_mut()) {
        let l = clamp(nearest_int(iscale * v));
        *out = l as i8;
        let w = v * v;
        sumlx += w * v * l as f32;
        suml2 += w * l as f32 * l as f32;
    }
    for _ in 0..5 {
        let mut n_changed = 0;
        for (&v, out) in x.iter().zip(l_out.iter_mut()) {
            let w = v * v;
            let li = f32::from(*out);
            let mut slx = sumlx - w * v * li;
            if slx > 0.0 {
                let mut sl2 = suml2 - w * li * li;
                let new_l = clamp(nearest_int(v * sl2 / slx));
                if new_l != i32::from(*out) {
                    slx += w * v * new_l as f32;
                    sl2 += w * new_l as f32 * new_l as f32;
                    if sl2 > 0.0 && slx * slx * suml2 > sumlx * sumlx * sl2 {
                        *out = new_l as i8;
                        sumlx = slx;
                        suml2 = sl2;
                        n_changed += 1;
                    }
                }
            }
        }
        if n_changed == 0 {
            break;
        }
    }
    for out in l_out.iter_mut() {
        *out += nmax as i8;
    }
    if suml2 > 0.0 {
        sumlx / suml2
    } else {
        0.0
    }
}

/// [`make_q3_quants`] for `L` sub-blocks at once, one per lane: the same f32 operations per
/// lane, so the same bits. A lane whose pass changes nothing would change nothing in a later
/// pass either (its state is the same), so running passes until no lane changes equals ggml's
/// per-group early exit.
#[inline(always)]
fn make_q3_lanes<const L: usize, const N: usize>(
    xt: &[[f32; L]; N],
    nmax: i32,
    lt: &mut [[i8; L]; N],
) -> [f32; L] {
    let clamp = |l: i32| l.min(nmax - 1).max(-nmax);
    let mut max = [0.0f32; L];
    let mut amax = [0.0f32; L];
    for row in xt {
        for k in 0..L {
            let ax = row[k].abs();
            if ax > amax[k] {
                amax[k] = ax;
                max[k] = row[k];
            }
        }
    }
    let mut iscale = [0.0f32; L];
    for k in 0..L {
        iscale[k] = -(nmax as f32) / max[k];
    }
    let mut sumlx = [0.0f32; L];
    let mut suml2 = [0.0f32; L];
    for i in 0..N {
        for k in 0..L {
            let v = xt[i][k];
            let l = clamp(nearest_int(iscale[k] * v));
            lt[i][k] = l as i8;
            let w = v * v;
            sumlx[k] += w * v * l as f32;
            suml2[k] += w * l as f32 * l as f32;
        }
    }
    for _ in 0..5 {
        let mut changed = [0u32; L];
        for i in 0..N {
            for k in 0..L {
                let v = xt[i][k];
                let w = v * v;
                let li = f32::from(lt[i][k]);
                let mut slx = sumlx[k] - w * v * li;
                let mut sl2 = suml2[k] - w * li * li;
                let new_l = clamp(nearest_int(v * sl2 / slx));
                let moved = slx > 0.0 && new_l != i32::from(lt[i][k]);
                slx += w * v * new_l as f32;
                sl2 += w * new_l as f32 * new_l as f32;
                if moved && sl2 > 0.0 && slx * slx * suml2[k] > sumlx[k] * sumlx[k] * sl2 {
                    lt[i][k] = new_l as i8;
                    sumlx[k] = slx;
                    suml2[k] = sl2;
                    changed[k] += 1;
                }
            }
        }
        if changed.iter().all(|&c| c == 0) {
            break;
        }
    }
    let mut scale = [0.0f32; L];
    for k in 0..L {
        let zero = amax[k] < GROUP_MAX_EPS;
        // `suml2 > 0 ? sumlx/suml2 : 0`, NaN included.
        scale[k] = if !zero && suml2[k] > 0.0 {
            sumlx[k] / suml2[k]
        } else {
            0.0
        };
        for row in lt.iter_mut() {
            // ggml returns all-zero groups with quants 0, the others shifted by nmax.
            row[k] = if zero { 0 } else { row[k] + nmax as i8 };
        }
    }
    scale
}

/// [`make_q3_lanes`] for AVX2 when the CPU has it (same operations, same bits).
fn q3_lanes<const L: usize, const N: usize>(
    xt: &[[f32; L]; N],
    nmax: i32,
    lt: &mut [[i8; L]; N],
) -> [f32; L] {
    #[cfg(target_arch = "x86_64")]
    if super::use_avx2() {
        // SAFETY: the CPU has AVX2 (`use_avx2` checked it).
        return unsafe { q3_lanes_avx2(xt, nmax, lt) };
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    if L % 16 == 0 {
        // SAFETY: built with simd128.
        // Four vectors (16 lanes) at a time: their division chains overlap.
        return unsafe { super::k_simd128::q3::<L, N, 4>(xt, nmax, GROUP_MAX_EPS, lt) };
    }
    make_q3_lanes(xt, nmax, lt)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn q3_lanes_avx2<const L: usize, const N: usize>(
    xt: &[[f32; L]; N],
    nmax: i32,
    lt: &mut [[i8; L]; N],
) -> [f32; L] {
    make_q3_lanes(xt, nmax, lt)
}

/// Parameters of ggml's `make_qkx2_quants` search.
struct Qkx2 {
    nmax: i32,
    rmin: f32,
    rdelta: f32,
    nstep: i32,
    use_mad: bool,
    /// Whether the caller reads the quants. When not, the simd128 search leaves them 0 (a
    /// round trip of Q2_K/Q4_K/Q5_K never needs them: see `k_round_trip`); other builds
    /// compute them anyway.
    quants: bool,
}

/// ggml's `make_qkx2_quants` as written (the reference the lane version is tested against): an affine fit `scale·L − min` of unsigned quants, searched over
/// `nstep + 1` inverse scales by weighted least squares. Returns (scale, −min).
#[cfg(test)]
fn make_qkx2_quants(
    x: &[f32],
    weights: &[f32],
    p: &Qkx2,
    l_out: &mut [u8],
    laux: &mut [u8],
) -> (f32, f32) {
    let n = x.len().min(weights.len());
    if n == 0 {
        return (0.0, 0.0);
    }
    let mut min = x[0];
    let mut max = x[0];
    let mut sum_w = weights[0];
    let mut sum_x = sum_w * x[0];
    for i in 1..n {
        if x[i] < min {
            min = x[i];
        }
        if x[i] > max {
            max = x[i];
        }
        let w = weights[i];
        sum_w += w;
        sum_x += w * x[i];
    }
    if min > 0.0 {
        min = 0.0;
    }
    if max == min {
        l_out.iter_mut().for_each(|l| *l = 0);
        return (0.0, -min);
    }
    let nmax = p.nmax;
    let clamp = |l: i32| l.min(nmax).max(0);
    let mut iscale = nmax as f32 / (max - min);
    let mut scale = 1.0 / iscale;
    let err = |diff: f32| if p.use_mad { diff.abs() } else { diff * diff };
    let mut best_error = 0.0f32;
    for i in 0..n {
        let l = clamp(nearest_int(iscale * (x[i] - min)));
        l_out[i] = l as u8;
        let diff = scale * f32::from(l_out[i]) + min - x[i];
        best_error += weights[i] * err(diff);
    }
    if p.nstep < 1 {
        return (scale, -min);
    }
    for is in 0..=p.nstep {
        iscale = (p.rmin + p.rdelta * is as f32 + nmax as f32) / (max - min);
        let mut sum_l = 0.0f32;
        let mut sum_l2 = 0.0f32;
        let mut sum_xl = 0.0f32;
        for i in 0..n {
            let l = clamp(nearest_int(iscale * (x[i] - min)));
            laux[i] = l as u8;
            let w = weights[i];
            let lf = l as f32;
            sum_l += w * lf;
            sum_l2 += w * lf * lf;
            sum_xl += w * lf * x[i];
        }
        let d = sum_w * sum_l2 - sum_l * sum_l;
        if d > 0.0 {
            let mut this_scale = (sum_w * sum_xl - sum_x * sum_l) / d;
            let mut this_min = (sum_l2 * sum_x - sum_l * sum_xl) / d;
            if this_min > 0.0 {
                this_min = 0.0;
                this_scale = sum_xl / sum_l2;
            }
            let mut cur_error = 0.0f32;
            for i in 0..n {
                let diff = this_scale * f32::from(laux[i]) + this_min - x[i];
                cur_error += weights[i] * err(diff);
            }
            if cur_error < best_error {
                l_out[..n].copy_from_slice(&laux[..n]);
                best_error = cur_error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    (scale, -min)
}

/// [`make_qkx2_quants`] for `L` sub-blocks at once, one per lane, each lane running exactly
/// the scalar sequence of f32 operations (selects where the scalar code branches), so the
/// results are bit-identical while the compiler vectorises across lanes. Values and weights are
/// transposed (`xt[i][lane]`); returns per lane (scale, −min) and the quants in `lt`.
#[inline(always)]
fn make_qkx2_lanes<const L: usize, const N: usize>(
    xt: &[[f32; L]; N],
    wt: &[[f32; L]; N],
    p: &Qkx2,
    lt: &mut [[u8; L]; N],
) -> ([f32; L], [f32; L]) {
    // The error measure is a compile-time choice, so the inner loops have no branch.
    if p.use_mad {
        qkx2_core::<L, N, true>(xt, wt, p, lt)
    } else {
        qkx2_core::<L, N, false>(xt, wt, p, lt)
    }
}

#[inline(always)]
fn qkx2_core<const L: usize, const N: usize, const MAD: bool>(
    xt: &[[f32; L]; N],
    wt: &[[f32; L]; N],
    p: &Qkx2,
    lt: &mut [[u8; L]; N],
) -> ([f32; L], [f32; L]) {
    let nmax = p.nmax;
    let err = |diff: f32| if MAD { diff.abs() } else { diff * diff };
    // The quants of a step are `clamp(nearest_int(iscale·(x − min)))`, a function of the step's
    // (iscale, min): the search keeps the best pair per lane and recomputes the quants once at
    // the end instead of copying them on every improvement. Quants inside the search are kept
    // as f32 (exact small integers), which is what the sums use.
    let quant =
        |iscale: f32, x: f32, min: f32| nearest_int(iscale * (x - min)).clamp(0, nmax) as f32;
    let mut min = xt[0];
    let mut max = xt[0];
    let mut sum_w = wt[0];
    let mut sum_x = [0.0f32; L];
    for k in 0..L {
        sum_x[k] = sum_w[k] * xt[0][k];
    }
    for i in 1..N {
        for k in 0..L {
            let x = xt[i][k];
            if x < min[k] {
                min[k] = x;
            }
            if x > max[k] {
                max[k] = x;
            }
            let w = wt[i][k];
            sum_w[k] += w;
            sum_x[k] += w * x;
        }
    }
    let mut flat = [false; L];
    let mut iscale = [0.0f32; L];
    let mut scale = [0.0f32; L];
    for k in 0..L {
        if min[k] > 0.0 {
            min[k] = 0.0;
        }
        flat[k] = max[k] == min[k];
        iscale[k] = nmax as f32 / (max[k] - min[k]);
        scale[k] = 1.0 / iscale[k];
    }
    // A flat lane returns (0, −min) with all quants 0; its other results are discarded.
    let flat_min = min;
    let mut best_iscale = iscale;
    let mut best_qmin = min;
    let mut best_error = [0.0f32; L];
    for i in 0..N {
        for k in 0..L {
            let l = quant(iscale[k], xt[i][k], min[k]);
            let diff = scale[k] * l + min[k] - xt[i][k];
            best_error[k] += wt[i][k] * err(diff);
        }
    }
    let mut laux = [[0.0f32; L]; N];
    for is in 0..=p.nstep {
        let mut sum_l = [0.0f32; L];
        let mut sum_l2 = [0.0f32; L];
        let mut sum_xl = [0.0f32; L];
        for k in 0..L {
            iscale[k] = (p.rmin + p.rdelta * is as f32 + nmax as f32) / (max[k] - min[k]);
        }
        for i in 0..N {
            // Whole-row steps (one per lane operation) keep LLVM's vectoriser on the lanes.
            let mut lf = [0.0f32; L];
            let mut wl = [0.0f32; L];
            for k in 0..L {
                lf[k] = quant(iscale[k], xt[i][k], min[k]);
            }
            for k in 0..L {
                wl[k] = wt[i][k] * lf[k];
            }
            for k in 0..L {
                sum_l[k] += wl[k];
            }
            for k in 0..L {
                sum_l2[k] += wl[k] * lf[k];
            }
            for k in 0..L {
                sum_xl[k] += wl[k] * xt[i][k];
            }
            laux[i] = lf;
        }
        let mut this_scale = [0.0f32; L];
        let mut this_min = [0.0f32; L];
        let mut positive = [false; L];
        for k in 0..L {
            let d = sum_w[k] * sum_l2[k] - sum_l[k] * sum_l[k];
            positive[k] = d > 0.0;
            this_scale[k] = (sum_w[k] * sum_xl[k] - sum_x[k] * sum_l[k]) / d;
            this_min[k] = (sum_l2[k] * sum_x[k] - sum_l[k] * sum_xl[k]) / d;
            if this_min[k] > 0.0 {
                this_min[k] = 0.0;
                this_scale[k] = sum_xl[k] / sum_l2[k];
            }
        }
        let mut cur_error = [0.0f32; L];
        for i in 0..N {
            for k in 0..L {
                let diff = this_scale[k] * laux[i][k] + this_min[k] - xt[i][k];
                cur_error[k] += wt[i][k] * err(diff);
            }
        }
        for k in 0..L {
            let take = positive[k] && cur_error[k] < best_error[k];
            if take {
                best_iscale[k] = iscale[k];
                best_qmin[k] = min[k];
                best_error[k] = cur_error[k];
                scale[k] = this_scale[k];
                min[k] = this_min[k];
            }
        }
    }
    for i in 0..N {
        for k in 0..L {
            let l = quant(best_iscale[k], xt[i][k], best_qmin[k]) as u8;
            lt[i][k] = if flat[k] { 0 } else { l };
        }
    }
    let mut the_min = [0.0f32; L];
    for k in 0..L {
        if flat[k] {
            scale[k] = 0.0;
            the_min[k] = -flat_min[k];
        } else {
            the_min[k] = -min[k];
        }
    }
    (scale, the_min)
}

/// [`make_qkx2_lanes`], or its AVX2 intrinsics version (`k_avx2::qkx2`, the same operations,
/// so the same bits) when the CPU has AVX2.
fn qkx2_lanes<const L: usize, const N: usize>(
    xt: &[[f32; L]; N],
    wt: &[[f32; L]; N],
    p: &Qkx2,
    lt: &mut [[u8; L]; N],
) -> ([f32; L], [f32; L]) {
    #[cfg(target_arch = "x86_64")]
    if super::use_avx2() && p.nstep >= 1 {
        use super::k_avx2::qkx2;
        let q = (p.nmax, p.rmin, p.rdelta, p.nstep);
        // SAFETY: the CPU has AVX2 (`use_avx2` checked it); qkx2 asserts L = 8·V.
        unsafe {
            match (L, p.use_mad) {
                (8, false) => return qkx2::<L, N, 1, false>(xt, wt, q, lt),
                (8, true) => return qkx2::<L, N, 1, true>(xt, wt, q, lt),
                (16, false) => return qkx2::<L, N, 2, false>(xt, wt, q, lt),
                (16, true) => return qkx2::<L, N, 2, true>(xt, wt, q, lt),
                _ => {}
            }
        }
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    if p.nstep >= 1 {
        use super::k_simd128::qkx2;
        let q = (p.nmax, p.rmin, p.rdelta, p.nstep);
        // SAFETY: built with simd128; qkx2 asserts 4·V divides L.
        unsafe {
            // Passes of two vectors (8 lanes): four at once spill in V8's code (16 xmm
            // registers), one alone waits on its sums' add latency.
            match (L, p.use_mad) {
                (8 | 16, false) => return qkx2::<L, N, 2, false>(xt, wt, q, p.quants, lt),
                (8 | 16, true) => return qkx2::<L, N, 2, true>(xt, wt, q, p.quants, lt),
                _ => {}
            }
        }
    }
    make_qkx2_lanes(xt, wt, p, lt)
}

/// `out[l][j] = x[16·j + l]` (16 sub-blocks of 16 values, one per lane).
fn transpose16(x: &[f32; QK_K]) -> [[f32; 16]; 16] {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        // SAFETY: built with simd128.
        unsafe { super::k_simd128::transpose16(x) }
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        let mut xt = [[0.0f32; 16]; 16];
        for j in 0..16 {
            for l in 0..16 {
                xt[l][j] = x[16 * j + l];
            }
        }
        xt
    }
}

/// `out[l][j] = x[j / 8][32·(j % 8) + l]`: the 16 sub-blocks of 32 values of two super-blocks,
/// one per lane.
fn transpose_pair(x: [&[f32; QK_K]; 2]) -> [[f32; 16]; 32] {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        // SAFETY: built with simd128.
        unsafe { super::k_simd128::transpose_pair(x) }
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        let mut xt = [[0.0f32; 16]; 32];
        for l in 0..32 {
            for j in 0..16 {
                xt[l][j] = x[j / 8][32 * (j % 8) + l];
            }
        }
        xt
    }
}

/// Packs 2-bit quants four to a byte: byte l of each 32-byte group holds values l, l+32, l+64,
/// l+96 of its 128.
fn pack_2bit(l: &[u8; QK_K], qs: &mut [u8]) {
    for j in (0..QK_K).step_by(128) {
        for i in 0..32 {
            qs[j / 4 + i] =
                l[j + i] | (l[j + i + 32] << 2) | (l[j + i + 64] << 4) | (l[j + i + 96] << 6);
        }
    }
}

/// Q2_K's search and rounded scales (everything but the final quants): the 16 packed
/// scale/min bytes, the d and dmin fields, and the search's quants (kept where a sub-block's
/// scale rounds to 0; computed only when asked for), transposed as the search leaves them
/// (`lt[l][j]`: value l of sub-block j). Shared by [`q2_k`] and the byte-free round trip.
pub(super) struct Q2Head {
    pub(super) sc: [u8; 16],
    pub(super) dd: [u8; 4],
    pub(super) lt: [[u8; 16]; 16],
}

#[inline(always)]
pub(super) fn q2_k_head(x: &[f32; QK_K], quants: bool) -> Result<Q2Head, Overflow> {
    const Q4SCALE: f32 = 15.0;
    let params = Qkx2 {
        nmax: 3,
        rmin: -0.5,
        rdelta: 0.1,
        nstep: 15,
        use_mad: true,
        quants,
    };
    let xt = transpose16(x);
    let mut wt = [[0.0f32; 16]; 16];
    for l in 0..16 {
        for j in 0..16 {
            wt[l][j] = xt[l][j].abs();
        }
    }
    let mut lt = [[0u8; 16]; 16];
    let (scales, mins) = qkx2_lanes(&xt, &wt, &params, &mut lt);
    let mut max_scale = 0.0f32;
    let mut max_min = 0.0f32;
    for j in 0..16 {
        if scales[j] > max_scale {
            max_scale = scales[j];
        }
        if mins[j] > max_min {
            max_min = mins[j];
        }
    }
    let mut sc = [0u8; 16];
    let mut dd = [0u8; 4];
    if max_scale > 0.0 {
        let iscale = Q4SCALE / max_scale;
        for j in 0..16 {
            sc[j] = nearest_int(iscale * scales[j]) as u8;
        }
        dd[0..2].copy_from_slice(&f16_field(max_scale / Q4SCALE)?);
    } else {
        dd[0..2].copy_from_slice(&f16_field(0.0)?);
    }
    if max_min > 0.0 {
        let iscale = Q4SCALE / max_min;
        for j in 0..16 {
            sc[j] |= (nearest_int(iscale * mins[j]) << 4) as u8;
        }
        dd[2..4].copy_from_slice(&f16_field(max_min / Q4SCALE)?);
    } else {
        dd[2..4].copy_from_slice(&f16_field(0.0)?);
    }
    Ok(Q2Head { sc, dd, lt })
}

pub(super) fn q2_k(x: &[f32; QK_K], y: &mut [u8; 84]) -> Result<(), Overflow> {
    let Q2Head {
        sc: scb,
        dd: ddb,
        lt,
    } = q2_k_head(x, true)?;
    let mut big_l = untranspose16(&lt);
    let (sc, rest) = y.split_at_mut(16);
    let (qs, dd) = rest.split_at_mut(64);
    sc.copy_from_slice(&scb);
    dd.copy_from_slice(&ddb);
    let d_all = f16_value([dd[0], dd[1]]);
    let dmin_all = f16_value([dd[2], dd[3]]);
    for j in 0..16 {
        let d = d_all * f32::from(sc[j] & 0xf);
        if d == 0.0 {
            continue;
        }
        let dm = dmin_all * f32::from(sc[j] >> 4);
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        {
            let r = 16 * j..16 * j + 16;
            // SAFETY: built with simd128.
            unsafe { super::k_simd128::requant(&x[r.clone()], dm, d, (0, 3, 0), &mut big_l[r]) };
        }
        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        for ii in 0..16 {
            let l = nearest_int((x[16 * j + ii] + dm) / d);
            big_l[16 * j + ii] = l.clamp(0, 3) as u8;
        }
    }
    pack_2bit(&big_l, qs);
    Ok(())
}

/// Q3_K's search and rounded scales: the 12 packed 6-bit scale bytes, the d field, and the
/// search's quants (0..=7, kept where a sub-block's scale rounds to 0), transposed as the
/// search leaves them (`lt[l][j]`: value l of sub-block j).
pub(super) struct Q3Head {
    pub(super) sc: [u8; 12],
    pub(super) dd: [u8; 2],
    pub(super) lt: [[i8; 16]; 16],
}

#[inline(always)]
pub(super) fn q3_k_head(x: &[f32; QK_K]) -> Result<Q3Head, Overflow> {
    let xt = transpose16(x);
    let mut lt = [[0i8; 16]; 16];
    let scales = q3_lanes(&xt, 4, &mut lt);
    let mut max_scale = 0.0f32;
    let mut amax = 0.0f32;
    for j in 0..16 {
        let scale = scales[j].abs();
        if scale > amax {
            amax = scale;
            max_scale = scales[j];
        }
    }
    let mut sc = [0u8; 12];
    let dd;
    if max_scale != 0.0 {
        let iscale = -32.0f32 / max_scale;
        for j in 0..16 {
            // `int8_t l = nearest_int(...)`: the int8 conversion wraps before the clamp.
            let l = (nearest_int(iscale * scales[j]) as i8).clamp(-32, 31) + 32;
            let l = l as u8;
            if j < 8 {
                sc[j] = l & 0xf;
            } else {
                sc[j - 8] |= (l & 0xf) << 4;
            }
            sc[j % 4 + 8] |= (l >> 4) << (2 * (j / 4));
        }
        dd = f16_field(1.0 / iscale)?;
    } else {
        dd = f16_field(0.0)?;
    }
    Ok(Q3Head { sc, dd, lt })
}

/// Q3_K sub-block j's signed 6-bit scale from the packed bytes.
#[inline(always)]
pub(super) fn q3_k_scale(sc: &[u8], j: usize) -> i8 {
    let low = if j < 8 { sc[j] & 0xf } else { sc[j - 8] >> 4 };
    (low | (((sc[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) as i8 - 32
}

pub(super) fn q3_k(x: &[f32; QK_K], y: &mut [u8; 110]) -> Result<(), Overflow> {
    let Q3Head {
        sc: scb,
        dd: ddb,
        lt,
    } = q3_k_head(x)?;
    let mut big_l = untranspose16(&lt);
    let (hmask, rest) = y.split_at_mut(32);
    let (qs, rest) = rest.split_at_mut(64);
    let (sc, dd) = rest.split_at_mut(12);
    sc.copy_from_slice(&scb);
    dd.copy_from_slice(&ddb);
    let d_all = f16_value([dd[0], dd[1]]);
    for j in 0..16 {
        let d = d_all * f32::from(q3_k_scale(sc, j));
        if d == 0.0 {
            continue;
        }
        for ii in 0..16 {
            let l = nearest_int(x[16 * j + ii] / d).clamp(-4, 3);
            big_l[16 * j + ii] = (l + 4) as i8;
        }
    }
    // Quants are 0..=7: bit 2 goes to the high-bit mask (value j sets bit j/32 of byte j%32),
    // the low two bits are packed. Branch-free (a branch per value mispredicts on real data).
    hmask.iter_mut().for_each(|h| *h = 0);
    let mut unsigned = [0u8; QK_K];
    for b in 0..8 {
        for m in 0..QK_K / 8 {
            let l = big_l[32 * b + m] as u8;
            hmask[m] |= ((l >> 2) & 1) << b;
            unsigned[32 * b + m] = l & 3;
        }
    }
    pack_2bit(&unsigned, qs);
    Ok(())
}

/// The sub-block fits of one Q4_K/Q5_K super-block: per 32 values a scale, a min and quants.
pub(super) struct Fits {
    pub(super) scales: [f32; 8],
    pub(super) mins: [f32; 8],
    pub(super) big_l: [u8; QK_K],
}

/// The sub-block fits of two Q4_K/Q5_K super-blocks at once (16 lanes: two independent
/// searches in flight hide each other's add latency): weights `sqrt(mean x²) + |x|`, one affine
/// fit per 32 values.
fn k_fits2(x: [&[f32; QK_K]; 2], params: &Qkx2) -> [Fits; 2] {
    let xt = transpose_pair(x);
    // Row by row (each sub-block's sum in ggml's order, l = 0..32), so it vectorises.
    let mut sum_x2 = [0.0f32; 16];
    for row in &xt {
        for j in 0..16 {
            sum_x2[j] += row[j] * row[j];
        }
    }
    let av_x = sum_x2.map(|s| (s / 32.0).sqrt());
    let mut wt = [[0.0f32; 16]; 32];
    for (w, row) in wt.iter_mut().zip(&xt) {
        for j in 0..16 {
            w[j] = av_x[j] + row[j].abs();
        }
    }
    let mut lt = [[0u8; 16]; 32];
    let (scales, mins) = qkx2_lanes(&xt, &wt, params, &mut lt);
    let big = if params.quants {
        untranspose_pair(&lt)
    } else {
        [[0; QK_K]; 2]
    };
    let fits = |b: usize| {
        let mut f = Fits {
            scales: [0.0; 8],
            mins: [0.0; 8],
            big_l: big[b],
        };
        for j in 0..8 {
            f.scales[j] = scales[8 * b + j];
            f.mins[j] = mins[8 * b + j];
        }
        f
    };
    [fits(0), fits(1)]
}

/// `out[16·j + l] = lt[l][j]`: quants of 16 lanes (sub-blocks of 16) back in value order.
fn untranspose16<T: Copy + Default>(lt: &[[T; 16]; 16]) -> [T; QK_K] {
    let mut out = [T::default(); QK_K];
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    // SAFETY: built with simd128; T is one byte (u8 or i8).
    unsafe {
        super::k_simd128::untranspose16(lt, &mut out)
    };
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    for j in 0..16 {
        for l in 0..16 {
            out[16 * j + l] = lt[l][j];
        }
    }
    out
}

/// The inverse of [`transpose_pair`] for the quants: `out[j / 8][32·(j % 8) + l] = lt[l][j]`.
fn untranspose_pair(lt: &[[u8; 16]; 32]) -> [[u8; QK_K]; 2] {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        // SAFETY: built with simd128.
        unsafe { super::k_simd128::untranspose_pair(lt) }
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        let mut out = [[0u8; QK_K]; 2];
        for l in 0..32 {
            for j in 0..16 {
                out[j / 8][32 * (j % 8) + l] = lt[l][j];
            }
        }
        out
    }
}

/// Quantizes the 8 scales and mins of Q4_K/Q5_K to 6 bits into `head` (d, dmin, 12 scale
/// bytes), then requantizes every value against them into `big_l` (0..=nmax).
fn k_scales(
    x: &[f32; QK_K],
    scales: &[f32; 8],
    mins: &[f32; 8],
    nmax: i32,
    head: &mut [u8],
    big_l: &mut [u8; QK_K],
) -> Result<(), Overflow> {
    k_head(scales, mins, head)?;
    let (d, dmin) = (f16_value([head[0], head[1]]), f16_value([head[2], head[3]]));
    for j in 0..8 {
        let (s, m) = scale_min_k4(j, &head[4..16]);
        let dj = d * f32::from(s);
        if dj == 0.0 {
            continue;
        }
        let dm = dmin * f32::from(m);
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        {
            let r = 32 * j..32 * j + 32;
            let q = (0, nmax, 0);
            // SAFETY: built with simd128.
            unsafe { super::k_simd128::requant(&x[r.clone()], dm, dj, q, &mut big_l[r]) };
        }
        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        for ii in 0..32 {
            let l = nearest_int((x[32 * j + ii] + dm) / dj);
            big_l[32 * j + ii] = l.clamp(0, nmax) as u8;
        }
    }
    Ok(())
}

/// The 8 scales and mins of Q4_K/Q5_K quantized to 6 bits into `head` (d, dmin, 12 scale bytes).
#[inline(always)]
pub(super) fn k_head(scales: &[f32; 8], mins: &[f32; 8], head: &mut [u8]) -> Result<(), Overflow> {
    let mut max_scale = 0.0f32;
    let mut max_min = 0.0f32;
    for j in 0..8 {
        if scales[j] > max_scale {
            max_scale = scales[j];
        }
        if mins[j] > max_min {
            max_min = mins[j];
        }
    }
    let inv_scale = if max_scale > 0.0 {
        63.0 / max_scale
    } else {
        0.0
    };
    let inv_min = if max_min > 0.0 { 63.0 / max_min } else { 0.0 };
    let sc = &mut head[4..16];
    for j in 0..8 {
        // `uint8_t ls = nearest_int(...)`: the uint8 conversion wraps before the MIN.
        let ls = (nearest_int(inv_scale * scales[j]) as u8).min(63);
        let lm = (nearest_int(inv_min * mins[j]) as u8).min(63);
        if j < 4 {
            sc[j] = ls;
            sc[j + 4] = lm;
        } else {
            sc[j + 4] = (ls & 0xf) | ((lm & 0xf) << 4);
            sc[j - 4] |= (ls >> 4) << 6;
            sc[j] |= (lm >> 4) << 6;
        }
    }
    let d = f16_field(max_scale / 63.0)?;
    let dmin = f16_field(max_min / 63.0)?;
    head[0..2].copy_from_slice(&d);
    head[2..4].copy_from_slice(&dmin);
    Ok(())
}

/// The 6-bit scale and min of sub-block j from the 12 packed bytes (ggml's `get_scale_min_k4`).
pub(super) fn scale_min_k4(j: usize, q: &[u8]) -> (u8, u8) {
    if j < 4 {
        (q[j] & 63, q[j + 4] & 63)
    } else {
        (
            (q[j + 4] & 0xf) | ((q[j - 4] >> 6) << 4),
            (q[j + 4] >> 4) | ((q[j] >> 6) << 4),
        )
    }
}

const Q4_K_FIT: Qkx2 = Qkx2 {
    nmax: 15,
    rmin: -1.0,
    rdelta: 0.1,
    nstep: 20,
    use_mad: false,
    quants: true,
};

const Q5_K_FIT: Qkx2 = Qkx2 {
    nmax: 31,
    rmin: -0.5,
    rdelta: 0.1,
    nstep: 15,
    use_mad: false,
    quants: true,
};

/// Q4_K fits of two super-blocks (the second may repeat the first).
pub(super) fn q4_k_fits2(a: &[f32; QK_K], b: &[f32; QK_K]) -> [Fits; 2] {
    k_fits2([a, b], &Q4_K_FIT)
}

/// Q5_K fits of two super-blocks (the second may repeat the first).
pub(super) fn q5_k_fits2(a: &[f32; QK_K], b: &[f32; QK_K]) -> [Fits; 2] {
    k_fits2([a, b], &Q5_K_FIT)
}

/// [`q4_k_fits2`] for a caller that never reads the quants (`Fits::big_l` may be all 0).
pub(super) fn q4_k_fits2_scales(a: &[f32; QK_K], b: &[f32; QK_K]) -> [Fits; 2] {
    k_fits2(
        [a, b],
        &Qkx2 {
            quants: false,
            ..Q4_K_FIT
        },
    )
}

/// [`q5_k_fits2`] for a caller that never reads the quants (`Fits::big_l` may be all 0).
pub(super) fn q5_k_fits2_scales(a: &[f32; QK_K], b: &[f32; QK_K]) -> [Fits; 2] {
    k_fits2(
        [a, b],
        &Qkx2 {
            quants: false,
            ..Q5_K_FIT
        },
    )
}

/// The rest of a Q4_K block from its fits: 6-bit scales and mins, requantized 4-bit quants.
pub(super) fn q4_k_finish(x: &[f32; QK_K], fits: Fits, y: &mut [u8; 144]) -> Result<(), Overflow> {
    let Fits {
        scales,
        mins,
        mut big_l,
    } = fits;
    let (head, qs) = y.split_at_mut(16);
    k_scales(x, &scales, &mins, 15, head, &mut big_l)?;
    for (g, j) in (0..QK_K).step_by(64).enumerate() {
        for l in 0..32 {
            qs[32 * g + l] = big_l[j + l] | (big_l[j + l + 32] << 4);
        }
    }
    Ok(())
}

/// The rest of a Q5_K block from its fits: 6-bit scales and mins, requantized 5-bit quants.
pub(super) fn q5_k_finish(x: &[f32; QK_K], fits: Fits, y: &mut [u8; 176]) -> Result<(), Overflow> {
    let Fits {
        scales,
        mins,
        mut big_l,
    } = fits;
    let (head, rest) = y.split_at_mut(16);
    k_scales(x, &scales, &mins, 31, head, &mut big_l)?;
    let (qh, ql) = rest.split_at_mut(32);
    qh.iter_mut().for_each(|h| *h = 0);
    let mut m1 = 1u8;
    let mut m2 = 2u8;
    for (g, n) in (0..QK_K).step_by(64).enumerate() {
        for j in 0..32 {
            // Quants are 0..=31: bit 4 goes to qh (branch-free), the low four to ql.
            let (l1, l2) = (big_l[n + j], big_l[n + j + 32]);
            qh[j] |=
                (m1 & 0u8.wrapping_sub((l1 >> 4) & 1)) | (m2 & 0u8.wrapping_sub((l2 >> 4) & 1));
            ql[32 * g + j] = (l1 & 15) | ((l2 & 15) << 4);
        }
        m1 <<= 2;
        m2 <<= 2;
    }
    Ok(())
}

/// Q6_K's search and rounded scales: the 16 i8 scales, the d field, and the search's quants
/// (0..64, kept where a sub-block's scale rounds to 0; computed only when asked for, else 0).
/// An all-zero block (no scale at least ggml's GROUP_MAX_EPS) is all zero bytes: scales, d and
/// quants 0.
pub(super) struct Q6Head {
    pub(super) sc: [u8; 16],
    pub(super) dd: [u8; 2],
    pub(super) big_l: [u8; QK_K],
}

#[inline(always)]
pub(super) fn q6_k_head(x: &[f32; QK_K], quants: bool) -> Result<Q6Head, Overflow> {
    let xt = transpose16(x);
    let mut lt = [[0i8; 16]; 16];
    let scales = qx_lanes(&xt, 32, quants, &mut lt);
    let mut big_l = [0u8; QK_K];
    let mut max_scale = 0.0f32;
    let mut max_abs_scale = 0.0f32;
    for ib in 0..16 {
        // Untransposed here, with the scales (measured faster than a separate pass).
        if quants {
            for i in 0..16 {
                big_l[16 * ib + i] = lt[i][ib] as u8;
            }
        }
        let scale = scales[ib];
        if scale.abs() > max_abs_scale {
            max_abs_scale = scale.abs();
            max_scale = scale;
        }
    }
    let mut sc = [0u8; 16];
    if max_abs_scale < GROUP_MAX_EPS {
        return Ok(Q6Head {
            sc,
            dd: [0; 2],
            big_l: [0; QK_K],
        });
    }
    let iscale = -128.0f32 / max_scale;
    let dd = f16_field(1.0 / iscale)?;
    for ib in 0..16 {
        sc[ib] = nearest_int(iscale * scales[ib]).min(127) as i8 as u8;
    }
    Ok(Q6Head { sc, dd, big_l })
}

pub(super) fn q6_k(x: &[f32; QK_K], y: &mut [u8; 210]) -> Result<(), Overflow> {
    let Q6Head {
        sc: scb,
        dd: ddb,
        mut big_l,
    } = q6_k_head(x, true)?;
    let (ql, rest) = y.split_at_mut(128);
    let (qh, rest) = rest.split_at_mut(64);
    let (sc, dd) = rest.split_at_mut(16);
    sc.copy_from_slice(&scb);
    dd.copy_from_slice(&ddb);
    let d_all = f16_value([dd[0], dd[1]]);
    for j in 0..16 {
        let d = d_all * f32::from(sc[j] as i8);
        if d == 0.0 {
            continue;
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        {
            // x + 0 differs from x only at −0, and ±0 / d both round to 0: the same quants.
            let (r, q) = (16 * j..16 * j + 16, (-32, 31, 32));
            // SAFETY: built with simd128.
            unsafe { super::k_simd128::requant(&x[r.clone()], 0.0, d, q, &mut big_l[r]) };
        }
        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        for ii in 0..16 {
            let l = nearest_int(x[16 * j + ii] / d).clamp(-32, 31);
            big_l[16 * j + ii] = (l + 32) as u8;
        }
    }
    for (g, j) in (0..QK_K).step_by(128).enumerate() {
        for l in 0..32 {
            let q = |k: usize| big_l[j + l + k];
            ql[64 * g + l] = (q(0) & 0xf) | ((q(64) & 0xf) << 4);
            ql[64 * g + l + 32] = (q(32) & 0xf) | ((q(96) & 0xf) << 4);
            qh[32 * g + l] =
                (q(0) >> 4) | ((q(32) >> 4) << 2) | ((q(64) >> 4) << 4) | ((q(96) >> 4) << 6);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lane version gives the scalar one's bits on every lane (random, flat, zero and
    /// mixed-sign sub-blocks).
    #[test]
    fn lanes_equal_scalar_make_qkx2_quants() {
        // The shapes in use: Q4_K/Q5_K one block (8×32) and two (16×32), Q2_K (16×16).
        check_qkx2::<8, 32>(0x2545_f491_4f6c_dd1d, 15, 20);
        check_qkx2::<16, 32>(0x1234_5678_9abc_def1, 31, 15);
        check_qkx2::<16, 16>(0x0f0f_1e1e_2d2d_3c3c, 3, 15);
    }

    fn check_qkx2<const L: usize, const N: usize>(seed: u64, nmax: i32, nstep: i32) {
        let mut state = seed;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..300 {
            let mut xt = [[0.0f32; L]; N];
            let mut wt = [[0.0f32; L]; N];
            for (i, row) in xt.iter_mut().enumerate() {
                for (k, v) in row.iter_mut().enumerate() {
                    let r = next();
                    // Every third round all lanes alike (so no flat lane forces the general
                    // rounding path of the vector versions), else mixed.
                    let kind = if round % 3 == 0 { 0 } else { k };
                    *v = match (round + kind) % 7 {
                        0 => 0.0,
                        1 => 1.25,
                        2 => ((r >> 40) as f32 / (1u64 << 24) as f32) - 0.25,
                        3 => f32::from_bits(
                            (r as u32 & 0x807f_ffff) | (((r >> 32) as u32 % 40 + 100) << 23),
                        ),
                        // Subnormals: a range so small that nmax / (max − min) overflows.
                        4 => f32::from_bits(r as u32 & 0x8000_00ff),
                        // A range where nmax / range overflows but (nmax − 1) / range does
                        // not: the first fit's quants come from an infinite iscale, later
                        // steps' from finite ones.
                        5 => (i % 2) as f32 * ((nmax as f32 - 0.25) / f32::MAX),
                        _ => i as f32 * 0.1 - 1.0,
                    };
                    if round % 3 == 0 && (round / 3) % 5 == 0 {
                        *v = ((r >> 40) as f32 / (1u64 << 24) as f32) - 0.5;
                    }
                }
            }
            for i in 0..N {
                for k in 0..L {
                    wt[i][k] = xt[i][k].abs() + 0.5;
                }
            }
            let params = Qkx2 {
                nmax,
                rmin: -1.0,
                rdelta: 0.1,
                nstep,
                use_mad: round % 2 == 0,
                quants: true,
            };
            let mut lt = [[0u8; L]; N];
            let (scales, mins) = qkx2_lanes(&xt, &wt, &params, &mut lt);
            // The portable build of the lanes (what runs without AVX2) agrees too.
            let mut lt_portable = [[0u8; L]; N];
            let portable = make_qkx2_lanes(&xt, &wt, &params, &mut lt_portable);
            assert_eq!(lt, lt_portable);
            assert_eq!(
                (scales.map(f32::to_bits), mins.map(f32::to_bits)),
                (portable.0.map(f32::to_bits), portable.1.map(f32::to_bits))
            );
            for k in 0..L {
                let x: Vec<f32> = (0..N).map(|i| xt[i][k]).collect();
                let w: Vec<f32> = (0..N).map(|i| wt[i][k]).collect();
                let mut l = [0u8; N];
                let mut laux = [0u8; N];
                let (scale, min) = make_qkx2_quants(&x, &w, &params, &mut l, &mut laux);
                assert_eq!(
                    scale.to_bits(),
                    scales[k].to_bits(),
                    "round {round} lane {k}"
                );
                assert_eq!(min.to_bits(), mins[k].to_bits(), "round {round} lane {k}");
                let lanes: Vec<u8> = (0..N).map(|i| lt[i][k]).collect();
                assert_eq!(&l[..], &lanes[..], "round {round} lane {k}");
            }
        }
    }

    #[test]
    fn lanes_equal_scalar_make_qx_quants() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        // Rounds from 300 on have no all-zero lane, so whole passes take the f32 paths too.
        for round in 0..600 {
            let mut xt = [[0.0f32; 16]; 16];
            for (i, row) in xt.iter_mut().enumerate() {
                for (k, v) in row.iter_mut().enumerate() {
                    let r = next();
                    let case = if round < 300 {
                        (round + k) % 5
                    } else {
                        1 + (round + k) % 4
                    };
                    *v = match case {
                        0 => 0.0,
                        1 => -0.75,
                        2 => ((r >> 40) as f32 / (1u64 << 24) as f32) - 0.5,
                        3 => f32::from_bits(
                            (r as u32 & 0x807f_ffff) | (((r >> 32) as u32 % 40 + 100) << 23),
                        ),
                        _ => i as f32 * 0.1 - 1.0,
                    };
                }
            }
            let mut lt = [[0i8; 16]; 16];
            let scales = qx_lanes(&xt, 32, true, &mut lt);
            let mut lt_portable = [[0i8; 16]; 16];
            let portable = make_qx_lanes(&xt, 32, &mut lt_portable);
            assert_eq!(lt, lt_portable);
            assert_eq!(scales.map(f32::to_bits), portable.map(f32::to_bits));
            for k in 0..16 {
                let x: Vec<f32> = (0..16).map(|i| xt[i][k]).collect();
                let mut l = [0i8; 16];
                let scale = make_qx_quants(&x, 32, &mut l);
                assert_eq!(
                    scale.to_bits(),
                    scales[k].to_bits(),
                    "round {round} lane {k}"
                );
                let lanes: Vec<i8> = (0..16).map(|i| lt[i][k]).collect();
                assert_eq!(&l[..], &lanes[..], "round {round} lane {k}");
            }
        }
    }

    #[test]
    fn lanes_equal_scalar_make_q3_quants() {
        let mut state = 0x5851_f42d_4c95_7f2du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..500 {
            let mut xt = [[0.0f32; 16]; 16];
            for (i, row) in xt.iter_mut().enumerate() {
                for (k, v) in row.iter_mut().enumerate() {
                    let r = next();
                    *v = match (round + k) % 6 {
                        0 => 0.0,
                        1 => 2.5,
                        2 => ((r >> 40) as f32 / (1u64 << 24) as f32) - 0.5,
                        3 => f32::from_bits(
                            (r as u32 & 0x807f_ffff) | (((r >> 32) as u32 % 40 + 100) << 23),
                        ),
                        4 => ((r >> 60) as f32 - 8.0) * 0.25,
                        _ => i as f32 * 0.1 - 1.0,
                    };
                }
            }
            let mut lt = [[0i8; 16]; 16];
            let scales = q3_lanes(&xt, 4, &mut lt);
            let mut lt_portable = [[0i8; 16]; 16];
            let portable = make_q3_lanes(&xt, 4, &mut lt_portable);
            assert_eq!(lt, lt_portable);
            assert_eq!(scales.map(f32::to_bits), portable.map(f32::to_bits));
            for k in 0..16 {
                let x: Vec<f32> = (0..16).map(|i| xt[i][k]).collect();
                let mut l = [0i8; 16];
                let scale = make_q3_quants(&x, 4, &mut l);
                assert_eq!(
                    scale.to_bits(),
                    scales[k].to_bits(),
                    "round {round} lane {k}"
                );
                let lanes: Vec<i8> = (0..16).map(|i| lt[i][k]).collect();
                assert_eq!(&l[..], &lanes[..], "round {round} lane {k}");
            }
        }
    }
}
