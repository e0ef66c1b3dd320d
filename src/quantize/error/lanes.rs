//! The per-group f64 sums of the error, at vector speed yet independent of how a tensor is split:
//! value i of a group goes to lane i mod 4, and a group's lanes combine as (l0 + l2) + (l1 + l3)
//! (two f64x2 vectors added, then their halves). A group is whole blocks starting at a fixed
//! place in the row, so every split of whole rows sums each group the same way. The portable
//! code and the simd128 code do the same operations in the same order: the same bits.

/// Lanes per group sum.
const LANES: usize = 4;

/// The largest e = x − y and the smallest seen (NaN never replaces either).
#[derive(Debug, Clone, Copy, Default)]
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

/// `values` widened to f64 into `xd`, and each `group`'s Σx² passed to `each`.
pub(crate) fn widen(values: &[f32], group: usize, xd: &mut Vec<f64>, mut each: impl FnMut(f64)) {
    xd.clear();
    xd.extend(values.iter().map(|&v| f64::from(v)));
    for g in xd.chunks(group) {
        let mut l = [0.0f64; LANES];
        for (i, &x) in g.iter().enumerate() {
            l[i % LANES] += x * x;
        }
        each(combine(l));
    }
}

/// For each `group` of `xd` (the values) and `y` (their round trip): `each(Σe², Σx·e)` with
/// e = x − y in f64; `ext` follows the extremes of e.
pub(crate) fn compare(
    xd: &[f64],
    y: &[f32],
    group: usize,
    ext: &mut Extremes,
    each: impl FnMut(f64, f64),
) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    if group % LANES == 0 && xd.len() % group == 0 && y.len() == xd.len() {
        // SAFETY: simd128 is enabled; `compare_simd128` stays within the slices.
        return unsafe { compare_simd128(xd, y, group, ext, each) };
    }
    compare_lanes(xd, y, group, ext, each)
}

#[cfg_attr(
    all(target_arch = "wasm32", target_feature = "simd128"),
    allow(dead_code)
)]
fn compare_lanes(
    xd: &[f64],
    y: &[f32],
    group: usize,
    ext: &mut Extremes,
    mut each: impl FnMut(f64, f64),
) {
    let mut mx = [ext.max; LANES];
    let mut mn = [ext.min; LANES];
    for (xs, ys) in xd.chunks(group).zip(y.chunks(group)) {
        let mut e2 = [0.0f64; LANES];
        let mut xe = [0.0f64; LANES];
        let mut xq = xs.chunks_exact(LANES);
        let mut yq = ys.chunks_exact(LANES);
        for (x, y) in (&mut xq).zip(&mut yq) {
            for k in 0..LANES {
                let e = x[k] - f64::from(y[k]);
                e2[k] += e * e;
                xe[k] += x[k] * e;
                mx[k] = if mx[k] < e { e } else { mx[k] };
                mn[k] = if e < mn[k] { e } else { mn[k] };
            }
        }
        for (k, (&x, &y)) in xq.remainder().iter().zip(yq.remainder()).enumerate() {
            let e = x - f64::from(y);
            e2[k] += e * e;
            xe[k] += x * e;
            mx[k] = if mx[k] < e { e } else { mx[k] };
            mn[k] = if e < mn[k] { e } else { mn[k] };
        }
        each(combine(e2), combine(xe));
    }
    for k in 0..LANES {
        ext.max = if ext.max < mx[k] { mx[k] } else { ext.max };
        ext.min = if mn[k] < ext.min { mn[k] } else { ext.min };
    }
}

/// [`compare_lanes`] in simd128 for groups of a multiple of 4 values: lanes 0–1 in one f64x2,
/// 2–3 in another (LLVM's own wasm code for the lanes is scalar).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[target_feature(enable = "simd128")]
unsafe fn compare_simd128(
    xd: &[f64],
    y: &[f32],
    group: usize,
    ext: &mut Extremes,
    mut each: impl FnMut(f64, f64),
) {
    use std::arch::wasm32::*;
    let n = xd.len().min(y.len());
    let mut mx_a = f64x2_splat(ext.max);
    let mut mx_b = mx_a;
    let mut mn_a = f64x2_splat(ext.min);
    let mut mn_b = mn_a;
    let mut start = 0;
    while start < n {
        let end = (start + group).min(n);
        let (mut e2_a, mut e2_b) = (f64x2_splat(0.0), f64x2_splat(0.0));
        let (mut xe_a, mut xe_b) = (e2_a, e2_b);
        let mut i = start;
        while i + LANES <= end {
            // SAFETY: i + 4 ≤ n for both slices; v128_load has no alignment requirement.
            let (y4, x_a, x_b) = unsafe {
                (
                    v128_load(y.as_ptr().add(i).cast()),
                    v128_load(xd.as_ptr().add(i).cast()),
                    v128_load(xd.as_ptr().add(i + 2).cast()),
                )
            };
            let y_a = f64x2_promote_low_f32x4(y4);
            let y_b = f64x2_promote_low_f32x4(i32x4_shuffle::<2, 3, 2, 3>(y4, y4));
            let e_a = f64x2_sub(x_a, y_a);
            let e_b = f64x2_sub(x_b, y_b);
            e2_a = f64x2_add(e2_a, f64x2_mul(e_a, e_a));
            e2_b = f64x2_add(e2_b, f64x2_mul(e_b, e_b));
            xe_a = f64x2_add(xe_a, f64x2_mul(x_a, e_a));
            xe_b = f64x2_add(xe_b, f64x2_mul(x_b, e_b));
            // pmax(m, e) = m < e ? e : m and pmin(m, e) = e < m ? e : m: the portable selects.
            mx_a = f64x2_pmax(mx_a, e_a);
            mx_b = f64x2_pmax(mx_b, e_b);
            mn_a = f64x2_pmin(mn_a, e_a);
            mn_b = f64x2_pmin(mn_b, e_b);
            i += LANES;
        }
        let e2 = f64x2_add(e2_a, e2_b);
        let xe = f64x2_add(xe_a, xe_b);
        each(
            f64x2_extract_lane::<0>(e2) + f64x2_extract_lane::<1>(e2),
            f64x2_extract_lane::<0>(xe) + f64x2_extract_lane::<1>(xe),
        );
        start = end;
    }
    let lanes = [
        f64x2_extract_lane::<0>(mx_a),
        f64x2_extract_lane::<1>(mx_a),
        f64x2_extract_lane::<0>(mx_b),
        f64x2_extract_lane::<1>(mx_b),
    ];
    for m in lanes {
        ext.max = if ext.max < m { m } else { ext.max };
    }
    let lanes = [
        f64x2_extract_lane::<0>(mn_a),
        f64x2_extract_lane::<1>(mn_a),
        f64x2_extract_lane::<0>(mn_b),
        f64x2_extract_lane::<1>(mn_b),
    ];
    for m in lanes {
        ext.min = if m < ext.min { m } else { ext.min };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_sum_in_their_fixed_order() {
        let x: Vec<f32> = (0..40).map(|i| (i as f32 * 0.37).sin()).collect();
        let y: Vec<f32> = x.iter().map(|v| (v * 16.0).round() / 16.0).collect();
        let mut xd = Vec::new();
        let mut x2 = Vec::new();
        widen(&x, 20, &mut xd, |s| x2.push(s));
        let mut ext = Extremes::default();
        let mut sums = Vec::new();
        compare(&xd, &y, 20, &mut ext, |a, b| sums.push((a, b)));
        assert_eq!(sums.len(), 2);
        for g in 0..2 {
            let mut l = [[0.0f64; 3]; 4];
            for i in 0..20 {
                let (xv, yv) = (f64::from(x[20 * g + i]), f64::from(y[20 * g + i]));
                let e = xv - yv;
                l[i % 4][0] += e * e;
                l[i % 4][1] += xv * e;
                l[i % 4][2] += xv * xv;
            }
            let c = |j: usize| (l[0][j] + l[2][j]) + (l[1][j] + l[3][j]);
            assert_eq!((sums[g].0, sums[g].1, x2[g]), (c(0), c(1), c(2)));
        }
        let want = x
            .iter()
            .zip(&y)
            .map(|(&a, &b)| (f64::from(a) - f64::from(b)).abs())
            .fold(0.0, f64::max);
        assert_eq!(ext.abs_max(), want);
    }
}
