//! The values a round trip through a type gives, `dequantize(quantize(x))`, computed without
//! the bytes: F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, TQ1_0, TQ2_0 here and Q2_K–Q6_K in
//! `k_round_trip.rs` (all but IQ4_NL, IQ4_XS and MXFP4). The error chart needs only these values
//! (`error/set.rs`). Each kernel takes its quantizer's own scale and quants and then the
//! dequantizer's float operations, so the values are the same bits as the round trip through
//! bytes (tested below on every type, and in wasm under scripts/test-wasm.sh).
//!
//! Only for plain values ([`is_plain`]): all finite and below f16's largest magnitude, where no
//! quantizer here can fail (every block scale fits f16), so there is no error to report.

use super::legacy_fast;
use crate::types::GgmlType;

/// The bits of 65504.0, f16's largest finite magnitude.
const PLAIN_LIMIT: u32 = 0x477f_e000;

/// Every value finite and of magnitude below 65504: then no type this module handles fails
/// (their scales are at most the largest magnitude, and F16 does not overflow).
pub(crate) fn is_plain(x: &[f32]) -> bool {
    // The largest |x| bit pattern (NaN and infinities are above every finite one): a max
    // over integers, which vectorises.
    x.iter().fold(0u32, |m, v| m.max(v.to_bits() & 0x7fff_ffff)) < PLAIN_LIMIT
}

/// Writes the round trip of plain `x` through `ty` into `y` (same length, whole blocks) and
/// returns true; false, writing nothing useful, for a type without a direct path here.
pub(crate) fn round_trip(ty: GgmlType, x: &[f32], y: &mut [f32]) -> bool {
    debug_assert!(is_plain(x) && x.len() == y.len());
    if y.len() != x.len() {
        return false;
    }
    match ty {
        GgmlType::F16 => elements(x, y, super::float::f16_round),
        GgmlType::BF16 => elements(x, y, super::float::bf16_round),
        GgmlType::Q4_0 => blocks(ty, x, y, legacy_fast::q4_0_values),
        GgmlType::Q4_1 => blocks(ty, x, y, legacy_fast::q4_1_values),
        GgmlType::Q5_0 => blocks(ty, x, y, legacy_fast::q5_0_values),
        GgmlType::Q5_1 => blocks(ty, x, y, legacy_fast::q5_1_values),
        GgmlType::Q8_0 => blocks(ty, x, y, legacy_fast::q8_0_values),
        GgmlType::TQ1_0 | GgmlType::TQ2_0 => blocks(ty, x, y, super::tq::ternary_values),
        GgmlType::Q2_K | GgmlType::Q3_K | GgmlType::Q4_K | GgmlType::Q5_K | GgmlType::Q6_K => {
            super::k_round_trip::round_trip_k(ty, x, y)
        }
        _ => false,
    }
}

/// `round` on every value (generic, not a fn pointer, so each type's loop is its own and
/// vectorised).
fn elements(x: &[f32], y: &mut [f32], round: impl Fn(f32) -> f32) -> bool {
    for (y, &v) in y.iter_mut().zip(x) {
        *y = round(v);
    }
    true
}

/// Runs a block kernel over every block; a block it declines (an infinite inverse scale, from
/// a scale too small to invert) goes through the bytes.
fn blocks<const N: usize>(
    ty: GgmlType,
    x: &[f32],
    y: &mut [f32],
    values: fn(&[f32; N], &mut [f32; N]) -> bool,
) -> bool {
    if x.len() % N != 0 {
        return false;
    }
    for (xb, yb) in x.chunks_exact(N).zip(y.chunks_exact_mut(N)) {
        let (Ok(xa), Ok(ya)) = (
            <&[f32; N]>::try_from(xb),
            <&mut [f32; N]>::try_from(&mut *yb),
        ) else {
            return false;
        };
        if !values(xa, ya) && !through_bytes(ty, xb, yb) {
            return false;
        }
    }
    true
}

fn through_bytes(ty: GgmlType, x: &[f32], y: &mut [f32]) -> bool {
    let Ok(size) = super::quantized_size(ty, x.len()) else {
        return false;
    };
    let mut bytes = vec![0u8; size];
    super::quantize_row(ty, x, &mut bytes).is_ok()
        && crate::quant::dequantize(ty, &bytes, y).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TYPES: [GgmlType; 14] = [
        GgmlType::Q2_K,
        GgmlType::Q3_K,
        GgmlType::Q4_K,
        GgmlType::Q5_K,
        GgmlType::Q6_K,
        GgmlType::F16,
        GgmlType::BF16,
        GgmlType::Q4_0,
        GgmlType::Q4_1,
        GgmlType::Q5_0,
        GgmlType::Q5_1,
        GgmlType::Q8_0,
        GgmlType::TQ1_0,
        GgmlType::TQ2_0,
    ];

    fn via_bytes(ty: GgmlType, x: &[f32]) -> Vec<f32> {
        let mut bytes = vec![0u8; crate::quantize::quantized_size(ty, x.len()).unwrap()];
        crate::quantize::quantize_row(ty, x, &mut bytes).unwrap();
        let mut y = vec![0.0f32; x.len()];
        crate::quant::dequantize(ty, &bytes, &mut y).unwrap();
        y
    }

    fn check(x: &[f32], what: &str) {
        assert!(is_plain(x), "{what}");
        for ty in TYPES {
            let want = via_bytes(ty, x);
            let mut got = vec![f32::NAN; x.len()];
            assert!(round_trip(ty, x, &mut got), "{ty} {what}");
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(
                    g.to_bits(),
                    w.to_bits(),
                    "{ty} {what}: value {i} ({:e})",
                    x[i]
                );
            }
        }
    }

    /// Rows of 256 values of many kinds, each through every type, against the bytes' round
    /// trip (whose bytes are ggml's: `tests/oracle_quantize.rs`).
    #[test]
    fn equals_the_round_trip_through_bytes() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let rows = if cfg!(target_family = "wasm") {
            1500
        } else {
            6000
        };
        for round in 0..rows {
            let scale = [1.0e-3f32, 0.02, 1.0, 300.0, 6.0e4][round % 5];
            let mut x = [0.0f32; 256];
            for v in x.iter_mut() {
                let r = next();
                let u = ((r >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0;
                *v = match round % 9 {
                    0..=3 => u * scale,
                    4 => [0.0, -0.0, 1.0, -1.0, 0.5, -0.5][(r % 6) as usize] * scale,
                    // subnormal and tiny magnitudes (infinite inverse scales: the bytes)
                    5 => f32::from_bits((r >> 32) as u32 & 0x807f_ffff),
                    6 => f32::from_bits((r >> 32) as u32 & 0x83ff_ffff),
                    // few distinct values, ties of the roundings
                    7 => ((r % 17) as f32 - 8.0) * 0.125 * scale,
                    // one outlier in small values
                    _ => u * 1.0e-3,
                };
            }
            if round % 9 == 8 {
                x[(next() % 256) as usize] = 6.0e4;
            }
            if round % 11 == 10 {
                x[..32].fill(0.0);
            }
            check(&x, &format!("row {round}"));
        }
        check(&[0.0; 256], "zeros");
        check(&[-0.0; 256], "negative zeros");
        check(&[65503.99; 256], "largest");
    }

    /// F16 and BF16 on every 1021st bit pattern below 65504 and around each rounding boundary
    /// of a few binades, against the element conversions.
    #[test]
    fn float_rounding_equals_the_conversions() {
        use crate::quant::scalar::f16_to_f32;
        use crate::quantize::{f32_to_bf16, f32_to_f16};
        let step = if cfg!(target_family = "wasm") {
            10_007
        } else {
            1021
        };
        let mut bits: Vec<u32> = (0..PLAIN_LIMIT).step_by(step).collect();
        for e in [103u32, 112, 113, 114, 126, 127, 141, 142] {
            for m in [
                0x0000_0fffu32,
                0x1000,
                0x1001,
                0x2fff,
                0x3000,
                0x7fff,
                0x8000,
                0x8001,
                0x18000,
            ] {
                bits.push((e << 23) | m);
            }
        }
        let x: Vec<f32> = bits
            .iter()
            .flat_map(|&b| [f32::from_bits(b), -f32::from_bits(b)])
            .filter(|f| is_plain(&[*f]))
            .collect();
        // The slice form (as the chart runs it, vectorised by LLVM) and the scalar functions.
        let (mut h, mut b) = (vec![0.0f32; x.len()], vec![0.0f32; x.len()]);
        assert!(round_trip(GgmlType::F16, &x, &mut h));
        assert!(round_trip(GgmlType::BF16, &x, &mut b));
        for (i, &f) in x.iter().enumerate() {
            let want_h = f16_to_f32(f32_to_f16(f)).to_bits();
            let want_b = u32::from(f32_to_bf16(f)) << 16;
            assert_eq!(h[i].to_bits(), want_h, "{f:e}");
            assert_eq!(super::super::float::f16_round(f).to_bits(), want_h, "{f:e}");
            assert_eq!(b[i].to_bits(), want_b, "{f:e}");
            assert_eq!(
                super::super::float::bf16_round(f).to_bits(),
                want_b,
                "{f:e}"
            );
        }
    }

    #[test]
    fn plain_means_finite_and_below_65504() {
        assert!(is_plain(&[0.0, -65503.99, 1.0e-40]));
        assert!(!is_plain(&[0.0, 65504.0]));
        assert!(!is_plain(&[f32::NAN]));
        assert!(!is_plain(&[f32::NEG_INFINITY]));
        assert!(is_plain(&[]));
    }
}
