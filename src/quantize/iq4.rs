//! IQ4_NL and IQ4_XS: 4-bit indices into ggml's non-linear table `kvalues_iq4nl`, quantized the
//! way `ggml_quantize_chunk` does it without an importance matrix: `quantize_iq4_nl` /
//! `quantize_iq4_xs`, i.e. ggml's `quantize_row_iq4_nl_impl` with weights x² and a scale search
//! over 15 candidates (ntry = 7), not the cheaper `_ref` path.
#![allow(clippy::needless_range_loop)] // index arithmetic kept as in ggml, for review against it

use super::{f16_field, nearest_int, Overflow};
use crate::quant::scalar::grids::KVALUES_IQ4NL as VALUES;

const NTRY: i32 = 7;
const GROUP_MAX_EPS: f32 = 1e-15;

/// ggml's `best_index_int8`: the index of the table value nearest `x` (bisection; ties go up).
fn best_index(x: f32) -> u8 {
    let val = |i: usize| f32::from(VALUES[i]);
    if x <= val(0) {
        return 0;
    }
    if x >= val(15) {
        return 15;
    }
    let (mut ml, mut mu) = (0usize, 15usize);
    while mu - ml > 1 {
        let mav = (ml + mu) / 2;
        if x < val(mav) {
            mu = mav;
        } else {
            ml = mav;
        }
    }
    if x - val(mu - 1) < val(mu) - x {
        (mu - 1) as u8
    } else {
        mu as u8
    }
}

/// The scale of one 32-value block (indices into `l`), or 0 for an all-zero block (then `l` is
/// left as it was, like ggml).
fn block_scale(xb: &[f32], l: &mut [u8]) -> f32 {
    let mut weight = [0.0f32; 32];
    for j in 0..32 {
        weight[j] = xb[j] * xb[j];
    }
    let mut amax = 0.0f32;
    let mut max = 0.0f32;
    for &v in xb {
        if v.abs() > amax {
            amax = v.abs();
            max = v;
        }
    }
    if amax < GROUP_MAX_EPS {
        return 0.0;
    }
    let v0 = f32::from(VALUES[0]);
    let mut d = -max / v0;
    let mut id = 1.0 / d;
    let mut sumqx = 0.0f32;
    let mut sumq2 = 0.0f32;
    for j in 0..32 {
        let al = id * xb[j];
        let li = best_index(al);
        l[j] = li;
        let q = f32::from(VALUES[usize::from(li)]);
        let w = weight[j];
        sumqx += w * q * xb[j];
        sumq2 += w * q * q;
    }
    d = if sumq2 > 0.0 { sumqx / sumq2 } else { 0.0 };
    let mut best = d * sumqx;
    for itry in -NTRY..=NTRY {
        // `(itry + values[0])/max`: an int sum, then a float division.
        id = (itry + i32::from(VALUES[0])) as f32 / max;
        sumqx = 0.0;
        sumq2 = 0.0;
        for j in 0..32 {
            let q = f32::from(VALUES[usize::from(best_index(id * xb[j]))]);
            let w = weight[j];
            sumqx += w * q * xb[j];
            sumq2 += w * q * q;
        }
        if sumq2 > 0.0 && sumqx * sumqx > best * sumq2 {
            d = sumqx / sumq2;
            best = d * sumqx;
        }
    }
    d
}

/// Packs 32 indices: byte j holds values j (low nibble) and j+16 (high).
fn pack(l: &[u8], qs: &mut [u8]) {
    for j in 0..16 {
        qs[j] = l[j] | (l[16 + j] << 4);
    }
}

pub(super) fn iq4_nl(x: &[f32; 32], y: &mut [u8; 18]) -> Result<(), Overflow> {
    let mut l = [0u8; 32];
    let scale = block_scale(x, &mut l);
    y[0..2].copy_from_slice(&f16_field(scale)?);
    // With one block per super-block ggml re-picks every index against the exact f32 scale.
    let id = if scale != 0.0 { 1.0 / scale } else { 0.0 };
    for j in 0..32 {
        l[j] = best_index(id * x[j]);
    }
    pack(&l, &mut y[2..18]);
    Ok(())
}

pub(super) fn iq4_xs(x: &[f32; 256], y: &mut [u8; 136]) -> Result<(), Overflow> {
    let mut l = [0u8; 256];
    let mut scales = [0.0f32; 8];
    let mut max_scale = 0.0f32;
    let mut amax_scale = 0.0f32;
    for ib in 0..8 {
        let d = block_scale(&x[32 * ib..32 * ib + 32], &mut l[32 * ib..32 * ib + 32]);
        scales[ib] = d;
        if d.abs() > amax_scale {
            amax_scale = d.abs();
            max_scale = d;
        }
    }
    let d = -max_scale / 32.0;
    y[0..2].copy_from_slice(&f16_field(d)?);
    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
    let mut scales_h = 0u16;
    let mut scales_l = [0u8; 4];
    for ib in 0..8 {
        let ls = nearest_int(id * scales[ib]).clamp(-32, 31);
        let dl = d * ls as f32;
        let idl = if dl != 0.0 { 1.0 / dl } else { 0.0 };
        for j in 0..32 {
            l[32 * ib + j] = best_index(idl * x[32 * ib + j]);
        }
        let ls = (ls + 32) as u8;
        if ib % 2 == 0 {
            scales_l[ib / 2] = ls & 0xf;
        } else {
            scales_l[ib / 2] |= (ls & 0xf) << 4;
        }
        scales_h |= u16::from(ls >> 4) << (2 * (ib % 8));
    }
    y[2..4].copy_from_slice(&scales_h.to_le_bytes());
    y[4..8].copy_from_slice(&scales_l);
    for i in 0..8 {
        pack(&l[32 * i..32 * i + 32], &mut y[8 + 16 * i..8 + 16 * i + 16]);
    }
    Ok(())
}
