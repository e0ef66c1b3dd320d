//! MXFP4 (ggml's `quantize_row_mxfp4_ref`): a shared E8M0 exponent per 32 values, chosen from
//! the block's largest magnitude, and each value the nearest doubled-E2M1 level.

use super::{c_trunc_i32, Overflow};

const QK: usize = 32;

/// ggml's `kvalues_mxfp4`: E2M1 values doubled.
#[cfg(test)]
const KVALUES: [i8; 16] = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12];

/// The non-negative half of `kvalues_mxfp4` (indices 0..8).
pub(super) const POSITIVE: [f32; 8] = [0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0];

/// ggml's `GGML_E8M0_TO_FP32_HALF`: 2^(e − 128) from the exponent byte's bits.
fn e8m0_half(e: u8) -> f32 {
    let bits = if e < 2 {
        0x0020_0000u32 << e
    } else {
        u32::from(e - 1) << 23
    };
    f32::from_bits(bits)
}

/// ggml's `best_index_mxfp4` as written (the reference the fast form is tested against): the
/// first of the 16 indices whose level times `e` is nearest `x`.
#[cfg(test)]
fn best_index(x: f32, e: f32) -> u8 {
    let mut best = 0u8;
    let mut best_err = (f32::from(KVALUES[0]) * e - x).abs();
    for (i, &k) in KVALUES.iter().enumerate().skip(1) {
        let err = (f32::from(k) * e - x).abs();
        if err < best_err {
            best = i as u8;
            best_err = err;
        }
    }
    best
}

/// [`best_index`] from the eight non-negative levels only, the same index for every finite
/// `x`. Each `k·e` is exact (e is a power of two, subnormal ones included) or infinite, and
/// rounding is monotonic and symmetric, so: for x ≥ 0 (−0 too) a negative level's error
/// `fl(k·e + x)` is ≥ index 0's `|x|`, and index 8 (level 0 again) only ties with index 0: the
/// first eight decide. For x < 0 the positive levels 1..8 likewise never beat index 0, index 8
/// ties, and level −k's error `|−k·e − x|` is exactly `|k·e − |x||`: indices 9..16 run the
/// same comparisons as 1..8 do for |x|. So the answer is the search over 0..8 on |x|, plus 8
/// when x < 0 and it is not 0. `lv[k]` = POSITIVE[k]·e.
#[cfg_attr(
    all(target_arch = "wasm32", target_feature = "simd128"),
    allow(dead_code) // the simd128 build runs fp4_simd128's forms (tested against these)
)]
#[inline(always)]
pub(super) fn fast_index(x: f32, lv: &[f32; 8]) -> u8 {
    let a = x.abs();
    let mut best = 0u8;
    let mut best_err = a;
    for (k, &l) in lv.iter().enumerate().skip(1) {
        let err = (l - a).abs();
        if err < best_err {
            best = k as u8;
            best_err = err;
        }
    }
    if x < 0.0 && best != 0 {
        best + 8
    } else {
        best
    }
}

/// Midpoints between consecutive non-negative levels.
pub(super) const MIDS: [f32; 7] = [0.5, 1.5, 2.5, 3.5, 5.0, 7.0, 10.0];

/// Whether [`mid_index`] may stand for [`fast_index`] at scale `d` (a power of two).
pub(super) fn mids_apply(d: f32) -> bool {
    (2.0f32.powi(-100)..=2.0f32.powi(100)).contains(&d)
}

/// [`fast_index`] as the count of midpoints `mids[j]` (= MIDS[j]·d, exact) below |x|, for
/// `d` in [2⁻¹⁰⁰, 2¹⁰⁰] (no level or error overflows or is subnormal) and |x| < 16·d, which
/// holds for every value of a block (16·d = 2^(⌊log2f(amax)⌋ + 1) > amax). Why they agree: let
/// the levels `L_i ≤ a ≤ L_{i+1}` bracket a = |x|. Consecutive non-zero levels are within a
/// factor 2, so both errors `a − L_i` and `L_{i+1} − a` are exact (Sterbenz; `a − 0` is a),
/// except `d − a` for a < d/2, which still rounds to ≥ d/2 > a (level 0 wins, as it should).
/// Every other level's error exceeds one of these two by at least d, far more than its
/// rounding (errors are < 16·d), so it never wins. So ggml's chain picks the nearest level,
/// and on an exact tie the lower index (strict `<`): the count of midpoints strictly below a.
#[cfg_attr(
    all(target_arch = "wasm32", target_feature = "simd128"),
    allow(dead_code) // the simd128 build runs fp4_simd128's forms (tested against these)
)]
#[inline(always)]
pub(super) fn mid_index(x: f32, mids: &[f32; 7]) -> u8 {
    let a = x.abs();
    let mut k = 0u8;
    for &m in mids {
        k += u8::from(a > m);
    }
    if x < 0.0 && k != 0 {
        k + 8
    } else {
        k
    }
}

/// `floorf(log2f(amax))` as glibc computes it: log2f is correctly rounded, so a value just
/// below a power of two can round up to it. Computed in f64 and rounded once to f32, which
/// gives the correctly rounded f32 on every platform (tested against the oracle).
fn floor_log2f_slow(amax: f32) -> f32 {
    (f64::from(amax).log2() as f32).floor()
}

/// [`floor_log2f_slow`] without the log (a libm call per block in wasm) when the answer is
/// the exponent: for a normal `amax = 2^k·1.m` with `1.m < 2 − 2⁻⁷`, log2 lies in
/// `[k, k + 1 − 0.0056]`, and f32's spacing near any exponent (|k + 1| ≤ 128) is at most
/// 2⁻¹⁶, so its rounding neither reaches k + 1 nor falls below k (exact at 1.m = 1).
fn floor_log2f(amax: f32) -> f32 {
    let bits = amax.to_bits();
    let exp = (bits >> 23) & 0xff;
    if exp != 0 && exp != 0xff && bits & 0x007f_ffff < 0x007f_0000 {
        (exp as i32 - 127) as f32
    } else {
        floor_log2f_slow(amax)
    }
}

pub(super) fn mxfp4(x: &[f32; QK], y: &mut [u8; 17]) -> Result<(), Overflow> {
    // The largest magnitude (max is exact: the same value as ggml's running `amax < |x|`).
    let amax = super::abs_max(x);
    // `(uint8_t)(floorf(log2f(amax)) - 2 + 127)`: float arithmetic, then C's conversion
    // (which wraps for blocks below 2^-125).
    let e = if amax > 0.0 {
        c_trunc_i32(floor_log2f(amax) - 2.0 + 127.0) as u8
    } else {
        0
    };
    let d = e8m0_half(e);
    y[0] = e;
    let lv = POSITIVE.map(|k| k * d);
    let mids = MIDS.map(|m| m * d);
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        // SAFETY: built with simd128.
        unsafe { super::fp4_simd128::pack(x, &lv, &mids, mids_apply(d), &mut y[1..]) };
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        let mut idx = [0u8; QK];
        // Loops over the values with the levels inside: LLVM vectorises them across values.
        if mids_apply(d) {
            for (i, &v) in idx.iter_mut().zip(x) {
                *i = mid_index(v, &mids);
            }
        } else {
            for (i, &v) in idx.iter_mut().zip(x) {
                *i = fast_index(v, &lv);
            }
        }
        for j in 0..QK / 2 {
            y[1 + j] = idx[j] | (idx[QK / 2 + j] << 4);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The eight-level form gives ggml's index for values around every level and midpoint of
    /// every exponent (subnormal, overflowing levels), ±0, and random bits.
    #[test]
    fn fast_index_equals_best_index() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for eb in 0..=255u8 {
            let e = e8m0_half(eb);
            let lv = POSITIVE.map(|k| k * e);
            let mids = MIDS.map(|m| m * e);
            let check = |v: f32| {
                if v.is_finite() {
                    let want = best_index(v, e);
                    assert_eq!(fast_index(v, &lv), want, "{v:e} e {eb}");
                    // A block's values are below 16·e (see `mid_index`).
                    if mids_apply(e) && v.abs() < 16.0 * e {
                        assert_eq!(mid_index(v, &mids), want, "{v:e} e {eb}");
                    }
                }
            };
            for k in 0..8 {
                let mids = [POSITIVE[k], (POSITIVE[k] + POSITIVE[(k + 1).min(7)]) / 2.0];
                for m in mids {
                    let c = m * e;
                    for d in -3i32..=3 {
                        let v = f32::from_bits(c.to_bits().wrapping_add_signed(d));
                        check(v);
                        check(-v);
                    }
                }
            }
            check(0.0);
            check(-0.0);
            for _ in 0..2000 {
                let r = next();
                check(f32::from_bits(r as u32));
                // Magnitudes near this exponent's levels.
                check(e * ((r >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 30.0);
                // Any bits below 16·e (its whole range of magnitudes, subnormals included).
                let top = (16.0 * e).to_bits().max(1);
                check(f32::from_bits((r >> 8) as u32 % top));
                check(-f32::from_bits((r >> 8) as u32 % top));
            }
        }
    }

    /// The exponent shortcut equals the correctly rounded log2 around every power of two,
    /// at the shortcut's edge, and on random positive floats.
    #[test]
    fn floor_log2f_equals_slow() {
        let mut state = 0x1234_5678_9abc_def1u64;
        for e in 0..=255u32 {
            for m in [
                0, 1, 2, 0x3f_ffff, 0x7e_ffff, 0x7f_0000, 0x7f_0001, 0x7f_fffe, 0x7f_ffff,
            ] {
                let v = f32::from_bits((e << 23) | m);
                if v.is_finite() && v > 0.0 {
                    assert_eq!(floor_log2f(v), floor_log2f_slow(v), "{v:e}");
                }
            }
        }
        for _ in 0..1_000_000 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            let v = f32::from_bits((state >> 33) as u32);
            if v.is_finite() && v > 0.0 {
                assert_eq!(floor_log2f(v), floor_log2f_slow(v), "{v:e}");
            }
        }
    }

    /// A whole block through `mxfp4` equals the block built from ggml's search.
    #[test]
    fn blocks_equal_reference() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..20_000 {
            let mut x = [0.0f32; QK];
            for v in x.iter_mut() {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let r = state >> 11;
                *v = match round % 4 {
                    0 => f32::from_bits(r as u32),
                    1 => ((r >> 20) as f32 / (1u64 << 33) as f32 - 0.5) * 8.0,
                    2 => f32::from_bits((r as u32) & 0x807f_ffff),
                    _ => ((r >> 60) as f32 - 8.0) * 0.25,
                };
                if !v.is_finite() {
                    *v = 1.0;
                }
            }
            let mut y = [0u8; 17];
            mxfp4(&x, &mut y).unwrap();
            let d = e8m0_half(y[0]);
            for j in 0..QK / 2 {
                let want = best_index(x[j], d) | (best_index(x[QK / 2 + j], d) << 4);
                assert_eq!(y[1 + j], want, "round {round} byte {j}");
            }
        }
    }
}
