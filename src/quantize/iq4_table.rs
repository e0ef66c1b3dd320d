//! The IQ4 table's shared pieces (`iq4.rs`, `iq4_simd128.rs`): its entries as f32, the midpoints
//! between neighbours, ggml's search constants, and the nearest-entry index.

use crate::quant::scalar::grids::KVALUES_IQ4NL as VALUES;

pub(super) const NTRY: i32 = 7;
pub(super) const GROUP_MAX_EPS: f32 = 1e-15;

#[inline(always)]
pub(super) fn val(k: usize) -> f32 {
    f32::from(VALUES[k])
}

/// The midpoint between table entries k and k+1 (exact: half a small integer).
#[inline(always)]
pub(super) fn mid(k: usize) -> f32 {
    (val(k) + val(k + 1)) * 0.5
}

/// ggml's `best_index_int8(16, kvalues_iq4nl, x)`: 15 minus the midpoints above x.
#[inline(always)]
pub(super) fn best_index(x: f32) -> u8 {
    let mut n = 15i32;
    for k in 0..15 {
        n -= i32::from(x < mid(k));
    }
    n as u8
}
