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

/// Lanes of the accumulation loops: value `i` of a run goes to lane `i % LANES`, lanes are
/// combined in lane order at the end; the AVX2 loop keeps exactly these lanes in two vectors of
/// f64 (and one of f32), so both give the same bits.
const LANES: usize = 8;

impl Moments {
    /// The moments of `values`, in two passes over them (the sum, then the squared deviations
    /// from the mean): accurate in f64 for any magnitude, with no division per value. Meant for
    /// short runs that stay in cache (a [`super::PIECE`]).
    pub fn of(values: &[f32]) -> Moments {
        #[cfg(target_arch = "x86_64")]
        {
            if crate::quant::avx2_chosen() {
                // SAFETY: the CPU has AVX2 (`avx2_chosen` implies it), all `x86::of` needs.
                return unsafe { x86::of(values) };
            }
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        {
            return wasm::of(values);
        }
        #[allow(unreachable_code)]
        moments_of(values)
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
struct Lanes {
    nan: [u32; LANES],
    inf: [u32; LANES],
    neg: [u32; LANES],
    zero: [u32; LANES],
    fin: [u32; LANES],
    lo: [f32; LANES],
    hi: [f32; LANES],
    sum: [f64; LANES],
}

impl Lanes {
    fn new() -> Lanes {
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
    fn add(&mut self, l: usize, v: f32) {
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
    fn moments(&self, count: usize) -> Moments {
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
const RUN: usize = LANES << 24;

fn moments_of(values: &[f32]) -> Moments {
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
fn deviation(v: f32, mean: f64) -> f64 {
    let d = if v.is_finite() {
        f64::from(v) - mean
    } else {
        0.0
    };
    d * d
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{deviation, moments_of, Lanes, Moments, LANES, RUN};
    use std::arch::x86_64::*;

    /// [`super::moments_of`] with the lanes in AVX2 registers: the same operations per lane
    /// (no fused multiply-add), so the same bits.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn of(values: &[f32]) -> Moments {
        if values.len() > RUN {
            return moments_of(values);
        }
        let n8 = values.len() / LANES * LANES;
        let p = values.as_ptr();
        let abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fff_ffff));
        let inf = _mm256_set1_ps(f32::INFINITY);
        let ninf = _mm256_set1_ps(f32::NEG_INFINITY);
        let zero = _mm256_setzero_ps();
        let (mut nan, mut infs, mut neg, mut zeros, mut fin) = (
            _mm256_setzero_si256(),
            _mm256_setzero_si256(),
            _mm256_setzero_si256(),
            _mm256_setzero_si256(),
            _mm256_setzero_si256(),
        );
        let (mut lo, mut hi) = (inf, ninf);
        let (mut s0, mut s1) = (_mm256_setzero_pd(), _mm256_setzero_pd());
        // Most pieces hold only finite values: a shorter loop first (no NaN/infinity counts, no
        // masking, which change nothing when every value is finite), the full one only when a
        // value was not finite. The sums tell: f32 values summed in f64 never overflow, so a
        // lane sum is finite exactly when all its values were.
        let mut i = 0;
        while i < n8 {
            let v = _mm256_loadu_ps(p.add(i));
            zeros = _mm256_sub_epi32(
                zeros,
                _mm256_castps_si256(_mm256_cmp_ps::<_CMP_EQ_OQ>(v, zero)),
            );
            lo = _mm256_min_ps(lo, v);
            hi = _mm256_max_ps(hi, v);
            s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
            s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(v)));
            i += LANES;
        }
        let sum_inf = _mm256_set1_pd(f64::INFINITY);
        let finite_sums = _mm256_and_pd(
            _mm256_cmp_pd::<_CMP_LT_OQ>(_mm256_andnot_pd(_mm256_set1_pd(-0.0), s0), sum_inf),
            _mm256_cmp_pd::<_CMP_LT_OQ>(_mm256_andnot_pd(_mm256_set1_pd(-0.0), s1), sum_inf),
        );
        let finite_only = _mm256_movemask_pd(finite_sums) == 0xf;
        if finite_only {
            fin = _mm256_set1_epi32((n8 / LANES) as i32);
        } else {
            zeros = _mm256_setzero_si256();
            (lo, hi) = (inf, ninf);
            (s0, s1) = (_mm256_setzero_pd(), _mm256_setzero_pd());
        }
        let mut i = if finite_only { n8 } else { 0 };
        while i < n8 {
            let v = _mm256_loadu_ps(p.add(i));
            let a = _mm256_and_ps(v, abs_mask);
            let is_fin = _mm256_cmp_ps::<_CMP_LT_OQ>(a, inf);
            nan = _mm256_sub_epi32(
                nan,
                _mm256_castps_si256(_mm256_cmp_ps::<_CMP_UNORD_Q>(v, v)),
            );
            infs = _mm256_sub_epi32(
                infs,
                _mm256_castps_si256(_mm256_cmp_ps::<_CMP_EQ_OQ>(a, inf)),
            );
            neg = _mm256_sub_epi32(
                neg,
                _mm256_castps_si256(_mm256_cmp_ps::<_CMP_EQ_OQ>(v, ninf)),
            );
            zeros = _mm256_sub_epi32(
                zeros,
                _mm256_castps_si256(_mm256_cmp_ps::<_CMP_EQ_OQ>(v, zero)),
            );
            fin = _mm256_sub_epi32(fin, _mm256_castps_si256(is_fin));
            lo = _mm256_min_ps(lo, _mm256_blendv_ps(inf, v, is_fin));
            hi = _mm256_max_ps(hi, _mm256_blendv_ps(ninf, v, is_fin));
            let x = _mm256_and_ps(v, is_fin);
            s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(x)));
            s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(x)));
            i += LANES;
        }
        let mut lanes = Lanes::new();
        let u32s = |x: __m256i| {
            let mut out = [0u32; LANES];
            _mm256_storeu_si256(out.as_mut_ptr().cast(), x);
            out
        };
        lanes.nan = u32s(nan);
        lanes.inf = u32s(infs);
        lanes.neg = u32s(neg);
        lanes.zero = u32s(zeros);
        lanes.fin = u32s(fin);
        _mm256_storeu_ps(lanes.lo.as_mut_ptr(), lo);
        _mm256_storeu_ps(lanes.hi.as_mut_ptr(), hi);
        _mm256_storeu_pd(lanes.sum.as_mut_ptr(), s0);
        _mm256_storeu_pd(lanes.sum.as_mut_ptr().add(4), s1);
        for (l, &v) in values[n8..].iter().enumerate() {
            lanes.add(l, v);
        }
        let mut m = lanes.moments(values.len());
        if m.finite == 0 {
            return m;
        }
        let mean = _mm256_set1_pd(m.mean);
        let (mut d0, mut d1) = (_mm256_setzero_pd(), _mm256_setzero_pd());
        let mut i = 0;
        while finite_only && i < n8 {
            let v = _mm256_loadu_ps(p.add(i));
            let x0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), mean);
            let x1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps::<1>(v)), mean);
            d0 = _mm256_add_pd(d0, _mm256_mul_pd(x0, x0));
            d1 = _mm256_add_pd(d1, _mm256_mul_pd(x1, x1));
            i += LANES;
        }
        while i < n8 {
            let v = _mm256_loadu_ps(p.add(i));
            let is_fin =
                _mm256_castps_si256(_mm256_cmp_ps::<_CMP_LT_OQ>(_mm256_and_ps(v, abs_mask), inf));
            // The f32 mask widened to f64 lanes (sign extension of all-ones / zero).
            let m0 = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(is_fin)));
            let m1 =
                _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm256_extracti128_si256::<1>(is_fin)));
            let x0 = _mm256_and_pd(
                _mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), mean),
                m0,
            );
            let x1 = _mm256_and_pd(
                _mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps::<1>(v)), mean),
                m1,
            );
            d0 = _mm256_add_pd(d0, _mm256_mul_pd(x0, x0));
            d1 = _mm256_add_pd(d1, _mm256_mul_pd(x1, x1));
            i += LANES;
        }
        let mut dev = [0f64; LANES];
        _mm256_storeu_pd(dev.as_mut_ptr(), d0);
        _mm256_storeu_pd(dev.as_mut_ptr().add(4), d1);
        for (l, &v) in values[n8..].iter().enumerate() {
            dev[l] += deviation(v, m.mean);
        }
        m.m2 = dev.iter().sum();
        m
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(super) mod wasm {
    use super::{deviation, moments_of, Lanes, Moments, LANES, RUN};
    use std::arch::wasm32::*;

    /// [`super::moments_of`] with the lanes in simd128 registers (two f32x4, four f64x2), the
    /// same operations per lane, so the same bits. `pmin`/`pmax` are `lane_min`/`lane_max`
    /// with the operands swapped (`f32x4_min` would order -0 and +0 its own way).
    pub(super) fn of(values: &[f32]) -> Moments {
        if values.len() > RUN {
            return moments_of(values);
        }
        let n8 = values.len() / LANES * LANES;
        let p = values.as_ptr();
        let inf = f32x4_splat(f32::INFINITY);
        let ninf = f32x4_splat(f32::NEG_INFINITY);
        let zero = f32x4_splat(0.0);
        let mut nan = [i32x4_splat(0); 2];
        let mut infs = nan;
        let mut neg = nan;
        let mut zeros = nan;
        let mut fin = nan;
        let mut lo = [inf; 2];
        let mut hi = [ninf; 2];
        let mut sum = [f64x2_splat(0.0); 4];
        // Finite values only, first (see the AVX2 loop: finite lane sums tell).
        let mut i = 0;
        while i < n8 {
            for h in 0..2 {
                // SAFETY: i + 4h + 4 <= n8 <= values.len(); v128_load takes unaligned pointers.
                let v = unsafe { v128_load(p.add(i + 4 * h).cast()) };
                zeros[h] = i32x4_sub(zeros[h], f32x4_eq(v, zero));
                lo[h] = f32x4_pmin(v, lo[h]);
                hi[h] = f32x4_pmax(v, hi[h]);
                sum[2 * h] = f64x2_add(sum[2 * h], f64x2_promote_low_f32x4(v));
                sum[2 * h + 1] = f64x2_add(
                    sum[2 * h + 1],
                    f64x2_promote_low_f32x4(i32x4_shuffle::<2, 3, 2, 3>(v, v)),
                );
            }
            i += LANES;
        }
        let sum_inf = f64x2_splat(f64::INFINITY);
        let finite_only = sum
            .iter()
            .all(|&x| i64x2_all_true(f64x2_lt(f64x2_abs(x), sum_inf)));
        if finite_only {
            fin = [i32x4_splat((n8 / LANES) as i32); 2];
        } else {
            zeros = [i32x4_splat(0); 2];
            (lo, hi) = ([inf; 2], [ninf; 2]);
            sum = [f64x2_splat(0.0); 4];
        }
        let mut i = if finite_only { n8 } else { 0 };
        while i < n8 {
            for h in 0..2 {
                // SAFETY: i + 4h + 4 <= n8 <= values.len(); v128_load takes unaligned pointers.
                let v = unsafe { v128_load(p.add(i + 4 * h).cast()) };
                let a = f32x4_abs(v);
                let is_fin = f32x4_lt(a, inf);
                nan[h] = i32x4_sub(nan[h], f32x4_ne(v, v));
                infs[h] = i32x4_sub(infs[h], f32x4_eq(a, inf));
                neg[h] = i32x4_sub(neg[h], f32x4_eq(v, ninf));
                zeros[h] = i32x4_sub(zeros[h], f32x4_eq(v, zero));
                fin[h] = i32x4_sub(fin[h], is_fin);
                lo[h] = f32x4_pmin(v128_bitselect(v, inf, is_fin), lo[h]);
                hi[h] = f32x4_pmax(v128_bitselect(v, ninf, is_fin), hi[h]);
                let x = v128_and(v, is_fin);
                sum[2 * h] = f64x2_add(sum[2 * h], f64x2_promote_low_f32x4(x));
                sum[2 * h + 1] = f64x2_add(
                    sum[2 * h + 1],
                    f64x2_promote_low_f32x4(i32x4_shuffle::<2, 3, 2, 3>(x, x)),
                );
            }
            i += LANES;
        }
        let mut lanes = Lanes::new();
        let u32s = |x: [v128; 2]| {
            let mut out = [0u32; LANES];
            for (h, v) in x.iter().enumerate() {
                for l in 0..4 {
                    out[4 * h + l] = lane4(*v, l);
                }
            }
            out
        };
        lanes.nan = u32s(nan);
        lanes.inf = u32s(infs);
        lanes.neg = u32s(neg);
        lanes.zero = u32s(zeros);
        lanes.fin = u32s(fin);
        for l in 0..LANES {
            lanes.lo[l] = f32::from_bits(lane4(lo[l / 4], l % 4));
            lanes.hi[l] = f32::from_bits(lane4(hi[l / 4], l % 4));
            lanes.sum[l] = lane2(sum[l / 2], l % 2);
        }
        for (l, &v) in values[n8..].iter().enumerate() {
            lanes.add(l, v);
        }
        let mut m = lanes.moments(values.len());
        if m.finite == 0 {
            return m;
        }
        let mean = f64x2_splat(m.mean);
        let mut dev = [f64x2_splat(0.0); 4];
        let mut i = 0;
        while finite_only && i < n8 {
            for h in 0..2 {
                // SAFETY: as above.
                let v = unsafe { v128_load(p.add(i + 4 * h).cast()) };
                let x0 = f64x2_sub(f64x2_promote_low_f32x4(v), mean);
                let x1 = f64x2_sub(
                    f64x2_promote_low_f32x4(i32x4_shuffle::<2, 3, 2, 3>(v, v)),
                    mean,
                );
                dev[2 * h] = f64x2_add(dev[2 * h], f64x2_mul(x0, x0));
                dev[2 * h + 1] = f64x2_add(dev[2 * h + 1], f64x2_mul(x1, x1));
            }
            i += LANES;
        }
        while i < n8 {
            for h in 0..2 {
                // SAFETY: as above.
                let v = unsafe { v128_load(p.add(i + 4 * h).cast()) };
                let is_fin = f32x4_lt(f32x4_abs(v), inf);
                let hv = i32x4_shuffle::<2, 3, 2, 3>(v, v);
                // The f32 mask widened to f64 lanes (sign extension of all-ones / zero).
                let x0 = v128_and(
                    f64x2_sub(f64x2_promote_low_f32x4(v), mean),
                    i64x2_extend_low_i32x4(is_fin),
                );
                let x1 = v128_and(
                    f64x2_sub(f64x2_promote_low_f32x4(hv), mean),
                    i64x2_extend_high_i32x4(is_fin),
                );
                dev[2 * h] = f64x2_add(dev[2 * h], f64x2_mul(x0, x0));
                dev[2 * h + 1] = f64x2_add(dev[2 * h + 1], f64x2_mul(x1, x1));
            }
            i += LANES;
        }
        let mut d = [0f64; LANES];
        for (l, x) in d.iter_mut().enumerate() {
            *x = lane2(dev[l / 2], l % 2);
        }
        for (l, &v) in values[n8..].iter().enumerate() {
            d[l] += deviation(v, m.mean);
        }
        m.m2 = d.iter().sum();
        m
    }

    /// Lane `l` (0..4) of a vector of 32-bit lanes.
    pub(in crate::stats) fn lane4(v: v128, l: usize) -> u32 {
        match l {
            0 => u32x4_extract_lane::<0>(v),
            1 => u32x4_extract_lane::<1>(v),
            2 => u32x4_extract_lane::<2>(v),
            _ => u32x4_extract_lane::<3>(v),
        }
    }

    /// Lane `l` (0..2) of a vector of f64.
    pub(in crate::stats) fn lane2(v: v128, l: usize) -> f64 {
        if l == 0 {
            f64x2_extract_lane::<0>(v)
        } else {
            f64x2_extract_lane::<1>(v)
        }
    }
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
