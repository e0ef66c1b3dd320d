//! The 32-value block quants with one f16 scale: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 (ggml's
//! `quantize_row_*_ref`). Layouts are those of `quant::scalar::legacy`.
#![allow(clippy::needless_range_loop)] // index arithmetic kept as in ggml, for review against it

use super::{c_round_i32, c_trunc_i32, f16_field, f16_round_trip, Overflow};

pub(super) const QK: usize = 32;

/// The value of largest magnitude (the first one, on ties), as ggml finds it (it keeps the
/// first `v` with `amax < |v|`): for NaN-free blocks (the caller refuses NaN) that is the first
/// value whose magnitude is the maximum, and +0 for an all-zero block even when it holds −0.
/// Found in two passes so that the first vectorises.
fn signed_max(x: &[f32; QK]) -> f32 {
    let amax = super::abs_max(x);
    if amax == 0.0 {
        return 0.0;
    }
    x.iter().copied().find(|v| v.abs() == amax).unwrap_or(0.0)
}

/// Minimum and maximum, starting from ±FLT_MAX as ggml does.
fn min_max(x: &[f32; QK]) -> (f32, f32) {
    let mut min = f32::MAX;
    let mut max = -f32::MAX;
    for &v in x {
        if v < min {
            min = v;
        }
        if v > max {
            max = v;
        }
    }
    (min, max)
}

/// `1/d`, or 0 for a zero scale.
pub(super) fn inverse(d: f32) -> f32 {
    if d != 0.0 {
        1.0 / d
    } else {
        0.0
    }
}

/// C's `(int)v`. With `SMALL` every value is known finite and far inside ±2³¹ (the block's
/// inverse scale is finite, so |x·id| ≤ the level count), where Rust's `as` truncates alike
/// and vectorises; otherwise (an infinite inverse scale, from a subnormal scale) x86-64's
/// conversion is emulated exactly.
#[inline(always)]
fn trunc<const SMALL: bool>(v: f32) -> i32 {
    if SMALL {
        v as i32
    } else {
        c_trunc_i32(v)
    }
}

/// `MIN(limit, (int8_t)v)` in C: the int8 conversion first (wrapping), then the clamp.
#[inline(always)]
fn min_i8<const SMALL: bool>(limit: i32, v: f32) -> u8 {
    (trunc::<SMALL>(v) as i8 as i32).min(limit) as u8
}

/// Runs `body::<true>` when `id` is finite (all conversions in range), else `body::<false>`.
macro_rules! by_range {
    ($id:expr, $body:ident($($arg:expr),*)) => {
        if $id.is_finite() {
            $body::<true>($($arg),*)
        } else {
            $body::<false>($($arg),*)
        }
    };
}

pub(super) fn q4_0(x: &[f32; QK], y: &mut [u8; 18]) -> Result<(), Overflow> {
    let d = signed_max(x) / -8.0;
    let id = inverse(d);
    y[0..2].copy_from_slice(&f16_field(d)?);
    by_range!(id, q4_0_quants(x, id, &mut y[2..18]));
    Ok(())
}

#[inline(always)]
fn q4_0_quants<const SMALL: bool>(x: &[f32; QK], id: f32, qs: &mut [u8]) {
    for j in 0..QK / 2 {
        let xi0 = min_i8::<SMALL>(15, x[j] * id + 8.5);
        let xi1 = min_i8::<SMALL>(15, x[QK / 2 + j] * id + 8.5);
        qs[j] = xi0 | (xi1 << 4);
    }
}

pub(super) fn q4_1(x: &[f32; QK], y: &mut [u8; 20]) -> Result<(), Overflow> {
    let (min, max) = min_max(x);
    let d = (max - min) / 15.0;
    let id = inverse(d);
    y[0..2].copy_from_slice(&f16_field(d)?);
    y[2..4].copy_from_slice(&f16_field(min)?);
    by_range!(id, q4_1_quants(x, min, id, &mut y[4..20]));
    Ok(())
}

#[inline(always)]
fn q4_1_quants<const SMALL: bool>(x: &[f32; QK], min: f32, id: f32, qs: &mut [u8]) {
    for j in 0..QK / 2 {
        let xi0 = min_i8::<SMALL>(15, (x[j] - min) * id + 0.5);
        let xi1 = min_i8::<SMALL>(15, (x[QK / 2 + j] - min) * id + 0.5);
        qs[j] = xi0 | (xi1 << 4);
    }
}

pub(super) fn q5_0(x: &[f32; QK], y: &mut [u8; 22]) -> Result<(), Overflow> {
    let d = signed_max(x) / -16.0;
    let id = inverse(d);
    y[0..2].copy_from_slice(&f16_field(d)?);
    let qh = by_range!(id, q5_0_quants(x, id, &mut y[6..22]));
    y[2..6].copy_from_slice(&qh.to_le_bytes());
    Ok(())
}

#[inline(always)]
fn q5_0_quants<const SMALL: bool>(x: &[f32; QK], id: f32, qs: &mut [u8]) -> u32 {
    let mut qh = 0u32;
    for j in 0..QK / 2 {
        let xi0 = min_i8::<SMALL>(31, x[j] * id + 16.5);
        let xi1 = min_i8::<SMALL>(31, x[QK / 2 + j] * id + 16.5);
        qs[j] = (xi0 & 0x0f) | ((xi1 & 0x0f) << 4);
        qh |= ((u32::from(xi0) & 0x10) >> 4) << j;
        qh |= ((u32::from(xi1) & 0x10) >> 4) << (j + QK / 2);
    }
    qh
}

pub(super) fn q5_1(x: &[f32; QK], y: &mut [u8; 24]) -> Result<(), Overflow> {
    let (min, max) = min_max(x);
    let d = (max - min) / 31.0;
    let id = inverse(d);
    y[0..2].copy_from_slice(&f16_field(d)?);
    y[2..4].copy_from_slice(&f16_field(min)?);
    let qh = by_range!(id, q5_1_quants(x, min, id, &mut y[8..24]));
    y[4..8].copy_from_slice(&qh.to_le_bytes());
    Ok(())
}

#[inline(always)]
fn q5_1_quants<const SMALL: bool>(x: &[f32; QK], min: f32, id: f32, qs: &mut [u8]) -> u32 {
    let mut qh = 0u32;
    for j in 0..QK / 2 {
        // `(uint8_t)(x0 + 0.5f)`: no clamp in ggml.
        let xi0 = trunc::<SMALL>((x[j] - min) * id + 0.5) as u8;
        let xi1 = trunc::<SMALL>((x[QK / 2 + j] - min) * id + 0.5) as u8;
        qs[j] = (xi0 & 0x0f) | ((xi1 & 0x0f) << 4);
        qh |= ((u32::from(xi0) & 0x10) >> 4) << j;
        qh |= ((u32::from(xi1) & 0x10) >> 4) << (j + QK / 2);
    }
    qh
}

pub(super) fn q8_0(x: &[f32; QK], y: &mut [u8; 34]) -> Result<(), Overflow> {
    let mut amax = 0.0f32;
    for &v in x {
        // MAX(a, b) is `a > b ? a : b`.
        amax = if amax > v.abs() { amax } else { v.abs() };
    }
    let d = amax / 127.0;
    let id = inverse(d);
    y[0..2].copy_from_slice(&f16_field(d)?);
    by_range!(id, q8_0_quants(x, id, &mut y[2..34]));
    Ok(())
}

#[inline(always)]
fn q8_0_quants<const SMALL: bool>(x: &[f32; QK], id: f32, qs: &mut [u8]) {
    for j in 0..QK {
        // `qs[j] = roundf(x0)`: round half away from zero, then C's int8 conversion.
        let v = x[j] * id;
        let q = if SMALL {
            // |v| ≤ 127: v − trunc(v) is exact, so this is roundf.
            let i = v as i32;
            let frac = v - i as f32;
            i + i32::from(frac >= 0.5) - i32::from(frac <= -0.5)
        } else {
            c_round_i32(v)
        };
        qs[j] = q as i8 as u8;
    }
}

// The round trips (`round_trip.rs`): each value as the type's dequantizer reads it back from
// these quantizers' bytes, computed without the bytes. Each takes the scalar code's scale and
// quants (the SMALL forms: a finite inverse scale), then the dequantizer's float operations;
// false, writing nothing, for a block with an infinite inverse scale or an overflowing f16
// field (the caller takes the bytes there).

/// Q4_0 (`levels` 16) and Q5_0 (32): d = signed max / −levels/2, each value
/// `(min(levels − 1, (int8)(x·id + levels/2 + 0.5)) − levels/2)·d`.
fn signed_values(x: &[f32; QK], y: &mut [f32; QK], levels: i32) -> bool {
    let half = levels / 2;
    let d = signed_max(x) / -(half as f32);
    let id = inverse(d);
    let Some(d) = f16_round_trip(d).filter(|_| id.is_finite()) else {
        return false;
    };
    let add = half as f32 + 0.5;
    for j in 0..QK {
        y[j] = (i32::from(min_i8::<true>(levels - 1, x[j] * id + add)) - half) as f32 * d;
    }
    true
}

/// Q4_1 and Q5_1: d = (max − min)/levels, each value `q·d + m` with `quant` the type's
/// conversion of `(x − min)·id + 0.5` to its stored quant.
fn affine_values(x: &[f32; QK], y: &mut [f32; QK], levels: f32, quant: fn(f32) -> u8) -> bool {
    let (min, max) = min_max(x);
    let d = (max - min) / levels;
    let id = inverse(d);
    let (Some(d), Some(m)) = (f16_round_trip(d), f16_round_trip(min)) else {
        return false;
    };
    if !id.is_finite() {
        return false;
    }
    for j in 0..QK {
        y[j] = f32::from(quant((x[j] - min) * id + 0.5)) * d + m;
    }
    true
}

#[cfg_attr(
    all(target_arch = "wasm32", target_feature = "simd128"),
    allow(dead_code)
)]
pub(super) fn q4_0_values(x: &[f32; QK], y: &mut [f32; QK]) -> bool {
    signed_values(x, y, 16)
}

#[cfg_attr(
    all(target_arch = "wasm32", target_feature = "simd128"),
    allow(dead_code)
)]
pub(super) fn q5_0_values(x: &[f32; QK], y: &mut [f32; QK]) -> bool {
    signed_values(x, y, 32)
}

#[cfg_attr(
    all(target_arch = "wasm32", target_feature = "simd128"),
    allow(dead_code)
)]
pub(super) fn q4_1_values(x: &[f32; QK], y: &mut [f32; QK]) -> bool {
    affine_values(x, y, 15.0, |v| min_i8::<true>(15, v))
}

#[cfg_attr(
    all(target_arch = "wasm32", target_feature = "simd128"),
    allow(dead_code)
)]
pub(super) fn q5_1_values(x: &[f32; QK], y: &mut [f32; QK]) -> bool {
    // The five bits stored (`q5_1_quants`: no clamp in ggml).
    affine_values(x, y, 31.0, |v| trunc::<true>(v) as u8 & 0x1f)
}

#[cfg_attr(
    all(target_arch = "wasm32", target_feature = "simd128"),
    allow(dead_code)
)]
pub(super) fn q8_0_values(x: &[f32; QK], y: &mut [f32; QK]) -> bool {
    let mut amax = 0.0f32;
    for &v in x {
        amax = if amax > v.abs() { amax } else { v.abs() };
    }
    let d = amax / 127.0;
    let id = inverse(d);
    let Some(d) = f16_round_trip(d).filter(|_| id.is_finite()) else {
        return false;
    };
    for j in 0..QK {
        let v = x[j] * id;
        let i = v as i32;
        let frac = v - i as f32;
        let q = i + i32::from(frac >= 0.5) - i32::from(frac <= -0.5);
        y[j] = f32::from(q as i8) * d;
    }
    true
}
