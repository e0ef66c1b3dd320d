//! The per-group sums of the error at vector speed, yet independent of how a tensor is split.
//! Value i of a group goes to lane i mod 4. Each lane sums in f32 over runs of [`RUN`] values of
//! the group (32 values, 8 per lane), and each run's four lane sums are added, widened, to four
//! f64 lanes, which combine as (l0 + l2) + (l1 + l3). A group is whole blocks starting at a fixed
//! place in the row, so every split of whole rows sums each group the same way. The portable
//! code and the simd128 code do the same operations in the same order: the same bits.
//!
//! Why f32 runs: e = x − y, e² and x·e in f32 are a quarter of the vector operations of the same
//! in f64 (four lanes a vector, no widening), and the comparison runs once per type on every
//! value. The price is precision, bounded: with u = 2⁻²⁴, e is within u·|e| of x − y, and a run
//! of 8 non-negative f32 terms e² sums within (8 + 2)·u of its exact value, so Σe² (and Σx²) is
//! within 10u ≈ 6·10⁻⁷ relative, the RMSE within 3·10⁻⁷; Σx·e within 10u of Σ|x·e|. The f64
//! sums of the runs and the exact sums after them add nothing visible.

/// Lanes per group sum.
const LANES: usize = 4;
/// Values per f32 run (8 per lane).
const RUN: usize = 32;

/// The largest e = x − y and the smallest seen (NaN never replaces either).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Extremes {
    pub(crate) max: f64,
    pub(crate) min: f64,
}

impl Extremes {
    /// max |e| (0 when nothing was seen).
    pub(crate) fn abs_max(&self) -> f64 {
        let neg = -self.min;
        if neg > self.max {
            neg
        } else {
            self.max
        }
    }
}

fn combine(l: [f64; LANES]) -> f64 {
    (l[0] + l[2]) + (l[1] + l[3])
}

/// Each `group`'s Σx² of `values`, passed to `each`.
pub(crate) fn sum_squares(values: &[f32], group: usize, mut each: impl FnMut(f64)) {
    for g in values.chunks(group) {
        let mut l = [0.0f64; LANES];
        for run in g.chunks(RUN) {
            let mut p = [0.0f32; LANES];
            let mut quads = run.chunks_exact(LANES);
            for x4 in &mut quads {
                for k in 0..LANES {
                    p[k] += x4[k] * x4[k];
                }
            }
            for (k, &x) in quads.remainder().iter().enumerate() {
                p[k] += x * x;
            }
            for k in 0..LANES {
                l[k] += f64::from(p[k]);
            }
        }
        each(combine(l));
    }
}

/// For each `group` of `x` (the values) and `y` (their round trip): `each(Σe², Σx·e)` with
/// e = x − y in f32; `ext` follows the extremes of e.
pub(crate) fn compare(
    x: &[f32],
    y: &[f32],
    group: usize,
    ext: &mut Extremes,
    each: impl FnMut(f64, f64),
) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    if group % RUN == 0 && x.len() % group == 0 && y.len() == x.len() {
        // SAFETY: simd128 is enabled; `compare_simd128` stays within the slices.
        return unsafe { compare_simd128(x, y, group, ext, each) };
    }
    compare_lanes(x, y, group, ext, each)
}

#[cfg_attr(
    all(target_arch = "wasm32", target_feature = "simd128"),
    allow(dead_code)
)]
fn compare_lanes(
    x: &[f32],
    y: &[f32],
    group: usize,
    ext: &mut Extremes,
    mut each: impl FnMut(f64, f64),
) {
    // f32 extremes: every e is an f32, and ext's came from earlier f32 e (or are 0).
    let mut mx = [ext.max as f32; LANES];
    let mut mn = [ext.min as f32; LANES];
    for (xs, ys) in x.chunks(group).zip(y.chunks(group)) {
        let mut e2 = [0.0f64; LANES];
        let mut xe = [0.0f64; LANES];
        for (xr, yr) in xs.chunks(RUN).zip(ys.chunks(RUN)) {
            let mut p2 = [0.0f32; LANES];
            let mut px = [0.0f32; LANES];
            let mut add = |k: usize, xv: f32, yv: f32| {
                let e = xv - yv;
                p2[k] += e * e;
                px[k] += xv * e;
                mx[k] = if mx[k] < e { e } else { mx[k] };
                mn[k] = if e < mn[k] { e } else { mn[k] };
            };
            // Whole quads as one 4-lane step (what LLVM vectorises), then the tail's lanes.
            let mut xq = xr.chunks_exact(LANES);
            let mut yq = yr.chunks_exact(LANES);
            for (x4, y4) in (&mut xq).zip(&mut yq) {
                for k in 0..LANES {
                    add(k, x4[k], y4[k]);
                }
            }
            for (k, (&xv, &yv)) in xq.remainder().iter().zip(yq.remainder()).enumerate() {
                add(k, xv, yv);
            }
            for k in 0..LANES {
                e2[k] += f64::from(p2[k]);
                xe[k] += f64::from(px[k]);
            }
        }
        each(combine(e2), combine(xe));
    }
    absorb(ext, mx, mn);
}

fn absorb(ext: &mut Extremes, mx: [f32; LANES], mn: [f32; LANES]) {
    for k in 0..LANES {
        let (hi, lo) = (f64::from(mx[k]), f64::from(mn[k]));
        ext.max = if ext.max < hi { hi } else { ext.max };
        ext.min = if lo < ext.min { lo } else { ext.min };
    }
}

/// [`compare_lanes`] in simd128 for groups of a multiple of [`RUN`] values: the four lanes are
/// one f32x4; each run's sums widen into two f64x2 (lanes 0–1, 2–3).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[target_feature(enable = "simd128")]
unsafe fn compare_simd128(
    x: &[f32],
    y: &[f32],
    group: usize,
    ext: &mut Extremes,
    mut each: impl FnMut(f64, f64),
) {
    use std::arch::wasm32::*;
    let n = x.len().min(y.len());
    let mut mx = f32x4_splat(ext.max as f32);
    let mut mn = f32x4_splat(ext.min as f32);
    let widen = |v: v128| {
        (
            f64x2_promote_low_f32x4(v),
            f64x2_promote_low_f32x4(i32x4_shuffle::<2, 3, 2, 3>(v, v)),
        )
    };
    let mut start = 0;
    while start + group <= n {
        let (mut e2_a, mut e2_b) = (f64x2_splat(0.0), f64x2_splat(0.0));
        let (mut xe_a, mut xe_b) = (e2_a, e2_b);
        for run in (start..start + group).step_by(RUN) {
            let mut p2 = f32x4_splat(0.0);
            let mut px = p2;
            for i in (run..run + RUN).step_by(LANES) {
                // SAFETY: i + 4 ≤ start + group ≤ n for both slices; v128_load has no
                // alignment requirement.
                let (x4, y4) = unsafe {
                    (
                        v128_load(x.as_ptr().add(i).cast()),
                        v128_load(y.as_ptr().add(i).cast()),
                    )
                };
                let e = f32x4_sub(x4, y4);
                p2 = f32x4_add(p2, f32x4_mul(e, e));
                px = f32x4_add(px, f32x4_mul(x4, e));
                // pmax(m, e) = m < e ? e : m and pmin(m, e) = e < m ? e : m: the portable selects.
                mx = f32x4_pmax(mx, e);
                mn = f32x4_pmin(mn, e);
            }
            let (a, b) = widen(p2);
            e2_a = f64x2_add(e2_a, a);
            e2_b = f64x2_add(e2_b, b);
            let (a, b) = widen(px);
            xe_a = f64x2_add(xe_a, a);
            xe_b = f64x2_add(xe_b, b);
        }
        // (l0 + l2) + (l1 + l3), as `combine`.
        let e2 = f64x2_add(e2_a, e2_b);
        let xe = f64x2_add(xe_a, xe_b);
        each(
            f64x2_extract_lane::<0>(e2) + f64x2_extract_lane::<1>(e2),
            f64x2_extract_lane::<0>(xe) + f64x2_extract_lane::<1>(xe),
        );
        start += group;
    }
    let lanes = |v: v128| {
        [
            f32x4_extract_lane::<0>(v),
            f32x4_extract_lane::<1>(v),
            f32x4_extract_lane::<2>(v),
            f32x4_extract_lane::<3>(v),
        ]
    };
    absorb(ext, lanes(mx), lanes(mn));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The documented order, written out: lane i mod 4, f32 runs of 32, f64 lanes, combined.
    fn reference(x: &[f32], y: &[f32], group: usize) -> Vec<(f64, f64, f64)> {
        let mut out = Vec::new();
        for (xs, ys) in x.chunks(group).zip(y.chunks(group)) {
            let mut l = [[0.0f64; 3]; 4];
            for start in (0..xs.len()).step_by(32) {
                let mut p = [[0.0f32; 3]; 4];
                for i in start..(start + 32).min(xs.len()) {
                    let e = xs[i] - ys[i];
                    p[(i - start) % 4][0] += e * e;
                    p[(i - start) % 4][1] += xs[i] * e;
                    p[(i - start) % 4][2] += xs[i] * xs[i];
                }
                for k in 0..4 {
                    for j in 0..3 {
                        l[k][j] += f64::from(p[k][j]);
                    }
                }
            }
            let c = |j: usize| (l[0][j] + l[2][j]) + (l[1][j] + l[3][j]);
            out.push((c(0), c(1), c(2)));
        }
        out
    }

    fn check(n: usize, group: usize) {
        let x: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
        let y: Vec<f32> = x.iter().map(|v| (v * 16.0).round() / 16.0).collect();
        let mut x2 = Vec::new();
        sum_squares(&x, group, |s| x2.push(s));
        let mut ext = Extremes::default();
        let mut sums = Vec::new();
        compare(&x, &y, group, &mut ext, |a, b| sums.push((a, b)));
        let want = reference(&x, &y, group);
        assert_eq!(sums.len(), want.len());
        for (g, &(e2, xe, xx)) in want.iter().enumerate() {
            assert_eq!((sums[g].0, sums[g].1, x2[g]), (e2, xe, xx), "group {g}");
        }
        let max = x
            .iter()
            .zip(&y)
            .map(|(&a, &b)| f64::from((a - b).abs()))
            .fold(0.0, f64::max);
        assert_eq!(ext.abs_max(), max);
    }

    #[test]
    fn lanes_sum_in_their_fixed_order() {
        // Groups shorter than a run, not a multiple of 4, several runs with a short last one,
        // and whole runs (the simd128 path in wasm).
        check(40, 20);
        check(33, 11);
        check(300, 100);
        check(4096, 128);
        check(8192, 4096);
    }

    #[test]
    fn within_the_stated_bound_of_exact() {
        // Against f64: Σe² and Σx² within 10u relative, Σx·e within 10u of Σ|x·e|.
        let n = 4096;
        let x: Vec<f32> = (0..n)
            .map(|i| ((i * 7919 % 1000) as f32 - 500.0) * 1e-3)
            .collect();
        let y: Vec<f32> = x.iter().map(|v| (v * 7.0).round() / 7.0).collect();
        let mut ext = Extremes::default();
        let (mut e2, mut xe, mut xx) = (0.0, 0.0, 0.0);
        compare(&x, &y, n, &mut ext, |a, b| (e2, xe) = (a, b));
        sum_squares(&x, n, |s| xx = s);
        let (mut we2, mut wxe, mut wxe_abs, mut wxx) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        for (&a, &b) in x.iter().zip(&y) {
            let (a, b) = (f64::from(a), f64::from(b));
            we2 += (a - b) * (a - b);
            wxe += a * (a - b);
            wxe_abs += (a * (a - b)).abs();
            wxx += a * a;
        }
        let u = f64::from(f32::EPSILON) / 2.0;
        assert!((e2 - we2).abs() <= 10.0 * u * we2, "{e2} {we2}");
        assert!((xx - wxx).abs() <= 10.0 * u * wxx, "{xx} {wxx}");
        assert!((xe - wxe).abs() <= 10.0 * u * wxe_abs, "{xe} {wxe}");
    }
}
