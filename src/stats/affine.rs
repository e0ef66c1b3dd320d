//! Moments of groups whose 16 values lie on a line, `a·q - b` for code `q` (Q4_K, Q4_0, Q4_1),
//! when f32 computes every one of them exactly: then a group's sum and squared deviations come
//! from integer sums of its codes (Σc·q, Σc·q²), its deviations as `a²·(32·Σc·q² - (Σc·q)²) / 32`
//! (no cancellation), and the groups of a piece merge around the piece's mean. A few operations per group
//! instead of two passes over its 16 values. Range and zeros come from the values themselves.

#[cfg(target_arch = "x86_64")]
use super::kernels::avx2;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
use super::kernels::simd128;
use super::kernels::{isa, Isa};
use super::moments::{lane_max, lane_min, Moments};
use super::planes::{CODES, GROUP};

/// Whether every value `a·q - b` of a Q4_K block is exact in f32, for `a = d·sc`, `b = dmin·m`
/// (`sc`, `m`, `q` integers, `sc, m < 64`, `q < 16`): every product and result is a multiple of
/// `2^L`, the lowest set bit of `d` or `dmin`, and at most `945·|d| + 63·|dmin|` in magnitude,
/// so all fit f32's 24 bits when that bound is under `2^(24 + L)`. One test per block, not per
/// group (a sufficient test: a block failing it takes the per-value moments).
pub(crate) fn exact_block(d: f32, dmin: f32) -> bool {
    if !(d.is_finite() && dmin.is_finite()) {
        return false;
    }
    let l = match (low_bit(d), low_bit(dmin)) {
        (None, None) => return true,
        (Some(x), None) | (None, Some(x)) => x,
        (Some(x), Some(y)) => x.min(y),
    };
    // f64 holds the bound within one rounding, which never crosses a power of two downwards.
    let top = 945.0 * f64::from(d).abs() + 63.0 * f64::from(dmin).abs();
    // 2^(24 + l) from its bits (l ≥ -149: a normal f64).
    top < f64::from_bits(((1023 + 24 + l) as u64) << 52)
}

/// The exponent of the lowest set bit of `x` (None for zero).
fn low_bit(x: f32) -> Option<i32> {
    let raw = x.to_bits() & 0x7fff_ffff;
    let exp = (raw >> 23) as i32;
    let mant = raw & 0x7f_ffff;
    match (exp, mant) {
        (0, 0) => None,
        (0, _) => Some(-149 + mant.trailing_zeros() as i32),
        _ => Some(exp - 150 + (mant | 0x80_0000).trailing_zeros() as i32),
    }
}

super::kernels::dispatch! {
    /// The moments of the groups `lines[g] = [a, b]` (code `q` of group `g` is `a·q - b`, exact,
    /// as `values[16g + q]` holds it) with their code counts (`counts[16g + q]`, 32 per group);
    /// `sums` is scratch.
    pub(crate) fn moments_affine(lines: &[[f32; 2]], values: &[f32], counts: &[u32], sums: &mut Vec<f64>) -> Moments => affine_body
}

#[inline(always)]
fn affine_body(lines: &[[f32; 2]], values: &[f32], counts: &[u32], sums: &mut Vec<f64>) -> Moments {
    let groups = lines
        .len()
        .min(values.len() / CODES)
        .min(counts.len() / CODES);
    let n = (groups * GROUP) as u64;
    let mut m = Moments {
        count: n,
        finite: n,
        ..Moments::default()
    };
    if groups == 0 {
        return m;
    }
    sums.resize(groups, 0.0);
    // Per group: its sum `a·S1 - 32·b` (one rounding), its squared deviations (32·S2 - S1² is
    // an exact integer: no cancellation), range and zeros; then the deviations of the group
    // sums from the piece's mean.
    let mut total = 0f64;
    let mut m2 = 0f64;
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    for (g, sum) in sums.iter_mut().enumerate() {
        let c: &[u32; CODES] = counts[g * CODES..g * CODES + CODES].try_into().unwrap();
        let v: &[f32; CODES] = values[g * CODES..g * CODES + CODES].try_into().unwrap();
        let (s1, s2, present) = code_sums(c);
        let [a, b] = lines[g];
        let (a, b) = (f64::from(a), f64::from(b));
        *sum = a * f64::from(s1) - 32.0 * b;
        total += *sum;
        m2 += a * a * f64::from(32 * s2 - s1 * s1) * (1.0 / 32.0);
        if present != 0 {
            // Values are monotone in the code: the range is at the first and last present.
            let (x, y) = (
                v[present.trailing_zeros() as usize],
                v[31 - present.leading_zeros() as usize],
            );
            lo = lane_min(lo, lane_min(x, y));
            hi = lane_max(hi, lane_max(x, y));
        }
        if any_zero(v) {
            m.zeros += v
                .iter()
                .zip(c)
                .map(|(&x, &k)| if x == 0.0 { u64::from(k) } else { 0 })
                .sum::<u64>();
        }
    }
    m.mean = total / n as f64;
    let mean32 = 32.0 * m.mean;
    let dev: f64 = sums.iter().map(|&s| (s - mean32) * (s - mean32)).sum();
    m.m2 = m2 + dev * (1.0 / 32.0);
    m.min = lo;
    m.max = hi;
    m
}

/// A group's Σc·q, Σc·q² (exact: at most 32·225) and the mask of its present codes.
#[inline(always)]
fn code_sums(c: &[u32; CODES]) -> (i32, i32, u32) {
    match isa() {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => avx2::affine::code_sums(c),
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        Isa::Simd128 => simd128::affine::code_sums(c),
        Isa::Scalar => portable_code_sums(c),
    }
}

/// [`code_sums`] without vectors (the reference).
#[inline(always)]
fn portable_code_sums(c: &[u32; CODES]) -> (i32, i32, u32) {
    let (mut s1, mut s2, mut present) = (0, 0, 0);
    for (q, &k) in c.iter().enumerate() {
        let (q, k) = (q as i32, k as i32);
        s1 += k * q;
        s2 += k * q * q;
        present |= u32::from(k != 0) << q;
    }
    (s1, s2, present)
}

/// Whether any of a group's 16 values is zero (rare: then they are counted one by one).
#[inline(always)]
fn any_zero(v: &[f32; CODES]) -> bool {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    if isa() == Isa::Simd128 {
        return simd128::affine::any_zero(v);
    }
    v.contains(&0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::counted::moments_counted;

    fn next(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    /// A Q4_K block's d and dmin: f16s of any exponent (d of either sign), some zero.
    fn scales(x: &mut u64) -> (f32, f32) {
        let f16 = |x: &mut u64| match next(x) % 9 {
            0 => 0.0,
            _ => half::f16::from_bits((next(x) % 0x7c00) as u16).to_f32(),
        };
        let (d, m) = (f16(x), f16(x));
        (if next(x) % 2 == 0 { -d } else { d }, m)
    }

    /// The lines of a block's 8 groups.
    fn block_lines(x: &mut u64, d: f32, dmin: f32) -> Vec<[f32; 2]> {
        (0..8)
            .map(|_| [d * (next(x) % 64) as f32, dmin * (next(x) % 64) as f32])
            .collect()
    }

    #[test]
    fn exact_blocks_are_exact() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut exact = 0;
        for _ in 0..100_000 {
            let (d, dmin) = scales(&mut x);
            if exact_block(d, dmin) {
                exact += 1;
                for [a, b] in block_lines(&mut x, d, dmin) {
                    for q in 0..16 {
                        let v = a * q as f32 - b;
                        assert_eq!(
                            f64::from(v),
                            f64::from(a) * q as f64 - f64::from(b),
                            "{a} {b} {q}"
                        );
                    }
                }
            }
        }
        // Scales a few binades apart pass: the fast path is the common one.
        assert!(exact > 10_000, "{exact}");
        // f16 scales (11 significant bits) a binade apart; zeros.
        assert!(exact_block(1.25 / 1024.0, 1.75 / 512.0) && exact_block(0.0, 0.0));
        assert!(exact_block(-0.5, 0.0) && !exact_block(1e-3, 2e-3));
        assert!(!exact_block(f32::INFINITY, 1.0) && !exact_block(1.0, f32::NAN));
        assert!(!exact_block(1.0, 1e-6));
    }

    #[test]
    fn equal_to_the_counted_moments() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for groups in [1, 2, 7, 128, 300] {
            for _ in 0..20 {
                let mut lines = Vec::new();
                let mut values = Vec::new();
                let mut counts = Vec::new();
                let spread = next(&mut x) % 3;
                while lines.len() < groups {
                    let (d, dmin) = scales(&mut x);
                    if !exact_block(d, dmin) {
                        continue;
                    }
                    let [a, b] = match (spread, lines.len() % 5) {
                        // Groups far from each other and near: deviations and zeros.
                        (1 | 2, 0) => [0.0, 0.0],
                        (1 | 2, 1) => [0.5, 4.0],
                        _ => block_lines(&mut x, d, dmin)[0],
                    };
                    lines.push([a, b]);
                    values.extend((0..16).map(|q| a * q as f32 - b));
                    let mut c = [0u32; 16];
                    for _ in 0..32 {
                        let r = next(&mut x);
                        // Few codes of a group, or all of them.
                        c[(if spread == 2 { r % 3 } else { r % 16 }) as usize] += 1;
                    }
                    counts.extend(c);
                }
                let n = 32 * groups as u64;
                let got = moments_affine(&lines, &values, &counts, &mut Vec::new());
                let want = moments_counted(&values, &counts, n);
                assert_eq!(
                    (got.count, got.finite, got.zeros, got.nan),
                    (want.count, want.finite, want.zeros, want.nan)
                );
                assert!(
                    got.min == want.min && got.max == want.max,
                    "{got:?} {want:?}"
                );
                let scale = want.mean.abs().max((want.m2 / n as f64).sqrt());
                assert!(
                    (got.mean - want.mean).abs() <= 1e-12 * scale,
                    "{got:?} {want:?}"
                );
                let (s, t) = ((got.m2 / n as f64).sqrt(), (want.m2 / n as f64).sqrt());
                assert!((s - t).abs() <= 1e-12 * scale, "{got:?} {want:?}");
            }
        }
    }
}
