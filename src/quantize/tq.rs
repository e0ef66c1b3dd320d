//! The ternary types TQ1_0 and TQ2_0 (ggml's `quantize_row_tq*_ref`): d = the block's largest
//! magnitude, each value rounded (half away from zero, `lroundf`) to −1, 0 or 1.
#![allow(clippy::needless_range_loop)] // index arithmetic kept as in ggml, for review against it

use super::{c_lroundf_int, f16_field, Overflow};

const QK_K: usize = 256;

/// The block's scale and its inverse (0 for an all-zero block).
fn scale(x: &[f32; QK_K]) -> (f32, f32) {
    let mut amax = 0.0f32;
    for &v in x {
        amax = if amax > v.abs() { amax } else { v.abs() };
    }
    (amax, if amax != 0.0 { 1.0 / amax } else { 0.0 })
}

/// The trit of one value: `lroundf(x·id) + 1` as C's int (the low 32 bits of the long).
fn trit(v: f32, id: f32) -> i32 {
    c_lroundf_int(v * id).wrapping_add(1)
}

/// Five (or four, then ×3) trits as a base-3 number, turned into a fixed-point fraction of 256
/// by ceiling division, in u8 arithmetic like ggml's.
fn pack5(trits: impl Iterator<Item = i32>, shift_last: bool) -> u8 {
    let mut q = 0u8;
    for t in trits {
        q = q.wrapping_mul(3).wrapping_add(t as u8);
    }
    if shift_last {
        q = q.wrapping_mul(3);
    }
    (u32::from(q) * 256).div_ceil(243) as u8
}

pub(super) fn tq1_0(x: &[f32; QK_K], y: &mut [u8; 54]) -> Result<(), Overflow> {
    let (d, id) = scale(x);
    // 5 values per byte: bytes 0..32 take values m + 32n (n < 5) of x[0..160]...
    for m in 0..32 {
        y[m] = pack5((0..5).map(|n| trit(x[m + n * 32], id)), false);
    }
    // ...bytes 32..48 take values 160 + m + 16n of x[160..240]...
    for m in 0..16 {
        y[32 + m] = pack5((0..5).map(|n| trit(x[160 + m + n * 16], id)), false);
    }
    // ...and qh's 4 bytes 4 values each of x[240..256], the first trit the most significant.
    for j in 0..4 {
        y[48 + j] = pack5((0..4).map(|m| trit(x[240 + j + m * 4], id)), true);
    }
    y[52..54].copy_from_slice(&f16_field(d)?);
    Ok(())
}

pub(super) fn tq2_0(x: &[f32; QK_K], y: &mut [u8; 66]) -> Result<(), Overflow> {
    let (d, id) = scale(x);
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
    y[64..66].copy_from_slice(&f16_field(d)?);
    Ok(())
}
