//! wasm32 simd128 rows of the byte-aligned widths (4 and 8 bits): 16 packed bytes a step, the
//! same `scale · q + bias` (a product, then a sum: no fused multiply-add) as `scalar_row`.

use core::arch::wasm32::*;

use crate::quant::simd128::lanes::{
    load, mul_add4, nibbles_low_first, store16, widen_biased, MAGIC,
};

/// Writes `row` for `bits` 4 or 8 with groups of a multiple of 32 values (the caller's
/// `by_bytes`).
pub(super) fn row(bits: usize, group: usize, packed: &[u8], s: &[f32], b: &[f32], row: &mut [f32]) {
    let group_bytes = group * bits / 8;
    let groups = packed
        .chunks_exact(group_bytes)
        .zip(row.chunks_exact_mut(group))
        .zip(s.iter().zip(b));
    for ((bytes, out), (&s, &b)) in groups {
        let (s, b) = (f32x4_splat(s), f32x4_splat(b));
        let values = |q: v128| mul_add4(widen_biased(q, MAGIC), s, b);
        for (i, at) in (0..bytes.len()).step_by(16).enumerate() {
            let x = load(bytes, at);
            if bits == 4 {
                let [first, second] = nibbles_low_first(x);
                store16(out, 32 * i, values(first));
                store16(out, 32 * i + 16, values(second));
            } else {
                store16(out, 16 * i, values(x));
            }
        }
    }
}
