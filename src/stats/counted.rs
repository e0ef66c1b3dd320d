//! Moments of values given with their counts (value `values[i]` seen `counts[i]` times), for
//! pieces of a tensor whose blocks have few codes: each distinct value of a block is handled
//! once with its count. Counts, range and zeros are exact; the sums are the same products added
//! in another order than [`Moments::of`] would, so mean and `m2` agree with it to rounding.

use super::moments::{lane_max, lane_min, Moments};

/// Lanes of the sums: pair `i` goes to lane `i % LANES`, combined in lane order.
const LANES: usize = 8;

/// The moments of `values[i]` counted `counts[i]` times (same lengths; a count is at most
/// 2^31 - 1, as a group's counts are; `count` their sum).
pub(crate) fn moments_counted(values: &[f32], counts: &[u32], count: u64) -> Moments {
    #[cfg(target_arch = "x86_64")]
    {
        if crate::quant::avx2_chosen() {
            // SAFETY: the CPU has AVX2 (`avx2_chosen` implies it), all `x86::counted` needs.
            return unsafe { x86::counted(values, counts, count) };
        }
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        return wasm::counted(values, counts, count);
    }
    #[allow(unreachable_code)]
    portable(values, counts, count)
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
struct State {
    lo: [f32; LANES],
    hi: [f32; LANES],
    sum: [f64; LANES],
    zero: [u32; LANES],
}

impl State {
    fn new() -> State {
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
fn counted_from(
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
fn deviations_from(
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

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{counted_from, deviations_from, Moments, State, LANES};
    use std::arch::x86_64::*;

    /// The portable loops with the lanes in AVX2 registers (pair `i` in lane `i % 8`, no fused
    /// multiply-add): the same bits.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn counted(values: &[f32], counts: &[u32], count: u64) -> Moments {
        let n = values.len().min(counts.len());
        let (values, counts) = (&values[..n], &counts[..n]);
        let n8 = n / LANES * LANES;
        let (vp, cp) = (values.as_ptr(), counts.as_ptr());
        let inf = _mm256_set1_ps(f32::INFINITY);
        let ninf = _mm256_set1_ps(f32::NEG_INFINITY);
        let zero = _mm256_setzero_ps();
        let (mut lo, mut hi) = (inf, ninf);
        let (mut s0, mut s1) = (_mm256_setzero_pd(), _mm256_setzero_pd());
        let mut zeros = _mm256_setzero_si256();
        let mut i = 0;
        while i < n8 {
            let v = _mm256_loadu_ps(vp.add(i));
            let c = _mm256_loadu_si256(cp.add(i).cast());
            let present = _mm256_castsi256_ps(_mm256_cmpgt_epi32(c, _mm256_setzero_si256()));
            lo = _mm256_min_ps(lo, _mm256_blendv_ps(inf, v, present));
            hi = _mm256_max_ps(hi, _mm256_blendv_ps(ninf, v, present));
            let c0 = _mm256_cvtepi32_pd(_mm256_castsi256_si128(c));
            let c1 = _mm256_cvtepi32_pd(_mm256_extracti128_si256::<1>(c));
            s0 = _mm256_add_pd(
                s0,
                _mm256_mul_pd(c0, _mm256_cvtps_pd(_mm256_castps256_ps128(v))),
            );
            s1 = _mm256_add_pd(
                s1,
                _mm256_mul_pd(c1, _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(v))),
            );
            let z = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_EQ_OQ>(v, zero));
            zeros = _mm256_add_epi32(zeros, _mm256_and_si256(z, c));
            i += LANES;
        }
        let mut state = State::new();
        _mm256_storeu_ps(state.lo.as_mut_ptr(), lo);
        _mm256_storeu_ps(state.hi.as_mut_ptr(), hi);
        _mm256_storeu_pd(state.sum.as_mut_ptr(), s0);
        _mm256_storeu_pd(state.sum.as_mut_ptr().add(4), s1);
        _mm256_storeu_si256(state.zero.as_mut_ptr().cast(), zeros);
        let (mut m, more) = counted_from(values, counts, count, n8, &mut state);
        if !more {
            return m;
        }
        let mean = _mm256_set1_pd(m.mean);
        let (mut d0, mut d1) = (_mm256_setzero_pd(), _mm256_setzero_pd());
        let mut i = 0;
        while i < n8 {
            let v = _mm256_loadu_ps(vp.add(i));
            let c = _mm256_loadu_si256(cp.add(i).cast());
            let c0 = _mm256_cvtepi32_pd(_mm256_castsi256_si128(c));
            let c1 = _mm256_cvtepi32_pd(_mm256_extracti128_si256::<1>(c));
            let x0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), mean);
            let x1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps::<1>(v)), mean);
            d0 = _mm256_add_pd(d0, _mm256_mul_pd(_mm256_mul_pd(x0, x0), c0));
            d1 = _mm256_add_pd(d1, _mm256_mul_pd(_mm256_mul_pd(x1, x1), c1));
            i += LANES;
        }
        let mut dev = [0f64; LANES];
        _mm256_storeu_pd(dev.as_mut_ptr(), d0);
        _mm256_storeu_pd(dev.as_mut_ptr().add(4), d1);
        deviations_from(values, counts, n8, &mut m, &mut dev);
        m
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod wasm {
    use super::{counted_from, deviations_from, Moments, State, LANES};
    use crate::stats::moments::wasm::{lane2, lane4};
    use std::arch::wasm32::*;

    /// The portable loops in simd128 (two f32x4, four f64x2 per 8 lanes; `pmin(b, a)` is
    /// `lane_min(a, b)`): the same bits.
    pub(super) fn counted(values: &[f32], counts: &[u32], count: u64) -> Moments {
        let n = values.len().min(counts.len());
        let (values, counts) = (&values[..n], &counts[..n]);
        let n8 = n / LANES * LANES;
        let (vp, cp) = (values.as_ptr(), counts.as_ptr());
        let inf = f32x4_splat(f32::INFINITY);
        let ninf = f32x4_splat(f32::NEG_INFINITY);
        let zero = f32x4_splat(0.0);
        let izero = i32x4_splat(0);
        let (mut lo, mut hi) = ([inf; 2], [ninf; 2]);
        let mut sum = [f64x2_splat(0.0); 4];
        let mut zeros = [izero; 2];
        let mut i = 0;
        while i < n8 {
            for h in 0..2 {
                // SAFETY: i + 4h + 4 <= n8 <= n; v128_load takes unaligned pointers.
                let (v, c) = unsafe {
                    (
                        v128_load(vp.add(i + 4 * h).cast()),
                        v128_load(cp.add(i + 4 * h).cast()),
                    )
                };
                let present = i32x4_gt(c, izero);
                lo[h] = f32x4_pmin(v128_bitselect(v, inf, present), lo[h]);
                hi[h] = f32x4_pmax(v128_bitselect(v, ninf, present), hi[h]);
                let c23 = i32x4_shuffle::<2, 3, 2, 3>(c, c);
                let v23 = i32x4_shuffle::<2, 3, 2, 3>(v, v);
                sum[2 * h] = f64x2_add(
                    sum[2 * h],
                    f64x2_mul(f64x2_convert_low_i32x4(c), f64x2_promote_low_f32x4(v)),
                );
                sum[2 * h + 1] = f64x2_add(
                    sum[2 * h + 1],
                    f64x2_mul(f64x2_convert_low_i32x4(c23), f64x2_promote_low_f32x4(v23)),
                );
                zeros[h] = i32x4_add(zeros[h], v128_and(f32x4_eq(v, zero), c));
            }
            i += LANES;
        }
        let mut state = State::new();
        for l in 0..LANES {
            state.lo[l] = f32::from_bits(lane4(lo[l / 4], l % 4));
            state.hi[l] = f32::from_bits(lane4(hi[l / 4], l % 4));
            state.sum[l] = lane2(sum[l / 2], l % 2);
            state.zero[l] = lane4(zeros[l / 4], l % 4);
        }
        let (mut m, more) = counted_from(values, counts, count, n8, &mut state);
        if !more {
            return m;
        }
        let mean = f64x2_splat(m.mean);
        let mut dev = [f64x2_splat(0.0); 4];
        let mut i = 0;
        while i < n8 {
            for h in 0..2 {
                // SAFETY: as above.
                let (v, c) = unsafe {
                    (
                        v128_load(vp.add(i + 4 * h).cast()),
                        v128_load(cp.add(i + 4 * h).cast()),
                    )
                };
                let c23 = i32x4_shuffle::<2, 3, 2, 3>(c, c);
                let v23 = i32x4_shuffle::<2, 3, 2, 3>(v, v);
                let x0 = f64x2_sub(f64x2_promote_low_f32x4(v), mean);
                let x1 = f64x2_sub(f64x2_promote_low_f32x4(v23), mean);
                dev[2 * h] = f64x2_add(
                    dev[2 * h],
                    f64x2_mul(f64x2_mul(x0, x0), f64x2_convert_low_i32x4(c)),
                );
                dev[2 * h + 1] = f64x2_add(
                    dev[2 * h + 1],
                    f64x2_mul(f64x2_mul(x1, x1), f64x2_convert_low_i32x4(c23)),
                );
            }
            i += LANES;
        }
        let mut lanes = [0f64; LANES];
        for (l, d) in lanes.iter_mut().enumerate() {
            *d = lane2(dev[l / 2], l % 2);
        }
        deviations_from(values, counts, n8, &mut m, &mut lanes);
        m
    }
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
