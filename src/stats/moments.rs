//! Counts, range and moments of a run of f32 values, mergeable exactly in a fixed order.

use serde::{Deserialize, Serialize};

/// What one pass over values gives: counts of every kind, the finite range, and the mean and the
/// sum of squared deviations (`m2`) of the finite values, in f64.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Moments {
    /// Values seen, NaN and infinities included.
    pub count: u64,
    pub nan: u64,
    pub pos_inf: u64,
    pub neg_inf: u64,
    /// Finite values equal to zero (either sign).
    pub zeros: u64,
    pub finite: u64,
    /// Smallest and largest finite value (+inf / -inf before any).
    pub min: f32,
    pub max: f32,
    /// Mean of the finite values (0 before any).
    pub mean: f64,
    /// Sum of squared deviations of the finite values from their mean.
    pub m2: f64,
}

impl Default for Moments {
    fn default() -> Moments {
        Moments {
            count: 0,
            nan: 0,
            pos_inf: 0,
            neg_inf: 0,
            zeros: 0,
            finite: 0,
            min: f32::INFINITY,
            max: f32::NEG_INFINITY,
            mean: 0.0,
            m2: 0.0,
        }
    }
}

/// Lanes of the accumulation loops: independent partial sums the compiler keeps in vector
/// registers (and a fixed summation order, so results do not depend on the CPU).
const LANES: usize = 8;

impl Moments {
    super::isa::dispatch! {
        /// The moments of `values`, in two passes over them (the sum, then the squared deviations
        /// from the mean): accurate in f64 for any magnitude, with no division per value.
        pub fn of(values: &[f32]) -> Moments => moments_of
    }
}

#[inline(always)]
fn moments_of(values: &[f32]) -> Moments {
    let mut nan = [0u32; LANES];
    let mut inf = [0u32; LANES];
    let mut neg = [0u32; LANES];
    let mut zero = [0u32; LANES];
    let mut fin = [0u32; LANES];
    let mut lo = [f32::INFINITY; LANES];
    let mut hi = [f32::NEG_INFINITY; LANES];
    let mut sum = [0f64; LANES];
    // Lane counters are u32: fed at most u32::MAX / LANES values per lane block.
    let mut m = Moments::default();
    for block in values.chunks(LANES << 24) {
        let mut chunks = block.chunks_exact(LANES);
        for c in &mut chunks {
            for l in 0..LANES {
                let v = c[l];
                let finite = v.is_finite();
                nan[l] += u32::from(v.is_nan());
                inf[l] += u32::from(v.is_infinite());
                neg[l] += u32::from(v == f32::NEG_INFINITY);
                zero[l] += u32::from(v == 0.0);
                fin[l] += u32::from(finite);
                let x = if finite { v } else { 0.0 };
                lo[l] = lo[l].min(if finite { v } else { f32::INFINITY });
                hi[l] = hi[l].max(if finite { v } else { f32::NEG_INFINITY });
                sum[l] += f64::from(x);
            }
        }
        for (l, &v) in chunks.remainder().iter().enumerate() {
            let finite = v.is_finite();
            nan[l] += u32::from(v.is_nan());
            inf[l] += u32::from(v.is_infinite());
            neg[l] += u32::from(v == f32::NEG_INFINITY);
            zero[l] += u32::from(v == 0.0);
            fin[l] += u32::from(finite);
            if finite {
                lo[l] = lo[l].min(v);
                hi[l] = hi[l].max(v);
                sum[l] += f64::from(v);
            }
        }
        let lanes = |a: &mut [u32; LANES]| {
            let total: u64 = a.iter().map(|&x| u64::from(x)).sum();
            *a = [0; LANES];
            total
        };
        m.nan += lanes(&mut nan);
        let infinite = lanes(&mut inf);
        m.neg_inf += lanes(&mut neg);
        m.pos_inf += infinite;
        m.zeros += lanes(&mut zero);
        m.finite += lanes(&mut fin);
    }
    m.pos_inf -= m.neg_inf;
    m.count = values.len() as u64;
    if m.finite == 0 {
        return m;
    }
    m.min = lo.iter().copied().fold(f32::INFINITY, f32::min);
    m.max = hi.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    m.mean = sum.iter().sum::<f64>() / m.finite as f64;
    let mut dev = [0f64; LANES];
    let mut chunks = values.chunks_exact(LANES);
    for c in &mut chunks {
        for l in 0..LANES {
            let v = c[l];
            let d = if v.is_finite() {
                f64::from(v) - m.mean
            } else {
                0.0
            };
            dev[l] += d * d;
        }
    }
    for (l, &v) in chunks.remainder().iter().enumerate() {
        if v.is_finite() {
            let d = f64::from(v) - m.mean;
            dev[l] += d * d;
        }
    }
    m.m2 = dev.iter().sum();
    m
}

impl Moments {
    /// Adds `other`'s values (Chan et al.'s pairwise update for the mean and `m2`). Merging the
    /// same parts in the same order gives the same bits.
    pub fn merge(&mut self, other: &Moments) {
        let (na, nb) = (self.finite as f64, other.finite as f64);
        if other.finite > 0 {
            if self.finite == 0 {
                self.mean = other.mean;
                self.m2 = other.m2;
            } else {
                let n = na + nb;
                let delta = other.mean - self.mean;
                self.mean += delta * (nb / n);
                self.m2 += other.m2 + delta * delta * (na * nb / n);
            }
            self.min = self.min.min(other.min);
            self.max = self.max.max(other.max);
        }
        self.count += other.count;
        self.nan += other.nan;
        self.pos_inf += other.pos_inf;
        self.neg_inf += other.neg_inf;
        self.zeros += other.zeros;
        self.finite += other.finite;
    }

    /// Population standard deviation of the finite values (None without any).
    pub fn std_dev(&self) -> Option<f64> {
        (self.finite > 0).then(|| (self.m2 / self.finite as f64).sqrt())
    }

    /// The finite range, or None without finite values.
    pub fn range(&self) -> Option<(f32, f32)> {
        (self.finite > 0).then_some((self.min, self.max))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_range_and_moments() {
        let v = [
            1.0,
            2.0,
            f32::NAN,
            3.0,
            0.0,
            f32::INFINITY,
            -0.0,
            f32::NEG_INFINITY,
            5.0,
        ];
        let m = Moments::of(&v);
        assert_eq!(
            (m.count, m.nan, m.pos_inf, m.neg_inf, m.zeros, m.finite),
            (9, 1, 1, 1, 2, 6)
        );
        assert_eq!((m.min, m.max), (0.0, 5.0));
        let xs = [1.0f64, 2.0, 3.0, 0.0, 0.0, 5.0];
        let mean = xs.iter().sum::<f64>() / 6.0;
        assert!((m.mean - mean).abs() < 1e-15);
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 6.0;
        assert!((m.std_dev().unwrap() - var.sqrt()).abs() < 1e-15);
    }

    #[test]
    fn merging_parts_equals_the_whole() {
        let v: Vec<f32> = (0..10_007).map(|i| 1e4 + (i as f32 * 0.37).sin()).collect();
        let whole = Moments::of(&v);
        let mut merged = Moments::default();
        for part in v.chunks(1000) {
            merged.merge(&Moments::of(part));
        }
        assert_eq!(
            (merged.count, merged.finite, merged.min, merged.max),
            (whole.count, whole.finite, whole.min, whole.max)
        );
        assert!((merged.mean - whole.mean).abs() <= 1e-12 * whole.mean.abs());
        assert!((merged.m2 - whole.m2).abs() <= 1e-9 * whole.m2);
    }

    #[test]
    fn no_finite_values() {
        let m = Moments::of(&[f32::NAN, f32::INFINITY]);
        assert_eq!(m.range(), None);
        assert_eq!(m.std_dev(), None);
        let mut a = Moments::default();
        a.merge(&m);
        assert_eq!(a.count, 2);
        assert_eq!(a.range(), None);
    }
}
