//! wasm simd128 versions of the 32-value block quants (`legacy.rs`): the whole block in eight
//! vectors, the same f32 operations per value as the scalar code, so the same bits. LLVM left
//! the scalar code's scale searches (first largest magnitude, min/max fold) and packing scalar
//! on wasm; here they are vector operations too. Blocks whose inverse scale is not finite
//! (subnormal scales) take the scalar path, as there the C conversions need emulating.
#![cfg(all(target_arch = "wasm32", target_feature = "simd128"))]

use std::arch::wasm32::*;

use super::legacy::{self, QK};
use super::{f16_field, Overflow};

/// The block as eight vectors.
#[inline(always)]
fn load(x: &[f32; QK]) -> [v128; 8] {
    // SAFETY: 8·4 = 32 floats, all inside `x`; v128_load has no alignment requirement.
    std::array::from_fn(|i| unsafe { v128_load(x.as_ptr().add(4 * i).cast()) })
}

/// Largest magnitude (NaN-free input: the caller refuses NaN).
#[inline(always)]
fn abs_max(v: &[v128; 8]) -> f32 {
    let mut m = f32x4_abs(v[0]);
    for x in &v[1..] {
        m = f32x4_pmax(m, f32x4_abs(*x));
    }
    let m = f32x4_pmax(m, i32x4_shuffle::<2, 3, 0, 1>(m, m));
    let m = f32x4_pmax(m, i32x4_shuffle::<1, 0, 3, 2>(m, m));
    f32x4_extract_lane::<0>(m)
}

/// `legacy::signed_max`: the first value of largest magnitude, +0 for an all-zero block.
#[inline(always)]
fn signed_max(x: &[f32; QK], v: &[v128; 8]) -> f32 {
    let amax = abs_max(v);
    if amax == 0.0 {
        return 0.0;
    }
    let a = f32x4_splat(amax);
    let mut bits = 0u32;
    for (i, x) in v.iter().enumerate() {
        bits |= u32::from(i32x4_bitmask(f32x4_eq(f32x4_abs(*x), a))) << (4 * i);
    }
    x[(bits.trailing_zeros() as usize).min(QK - 1)]
}

/// `legacy::min_max`: the fold keeps the first of equal values, which only matters for ±0.
#[inline(always)]
fn min_max(x: &[f32; QK], v: &[v128; 8]) -> (f32, f32) {
    let (mut lo, mut hi) = (v[0], v[0]);
    for x in &v[1..] {
        lo = f32x4_pmin(lo, *x);
        hi = f32x4_pmax(hi, *x);
    }
    let lo = f32x4_pmin(lo, i32x4_shuffle::<2, 3, 0, 1>(lo, lo));
    let lo = f32x4_pmin(lo, i32x4_shuffle::<1, 0, 3, 2>(lo, lo));
    let hi = f32x4_pmax(hi, i32x4_shuffle::<2, 3, 0, 1>(hi, hi));
    let hi = f32x4_pmax(hi, i32x4_shuffle::<1, 0, 3, 2>(hi, hi));
    let first_zero = || x.iter().copied().find(|&v| v == 0.0).unwrap_or(0.0);
    let (mut min, mut max) = (f32x4_extract_lane::<0>(lo), f32x4_extract_lane::<0>(hi));
    if min == 0.0 {
        min = first_zero();
    }
    if max == 0.0 {
        max = first_zero();
    }
    (min, max)
}

/// The low byte of each i32 of four vectors, in order (C's conversion to a byte type).
#[inline(always)]
fn low_bytes(a: v128, b: v128, c: v128, d: v128) -> v128 {
    let m = i32x4_splat(0xff);
    let ab = i16x8_narrow_i32x4(v128_and(a, m), v128_and(b, m));
    let cd = i16x8_narrow_i32x4(v128_and(c, m), v128_and(d, m));
    u8x16_narrow_i16x8(ab, cd)
}

/// The low bytes of four vectors of whole-number floats of magnitude < 2²², in order (C's
/// conversion of such a value to a byte type). Adding 1.5·2²³ is exact there and leaves the
/// number + 2²² in the low mantissa bits, so the low byte is the number's two's-complement low
/// byte: one add a vector, where V8 lowers `i32x4.trunc_sat_f32x4` to eight instructions.
#[inline(always)]
fn whole_bytes(v: [v128; 4]) -> v128 {
    let magic = f32x4_splat(12_582_912.0);
    let b = v.map(|v| f32x4_add(v, magic));
    low_bytes(b[0], b[1], b[2], b[3])
}

/// `MIN(limit, (int8_t)(int)v)` for the 16 values of four vectors, as bytes. On this path every
/// v lies in [0, limit + 2) (a finite inverse scale bounds |x·id| by the level count), so the
/// int8 conversion is the truncation, done in f32.
#[inline(always)]
fn min_i8(v: [v128; 4], limit: i32) -> v128 {
    let l = f32x4_splat(limit as f32);
    // pmin(t, l) = l < t ? l : t.
    whole_bytes(v.map(|v| f32x4_pmin(f32x4_trunc(v), l)))
}

/// `x·id + add` (or `(x − min)·id + add`) for four vectors.
#[inline(always)]
fn scaled(v: &[v128], min: Option<f32>, id: f32, add: f32) -> [v128; 4] {
    let (id, add) = (f32x4_splat(id), f32x4_splat(add));
    std::array::from_fn(|i| {
        let x = match min {
            Some(m) => f32x4_sub(v[i], f32x4_splat(m)),
            None => v[i],
        };
        f32x4_add(f32x4_mul(x, id), add)
    })
}

fn store16(out: &mut [u8], v: v128) {
    let mut b = [0u8; 16];
    // SAFETY: `b` holds 16 bytes.
    unsafe { v128_store(b.as_mut_ptr().cast(), v) };
    out[..16].copy_from_slice(&b);
}

/// Nibble pairs (bytes j and 16 + j) and the fifth bits of each byte (bit j of the result for
/// the first 16, bit 16 + j for the others), for Q5_0/Q5_1.
#[inline(always)]
fn pack5(lo: v128, hi: v128, qs: &mut [u8]) -> u32 {
    let nib = u8x16_splat(0x0f);
    store16(
        qs,
        v128_or(v128_and(lo, nib), i8x16_shl(v128_and(hi, nib), 4)),
    );
    let bit4 = |v: v128| u32::from(i8x16_bitmask(i8x16_shl(v, 3)));
    bit4(lo) | (bit4(hi) << 16)
}

// `#[inline]` on these: inlinable into `blocks` from any codegen unit (otherwise a move to
// another unit turns them into a call per block).
#[inline]
pub(super) fn q4_0(x: &[f32; QK], y: &mut [u8; 18]) -> Result<(), Overflow> {
    let v = load(x);
    let d = signed_max(x, &v) / -8.0;
    let id = legacy::inverse(d);
    if !id.is_finite() {
        return legacy::q4_0(x, y);
    }
    y[0..2].copy_from_slice(&f16_field(d)?);
    let lo = min_i8(scaled(&v[0..4], None, id, 8.5), 15);
    let hi = min_i8(scaled(&v[4..8], None, id, 8.5), 15);
    store16(&mut y[2..18], v128_or(lo, i8x16_shl(hi, 4)));
    Ok(())
}

#[inline]
pub(super) fn q4_1(x: &[f32; QK], y: &mut [u8; 20]) -> Result<(), Overflow> {
    let v = load(x);
    let (min, max) = min_max(x, &v);
    let d = (max - min) / 15.0;
    let id = legacy::inverse(d);
    if !id.is_finite() {
        return legacy::q4_1(x, y);
    }
    y[0..2].copy_from_slice(&f16_field(d)?);
    y[2..4].copy_from_slice(&f16_field(min)?);
    let lo = min_i8(scaled(&v[0..4], Some(min), id, 0.5), 15);
    let hi = min_i8(scaled(&v[4..8], Some(min), id, 0.5), 15);
    store16(&mut y[4..20], v128_or(lo, i8x16_shl(hi, 4)));
    Ok(())
}

#[inline]
pub(super) fn q5_0(x: &[f32; QK], y: &mut [u8; 22]) -> Result<(), Overflow> {
    let v = load(x);
    let d = signed_max(x, &v) / -16.0;
    let id = legacy::inverse(d);
    if !id.is_finite() {
        return legacy::q5_0(x, y);
    }
    y[0..2].copy_from_slice(&f16_field(d)?);
    let lo = min_i8(scaled(&v[0..4], None, id, 16.5), 31);
    let hi = min_i8(scaled(&v[4..8], None, id, 16.5), 31);
    let qh = pack5(lo, hi, &mut y[6..22]);
    y[2..6].copy_from_slice(&qh.to_le_bytes());
    Ok(())
}

#[inline]
pub(super) fn q5_1(x: &[f32; QK], y: &mut [u8; 24]) -> Result<(), Overflow> {
    let v = load(x);
    let (min, max) = min_max(x, &v);
    let d = (max - min) / 31.0;
    let id = legacy::inverse(d);
    if !id.is_finite() {
        return legacy::q5_1(x, y);
    }
    y[0..2].copy_from_slice(&f16_field(d)?);
    y[2..4].copy_from_slice(&f16_field(min)?);
    // `(uint8_t)(x0 + 0.5f)`: no clamp in ggml.
    let bytes = |v: [v128; 4]| whole_bytes(v.map(|v| f32x4_trunc(v)));
    let lo = bytes(scaled(&v[0..4], Some(min), id, 0.5));
    let hi = bytes(scaled(&v[4..8], Some(min), id, 0.5));
    let qh = pack5(lo, hi, &mut y[8..24]);
    y[4..8].copy_from_slice(&qh.to_le_bytes());
    Ok(())
}

#[inline]
pub(super) fn q8_0(x: &[f32; QK], y: &mut [u8; 34]) -> Result<(), Overflow> {
    let v = load(x);
    let d = abs_max(&v) / 127.0;
    let id = legacy::inverse(d);
    if !id.is_finite() {
        return legacy::q8_0(x, y);
    }
    y[0..2].copy_from_slice(&f16_field(d)?);
    let idv = f32x4_splat(id);
    // roundf (half away from zero) of |s| ≤ 127-ish: t = trunc(s), and the exact fraction
    // s − t in (−1, 1) doubled (exact) truncates to ±1 exactly when it is ≥ 0.5 in magnitude.
    let q: [v128; 8] = std::array::from_fn(|i| {
        let s = f32x4_mul(v[i], idv);
        let t = f32x4_trunc(s);
        let frac = f32x4_sub(s, t);
        f32x4_add(t, f32x4_trunc(f32x4_add(frac, frac)))
    });
    store16(&mut y[2..18], whole_bytes([q[0], q[1], q[2], q[3]]));
    store16(&mut y[18..34], whole_bytes([q[4], q[5], q[6], q[7]]));
    Ok(())
}

/// Stores eight vectors as the block's 32 values.
#[inline(always)]
fn store(y: &mut [f32; QK], v: [v128; 8]) {
    for (i, v) in v.into_iter().enumerate() {
        // SAFETY: 4·i + 4 ≤ 32 floats of `y`; v128_store has no alignment requirement.
        unsafe { v128_store(y.as_mut_ptr().add(4 * i).cast(), v) };
    }
}

/// `(min(trunc(v), limit) − off)·d` per lane: the signed types' values (`legacy::q4_0_values`).
/// Every v is in [0, limit + 2) here, so the truncation is C's int conversion and the
/// difference a whole number; times the f16 scale it is exact, as in the dequantizer.
#[inline(always)]
fn signed_values(v: [v128; 8], limit: f32, off: f32, d: f32) -> [v128; 8] {
    let (l, o, d) = (f32x4_splat(limit), f32x4_splat(off), f32x4_splat(d));
    v.map(|v| f32x4_mul(f32x4_sub(f32x4_pmin(f32x4_trunc(v), l), o), d))
}

/// `(x·id + add)` over the whole block.
#[inline(always)]
fn scaled8(v: &[v128; 8], min: Option<f32>, id: f32, add: f32) -> [v128; 8] {
    let (a, b) = (
        scaled(&v[0..4], min, id, add),
        scaled(&v[4..8], min, id, add),
    );
    [a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]]
}

// The round trips of `legacy.rs` (same contract), the same f32 operations per value.

/// Q4_0 (`levels` 16) and Q5_0 (32), as `legacy::signed_values`.
#[inline(always)]
fn signed_block(x: &[f32; QK], y: &mut [f32; QK], levels: f32) -> bool {
    let half = levels / 2.0;
    let v = load(x);
    let d = signed_max(x, &v) / -half;
    let id = legacy::inverse(d);
    let Some(d16) = super::f16_round_trip(d).filter(|_| id.is_finite()) else {
        return false;
    };
    store(
        y,
        signed_values(scaled8(&v, None, id, half + 0.5), levels - 1.0, half, d16),
    );
    true
}

#[inline]
pub(super) fn q4_0_values(x: &[f32; QK], y: &mut [f32; QK]) -> bool {
    signed_block(x, y, 16.0)
}

#[inline]
pub(super) fn q5_0_values(x: &[f32; QK], y: &mut [f32; QK]) -> bool {
    signed_block(x, y, 32.0)
}

/// Q4_1 (`LIMIT` 15, clamped) and Q5_1 (31: ggml does not clamp, and (x − min)·id + 0.5 stays
/// below 32, so the clamp changes nothing there and keeps the five bits stored).
#[inline(always)]
fn affine_values(x: &[f32; QK], y: &mut [f32; QK], levels: f32) -> bool {
    let v = load(x);
    let (min, max) = min_max(x, &v);
    let d = (max - min) / levels;
    let id = legacy::inverse(d);
    let (Some(d16), Some(m16)) = (super::f16_round_trip(d), super::f16_round_trip(min)) else {
        return false;
    };
    if !id.is_finite() {
        return false;
    }
    let (l, d16, m16) = (f32x4_splat(levels), f32x4_splat(d16), f32x4_splat(m16));
    let q = scaled8(&v, Some(min), id, 0.5);
    store(
        y,
        q.map(|q| f32x4_add(f32x4_mul(f32x4_pmin(f32x4_trunc(q), l), d16), m16)),
    );
    true
}

#[inline]
pub(super) fn q4_1_values(x: &[f32; QK], y: &mut [f32; QK]) -> bool {
    affine_values(x, y, 15.0)
}

#[inline]
pub(super) fn q5_1_values(x: &[f32; QK], y: &mut [f32; QK]) -> bool {
    affine_values(x, y, 31.0)
}

#[inline]
pub(super) fn q8_0_values(x: &[f32; QK], y: &mut [f32; QK]) -> bool {
    let v = load(x);
    let d = abs_max(&v) / 127.0;
    let id = legacy::inverse(d);
    let Some(d16) = super::f16_round_trip(d).filter(|_| id.is_finite()) else {
        return false;
    };
    let (idv, d16, zero) = (f32x4_splat(id), f32x4_splat(d16), f32x4_splat(0.0));
    // roundf as in `q8_0`; + 0 turns a −0 quant (the integer 0 in the bytes) into +0.
    store(
        y,
        v.map(|x| {
            let s = f32x4_mul(x, idv);
            let t = f32x4_trunc(s);
            let frac = f32x4_sub(s, t);
            let q = f32x4_add(f32x4_add(t, f32x4_trunc(f32x4_add(frac, frac))), zero);
            f32x4_mul(q, d16)
        }),
    );
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Equal to the scalar quantizers (and so to ggml) on random, zero, signed-zero, tied,
    /// subnormal and huge blocks.
    #[test]
    fn simd128_legacy_equals_scalar() {
        let mut state = 0x0123_4567_89ab_cdefu64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..200_000 {
            let mut x = [0.0f32; QK];
            for v in x.iter_mut() {
                let r = next();
                *v = match round % 8 {
                    0 => ((r >> 40) as f32 - 8.0e6) * 1.0e-6,
                    1 => [0.0, -0.0, 1.0, -1.0, 0.5][(r % 5) as usize],
                    2 => f32::from_bits((r >> 32) as u32 & 0x807f_ffff), // subnormal
                    3 => f32::from_bits((r >> 32) as u32 & 0x8fff_ffff), // tiny
                    4 => ((r >> 40) as f32 - 8.0e6) * 1.0e3,
                    5 => [0.0, -0.0][(r % 2) as usize],
                    6 => ((r % 7) as f32 - 3.0) * 0.25,
                    _ => f32::from_bits((r >> 32) as u32 & 0xbfff_ffff), // up to 2^64
                };
            }
            macro_rules! same {
                ($f:ident, $b:expr) => {{
                    let (mut a, mut b) = ([0u8; $b], [0u8; $b]);
                    let ra = $f(&x, &mut a).map_err(|e| e.0.to_bits());
                    let rb = legacy::$f(&x, &mut b).map_err(|e| e.0.to_bits());
                    assert_eq!(ra, rb, "{} {x:?}", stringify!($f));
                    if ra.is_ok() {
                        assert_eq!(a, b, "{} {x:?}", stringify!($f));
                    }
                }};
            }
            same!(q4_0, 18);
            same!(q4_1, 20);
            same!(q5_0, 22);
            same!(q5_1, 24);
            same!(q8_0, 34);
        }
    }
}
