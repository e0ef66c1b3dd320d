//! The ternary types TQ1_0 and TQ2_0 (ggml's `quantize_row_tq*_ref`): d = the block's largest
//! magnitude, each value rounded (half away from zero, `lroundf`) to −1, 0 or 1.
#![allow(clippy::needless_range_loop)] // index arithmetic kept as in ggml, for review against it

use super::{c_lroundf_int, f16_field, Overflow};

const QK_K: usize = 256;

/// The block's scale and its inverse (0 for an all-zero block). Max is exact, so the vector
/// scan gives ggml's running `amax > |x| ? amax : |x|` (values are finite here).
fn scale(x: &[f32; QK_K]) -> (f32, f32) {
    let amax = super::abs_max(x);
    (amax, if amax != 0.0 { 1.0 / amax } else { 0.0 })
}

/// The trit of one value: `lroundf(x·id) + 1` as C's int (the low 32 bits of the long).
fn trit(v: f32, id: f32) -> i32 {
    c_lroundf_int(v * id).wrapping_add(1)
}

/// Every value's trit. With a finite `id` (= 1/amax, or 0) every |x·id| is at most
/// `fl(amax·fl(1/amax)) ≤ 1 + 2⁻²³ < 1.5`, where lroundf is −1 up to −0.5, 1 from 0.5 and
/// 0 between: two comparisons, which vectorise. An infinite `id` (amax < 2⁻¹²⁸) takes
/// [`trit`] (lroundf of ±inf and NaN is LONG_MIN, whose low bits make the trit 1).
fn trits(x: &[f32; QK_K], id: f32) -> [u8; QK_K] {
    let mut t = [1u8; QK_K];
    if id.is_finite() {
        for (t, &v) in t.iter_mut().zip(x) {
            let y = v * id;
            *t = 1 + u8::from(y >= 0.5) - u8::from(y <= -0.5);
        }
    } else {
        for (t, &v) in t.iter_mut().zip(x) {
            *t = trit(v, id) as u8;
        }
    }
    t
}

/// Five (or four, then ×3) trits as a base-3 number, turned into a fixed-point fraction of 256
/// by ceiling division, in u8 arithmetic like ggml's.
fn pack5(trits: impl Iterator<Item = u8>, shift_last: bool) -> u8 {
    let mut q = 0u8;
    for t in trits {
        q = q.wrapping_mul(3).wrapping_add(t);
    }
    if shift_last {
        q = q.wrapping_mul(3);
    }
    (u32::from(q) * 256).div_ceil(243) as u8
}

pub(super) fn tq1_0(x: &[f32; QK_K], y: &mut [u8; 54]) -> Result<(), Overflow> {
    let (d, id) = scale(x);
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    if id.is_finite() {
        // SAFETY: built with simd128.
        unsafe { super::tq_simd128::tq1_0(x, id, &mut y[..52]) };
        y[52..54].copy_from_slice(&f16_field(d)?);
        return Ok(());
    }
    let t = trits(x, id);
    // 5 values per byte: bytes 0..32 take values m + 32n (n < 5) of x[0..160]...
    for m in 0..32 {
        y[m] = pack5((0..5).map(|n| t[m + n * 32]), false);
    }
    // ...bytes 32..48 take values 160 + m + 16n of x[160..240]...
    for m in 0..16 {
        y[32 + m] = pack5((0..5).map(|n| t[160 + m + n * 16]), false);
    }
    // ...and qh's 4 bytes 4 values each of x[240..256], the first trit the most significant.
    for j in 0..4 {
        y[48 + j] = pack5((0..4).map(|m| t[240 + j + m * 4]), true);
    }
    y[52..54].copy_from_slice(&f16_field(d)?);
    Ok(())
}

pub(super) fn tq2_0(x: &[f32; QK_K], y: &mut [u8; 66]) -> Result<(), Overflow> {
    let (d, id) = scale(x);
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    if id.is_finite() {
        // SAFETY: built with simd128.
        unsafe { super::tq_simd128::tq2_0(x, id, &mut y[..64]) };
        y[64..66].copy_from_slice(&f16_field(d)?);
        return Ok(());
    }
    let t = trits(x, id);
    for j in (0..64).step_by(32) {
        for m in 0..32 {
            let mut q = 0u8;
            for n in 0..4 {
                q = q.wrapping_add((t[4 * j + m + n * 32] & 3) << (2 * n));
            }
            y[j + m] = q;
        }
    }
    y[64..66].copy_from_slice(&f16_field(d)?);
    Ok(())
}

/// The values TQ1_0 and TQ2_0 both give back (`round_trip.rs`): trit − 1 times the f16 scale,
/// the same for both types (they store the same trits and scale). False, writing nothing,
/// where `id` is infinite or the scale overflows f16 (the caller takes the bytes there).
pub(super) fn ternary_values(x: &[f32; QK_K], y: &mut [f32; QK_K]) -> bool {
    let (d, id) = scale(x);
    let Some(d) = super::f16_round_trip(d).filter(|_| id.is_finite()) else {
        return false;
    };
    for (y, &v) in y.iter_mut().zip(x) {
        // As `trits` (a finite id): 1 from 0.5, −1 up to −0.5, else 0 (+0, as the integer).
        let t = v * id;
        let q = f32::from(u8::from(t >= 0.5)) - f32::from(u8::from(t <= -0.5));
        *y = q * d;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ggml's `quantize_row_tq1_0_ref` as written (trit by trit through lroundf).
    fn tq1_0_ref(x: &[f32; QK_K], y: &mut [u8; 54]) {
        let mut amax = 0.0f32;
        for &v in x {
            amax = if amax > v.abs() { amax } else { v.abs() };
        }
        let id = if amax != 0.0 { 1.0 / amax } else { 0.0 };
        let p = |it: &mut dyn Iterator<Item = i32>, shift: bool| pack5(it.map(|t| t as u8), shift);
        for m in 0..32 {
            y[m] = p(&mut (0..5).map(|n| trit(x[m + n * 32], id)), false);
        }
        for m in 0..16 {
            y[32 + m] = p(&mut (0..5).map(|n| trit(x[160 + m + n * 16], id)), false);
        }
        for j in 0..4 {
            y[48 + j] = p(&mut (0..4).map(|m| trit(x[240 + j + m * 4], id)), true);
        }
        y[52..54].copy_from_slice(&f16_field(amax).unwrap());
    }

    /// ggml's `quantize_row_tq2_0_ref` as written.
    fn tq2_0_ref(x: &[f32; QK_K], y: &mut [u8; 66]) {
        let mut amax = 0.0f32;
        for &v in x {
            amax = if amax > v.abs() { amax } else { v.abs() };
        }
        let id = if amax != 0.0 { 1.0 / amax } else { 0.0 };
        for j in (0..64).step_by(32) {
            for m in 0..32 {
                let mut q = 0u8;
                for n in 0..4 {
                    let xi = trit(x[4 * j + m + n * 32], id);
                    q = q.wrapping_add(((xi & 3) << (2 * n)) as u8);
                }
                y[j + m] = q;
            }
        }
        y[64..66].copy_from_slice(&f16_field(amax).unwrap());
    }

    /// The fast forms (comparisons; simd128 in wasm) equal ggml's trit-by-trit code on random
    /// blocks, values at ±0.5·amax and its neighbours, and subnormal blocks (infinite 1/amax).
    #[test]
    fn fast_equals_reference() {
        let mut state = 0x5851_f42d_4c95_7f2du64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 11
        };
        for round in 0..4000 {
            let mut x = [0.0f32; QK_K];
            let scale = f32::from_bits(((next() % 250) as u32 + 2) << 23);
            for v in x.iter_mut() {
                let r = next();
                *v = match round % 5 {
                    0 => f32::from_bits(r as u32),
                    1 => ((r >> 20) as f32 / (1u64 << 33) as f32 - 0.5) * scale,
                    2 => f32::from_bits((r as u32) & 0x807f_ffff),
                    3 => ((r % 5) as f32 - 2.0) * 0.25 * scale,
                    _ => ((r % 9) as f32 - 4.0) * 0.125,
                };
                if round % 5 == 4 || round % 5 == 3 {
                    // Neighbours of the ±0.5 thresholds (amax = 2·|0.5 level|).
                    *v = f32::from_bits(
                        v.to_bits()
                            .wrapping_add((r >> 40) as u32 % 3)
                            .wrapping_sub(1),
                    );
                }
                if !v.is_finite() || v.abs() > 6.0e4 {
                    *v = 0.5;
                }
            }
            let (mut a, mut b) = ([0u8; 54], [0u8; 54]);
            tq1_0(&x, &mut a).unwrap();
            tq1_0_ref(&x, &mut b);
            assert_eq!(a, b, "TQ1_0 round {round}");
            let (mut a, mut b) = ([0u8; 66], [0u8; 66]);
            tq2_0(&x, &mut a).unwrap();
            tq2_0_ref(&x, &mut b);
            assert_eq!(a, b, "TQ2_0 round {round}");
        }
    }
}
