//! The 32-value block quants with one f16 scale: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 (ggml's
//! `quantize_row_*_ref`). Layouts are those of `quant::scalar::legacy`.
#![allow(clippy::needless_range_loop)] // index arithmetic kept as in ggml, for review against it

use super::{c_round_i32, c_trunc_i32, f16_field, Overflow};

const QK: usize = 32;

/// The value of largest magnitude (the first one, on ties) and that magnitude.
fn signed_max(x: &[f32; QK]) -> f32 {
    let mut amax = 0.0f32;
    let mut max = 0.0f32;
    for &v in x {
        if amax < v.abs() {
            amax = v.abs();
            max = v;
        }
    }
    max
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
fn inverse(d: f32) -> f32 {
    if d != 0.0 {
        1.0 / d
    } else {
        0.0
    }
}

/// `MIN(limit, (int8_t)v)` in C: the int8 conversion first (wrapping), then the clamp.
fn min_i8(limit: i32, v: f32) -> u8 {
    (c_trunc_i32(v) as i8 as i32).min(limit) as u8
}

pub(super) fn q4_0(x: &[f32; QK], y: &mut [u8; 18]) -> Result<(), Overflow> {
    let d = signed_max(x) / -8.0;
    let id = inverse(d);
    y[0..2].copy_from_slice(&f16_field(d)?);
    for j in 0..QK / 2 {
        let xi0 = min_i8(15, x[j] * id + 8.5);
        let xi1 = min_i8(15, x[QK / 2 + j] * id + 8.5);
        y[2 + j] = xi0 | (xi1 << 4);
    }
    Ok(())
}

pub(super) fn q4_1(x: &[f32; QK], y: &mut [u8; 20]) -> Result<(), Overflow> {
    let (min, max) = min_max(x);
    let d = (max - min) / 15.0;
    let id = inverse(d);
    y[0..2].copy_from_slice(&f16_field(d)?);
    y[2..4].copy_from_slice(&f16_field(min)?);
    for j in 0..QK / 2 {
        let xi0 = min_i8(15, (x[j] - min) * id + 0.5);
        let xi1 = min_i8(15, (x[QK / 2 + j] - min) * id + 0.5);
        y[4 + j] = xi0 | (xi1 << 4);
    }
    Ok(())
}

pub(super) fn q5_0(x: &[f32; QK], y: &mut [u8; 22]) -> Result<(), Overflow> {
    let d = signed_max(x) / -16.0;
    let id = inverse(d);
    y[0..2].copy_from_slice(&f16_field(d)?);
    let mut qh = 0u32;
    for j in 0..QK / 2 {
        let xi0 = min_i8(31, x[j] * id + 16.5);
        let xi1 = min_i8(31, x[QK / 2 + j] * id + 16.5);
        y[6 + j] = (xi0 & 0x0f) | ((xi1 & 0x0f) << 4);
        qh |= ((u32::from(xi0) & 0x10) >> 4) << j;
        qh |= ((u32::from(xi1) & 0x10) >> 4) << (j + QK / 2);
    }
    y[2..6].copy_from_slice(&qh.to_le_bytes());
    Ok(())
}

pub(super) fn q5_1(x: &[f32; QK], y: &mut [u8; 24]) -> Result<(), Overflow> {
    let (min, max) = min_max(x);
    let d = (max - min) / 31.0;
    let id = inverse(d);
    y[0..2].copy_from_slice(&f16_field(d)?);
    y[2..4].copy_from_slice(&f16_field(min)?);
    let mut qh = 0u32;
    for j in 0..QK / 2 {
        // `(uint8_t)(x0 + 0.5f)`: no clamp in ggml.
        let xi0 = c_trunc_i32((x[j] - min) * id + 0.5) as u8;
        let xi1 = c_trunc_i32((x[QK / 2 + j] - min) * id + 0.5) as u8;
        y[8 + j] = (xi0 & 0x0f) | ((xi1 & 0x0f) << 4);
        qh |= ((u32::from(xi0) & 0x10) >> 4) << j;
        qh |= ((u32::from(xi1) & 0x10) >> 4) << (j + QK / 2);
    }
    y[4..8].copy_from_slice(&qh.to_le_bytes());
    Ok(())
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
    for j in 0..QK {
        // `qs[j] = roundf(x0)`: round half away from zero, then C's int8 conversion.
        y[2 + j] = c_round_i32(x[j] * id) as i8 as u8;
    }
    Ok(())
}
