//! MXFP4 (ggml's `quantize_row_mxfp4_ref`): a shared E8M0 exponent per 32 values, chosen from
//! the block's largest magnitude, and each value the nearest doubled-E2M1 level.

use super::{c_trunc_i32, Overflow};

const QK: usize = 32;

/// ggml's `kvalues_mxfp4`: E2M1 values doubled.
const KVALUES: [i8; 16] = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12];

/// ggml's `GGML_E8M0_TO_FP32_HALF`: 2^(e − 128) from the exponent byte's bits.
fn e8m0_half(e: u8) -> f32 {
    let bits = if e < 2 {
        0x0020_0000u32 << e
    } else {
        u32::from(e - 1) << 23
    };
    f32::from_bits(bits)
}

/// The first index whose level times `e` is nearest `x`.
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

/// `floorf(log2f(amax))` as glibc computes it: log2f is correctly rounded, so a value just
/// below a power of two can round up to it. Computed in f64 and rounded once to f32, which
/// gives the correctly rounded f32 on every platform (tested against the oracle).
fn floor_log2f(amax: f32) -> f32 {
    (f64::from(amax).log2() as f32).floor()
}

pub(super) fn mxfp4(x: &[f32; QK], y: &mut [u8; 17]) -> Result<(), Overflow> {
    let mut amax = 0.0f32;
    for &v in x {
        if amax < v.abs() {
            amax = v.abs();
        }
    }
    // `(uint8_t)(floorf(log2f(amax)) - 2 + 127)`: float arithmetic, then C's conversion
    // (which wraps for blocks below 2^-125).
    let e = if amax > 0.0 {
        c_trunc_i32(floor_log2f(amax) - 2.0 + 127.0) as u8
    } else {
        0
    };
    let d = e8m0_half(e);
    y[0] = e;
    for j in 0..QK / 2 {
        let x0 = best_index(x[j], d);
        let x1 = best_index(x[QK / 2 + j], d);
        y[1 + j] = x0 | (x1 << 4);
    }
    Ok(())
}
