//! K-quant round trips without bytes: `dequantize(quantize_row(x))` for Q2_K..Q6_K computed
//! straight from the search (`k.rs`) and the rounded scales, with no quant packing and no
//! unpacking. Each value is requantized against its sub-block's rounded scale exactly as the
//! quantizer does, then turned back into a float with the dequantizer's operations in its order
//! (`quant::scalar::k`: `(d·sc)·q − dmin·m`), so the result is the same bits. A sub-block whose
//! rounded scale is 0 keeps the search's quants in the bytes: for Q3_K and Q6_K they set the
//! sign of the zero product `(d·sc)·q` (d may be negative, q is signed), so they are read from
//! the search; for Q2_K/Q4_K/Q5_K, d ≥ +0 and q ≥ 0 make every such value `+0 − dmin·m`
//! whatever q is, so their searches skip recomputing the quants.
#![allow(clippy::needless_range_loop)] // sub-block index arithmetic as in k.rs

use super::k::{self, Fits, Q2Head, Q3Head, Q6Head};
use super::{f16_value, Overflow};
use crate::types::GgmlType;

const QK_K: usize = 256;

/// `dequantize(ty, quantize_row(ty, x))` into `y` for the K-quants (false, doing nothing, for
/// any other type, or unless `x` and `y` are the same whole number of 256-value blocks). The
/// caller has checked that every value is finite and below 65504 in magnitude: then no block's
/// scale can overflow its f16 field (one that does gives false, and the caller takes the bytes,
/// which say why).
pub(super) fn round_trip_k(ty: GgmlType, x: &[f32], y: &mut [f32]) -> bool {
    if x.len() != y.len() || x.len() % QK_K != 0 {
        return false;
    }
    match ty {
        GgmlType::Q2_K => each_block(x, y, q2_k),
        GgmlType::Q3_K => each_block(x, y, q3_k),
        GgmlType::Q4_K => pairs(x, y, k::q4_k_fits2_scales, 15),
        GgmlType::Q5_K => pairs(x, y, k::q5_k_fits2_scales, 31),
        GgmlType::Q6_K => each_block(x, y, q6_k),
        _ => false,
    }
}

/// Every block; false at a block whose scale overflows its f16 field (which the caller's
/// check rules out): the caller then takes the bytes, which say why.
fn each_block(
    x: &[f32],
    y: &mut [f32],
    block: fn(&[f32; QK_K], &mut [f32; QK_K]) -> Result<(), Overflow>,
) -> bool {
    for (xb, yb) in x.chunks_exact(QK_K).zip(y.chunks_exact_mut(QK_K)) {
        if let (Ok(xb), Ok(yb)) = (
            <&[f32; QK_K]>::try_from(xb),
            <&mut [f32; QK_K]>::try_from(yb),
        ) {
            if block(xb, yb).is_err() {
                return false;
            }
        }
    }
    true
}

/// Q4_K/Q5_K: the fits of two blocks at once (as `quantize_row`'s `k_pairs`; lanes are
/// independent, so a block's fit is the same whatever its partner), then each block's values.
fn pairs(
    x: &[f32],
    y: &mut [f32],
    fits2: fn(&[f32; QK_K], &[f32; QK_K]) -> [Fits; 2],
    nmax: i32,
) -> bool {
    for (xp, yp) in x.chunks(2 * QK_K).zip(y.chunks_mut(2 * QK_K)) {
        let (xa, xb) = xp.split_at(QK_K.min(xp.len()));
        let (ya, yb) = yp.split_at_mut(QK_K.min(yp.len()));
        let (Ok(xa), Ok(ya)) = (
            <&[f32; QK_K]>::try_from(xa),
            <&mut [f32; QK_K]>::try_from(ya),
        ) else {
            continue;
        };
        match (
            <&[f32; QK_K]>::try_from(xb),
            <&mut [f32; QK_K]>::try_from(yb),
        ) {
            (Ok(xb), Ok(yb)) => {
                let [fa, fb] = fits2(xa, xb);
                if k_values(xa, fa, nmax, ya).is_err() || k_values(xb, fb, nmax, yb).is_err() {
                    return false;
                }
            }
            _ => {
                let [fa, _] = fits2(xa, xa);
                if k_values(xa, fa, nmax, ya).is_err() {
                    return false;
                }
            }
        }
    }
    true
}

/// One Q4_K/Q5_K block from its fits: `(d·sc)·q − dmin·m` per value.
fn k_values(x: &[f32; QK_K], fits: Fits, nmax: i32, y: &mut [f32; QK_K]) -> Result<(), Overflow> {
    let mut head = [0u8; 16];
    k::k_head(&fits.scales, &fits.mins, &mut head)?;
    let (d, dmin) = (f16_value([head[0], head[1]]), f16_value([head[2], head[3]]));
    for j in 0..8 {
        let (s, m) = k::scale_min_k4(j, &head[4..16]);
        let (dj, dm) = (d * f32::from(s), dmin * f32::from(m));
        let r = 32 * j..32 * j + 32;
        if dj == 0.0 {
            // (+0)·q − dm for every quant q ≥ 0 (the scales are never negative).
            y[r].fill(0.0 - dm);
        } else {
            requant_values::<true>(&x[r.clone()], dm, dj, (0, nmax), &mut y[r]);
        }
    }
    Ok(())
}

fn q2_k(x: &[f32; QK_K], y: &mut [f32; QK_K]) -> Result<(), Overflow> {
    let Q2Head { sc, dd, .. } = k::q2_k_head(x, false)?;
    let d_all = f16_value([dd[0], dd[1]]);
    let dmin_all = f16_value([dd[2], dd[3]]);
    for j in 0..16 {
        let d = d_all * f32::from(sc[j] & 0xf);
        let dm = dmin_all * f32::from(sc[j] >> 4);
        let r = 16 * j..16 * j + 16;
        if d == 0.0 {
            // (+0)·q − dm for every quant q ≥ 0 (d_all ≥ +0: the largest scale, or 0).
            y[r].fill(0.0 - dm);
        } else {
            requant_values::<true>(&x[r.clone()], dm, d, (0, 3), &mut y[r]);
        }
    }
    Ok(())
}

fn q3_k(x: &[f32; QK_K], y: &mut [f32; QK_K]) -> Result<(), Overflow> {
    let Q3Head { sc, dd, lt } = k::q3_k_head(x)?;
    let d_all = f16_value(dd);
    for j in 0..16 {
        let d = d_all * f32::from(k::q3_k_scale(&sc, j));
        let r = 16 * j..16 * j + 16;
        if d == 0.0 {
            // The bytes hold the search's quant q (0..=7); the dequantizer takes q − 4.
            // Read in place (`lt[l][j]`) rather than untransposed: rare.
            let q: [u8; 16] = std::array::from_fn(|l| lt[l][j] as u8);
            search_values(&q, -4.0, d, &mut y[r]);
        } else {
            requant_values::<false>(&x[r.clone()], 0.0, d, (-4, 3), &mut y[r]);
        }
    }
    Ok(())
}

fn q6_k(x: &[f32; QK_K], y: &mut [f32; QK_K]) -> Result<(), Overflow> {
    // The search without its final quants (simd128 skips them; they are 0 for all-zero
    // sub-blocks either way). A sub-block whose scale rounds to 0 without being all zero
    // needs them: then the block's search runs again with them (same search, same result).
    let Q6Head { sc, dd, .. } = k::q6_k_head(x, false)?;
    let mut with_quants = None;
    let d_all = f16_value(dd);
    for j in 0..16 {
        let d = d_all * f32::from(sc[j] as i8);
        let r = 16 * j..16 * j + 16;
        if d == 0.0 {
            let zero = x[r.clone()].iter().all(|v| v.abs() < k::GROUP_MAX_EPS);
            if !zero && with_quants.is_none() {
                with_quants = Some(k::q6_k_head(x, true)?.big_l);
            }
            // The bytes hold the search's quant q (0..64; 0 in an all-zero sub-block); the
            // dequantizer takes q − 32.
            let q = with_quants
                .as_ref()
                .map_or(&[0u8; 16][..], |l| &l[r.clone()]);
            search_values(q, -32.0, d, &mut y[r]);
        } else {
            requant_values::<false>(&x[r.clone()], 0.0, d, (-32, 31), &mut y[r]);
        }
    }
    Ok(())
}

/// A Q3_K/Q6_K sub-block whose rounded scale d is ±0: `d·(q + off)` from the search's quants
/// q, as the dequantizer reads them from the bytes. Rare.
#[cold]
fn search_values(q: &[u8], off: f32, d: f32, y: &mut [f32]) {
    for (y, &q) in y.iter_mut().zip(q) {
        *y = d * (f32::from(q) + off);
    }
}

/// `y = d·clamp(nearest_int((x + dm) / d), lo, hi) − dm` with `MIN` (Q2_K, Q4_K, Q5_K), else
/// `y = d·clamp(nearest_int(x / d), lo, hi)` (Q3_K, Q6_K): the quantizer's requantization and
/// the dequantizer's product, per value.
#[inline(always)]
fn requant_values<const MIN: bool>(x: &[f32], dm: f32, d: f32, q: (i32, i32), y: &mut [f32]) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    // SAFETY: built with simd128.
    unsafe {
        simd128::requant_values::<MIN>(x, dm, d, q, y)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    for (y, &x) in y.iter_mut().zip(x) {
        let t = if MIN { (x + dm) / d } else { x / d };
        let l = super::nearest_int(t).clamp(q.0, q.1) as f32;
        *y = if MIN { d * l - dm } else { d * l };
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128 {
    use std::arch::wasm32::*;

    /// [`super::requant_values`], four values per operation (the same f32 operations per
    /// value). `x.len()` is a multiple of 4 and at most `y.len()`.
    ///
    /// # Safety
    /// Built only with simd128 enabled (no runtime check needed).
    #[inline(always)]
    pub(super) unsafe fn requant_values<const MIN: bool>(
        x: &[f32],
        dm: f32,
        d: f32,
        (lo, hi): (i32, i32),
        y: &mut [f32],
    ) {
        assert!(x.len() % 4 == 0 && x.len() <= y.len());
        let (dmv, dv) = (f32x4_splat(dm), f32x4_splat(d));
        let (lo, hi) = (i32x4_splat(lo), i32x4_splat(hi));
        for k in (0..x.len()).step_by(4) {
            let v = v128_load(x.as_ptr().add(k).cast());
            let t = if MIN { f32x4_add(v, dmv) } else { v };
            let l = f32x4_convert_i32x4(super::super::k_simd128::quant_i(f32x4_div(t, dv), lo, hi));
            let p = f32x4_mul(dv, l);
            let out = if MIN { f32x4_sub(p, dmv) } else { p };
            v128_store(y.as_mut_ptr().add(k).cast(), out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quantize::{quantize_row, quantized_size};

    const TYPES: [GgmlType; 5] = [
        GgmlType::Q2_K,
        GgmlType::Q3_K,
        GgmlType::Q4_K,
        GgmlType::Q5_K,
        GgmlType::Q6_K,
    ];

    /// Blocks of many shapes: normal-ish at several scales, zeros, ±0 mixes, subnormals and
    /// tiny values, values near 6e4, one outlier, constant blocks, few distinct values, and
    /// sub-blocks of different kinds inside one block.
    fn blocks(count: usize, seed: u64) -> Vec<f32> {
        let mut state = seed;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut out = Vec::with_capacity(count * QK_K);
        for b in 0..count {
            let r = next();
            let scale = [1e-30, 1e-8, 1e-3, 0.02, 1.0, 300.0, 6e4][(r % 7) as usize];
            let kind = (r >> 8) % 12;
            let mut block = [0.0f32; QK_K];
            for (i, v) in block.iter_mut().enumerate() {
                let r = next();
                let u = |s: u32| ((r >> s) & 0xff_ffff) as f32 / (1u32 << 24) as f32 - 0.5;
                let normal = (u(0) + u(24) + u(40) + (u(8) + u(16)) * 0.5) * scale;
                *v = match kind {
                    0 => normal,
                    1 => 0.0,
                    2 => [0.0, -0.0][(r & 1) as usize],
                    // Subnormals and their sign mixes.
                    3 => f32::from_bits((r as u32 & 0x8000_ffff) | ((r >> 32) as u32 & 0x7f)),
                    4 => {
                        if i == (r >> 32) as usize % QK_K {
                            normal * 1000.0
                        } else {
                            normal
                        }
                    }
                    5 => scale * 0.75,
                    6 => [-1.0, 0.0, 0.5, 2.0][(r & 3) as usize] * scale,
                    // Sub-blocks of 16 of differing kinds (zero, constant, normal, tiny).
                    7 => match (i / 16 + b) % 4 {
                        0 => 0.0,
                        1 => -scale * 0.3,
                        2 => normal,
                        _ => normal * 1e-20,
                    },
                    // The same for sub-blocks of 32.
                    8 => match (i / 32 + b) % 4 {
                        0 => -0.0,
                        1 => scale * 0.3,
                        2 => normal,
                        _ => normal * 1e-25,
                    },
                    // All positive, or all negative.
                    9 => normal.abs() + scale * 0.1,
                    10 => -normal.abs(),
                    // Near the f16 limit, both signs.
                    _ => (u(0) * 2.0 * 65000.0).clamp(-65000.0, 65000.0),
                };
                if v.abs() >= 65000.0 {
                    *v = 65000.0f32.copysign(*v);
                }
            }
            out.extend_from_slice(&block);
        }
        out
    }

    fn check(ty: GgmlType, x: &[f32]) {
        let mut bytes = vec![0u8; quantized_size(ty, x.len()).unwrap()];
        quantize_row(ty, x, &mut bytes).unwrap();
        let mut want = vec![0.0f32; x.len()];
        crate::quant::dequantize(ty, &bytes, &mut want).unwrap();
        let mut got = vec![f32::NAN; x.len()];
        assert!(round_trip_k(ty, x, &mut got));
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g.to_bits(),
                w.to_bits(),
                "{} value {i} (block {}): x {} got {g} want {w}",
                ty.name(),
                i / QK_K,
                x[i]
            );
        }
    }

    #[test]
    fn k_round_trips_equal_quantize_then_dequantize() {
        // 20,001 blocks: an odd count, so Q4_K/Q5_K's last block has no partner.
        let x = blocks(20_001, 0x9e37_79b9_7f4a_7c15);
        for ty in TYPES {
            for part in x.chunks(64 * QK_K + QK_K) {
                check(ty, part);
            }
        }
    }

    #[test]
    fn other_types_are_left_alone() {
        let x = vec![0.5f32; QK_K];
        let mut y = vec![7.0f32; QK_K];
        for ty in [
            GgmlType::Q4_0,
            GgmlType::Q8_0,
            GgmlType::F16,
            GgmlType::IQ4_NL,
        ] {
            assert!(!round_trip_k(ty, &x, &mut y));
        }
        // Not whole blocks, or lengths that differ.
        assert!(!round_trip_k(GgmlType::Q4_K, &x[..100], &mut y[..100]));
        assert!(!round_trip_k(GgmlType::Q4_K, &x, &mut y[..128]));
        assert!(y.iter().all(|&v| v == 7.0));
    }

    /// A scale beyond f16 (values the caller's check keeps out) gives false, for the bytes'
    /// path to report, rather than a panic or made-up values.
    #[test]
    fn an_overflowing_scale_declines() {
        let mut x = vec![0.5f32; 2 * QK_K];
        x[3] = 1.0e9;
        x[QK_K + 3] = -1.0e9;
        let mut y = vec![0.0f32; 2 * QK_K];
        for ty in [
            GgmlType::Q2_K,
            GgmlType::Q3_K,
            GgmlType::Q4_K,
            GgmlType::Q5_K,
            GgmlType::Q6_K,
        ] {
            assert!(!round_trip_k(ty, &x, &mut y), "{ty}");
        }
    }
}
