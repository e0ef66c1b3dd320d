//! Moments of values given with their counts (value `values[i]` seen `counts[i]` times), for
//! pieces of a tensor whose blocks have few codes: each distinct value of a block is handled
//! once with its count. Counts, range and zeros are exact; the sums are the same products added
//! in another order than [`Moments::of`] would, so mean and `m2` agree with it to rounding.

#[cfg(target_arch = "x86_64")]
use super::kernels::avx2;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
use super::kernels::simd128;
use super::kernels::{isa, Isa};
use super::moments::{lane_max, lane_min, Moments};

/// Lanes of the sums: pair `i` goes to lane `i % LANES`, combined in lane order.
pub(in crate::stats) const LANES: usize = 8;

/// The moments of `values[i]` counted `counts[i]` times (same lengths; a count is at most
/// 2^31 - 1, as a group's counts are; `count` their sum).
pub(crate) fn moments_counted(values: &[f32], counts: &[u32], count: u64) -> Moments {
    match isa() {
        // SAFETY: the CPU has AVX2 (`isa` chose it only then), all `counted` needs.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { avx2::counted::counted(values, counts, count) },
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        Isa::Simd128 => simd128::counted::counted(values, counts, count),
        Isa::Scalar => portable(values, counts, count),
    }
}

/// [`moments_counted`] without vectors: the reference the vector loops are tested against.
fn portable(values: &[f32], counts: &[u32], count: u64) -> Moments {
    let n = values.len().min(counts.len());
    let (values, counts) = (&values[..n], &counts[..n]);
    let (mut m, more) = counted_from(values, counts, count, 0, &mut State::new());
    if more {
        deviations_from(values, counts, 0, &mut m, &mut [0.0; LANES]);
    }
    m
}

/// Lane state of the first loop: range, sums of `count * value`, zero counts.
pub(in crate::stats) struct State {
    pub(in crate::stats) lo: [f32; LANES],
    pub(in crate::stats) hi: [f32; LANES],
    pub(in crate::stats) sum: [f64; LANES],
    pub(in crate::stats) zero: [u32; LANES],
}

impl State {
    pub(in crate::stats) fn new() -> State {
        State {
            lo: [f32::INFINITY; LANES],
            hi: [f32::NEG_INFINITY; LANES],
            sum: [0.0; LANES],
            zero: [0; LANES],
        }
    }
}

/// The portable first loop from pair `start` on (a multiple of `LANES`; a vector loop did the
/// pairs before it into `state`, the same operations per lane, so the same bits), and whether
/// `m2` is still to come ([`deviations_from`]).
pub(in crate::stats) fn counted_from(
    values: &[f32],
    counts: &[u32],
    count: u64,
    start: usize,
    state: &mut State,
) -> (Moments, bool) {
    // Finite values first (nearly always): lane sums of `count * value` in f64 are finite
    // exactly when every value counted was (a count is small, a product exact).
    let State { lo, hi, sum, zero } = state;
    let mut vs = values[start..].chunks_exact(LANES);
    let mut cs = counts[start..].chunks_exact(LANES);
    for (v, c) in (&mut vs).zip(&mut cs) {
        for l in 0..LANES {
            let present = c[l] != 0;
            lo[l] = lane_min(lo[l], if present { v[l] } else { f32::INFINITY });
            hi[l] = lane_max(hi[l], if present { v[l] } else { f32::NEG_INFINITY });
            sum[l] += f64::from(c[l]) * f64::from(v[l]);
            zero[l] += if v[l] == 0.0 { c[l] } else { 0 };
        }
    }
    for (l, (&v, &c)) in vs.remainder().iter().zip(cs.remainder()).enumerate() {
        let present = c != 0;
        lo[l] = lane_min(lo[l], if present { v } else { f32::INFINITY });
        hi[l] = lane_max(hi[l], if present { v } else { f32::NEG_INFINITY });
        sum[l] += f64::from(c) * f64::from(v);
        zero[l] += if v == 0.0 { c } else { 0 };
    }
    if !sum.iter().all(|s| s.is_finite()) {
        // A value not finite: the general loop, from the start.
        return (with_non_finite(values, counts, count), false);
    }
    let mut m = Moments {
        count,
        finite: count,
        zeros: zero.iter().map(|&z| u64::from(z)).sum(),
        ..Moments::default()
    };
    if count == 0 {
        return (m, false);
    }
    m.min = lo.iter().copied().fold(f32::INFINITY, lane_min);
    m.max = hi.iter().copied().fold(f32::NEG_INFINITY, lane_max);
    m.mean = sum.iter().sum::<f64>() / count as f64;
    (m, true)
}

/// `m2` from pair `start` on, `dev` holding the lanes of the pairs before.
pub(in crate::stats) fn deviations_from(
    values: &[f32],
    counts: &[u32],
    start: usize,
    m: &mut Moments,
    dev: &mut [f64; LANES],
) {
    let mut vs = values[start..].chunks_exact(LANES);
    let mut cs = counts[start..].chunks_exact(LANES);
    for (v, c) in (&mut vs).zip(&mut cs) {
        for l in 0..LANES {
            let d = f64::from(v[l]) - m.mean;
            dev[l] += d * d * f64::from(c[l]);
        }
    }
    for (l, (&v, &c)) in vs.remainder().iter().zip(cs.remainder()).enumerate() {
        let d = f64::from(v) - m.mean;
        dev[l] += d * d * f64::from(c);
    }
    m.m2 = dev.iter().sum();
}

/// The slow general case: some value counted is NaN or infinite.
fn with_non_finite(values: &[f32], counts: &[u32], count: u64) -> Moments {
    let mut m = Moments {
        count,
        ..Moments::default()
    };
    let mut sum = 0f64;
    for (&v, &c) in values.iter().zip(counts) {
        let c64 = u64::from(c);
        if v.is_nan() {
            m.nan += c64;
        } else if v == f32::INFINITY {
            m.pos_inf += c64;
        } else if v == f32::NEG_INFINITY {
            m.neg_inf += c64;
        } else if c > 0 {
            m.finite += c64;
            m.zeros += if v == 0.0 { c64 } else { 0 };
            m.min = lane_min(m.min, v);
            m.max = lane_max(m.max, v);
            sum += f64::from(c) * f64::from(v);
        }
    }
    if m.finite == 0 {
        return Moments {
            min: f32::INFINITY,
            max: f32::NEG_INFINITY,
            ..m
        };
    }
    m.mean = sum / m.finite as f64;
    for (&v, &c) in values.iter().zip(counts) {
        if v.is_finite() {
            let d = f64::from(v) - m.mean;
            m.m2 += d * d * f64::from(c);
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(values: &[f32], counts: &[u32]) -> Vec<f32> {
        values
            .iter()
            .zip(counts)
            .flat_map(|(&v, &c)| std::iter::repeat(v).take(c as usize))
            .collect()
    }

    fn close(a: f64, b: f64) -> bool {
        a == b || (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
    }

    #[test]
    fn equal_to_the_expanded_values() {
        let values: Vec<f32> = (0..203).map(|i| (i as f32 - 90.0) * 0.37).collect();
        let counts: Vec<u32> = (0..203u32).map(|i| (i * 7) % 5).collect();
        let mut odd = values.clone();
        odd[3] = f32::NAN;
        odd[11] = f32::INFINITY;
        odd[12] = f32::NEG_INFINITY;
        odd[90] = 0.0;
        for vs in [&values, &odd] {
            for n in [203, 64, 9, 0] {
                let total = counts[..n].iter().map(|&c| u64::from(c)).sum();
                let a = moments_counted(&vs[..n], &counts[..n], total);
                let b = Moments::of(&expand(&vs[..n], &counts[..n]));
                assert_eq!(
                    (a.count, a.nan, a.pos_inf, a.neg_inf, a.zeros, a.finite),
                    (b.count, b.nan, b.pos_inf, b.neg_inf, b.zeros, b.finite)
                );
                assert_eq!((a.min, a.max), (b.min, b.max), "{n}");
                assert!(close(a.mean, b.mean) && close(a.m2, b.m2), "{a:?} {b:?}");
                // The vector loops: the portable one's bits.
                let p = portable(&vs[..n], &counts[..n], total);
                assert_eq!(
                    (
                        a.mean.to_bits(),
                        a.m2.to_bits(),
                        a.min.to_bits(),
                        a.max.to_bits()
                    ),
                    (
                        p.mean.to_bits(),
                        p.m2.to_bits(),
                        p.min.to_bits(),
                        p.max.to_bits()
                    )
                );
                assert_eq!(a, p);
            }
        }
    }
}
