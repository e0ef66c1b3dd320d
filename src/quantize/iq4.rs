//! IQ4_NL and IQ4_XS: 4-bit indices into ggml's non-linear table `kvalues_iq4nl`, quantized the
//! way `ggml_quantize_chunk` does it without an importance matrix: `quantize_iq4_nl` /
//! `quantize_iq4_xs`, i.e. ggml's `quantize_row_iq4_nl_impl` with weights x² and a scale search
//! over 15 candidates (ntry = 7), not the cheaper `_ref` path.
//!
//! The search runs over several 32-value blocks at once, one per lane (the 8 blocks of an IQ4_XS
//! super-block, or 8 consecutive IQ4_NL blocks), each lane doing exactly ggml's sequence of f32
//! operations, so the bits are ggml's while the compiler vectorises across lanes.
#![allow(clippy::needless_range_loop)] // index arithmetic kept as in ggml, for review against it

use super::{f16_field, nearest_int, Overflow};
use crate::quant::scalar::grids::KVALUES_IQ4NL as VALUES;

const NTRY: i32 = 7;
const GROUP_MAX_EPS: f32 = 1e-15;

/// ggml's `best_index_int8`: the index of the table value nearest `x` (bisection; ties go up).
#[cfg(test)]
fn best_index_bisect(x: f32) -> u8 {
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

/// `best_index_int8` without branches on the data: the bisection ends at the last table value
/// ≤ x (the table is increasing), so counting them gives the same bracket, whose ends are kept
/// by selects (no table lookup, so it vectorises); NaN goes to 15 as the bisection sends it.
/// Tested equal on every kind of input.
#[inline(always)]
pub(super) fn best_index(x: f32) -> u8 {
    let val = |i: usize| f32::from(VALUES[i]);
    let mut ml = 0i32;
    let (mut lo, mut hi) = (val(0), val(15));
    for k in 1..15 {
        let le = val(k) <= x;
        ml += i32::from(le);
        lo = if le { val(k) } else { lo };
    }
    for k in (1..15).rev() {
        hi = if val(k) > x { val(k) } else { hi };
    }
    // ml ≤ 14: the bracket is (ml, ml + 1).
    let inner = if x - lo < hi - x { ml } else { ml + 1 };
    let index = if x <= val(0) {
        0
    } else if x >= val(15) || x.is_nan() {
        15
    } else {
        inner
    };
    index as u8
}

/// `best_index(id·x[j])` for a 32-value block, in AVX2 when the CPU has it (same bits).
fn indices(id: f32, x: &[f32], l: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    if super::use_avx2() {
        // SAFETY: the CPU has AVX2 (`use_avx2` checked it).
        return unsafe { indices_avx2(id, x, l) };
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    if x.len() >= 32 && l.len() >= 32 {
        return super::iq4_simd128::indices(id, x, l);
    }
    indices_lanes(id, x, l)
}

#[inline(always)]
fn indices_lanes(id: f32, x: &[f32], l: &mut [u8]) {
    for (l, x) in l.iter_mut().zip(x).take(32) {
        *l = best_index(id * x);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn indices_avx2(id: f32, x: &[f32], l: &mut [u8]) {
    indices_lanes(id, x, l)
}

/// `VALUES[best_index(x)]` without the table lookup (a gather, which the vectoriser builds
/// lane by lane): the neighbours below and above x are kept by selects over the increasing
/// table, then the same comparison picks one. Tested equal on every kind of input.
#[inline(always)]
fn best_value(x: f32) -> f32 {
    let val = |i: usize| f32::from(VALUES[i]);
    let (mut lo, mut hi) = (val(0), val(15));
    for k in 1..15 {
        lo = if val(k) <= x { val(k) } else { lo };
    }
    for k in (1..15).rev() {
        hi = if val(k) > x { val(k) } else { hi };
    }
    // Below the table (lo, hi) = (v0, v1), which the comparison resolves to v0; above it
    // (v14, v15), resolved to v15; NaN gets (v0, v15) and the failed comparison's v15.
    if x - lo < hi - x {
        lo
    } else {
        hi
    }
}

/// The scale of each lane's 32-value block (`xt[j][lane]`), 0 for an all-zero block.
#[inline(always)]
fn block_scales<const L: usize>(xt: &[[f32; L]; 32]) -> [f32; L] {
    let v0 = f32::from(VALUES[0]);
    let mut amax = [0.0f32; L];
    let mut max = [0.0f32; L];
    for row in xt {
        for k in 0..L {
            if row[k].abs() > amax[k] {
                amax[k] = row[k].abs();
                max[k] = row[k];
            }
        }
    }
    let mut d = [0.0f32; L];
    let mut id = [0.0f32; L];
    let mut sumqx = [0.0f32; L];
    let mut sumq2 = [0.0f32; L];
    for k in 0..L {
        d[k] = -max[k] / v0;
        id[k] = 1.0 / d[k];
    }
    for row in xt {
        for k in 0..L {
            let x = row[k];
            let q = best_value(id[k] * x);
            let w = x * x;
            sumqx[k] += w * q * x;
            sumq2[k] += w * q * q;
        }
    }
    let mut best = [0.0f32; L];
    for k in 0..L {
        d[k] = if sumq2[k] > 0.0 {
            sumqx[k] / sumq2[k]
        } else {
            0.0
        };
        best[k] = d[k] * sumqx[k];
    }
    for itry in -NTRY..=NTRY {
        for k in 0..L {
            // `(itry + values[0])/max`: an int sum, then a float division.
            id[k] = (itry + i32::from(VALUES[0])) as f32 / max[k];
            sumqx[k] = 0.0;
            sumq2[k] = 0.0;
        }
        for row in xt {
            for k in 0..L {
                let x = row[k];
                let q = best_value(id[k] * x);
                let w = x * x;
                sumqx[k] += w * q * x;
                sumq2[k] += w * q * q;
            }
        }
        for k in 0..L {
            if sumq2[k] > 0.0 && sumqx[k] * sumqx[k] > best[k] * sumq2[k] {
                d[k] = sumqx[k] / sumq2[k];
                best[k] = d[k] * sumqx[k];
            }
        }
    }
    for k in 0..L {
        if amax[k] < GROUP_MAX_EPS {
            d[k] = 0.0;
        }
    }
    d
}

/// [`block_scales`] for AVX2 when the CPU has it (same operations, same bits).
fn scales<const L: usize>(xt: &[[f32; L]; 32]) -> [f32; L] {
    #[cfg(target_arch = "x86_64")]
    if super::use_avx2() {
        // SAFETY: the CPU has AVX2 (`use_avx2` checked it).
        return unsafe { scales_avx2(xt) };
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    if L == 8 {
        // SAFETY: L == 8, so the two array types are the same.
        let xt8 = unsafe { &*(xt as *const [[f32; L]; 32]).cast::<[[f32; 8]; 32]>() };
        let d = super::iq4_simd128::scales8(xt8);
        return std::array::from_fn(|k| d[k]);
    }
    block_scales(xt)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scales_avx2<const L: usize>(xt: &[[f32; L]; 32]) -> [f32; L] {
    block_scales(xt)
}

/// Packs 32 indices: byte j holds values j (low nibble) and j+16 (high).
fn pack(l: &[u8], qs: &mut [u8]) {
    for j in 0..16 {
        qs[j] = l[j] | (l[16 + j] << 4);
    }
}

/// One IQ4_NL block from its scale: ggml re-picks every index against the exact f32 scale.
fn iq4_nl_block(x: &[f32], scale: f32, y: &mut [u8]) -> Result<(), Overflow> {
    y[0..2].copy_from_slice(&f16_field(scale)?);
    let id = if scale != 0.0 { 1.0 / scale } else { 0.0 };
    let mut l = [0u8; 32];
    indices(id, x, &mut l);
    pack(&l, &mut y[2..18]);
    Ok(())
}

/// IQ4_NL over whole blocks (`x.len() == 32·n`, `y.len() == 18·n`, checked by the caller), eight
/// blocks per search where it can; an error carries the block's index.
pub(super) fn iq4_nl_row(x: &[f32], y: &mut [u8]) -> Result<(), (usize, Overflow)> {
    let mut block = 0;
    let mut groups_x = x.chunks_exact(256);
    let mut groups_y = y.chunks_exact_mut(144);
    for (gx, gy) in (&mut groups_x).zip(&mut groups_y) {
        let mut xt = [[0.0f32; 8]; 32];
        for b in 0..8 {
            for j in 0..32 {
                xt[j][b] = gx[32 * b + j];
            }
        }
        let d = scales(&xt);
        for b in 0..8 {
            iq4_nl_block(&gx[32 * b..32 * b + 32], d[b], &mut gy[18 * b..18 * b + 18])
                .map_err(|e| (block + b, e))?;
        }
        block += 8;
    }
    let rest_y = groups_y.into_remainder();
    for (bx, by) in groups_x
        .remainder()
        .chunks_exact(32)
        .zip(rest_y.chunks_exact_mut(18))
    {
        let mut xt = [[0.0f32; 1]; 32];
        for j in 0..32 {
            xt[j][0] = bx[j];
        }
        iq4_nl_block(bx, scales(&xt)[0], by).map_err(|e| (block, e))?;
        block += 1;
    }
    Ok(())
}

pub(super) fn iq4_xs(x: &[f32; 256], y: &mut [u8; 136]) -> Result<(), Overflow> {
    let mut xt = [[0.0f32; 8]; 32];
    for ib in 0..8 {
        for j in 0..32 {
            xt[j][ib] = x[32 * ib + j];
        }
    }
    let scales = scales(&xt);
    let mut max_scale = 0.0f32;
    let mut amax_scale = 0.0f32;
    for &d in &scales {
        if d.abs() > amax_scale {
            amax_scale = d.abs();
            max_scale = d;
        }
    }
    let d = -max_scale / 32.0;
    y[0..2].copy_from_slice(&f16_field(d)?);
    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
    let mut l = [0u8; 256];
    let mut scales_h = 0u16;
    let mut scales_l = [0u8; 4];
    for ib in 0..8 {
        let ls = nearest_int(id * scales[ib]).clamp(-32, 31);
        let dl = d * ls as f32;
        let idl = if dl != 0.0 { 1.0 / dl } else { 0.0 };
        indices(
            idl,
            &x[32 * ib..32 * ib + 32],
            &mut l[32 * ib..32 * ib + 32],
        );
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branchless_best_index_equals_the_bisection() {
        let mut state = 0x1234_5678_9abc_def1u64;
        let specials = [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
            -127.0,
            113.0,
            -10.0,
            1.0,
            -4.5,
            19.0,
        ];
        let same = |x: f32| {
            assert_eq!(best_index(x), best_index_bisect(x), "{x:e}");
            let v = f32::from(VALUES[usize::from(best_index_bisect(x))]);
            assert_eq!(best_value(x).to_bits(), v.to_bits(), "{x:e}");
        };
        for x in specials {
            same(x);
        }
        for v in -300..300 {
            same(v as f32 * 0.5);
        }
        for _ in 0..1_000_000 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            same(f32::from_bits((state >> 32) as u32));
            // Near the table: the neighbour comparisons decide.
            same(f32::from_bits((state >> 40) as u32 | 0x4200_0000) - 64.0);
        }
    }
}
