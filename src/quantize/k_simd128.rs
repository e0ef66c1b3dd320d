//! wasm simd128 versions of the K-quant scale searches: `k_avx2.rs` with 4-wide vectors (the
//! same f32 operations per lane, in the same order, so the same bits; wasm has no FMA unless
//! relaxed-simd is enabled, which it is not). Tested against ggml's scalar algorithm in `k.rs`.
#![cfg(all(target_arch = "wasm32", target_feature = "simd128"))]

use std::arch::wasm32::*;

/// ggml's `nearest_int` (the 1.5·2²³ trick, ties to even) and then a clamp to `lo..=hi`, as f32.
#[inline(always)]
unsafe fn quant(v: v128, lo: v128, hi: v128) -> v128 {
    f32x4_convert_i32x4(quant_i(v, lo, hi))
}

/// [`quant`] as i32 lanes.
#[inline(always)]
pub(super) unsafe fn quant_i(v: v128, lo: v128, hi: v128) -> v128 {
    let t = f32x4_add(v, f32x4_splat(12_582_912.0));
    let i = i32x4_sub(
        v128_and(t, i32x4_splat(0x007f_ffff)),
        i32x4_splat(0x0040_0000),
    );
    i32x4_min(i32x4_max(i, lo), hi)
}

/// Stores four i32 lanes holding 0..=255 as four bytes at `p` (two narrowing shuffles and one
/// store, where lane extracts and byte stores were eight operations and `i32x4.trunc_sat` from
/// f32 another eight in V8's x64 code).
#[inline(always)]
unsafe fn store_bytes(p: *mut u8, q: v128) {
    let h = i16x8_narrow_i32x4(q, q);
    v128_store32_lane::<0>(u8x16_narrow_i16x8(h, h), p.cast());
}

/// The error of one difference: |d| (`MAD`) or d². `abs` is the mask 0x7fff_ffff hidden from
/// LLVM: as a plain constant LLVM makes the `and` an `f32x4.abs`, which V8 lowers to three
/// instructions (it rebuilds the mask each time); this way it is one `and` with a register.
#[inline(always)]
unsafe fn err<const MAD: bool>(d: v128, abs: v128) -> v128 {
    if MAD {
        v128_and(d, abs)
    } else {
        f32x4_mul(d, d)
    }
}

#[inline(always)]
unsafe fn ld<const L: usize>(row: &[f32; L], c: usize) -> v128 {
    v128_load(row.as_ptr().add(c).cast())
}

/// `if m { b } else { a }` per lane.
#[inline(always)]
unsafe fn sel(a: v128, b: v128, m: v128) -> v128 {
    v128_bitselect(b, a, m)
}

/// [`quant`] to `0..=hi` for |v| < 2²² (hi a whole number): clamped first, then rounded by
/// `f32x4.nearest` (one `roundps`: ties to even, as the 1.5·2²³ trick). Rounding is monotonic
/// and the bounds are integers, so clamping before rounding gives the same integers; the
/// result is never −0 (`pmax` with +0 first). Three operations and two constants against the
/// trick's four and three (V8 keeps fewer values in the 16 xmm registers; measured faster).
/// `zero` is +0 hidden from LLVM, which otherwise turns `pmax(0, v)` into a compare and an
/// and (two instructions in V8's code where `maxps` is one). Only the clamps a step needs:
/// `LO` unless every v ≥ +0 (then `pmax(+0, v)` is v), `HI` unless every v < hi + 0.5 (then
/// rounding gives at most hi).
#[inline(always)]
unsafe fn quant_bounded<const LO: bool, const HI: bool>(v: v128, zero: v128, hi: v128) -> v128 {
    let v = if LO { f32x4_pmax(zero, v) } else { v };
    let v = if HI { f32x4_pmin(hi, v) } else { v };
    f32x4_nearest(v)
}

/// One step's sums of `make_qkx2_quants` (Σ w·l, Σ (w·l)·l, Σ (w·l)·x, in `sums`) with the quants
/// l into `laux`; `SMALL` when every iscale·(x − min) is within ±2²¹, and then `LO` / `HI` when
/// it may fall below +0 / reach nmax + 0.5 (the clamps that step needs, see `quant_bounded`).
/// Vector by vector (each lane's sums in the same order): with both vectors' six sums, mins and
/// inverse scales live at once, V8's register allocator keeps one sum in memory, a load and a
/// store on its chain at every value; one vector's three sums alone stay in registers. (The
/// error pass below keeps the vectors interleaved: its one sum per vector alone would be bound
/// by the add latency.) docs/benchmarks.md has the figures.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn step_sums<
    const L: usize,
    const N: usize,
    const V: usize,
    const SMALL: bool,
    const LO: bool,
    const HI: bool,
>(
    xt: &[[f32; L]; N],
    wt: &[[f32; L]; N],
    off: usize,
    iscale: &[v128; V],
    min: &[v128; V],
    nmaxf: v128,
    laux: &mut [[v128; V]; N],
    sums: &mut [[v128; V]; 3],
) {
    let (lo, hi) = (i32x4_splat(0), i32x4_trunc_sat_f32x4(nmaxf));
    let [sum_l, sum_l2, sum_xl] = sums;
    let zero = f32x4_splat(std::hint::black_box(0.0f32));
    for v in 0..V {
        for i in 0..N {
            let x = ld(&xt[i], off + 4 * v);
            let y = f32x4_mul(iscale[v], f32x4_sub(x, min[v]));
            let lf = if SMALL {
                quant_bounded::<LO, HI>(y, zero, nmaxf)
            } else {
                quant(y, lo, hi)
            };
            laux[i][v] = lf;
            let wl = f32x4_mul(ld(&wt[i], off + 4 * v), lf);
            sum_l[v] = f32x4_add(sum_l[v], wl);
            sum_l2[v] = f32x4_add(sum_l2[v], f32x4_mul(wl, lf));
            sum_xl[v] = f32x4_add(sum_xl[v], f32x4_mul(wl, x));
        }
    }
}

/// ggml's `make_qkx2_quants` (no early exit: nstep ≥ 1) for `L` sub-blocks of `N` values,
/// transposed (`xt[i][lane]`), in passes of `4·V` lanes. `MAD` picks |diff| over diff² as the
/// error. The `V` vectors of a pass are independent and stepped together, so their sequential
/// sums overlap in the pipeline (one vector alone is bound by the add latency); V = 2 because
/// V8 has 16 xmm registers and 4 vectors' state spills in the hot loop. Returns (scale, −min) per lane and the quants in `lt` (left untouched
/// unless `quants`: a round trip that never reads them skips their recomputation).
///
/// # Safety
/// Built only with simd128 enabled (no runtime check needed).
pub(super) unsafe fn qkx2<const L: usize, const N: usize, const V: usize, const MAD: bool>(
    xt: &[[f32; L]; N],
    wt: &[[f32; L]; N],
    q: (i32, f32, f32, i32),
    quants: bool,
    lt: &mut [[u8; L]; N],
) -> ([f32; L], [f32; L]) {
    assert!(V > 0 && L % (4 * V) == 0 && N > 0 && q.3 >= 1);
    let mut scales = [0.0f32; L];
    let mut the_mins = [0.0f32; L];
    for off in (0..L).step_by(4 * V) {
        qkx2_pass::<L, N, V, MAD>(xt, wt, q, quants, lt, off, &mut scales, &mut the_mins);
    }
    (scales, the_mins)
}

/// One pass of [`qkx2`]: lanes `off..off + 4·V`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn qkx2_pass<const L: usize, const N: usize, const V: usize, const MAD: bool>(
    xt: &[[f32; L]; N],
    wt: &[[f32; L]; N],
    (nmax, rmin, rdelta, nstep): (i32, f32, f32, i32),
    quants: bool,
    lt: &mut [[u8; L]; N],
    off: usize,
    scales: &mut [f32; L],
    the_mins: &mut [f32; L],
) {
    let zero = f32x4_splat(0.0);
    let sign = f32x4_splat(-0.0);
    let (lo, hi) = (i32x4_splat(0), i32x4_splat(nmax));
    let nmaxf = f32x4_splat(nmax as f32);
    let mut min = [zero; V];
    let mut max = [zero; V];
    let mut sum_w = [zero; V];
    let mut sum_x = [zero; V];
    for v in 0..V {
        min[v] = ld(&xt[0], off + 4 * v);
        max[v] = min[v];
        sum_w[v] = ld(&wt[0], off + 4 * v);
        sum_x[v] = f32x4_mul(sum_w[v], min[v]);
    }
    for i in 1..N {
        for v in 0..V {
            let x = ld(&xt[i], off + 4 * v);
            let w = ld(&wt[i], off + 4 * v);
            min[v] = f32x4_pmin(min[v], x); // x < min ? x : min
            max[v] = f32x4_pmax(max[v], x); // x > max ? x : max
            sum_w[v] = f32x4_add(sum_w[v], w);
            sum_x[v] = f32x4_add(sum_x[v], f32x4_mul(w, x));
        }
    }
    let xmin = min;
    let limit = f32x4_splat(2_097_152.0); // 2²¹
    let half_up = f32x4_splat(nmax as f32 + 0.5);
    let abs = i32x4_splat(std::hint::black_box(0x7fff_ffff));
    let mut flat = [zero; V];
    let mut iscale = [zero; V];
    let mut scale = [zero; V];
    for v in 0..V {
        // `if (min > 0) min = 0;` (a blend keeps −0.0 as C does).
        min[v] = sel(min[v], zero, f32x4_gt(min[v], zero));
        flat[v] = f32x4_eq(max[v], min[v]);
        iscale[v] = f32x4_div(nmaxf, f32x4_sub(max[v], min[v]));
        scale[v] = f32x4_div(f32x4_splat(1.0), iscale[v]);
    }
    let flat_min = min;
    let mut best_iscale = iscale;
    let mut best_qmin = min;
    let mut best_error = [zero; V];
    // Here min ≤ every x, so x − min lies in [+0, max − min] and iscale·(x − min) in [+0,
    // iscale·(max − min)] (rounding is monotonic), which is about nmax unless iscale overflowed
    // (a range below nmax/f32::MAX): then `nearest` alone is ggml's nearest_int and clamp.
    // Flat lanes (NaN here) count as passing: their results are replaced at the end.
    let mut init_small = -1i32;
    for v in 0..V {
        let b = f32x4_mul(iscale[v], f32x4_sub(max[v], min[v]));
        let ok = f32x4_lt(b, f32x4_splat(nmax as f32 + 0.5));
        init_small &= i32::from(i32x4_bitmask(v128_or(ok, flat[v])));
    }
    macro_rules! first_fit {
        ($l:expr) => {
            for i in 0..N {
                for v in 0..V {
                    let x = ld(&xt[i], off + 4 * v);
                    let l = $l(f32x4_mul(iscale[v], f32x4_sub(x, min[v])));
                    let diff = f32x4_sub(f32x4_add(f32x4_mul(scale[v], l), min[v]), x);
                    let e = f32x4_mul(ld(&wt[i], off + 4 * v), err::<MAD>(diff, abs));
                    best_error[v] = f32x4_add(best_error[v], e);
                }
            }
        };
    }
    if init_small == 0xf {
        first_fit!(|y| f32x4_nearest(y));
    } else {
        first_fit!(|y| quant(y, lo, hi));
    }
    let mut laux = [[zero; V]; N];
    for is in 0..=nstep {
        let num = f32x4_splat(rmin + rdelta * is as f32 + nmax as f32);
        let mut sums = [[zero; V]; 3];
        for v in 0..V {
            iscale[v] = f32x4_div(num, f32x4_sub(max[v], min[v]));
        }
        // Every iscale·(x − min) of the step lies between the two bounds (rounding is
        // monotonic); when all are well inside ±2²², nearest_int-and-clamp equals the cheaper
        // float form (see `quant_bounded`). Flat lanes (whose results are replaced at the end,
        // and whose iscale is infinite) count as passing every test: what they compute is
        // discarded, and wasm float operations do not trap.
        let mut small = -1i32;
        // Every lane's min < 0 and ≤ its smallest value: each x − min is +0 or more (never −0),
        // so no quant needs the clamp at 0.
        let mut above = -1i32;
        // Every lane's largest iscale·(x − min) below nmax + 0.5: none needs the clamp at nmax.
        let mut below = -1i32;
        for v in 0..V {
            let a = f32x4_mul(iscale[v], f32x4_sub(xmin[v], min[v]));
            let b = f32x4_mul(iscale[v], f32x4_sub(max[v], min[v]));
            let m = f32x4_pmax(f32x4_abs(a), f32x4_abs(b));
            let flat = flat[v];
            small &= i32::from(i32x4_bitmask(v128_or(f32x4_lt(m, limit), flat)));
            let lo_free = v128_and(f32x4_lt(min[v], zero), f32x4_le(min[v], xmin[v]));
            above &= i32::from(i32x4_bitmask(v128_or(lo_free, flat)));
            below &= i32::from(i32x4_bitmask(v128_or(f32x4_lt(b, half_up), flat)));
        }
        macro_rules! step {
            ($small:literal, $lo:literal, $hi:literal) => {
                step_sums::<L, N, V, $small, $lo, $hi>(
                    xt, wt, off, &iscale, &min, nmaxf, &mut laux, &mut sums,
                )
            };
        }
        match (small == 0xf, above == 0xf, below == 0xf) {
            (true, true, true) => step!(true, false, false),
            (true, true, false) => step!(true, false, true),
            (true, false, true) => step!(true, true, false),
            (true, false, false) => step!(true, true, true),
            _ => step!(false, true, true),
        }
        let [sum_l, sum_l2, sum_xl] = sums;
        let mut positive = [zero; V];
        let mut this_scale = [zero; V];
        let mut this_min = [zero; V];
        for v in 0..V {
            let (sw, sl, sl2, sxl) = (sum_w[v], sum_l[v], sum_l2[v], sum_xl[v]);
            let d = f32x4_sub(f32x4_mul(sw, sl2), f32x4_mul(sl, sl));
            positive[v] = f32x4_gt(d, zero);
            let ts = f32x4_div(f32x4_sub(f32x4_mul(sw, sxl), f32x4_mul(sum_x[v], sl)), d);
            let tm = f32x4_div(f32x4_sub(f32x4_mul(sl2, sum_x[v]), f32x4_mul(sl, sxl)), d);
            let above = f32x4_gt(tm, zero);
            this_min[v] = sel(tm, zero, above);
            this_scale[v] = sel(ts, f32x4_div(sxl, sl2), above);
        }
        let mut cur_error = [zero; V];
        for i in 0..N {
            for v in 0..V {
                let x = ld(&xt[i], off + 4 * v);
                let fit = f32x4_add(f32x4_mul(this_scale[v], laux[i][v]), this_min[v]);
                let e = f32x4_mul(ld(&wt[i], off + 4 * v), err::<MAD>(f32x4_sub(fit, x), abs));
                cur_error[v] = f32x4_add(cur_error[v], e);
            }
        }
        for v in 0..V {
            let better = f32x4_lt(cur_error[v], best_error[v]);
            let take = v128_and(positive[v], better);
            best_iscale[v] = sel(best_iscale[v], iscale[v], take);
            best_qmin[v] = sel(best_qmin[v], min[v], take);
            best_error[v] = sel(best_error[v], cur_error[v], take);
            scale[v] = sel(scale[v], this_scale[v], take);
            min[v] = sel(min[v], this_min[v], take);
        }
    }
    // The quants of the best step, recomputed from its (iscale, min); flat lanes are 0.
    for v in 0..V {
        let c = off + 4 * v;
        let keep = v128_not(flat[v]);
        if quants {
            for i in 0..N {
                let x = ld(&xt[i], c);
                let l = quant_i(
                    f32x4_mul(best_iscale[v], f32x4_sub(x, best_qmin[v])),
                    lo,
                    hi,
                );
                store_bytes(lt[i].as_mut_ptr().add(c), v128_and(l, keep));
            }
        }
        let s = sel(scale[v], zero, flat[v]);
        let m = sel(v128_xor(min[v], sign), v128_xor(flat_min[v], sign), flat[v]);
        v128_store_f(scales.as_mut_ptr().add(c), s);
        v128_store_f(the_mins.as_mut_ptr().add(c), m);
    }
}

/// For the `4·V` lanes from `c` of `make_qx_quants`/`make_q3_quants` groups: each lane's value
/// of largest magnitude (the first one, as ggml's strict `>`) and that magnitude, and per value
/// ggml's weight `w = x·x` and `w·x`.
///
/// # Safety
/// Built only with simd128 enabled (no runtime check needed); `c + 4·V <= L` (unchecked loads).
#[inline(always)]
#[allow(clippy::type_complexity)]
unsafe fn weighted<const L: usize, const N: usize, const V: usize>(
    xt: &[[f32; L]; N],
    c: usize,
) -> ([v128; V], [v128; V], [[v128; V]; N], [[v128; V]; N]) {
    let zero = f32x4_splat(0.0);
    let mut max = [zero; V];
    let mut amax = [zero; V];
    let mut w = [[zero; V]; N];
    let mut wv = [[zero; V]; N];
    for i in 0..N {
        for v in 0..V {
            let x = ld(&xt[i], c + 4 * v);
            let ax = f32x4_abs(x);
            let bigger = f32x4_gt(ax, amax[v]);
            amax[v] = sel(amax[v], ax, bigger);
            max[v] = sel(max[v], x, bigger);
            w[i][v] = f32x4_mul(x, x);
            wv[i][v] = f32x4_mul(w[i][v], x);
        }
    }
    (max, amax, w, wv)
}

/// ggml's `make_qx_quants` with `rmse_type = 1` and no weights (weights x²), for `L` sub-blocks
/// (a multiple of 4·V) of `N` values, transposed. Quants (0..2·nmax) into `lt`, scales returned.
/// As in `qkx2`, the search keeps each lane's best inverse scale and recomputes its quants once.
/// `V` vectors (4·V lanes) go through the search together: one alone is bound by the latency of
/// its two running sums. Unless `quants`, the quants of groups that are not all zero are left
/// untouched (a round trip that rarely needs them skips their recomputation).
///
/// # Safety
/// Built only with simd128 enabled (no runtime check needed).
pub(super) unsafe fn qx<const L: usize, const N: usize, const V: usize>(
    xt: &[[f32; L]; N],
    nmax: i32,
    group_max_eps: f32,
    quants: bool,
    lt: &mut [[i8; L]; N],
) -> [f32; L] {
    debug_assert!(V > 0 && L % (4 * V) == 0);
    let mut scales = [0.0f32; L];
    let zero = f32x4_splat(0.0);
    let (lo, hi) = (i32x4_splat(-nmax), i32x4_splat(nmax - 1));
    for c in (0..L).step_by(4 * V) {
        let (max, amax, w, wv) = weighted::<L, N, V>(xt, c);
        // Each lane's smallest and largest value: iscale·x lies between their products.
        let (mut xlo, mut xhi) = ([zero; V], [zero; V]);
        for v in 0..V {
            xlo[v] = ld(&xt[0], c + 4 * v);
            xhi[v] = xlo[v];
            for row in &xt[1..] {
                let x = ld(row, c + 4 * v);
                xlo[v] = f32x4_pmin(xlo[v], x);
                xhi[v] = f32x4_pmax(xhi[v], x);
            }
        }
        // One step's sums: Σ (w·x)·l and Σ (w·l)·l with l = clamp(nearest_int(iscale·x)).
        // When every |iscale·x| (at most |iscale·max|: rounding is monotonic) is well inside
        // ±2²², the clamp and rounding are done in f32 as in `quant_bounded` (same integers),
        // and a clamp is left out when no iscale·x of the step reaches it: at or above
        // −nmax − 0.5 (rounding ties to even, −nmax − 0.5 rounds to −nmax) or below
        // nmax − 0.5, the clamp is the identity or changes nothing after rounding. The value
        // of largest magnitude gives iscale·max ≈ −(nmax + 0.1·is): for is ≤ 4 (15 of the 20
        // steps) no lane needs the lower clamp.
        let (flo, fhi) = (f32x4_splat(-(nmax as f32)), f32x4_splat((nmax - 1) as f32));
        let (lo_edge, hi_edge) = (
            f32x4_splat(-(nmax as f32) - 0.5),
            f32x4_splat(nmax as f32 - 0.5),
        );
        // The steps' inverse scales depend on no earlier step: divided all first, so no step
        // starts by waiting on its division.
        let mut iscales = [[zero; V]; 18];
        for (k, is) in (-9i32..=9).filter(|&is| is != 0).enumerate() {
            let num = f32x4_splat(-(nmax as f32 + 0.1f32 * is as f32));
            for v in 0..V {
                iscales[k][v] = f32x4_div(num, max[v]);
            }
        }
        // `small` once for all steps: the last step (is = 9) has the largest |num| (the first
        // one's nmax included), so the largest |iscale| and |iscale·max| (rounding is
        // monotonic) of the pass.
        let abs = i32x4_splat(std::hint::black_box(0x7fff_ffff)); // as in `err`
        let small = (0..V).all(|v| {
            let bound = v128_and(f32x4_mul(iscales[17][v], max[v]), abs);
            i32x4_bitmask(f32x4_lt(bound, f32x4_splat(2_097_152.0))) == 0xf
        });
        let sums = |iscale: [v128; V]| {
            let (mut lo_free, mut hi_free) = (true, true);
            for v in 0..V {
                let ya = f32x4_mul(iscale[v], xlo[v]);
                let yb = f32x4_mul(iscale[v], xhi[v]);
                let (ylo, yhi) = (f32x4_pmin(ya, yb), f32x4_pmax(ya, yb));
                lo_free &= i32x4_bitmask(f32x4_ge(ylo, lo_edge)) == 0xf;
                hi_free &= i32x4_bitmask(f32x4_lt(yhi, hi_edge)) == 0xf;
            }
            let (mut sumlx, mut suml2) = ([zero; V], [zero; V]);
            macro_rules! step {
                ($l:expr) => {
                    for i in 0..N {
                        for v in 0..V {
                            let y = f32x4_mul(iscale[v], ld(&xt[i], c + 4 * v));
                            let l = $l(y);
                            sumlx[v] = f32x4_add(sumlx[v], f32x4_mul(wv[i][v], l));
                            suml2[v] = f32x4_add(suml2[v], f32x4_mul(f32x4_mul(w[i][v], l), l));
                        }
                    }
                };
            }
            // As `quant_bounded` (clamp, then round); a y in (−0.5, 0) gives −0, which
            // changes no sum (they start at +0, and x + (±0) = x for every other x).
            match (small, lo_free, hi_free) {
                (true, true, true) => step!(|y| f32x4_nearest(y)),
                (true, true, false) => step!(|y| f32x4_nearest(f32x4_pmin(fhi, y))),
                (true, false, true) => step!(|y| f32x4_nearest(f32x4_pmax(flo, y))),
                (true, false, false) => {
                    step!(|y| f32x4_nearest(f32x4_pmin(fhi, f32x4_pmax(flo, y))))
                }
                _ => step!(|y| quant(y, lo, hi)),
            }
            (sumlx, suml2)
        };
        let mut iscale0 = [zero; V];
        for v in 0..V {
            iscale0[v] = f32x4_div(f32x4_splat(-(nmax as f32)), max[v]);
        }
        let (sumlx, suml2) = sums(iscale0);
        let mut scale = [zero; V];
        let mut best = [zero; V];
        for v in 0..V {
            let nonzero = f32x4_ne(suml2[v], zero);
            scale[v] = v128_and(f32x4_div(sumlx[v], suml2[v]), nonzero);
            best[v] = f32x4_mul(scale[v], sumlx[v]);
        }
        let mut best_iscale = iscale0;
        for iscale in iscales {
            let (sumlx, suml2) = sums(iscale);
            for v in 0..V {
                let take = v128_and(
                    f32x4_gt(suml2[v], zero),
                    f32x4_gt(f32x4_mul(sumlx[v], sumlx[v]), f32x4_mul(best[v], suml2[v])),
                );
                best_iscale[v] = sel(best_iscale[v], iscale[v], take);
                scale[v] = sel(scale[v], f32x4_div(sumlx[v], suml2[v]), take);
                best[v] = sel(best[v], f32x4_mul(scale[v], sumlx[v]), take);
            }
        }
        for v in 0..V {
            // ggml returns quants 0 and scale 0 for an all-zero group.
            let live = v128_not(f32x4_lt(amax[v], f32x4_splat(group_max_eps)));
            if quants {
                for i in 0..N {
                    let l = quant_i(f32x4_mul(best_iscale[v], ld(&xt[i], c + 4 * v)), lo, hi);
                    let q = v128_and(i32x4_add(l, i32x4_splat(nmax)), live);
                    store_bytes(lt[i].as_mut_ptr().add(c + 4 * v).cast(), q);
                }
            }
            v128_store_f(scales.as_mut_ptr().add(c + 4 * v), v128_and(scale[v], live));
        }
    }
    scales
}

#[inline(always)]
unsafe fn v128_store_f(p: *mut f32, v: v128) {
    v128_store(p.cast(), v);
}

/// ggml's requantization of one sub-block against its rounded scale:
/// `out[k] = clamp(nearest_int((x[k] + dm) / d), lo, hi) + add` as bytes, four values per
/// operation (the same f32 operations per value, so the same integers). `x.len()` is a
/// multiple of 4 and at most `out.len()`.
///
/// # Safety
/// Built only with simd128 enabled (no runtime check needed).
pub(super) unsafe fn requant(
    x: &[f32],
    dm: f32,
    d: f32,
    (lo, hi, add): (i32, i32, i32),
    out: &mut [u8],
) {
    assert!(x.len() % 4 == 0 && x.len() <= out.len());
    let (dmv, dv) = (f32x4_splat(dm), f32x4_splat(d));
    let (lo, hi, add) = (i32x4_splat(lo), i32x4_splat(hi), i32x4_splat(add));
    for k in (0..x.len()).step_by(4) {
        let v = v128_load(x.as_ptr().add(k).cast());
        let l = quant_i(f32x4_div(f32x4_add(v, dmv), dv), lo, hi);
        store_bytes(out.as_mut_ptr().add(k), i32x4_add(l, add));
    }
}

/// The 4×4 transpose of four rows of four 32-bit lanes (row k, lane j → row j, lane k).
#[inline(always)]
fn transpose4([a, b, c, d]: [v128; 4]) -> [v128; 4] {
    let t0 = i32x4_shuffle::<0, 4, 1, 5>(a, b);
    let t1 = i32x4_shuffle::<2, 6, 3, 7>(a, b);
    let t2 = i32x4_shuffle::<0, 4, 1, 5>(c, d);
    let t3 = i32x4_shuffle::<2, 6, 3, 7>(c, d);
    [
        i32x4_shuffle::<0, 1, 4, 5>(t0, t2),
        i32x4_shuffle::<2, 3, 6, 7>(t0, t2),
        i32x4_shuffle::<0, 1, 4, 5>(t1, t3),
        i32x4_shuffle::<2, 3, 6, 7>(t1, t3),
    ]
}

/// `out[l][j] = x[16·j + l]`: the 16×16 transpose of a super-block's sub-blocks, in 4×4 tiles
/// of shuffles (LLVM's code for the scalar loop was 256 single loads and stores).
///
/// # Safety
/// Built only with simd128 enabled (no runtime check needed).
pub(super) unsafe fn transpose16(x: &[f32; 256]) -> [[f32; 16]; 16] {
    let mut out = [[0.0f32; 16]; 16];
    for jb in (0..16).step_by(4) {
        for lb in (0..16).step_by(4) {
            let r = |k: usize| v128_load(x.as_ptr().add(16 * (jb + k) + lb).cast());
            for (k, v) in transpose4([r(0), r(1), r(2), r(3)]).into_iter().enumerate() {
                v128_store(out[lb + k].as_mut_ptr().add(jb).cast(), v);
            }
        }
    }
    out
}

/// ggml's `make_q3_quants` with `do_rmse` (Q3_K) for `L` sub-blocks (a multiple of 4·V) of `N`
/// values, transposed, `V` = 4 vectors at a time: `k.rs`'s `make_q3_lanes` with the same f32
/// operations per lane in the same order (selects where ggml branches), so the same bits.
/// LLVM's auto-vectorised build of that loop kept one lane per scalar operation in places;
/// here the `V` vectors' update chains (a division each per value) overlap. A pass of `4·V`
/// lanes stops when none of them changed (a lane that changed nothing in a pass changes
/// nothing later: its state is the same), as ggml's per-group early exit.
///
/// # Safety
/// Built only with simd128 enabled (no runtime check needed).
pub(super) unsafe fn q3<const L: usize, const N: usize, const V: usize>(
    xt: &[[f32; L]; N],
    nmax: i32,
    group_max_eps: f32,
    lt: &mut [[i8; L]; N],
) -> [f32; L] {
    // Four vectors: the update loop below holds their sums in four named pairs.
    assert!(V == 4 && L % (4 * V) == 0);
    let mut scales = [0.0f32; L];
    let zero = f32x4_splat(0.0);
    let (lo, hi) = (i32x4_splat(-nmax), i32x4_splat(nmax - 1));
    for c in (0..L).step_by(4 * V) {
        let (max, amax, w, wv) = weighted::<L, N, V>(xt, c);
        let mut iscale = [zero; V];
        for v in 0..V {
            iscale[v] = f32x4_div(f32x4_splat(-(nmax as f32)), max[v]);
        }
        // Quants as f32 (exact small integers), as the sums use them.
        let mut lq = [[zero; V]; N];
        let mut sumlx = [zero; V];
        let mut suml2 = [zero; V];
        for i in 0..N {
            for v in 0..V {
                let x = ld(&xt[i], c + 4 * v);
                let l = f32x4_convert_i32x4(quant_i(f32x4_mul(iscale[v], x), lo, hi));
                lq[i][v] = l;
                sumlx[v] = f32x4_add(sumlx[v], f32x4_mul(wv[i][v], l));
                suml2[v] = f32x4_add(suml2[v], f32x4_mul(f32x4_mul(w[i][v], l), l));
            }
        }
        // One value's update of lane group v, its sums in `$sx`, `$s2`.
        macro_rules! update {
            ($i:expr, $v:expr, $sx:ident, $s2:ident, $changed:ident) => {{
                let (i, v) = ($i, $v);
                let x = ld(&xt[i], c + 4 * v);
                let (wi, wvi, li) = (w[i][v], wv[i][v], lq[i][v]);
                let slx = f32x4_sub($sx, f32x4_mul(wvi, li));
                let sl2 = f32x4_sub($s2, f32x4_mul(f32x4_mul(wi, li), li));
                let y = f32x4_div(f32x4_mul(x, sl2), slx);
                let nl = f32x4_convert_i32x4(quant_i(y, lo, hi));
                let moved = v128_and(f32x4_gt(slx, zero), f32x4_ne(nl, li));
                let slx = f32x4_add(slx, f32x4_mul(wvi, nl));
                let sl2 = f32x4_add(sl2, f32x4_mul(f32x4_mul(wi, nl), nl));
                let better = f32x4_gt(
                    f32x4_mul(f32x4_mul(slx, slx), $s2),
                    f32x4_mul(f32x4_mul($sx, $sx), sl2),
                );
                let take = v128_and(moved, v128_and(f32x4_gt(sl2, zero), better));
                lq[i][v] = sel(li, nl, take);
                $sx = sel($sx, slx, take);
                $s2 = sel($s2, sl2, take);
                $changed = v128_or($changed, take);
            }};
        }
        // The four vectors' sums as separate locals: kept in arrays, LLVM left them in memory,
        // and each value's update chain went through a store and a reload.
        let [mut x0, mut x1, mut x2, mut x3] = [sumlx[0], sumlx[1], sumlx[2], sumlx[3]];
        let [mut y0, mut y1, mut y2, mut y3] = [suml2[0], suml2[1], suml2[2], suml2[3]];
        for _ in 0..5 {
            let mut changed = zero;
            for i in 0..N {
                update!(i, 0, x0, y0, changed);
                update!(i, 1, x1, y1, changed);
                update!(i, 2, x2, y2, changed);
                update!(i, 3, x3, y3, changed);
            }
            if !v128_any_true(changed) {
                break;
            }
        }
        (sumlx[0], sumlx[1], sumlx[2], sumlx[3]) = (x0, x1, x2, x3);
        (suml2[0], suml2[1], suml2[2], suml2[3]) = (y0, y1, y2, y3);
        for v in 0..V {
            let live = v128_not(f32x4_lt(amax[v], f32x4_splat(group_max_eps)));
            // `suml2 > 0 ? sumlx/suml2 : 0` (false for NaN), and 0 for an all-zero group.
            let ok = v128_and(live, f32x4_gt(suml2[v], zero));
            let s = v128_and(f32x4_div(sumlx[v], suml2[v]), ok);
            v128_store_f(scales.as_mut_ptr().add(c + 4 * v), s);
            for i in 0..N {
                let l = i32x4_add(i32x4_trunc_sat_f32x4(lq[i][v]), i32x4_splat(nmax));
                store_bytes(lt[i].as_mut_ptr().add(c + 4 * v).cast(), v128_and(l, live));
            }
        }
    }
    scales
}

/// `out[l][j] = x[j / 8][32·(j % 8) + l]` (Q4_K/Q5_K: two super-blocks' 16 sub-blocks of 32
/// values, one per lane) in 4×4 tiles of shuffles, as [`transpose16`].
///
/// # Safety
/// Built only with simd128 enabled (no runtime check needed).
pub(super) unsafe fn transpose_pair(x: [&[f32; 256]; 2]) -> [[f32; 16]; 32] {
    let mut out = [[0.0f32; 16]; 32];
    for jb in (0..16).step_by(4) {
        for lb in (0..32).step_by(4) {
            let r = |k: usize| {
                let j = jb + k;
                v128_load(x[j / 8].as_ptr().add(32 * (j % 8) + lb).cast())
            };
            for (k, v) in transpose4([r(0), r(1), r(2), r(3)]).into_iter().enumerate() {
                v128_store(out[lb + k].as_mut_ptr().add(jb).cast(), v);
            }
        }
    }
    out
}

/// The 16×16 byte transpose of `r` (row i, byte j → row j, byte i): four rounds of
/// interleaving row i with row i + 8 byte by byte.
#[inline(always)]
unsafe fn transpose_bytes(mut r: [v128; 16]) -> [v128; 16] {
    for _ in 0..4 {
        let mut o = [i32x4_splat(0); 16];
        for i in 0..8 {
            o[2 * i] = i8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(
                r[i],
                r[i + 8],
            );
            o[2 * i + 1] =
                i8x16_shuffle::<8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31>(
                    r[i],
                    r[i + 8],
                );
        }
        r = o;
    }
    r
}

/// `out[16·j + l] = lt[l][j]` (quants of 16 sub-blocks of 16, one per lane, back in value
/// order), where the scalar loop was 256 single-byte loads and stores.
///
/// # Safety
/// Built only with simd128 enabled (no runtime check needed).
pub(super) unsafe fn untranspose16<T: Copy>(lt: &[[T; 16]; 16], out: &mut [T; 256]) {
    assert!(std::mem::size_of::<T>() == 1);
    let mut r = [i32x4_splat(0); 16];
    for (i, v) in r.iter_mut().enumerate() {
        *v = v128_load(lt[i].as_ptr().cast());
    }
    for (j, v) in transpose_bytes(r).iter().enumerate() {
        v128_store(out.as_mut_ptr().add(16 * j).cast(), *v);
    }
}

/// `out[j / 8][32·(j % 8) + l] = lt[l][j]`: two 16×16 byte transposes (rows l < 16, then the
/// rest), where the scalar loop was 512 single-byte loads and stores.
///
/// # Safety
/// Built only with simd128 enabled (no runtime check needed).
pub(super) unsafe fn untranspose_pair(lt: &[[u8; 16]; 32]) -> [[u8; 256]; 2] {
    let mut out = [[0u8; 256]; 2];
    for half in 0..2 {
        let mut r = [i32x4_splat(0); 16];
        for (i, v) in r.iter_mut().enumerate() {
            *v = v128_load(lt[16 * half + i].as_ptr().cast());
        }
        // Row j is column j: values l = 16·half.. of sub-block j.
        for (j, v) in transpose_bytes(r).iter().enumerate() {
            v128_store(
                out[j / 8].as_mut_ptr().add(32 * (j % 8) + 16 * half).cast(),
                *v,
            );
        }
    }
    out
}
