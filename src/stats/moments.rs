//! Counts, range and moments of a run of f32 values, mergeable exactly in a fixed order.

#[cfg(target_arch = "x86_64")]
use super::kernels::avx2;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
use super::kernels::simd128;
use super::kernels::{isa, Isa};
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

/// Lanes of the accumulation loops: value `i` of a run goes to lane `i % LANES`, lanes are
/// combined in lane order at the end; the AVX2 loop keeps exactly these lanes in two vectors of
/// f64 (and one of f32), so both give the same bits.
pub(in crate::stats) const LANES: usize = 8;

impl Moments {
    /// The moments of `values`, in two passes over them (the sum, then the squared deviations
    /// from the mean): accurate in f64 for any magnitude, with no division per value. Meant for
    /// short runs that stay in cache (a [`super::PIECE`]).
    pub fn of(values: &[f32]) -> Moments {
        match isa() {
            // SAFETY: the CPU has AVX2 (`isa` chose it only then), all `of` needs.
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => unsafe { avx2::moments::of(values) },
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Isa::Simd128 => simd128::moments::of(values),
            Isa::Scalar => moments_of(values),
        }
    }
}

/// `min` as `minps` computes it (`a < b ? a : b`), for the same bits in every loop.
#[inline(always)]
pub(super) fn lane_min(a: f32, b: f32) -> f32 {
    if a < b {
        a
    } else {
        b
    }
}

#[inline(always)]
pub(super) fn lane_max(a: f32, b: f32) -> f32 {
    if a > b {
        a
    } else {
        b
    }
}

/// Lane counts, range and sums gathered into a `Moments` (mean and `m2` still to come).
pub(in crate::stats) struct Lanes {
    pub(in crate::stats) nan: [u32; LANES],
    pub(in crate::stats) inf: [u32; LANES],
    pub(in crate::stats) neg: [u32; LANES],
    pub(in crate::stats) zero: [u32; LANES],
    pub(in crate::stats) fin: [u32; LANES],
    pub(in crate::stats) lo: [f32; LANES],
    pub(in crate::stats) hi: [f32; LANES],
    pub(in crate::stats) sum: [f64; LANES],
}

impl Lanes {
    pub(in crate::stats) fn new() -> Lanes {
        Lanes {
            nan: [0; LANES],
            inf: [0; LANES],
            neg: [0; LANES],
            zero: [0; LANES],
            fin: [0; LANES],
            lo: [f32::INFINITY; LANES],
            hi: [f32::NEG_INFINITY; LANES],
            sum: [0.0; LANES],
        }
    }

    #[inline(always)]
    pub(in crate::stats) fn add(&mut self, l: usize, v: f32) {
        let finite = v.is_finite();
        self.nan[l] += u32::from(v.is_nan());
        self.inf[l] += u32::from(v.is_infinite());
        self.neg[l] += u32::from(v == f32::NEG_INFINITY);
        self.zero[l] += u32::from(v == 0.0);
        self.fin[l] += u32::from(finite);
        self.lo[l] = lane_min(self.lo[l], if finite { v } else { f32::INFINITY });
        self.hi[l] = lane_max(self.hi[l], if finite { v } else { f32::NEG_INFINITY });
        self.sum[l] += f64::from(if finite { v } else { 0.0 });
    }

    /// The counts and range, and the mean (m2 is 0).
    pub(in crate::stats) fn moments(&self, count: usize) -> Moments {
        let total = |a: &[u32; LANES]| a.iter().map(|&x| u64::from(x)).sum::<u64>();
        let mut m = Moments {
            count: count as u64,
            nan: total(&self.nan),
            pos_inf: total(&self.inf) - total(&self.neg),
            neg_inf: total(&self.neg),
            zeros: total(&self.zero),
            finite: total(&self.fin),
            ..Moments::default()
        };
        if m.finite > 0 {
            m.min = self.lo.iter().copied().fold(f32::INFINITY, lane_min);
            m.max = self.hi.iter().copied().fold(f32::NEG_INFINITY, lane_max);
            m.mean = self.sum.iter().sum::<f64>() / m.finite as f64;
        }
        m
    }
}

/// Most values per call of the lane loops (u32 lane counters).
pub(in crate::stats) const RUN: usize = LANES << 24;

pub(in crate::stats) fn moments_of(values: &[f32]) -> Moments {
    if values.len() > RUN {
        let mut m = Moments::default();
        for run in values.chunks(RUN) {
            m.merge(&moments_of(run));
        }
        return m;
    }
    let mut lanes = Lanes::new();
    let mut chunks = values.chunks_exact(LANES);
    for c in &mut chunks {
        for (l, &v) in c.iter().enumerate() {
            lanes.add(l, v);
        }
    }
    for (l, &v) in chunks.remainder().iter().enumerate() {
        lanes.add(l, v);
    }
    let mut m = lanes.moments(values.len());
    if m.finite == 0 {
        return m;
    }
    let mut dev = [0f64; LANES];
    let mut chunks = values.chunks_exact(LANES);
    for c in &mut chunks {
        for l in 0..LANES {
            dev[l] += deviation(c[l], m.mean);
        }
    }
    for (l, &v) in chunks.remainder().iter().enumerate() {
        dev[l] += deviation(v, m.mean);
    }
    m.m2 = dev.iter().sum();
    m
}

/// `(v - mean)²` in f64, 0 for a value that is not finite.
#[inline(always)]
pub(in crate::stats) fn deviation(v: f32, mean: f64) -> f64 {
    let d = if v.is_finite() {
        f64::from(v) - mean
    } else {
        0.0
    };
    d * d
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
    fn vector_and_scalar_loops_give_the_same_bits() {
        let mut v: Vec<f32> = (0..4099)
            .map(|i| ((i * 7919) % 1000) as f32 * 1e-3 - 0.4)
            .collect();
        for (i, x) in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 0.0, 1e-42]
            .into_iter()
            .enumerate()
        {
            v[i * 13] = x;
        }
        for n in [0, 1, 7, 8, 9, 100, 4096, 4099] {
            let (a, b) = (Moments::of(&v[..n]), moments_of(&v[..n]));
            assert_eq!(a, b, "{n} values");
            assert_eq!(float_bits(&a), float_bits(&b), "{n} values");
        }
        // Finite values only (the vector loops' shorter path), and one non-finite value late.
        let finite = &v[70..];
        for n in [8, 9, 100, 4029] {
            let (a, b) = (Moments::of(&finite[..n]), moments_of(&finite[..n]));
            assert_eq!(float_bits(&a), float_bits(&b), "{n} finite values");
            assert_eq!(a, b, "{n} finite values");
        }
        let mut late = finite.to_vec();
        late[4000] = f32::NAN;
        let (a, b) = (Moments::of(&late), moments_of(&late));
        assert_eq!(float_bits(&a), float_bits(&b));
        assert_eq!((a.nan, a.finite), (1, late.len() as u64 - 1));
    }

    /// The float fields' bits: `==` alone takes -0 for +0 and never matches NaN.
    fn float_bits(m: &Moments) -> (u32, u32, u64, u64) {
        (
            m.min.to_bits(),
            m.max.to_bits(),
            m.mean.to_bits(),
            m.m2.to_bits(),
        )
    }

    #[test]
    fn signed_zeros_and_extremes_give_the_same_bits() {
        // min/max of -0 and +0 depend on operand order: every loop must keep the same one.
        let zeros: Vec<f32> = (0..37)
            .map(|i| if (i * 5) % 3 == 0 { -0.0 } else { 0.0 })
            .collect();
        let mut wide: Vec<f32> = (0..1031)
            .map(|i: u32| (i.wrapping_mul(2_654_435_761) % 65536) as f32 * 3e33 - 1e38)
            .collect();
        wide[5] = f32::MAX;
        wide[900] = f32::MIN;
        wide[17] = f32::MIN_POSITIVE / 4.0;
        for v in [&zeros[..], &zeros[1..], &wide[..], &wide[3..]] {
            for n in [v.len(), v.len() / 2, 8, 3] {
                let (a, b) = (Moments::of(&v[..n]), moments_of(&v[..n]));
                assert_eq!(float_bits(&a), float_bits(&b), "{n} values");
                assert_eq!(a, b);
            }
        }
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
