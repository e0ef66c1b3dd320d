//! IQ4_NL and IQ4_XS: 4-bit indices into ggml's non-linear table `kvalues_iq4nl`, quantized the
//! way `ggml_quantize_chunk` does it without an importance matrix: `quantize_iq4_nl` /
//! `quantize_iq4_xs`, i.e. ggml's `quantize_row_iq4_nl_impl` with weights x² and a scale search
//! over 15 candidates (ntry = 7), not the cheaper `_ref` path.
//!
//! The search runs over several 32-value blocks at once, one per lane (the 8 blocks of an IQ4_XS
//! super-block, or 8 consecutive IQ4_NL blocks), each lane doing exactly ggml's sequence of f32
//! operations for its sums, so the bits are ggml's while the compiler vectorises across lanes.
//!
//! The nearest table entry is found without ggml's bisection, by two facts (tested against a
//! transcription of ggml's code in `iq4_ref.rs`):
//! - ggml's `best_index_int8(x)` is the number of midpoints `(v[k] + v[k+1])/2` that are ≤ x
//!   (NaN: 15). Its last step picks v[k+1] iff `!(x - v[k] < v[k+1] - x)`, which is monotone in
//!   x and, in f32, false exactly from the midpoint on (checked at every midpoint and the float
//!   below it), so one comparison per midpoint decides.
//! - In the 15 tries `al = id·x` moves monotonically with the try (id = (itry − 127)/max), over at
//!   most 14·|x/max| ≤ 14.0001, while midpoints two apart are ≥ 23 apart. So each value's entry,
//!   over all tries, is one of three neighbours fixed by the lowest `al` of the extreme tries:
//!   two comparisons per value and try instead of a search.
#![allow(clippy::needless_range_loop)] // index arithmetic kept as in ggml, for review against it

use super::iq4_table::{best_index, mid, val, GROUP_MAX_EPS, NTRY};
use super::{f16_field, nearest_int, Overflow};
use crate::quant::scalar::grids::KVALUES_IQ4NL as VALUES;

/// `VALUES[best_index(x)]` by selects over the increasing midpoints (no table lookup, which the
/// vectoriser would build lane by lane).
#[inline(always)]
fn best_value(x: f32) -> f32 {
    let mut q = val(0);
    for k in 0..15 {
        q = if x < mid(k) { q } else { val(k + 1) };
    }
    q
}

/// `v` where `c`, else +0.0, by a bit mask.
#[inline(always)]
fn keep_if(c: bool, v: f32) -> f32 {
    f32::from_bits(v.to_bits() & u32::from(c).wrapping_neg())
}

/// The three neighbouring entries `v[n]`, `v[n+1]`, `v[n+2]` (clamped to the table) where n =
/// `best_index(lo)`: every `al ≥ lo` within 23 of it takes one of them.
#[inline(always)]
fn bracket(lo: f32) -> (f32, f32, f32) {
    let (mut qa, mut qb, mut qc) = (val(0), val(1), val(2));
    for k in 0..15 {
        let below = lo < mid(k);
        qa = if below { qa } else { val(k + 1) };
        qb = if below { qb } else { val((k + 2).min(15)) };
        qc = if below { qc } else { val((k + 3).min(15)) };
    }
    (qa, qb, qc)
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
pub(super) fn indices_lanes(id: f32, x: &[f32], l: &mut [u8]) {
    for (l, x) in l.iter_mut().zip(x).take(32) {
        *l = best_index(id * x);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn indices_avx2(id: f32, x: &[f32], l: &mut [u8]) {
    indices_lanes(id, x, l)
}

/// The scale of each lane's 32-value block (`xt[j][lane]`), 0 for an all-zero block: ggml's
/// search, its sums in its order; only the table entry of each value is found differently.
#[inline(always)]
pub(super) fn block_scales<const L: usize>(xt: &[[f32; L]; 32]) -> [f32; L] {
    let v0 = val(0);
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
    // ggml's weights, x².
    let mut w = [[0.0f32; L]; 32];
    for (w, row) in w.iter_mut().zip(xt) {
        for k in 0..L {
            w[k] = row[k] * row[k];
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
    for (row, w) in xt.iter().zip(&w) {
        for k in 0..L {
            let x = row[k];
            let q = best_value(id[k] * x);
            let wq = w[k] * q;
            sumqx[k] += wq * x;
            sumq2[k] += wq * q;
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
    // Each value's three candidate entries over the tries, from the lower `al` of the first
    // and last try, and the midpoints between them. (Blocks below GROUP_MAX_EPS, whose `al` may
    // be NaN or infinite here, are dropped at the end, as ggml skips them.)
    let mut id_first = [0.0f32; L];
    let mut id_last = [0.0f32; L];
    for k in 0..L {
        id_first[k] = (-NTRY + i32::from(VALUES[0])) as f32 / max[k];
        id_last[k] = (NTRY + i32::from(VALUES[0])) as f32 / max[k];
    }
    let mut qa = [[0.0f32; L]; 32];
    let mut qb = [[0.0f32; L]; 32];
    let mut qc = [[0.0f32; L]; 32];
    let mut ma = [[0.0f32; L]; 32];
    let mut mb = [[0.0f32; L]; 32];
    for j in 0..32 {
        for k in 0..L {
            let x = xt[j][k];
            let (a, b) = (id_first[k] * x, id_last[k] * x);
            let (ea, eb, ec) = bracket(if b < a { b } else { a });
            // Stored as the lowest entry and the two steps up.
            qa[j][k] = ea;
            qb[j][k] = eb - ea;
            qc[j][k] = ec - eb;
            ma[j][k] = (ea + eb) * 0.5;
            mb[j][k] = (eb + ec) * 0.5;
        }
    }
    // The tries three at a time (independent sums, shared loads), compared in ggml's order.
    const T: usize = 3;
    for first in (-NTRY..=NTRY).step_by(T) {
        let mut ids = [[0.0f32; L]; T];
        for t in 0..T {
            for k in 0..L {
                // `(itry + values[0])/max`: an int sum, then a float division.
                ids[t][k] = (first + t as i32 + i32::from(VALUES[0])) as f32 / max[k];
            }
        }
        let mut sx = [[0.0f32; L]; T];
        let mut s2 = [[0.0f32; L]; T];
        for j in 0..32 {
            for t in 0..T {
                for k in 0..L {
                    let x = xt[j][k];
                    let al = ids[t][k] * x;
                    // Steps added to the lowest entry (small integers: exact), kept by bit
                    // masks: a select of a load becomes a branch, which stops the vectoriser.
                    let q = qa[j][k]
                        + keep_if(al >= ma[j][k], qb[j][k])
                        + keep_if(al >= mb[j][k], qc[j][k]);
                    let wq = w[j][k] * q;
                    sx[t][k] += wq * x;
                    s2[t][k] += wq * q;
                }
            }
        }
        for t in 0..T {
            for k in 0..L {
                let (sumqx, sumq2) = (sx[t][k], s2[t][k]);
                // `&` and selects: no branch per lane.
                let take = (sumq2 > 0.0) & (sumqx * sumqx > best[k] * sumq2);
                let dt = sumqx / sumq2;
                d[k] = if take { dt } else { d[k] };
                best[k] = if take { dt * sumqx } else { best[k] };
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

/// The 8 blocks of 256 values, one per lane.
fn transposed(x: &[f32; 256]) -> [[f32; 8]; 32] {
    let mut xt = [[0.0f32; 8]; 32];
    for ib in 0..8 {
        for j in 0..32 {
            xt[j][ib] = x[32 * ib + j];
        }
    }
    xt
}

pub(super) fn iq4_xs(x: &[f32; 256], y: &mut [u8; 136]) -> Result<(), Overflow> {
    iq4_xs_with(x, &scales(&transposed(x)), y)
}

/// IQ4_NL's 8 blocks and IQ4_XS's super-block of the same 256 values from one scale search:
/// ggml's `quantize_row_iq4_nl_impl` searches each 32-value block's scale the same way for both
/// (weights x², no importance matrix; the super-block only changes what is done with the
/// scales), so both are bit for bit what each alone gives. None: that type is not wanted.
pub(super) fn iq4_nl_xs(
    x: &[f32; 256],
    nl: Option<&mut [u8; 144]>,
    xs: Option<&mut [u8; 136]>,
) -> (Result<(), (usize, Overflow)>, Result<(), Overflow>) {
    let d = scales(&transposed(x));
    let mut r_nl = Ok(());
    if let Some(nl) = nl {
        for b in 0..8 {
            if let Err(e) =
                iq4_nl_block(&x[32 * b..32 * b + 32], d[b], &mut nl[18 * b..18 * b + 18])
            {
                r_nl = Err((b, e));
                break;
            }
        }
    }
    let r_xs = match xs {
        Some(xs) => iq4_xs_with(x, &d, xs),
        None => Ok(()),
    };
    (r_nl, r_xs)
}

/// IQ4_XS from its 8 block scales.
fn iq4_xs_with(x: &[f32; 256], scales: &[f32; 8], y: &mut [u8; 136]) -> Result<(), Overflow> {
    let mut max_scale = 0.0f32;
    let mut amax_scale = 0.0f32;
    for &d in scales {
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
