//! wasm simd128 versions of the IQ4 scale search and index pick (`iq4.rs`): the same f32
//! operations per lane and the same entry choice (midpoint comparisons, the three-entry bracket
//! per value over the tries), so the same bits. Table entries are read with a byte swizzle.
#![cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#![allow(clippy::needless_range_loop)] // lanes and tries indexed as in iq4.rs, for review against it

use std::arch::wasm32::*;

use super::iq4_table::{mid, val, GROUP_MAX_EPS, NTRY};
use crate::quant::scalar::grids::KVALUES_IQ4NL as VALUES;

/// The table shifted by `s` entries, clamped at its end, as bytes.
#[inline(always)]
fn table(s: usize) -> v128 {
    let e = |k: usize| VALUES[(k + s).min(15)];
    i8x16(
        e(0),
        e(1),
        e(2),
        e(3),
        e(4),
        e(5),
        e(6),
        e(7),
        e(8),
        e(9),
        e(10),
        e(11),
        e(12),
        e(13),
        e(14),
        e(15),
    )
}

/// Entry `idx` (an i32 in 0..16 per lane) of a byte table, as f32.
#[inline(always)]
fn lookup(table: v128, idx: v128) -> v128 {
    // Each lane's low byte is its index (the other bytes pick entry 0 and are shifted out).
    let b = i8x16_swizzle(table, idx);
    f32x4_convert_i32x4(i32x4_shr(i32x4_shl(b, 24), 24))
}

/// `iq4_table::best_index` per lane, as i32: 15 minus the midpoints above x (NaN: 15).
#[inline(always)]
fn best_index(x: v128) -> v128 {
    let mut n = i32x4_splat(15);
    for k in 0..15 {
        n = i32x4_add(n, f32x4_lt(x, f32x4_splat(mid(k))));
    }
    n
}

#[inline(always)]
fn ld(row: &[f32; 8], v: usize) -> v128 {
    // SAFETY: 4 floats from 4·v ≤ 4 of an 8-float row; v128_load has no alignment requirement.
    unsafe { v128_load(row.as_ptr().add(4 * v).cast()) }
}

/// `iq4::block_scales` for 8 lanes (two vectors of 4).
pub(super) fn scales8(xt: &[[f32; 8]; 32]) -> [f32; 8] {
    let zero = f32x4_splat(0.0);
    let v0 = f32x4_splat(val(0));
    let mut amax = [zero; 2];
    let mut max = [zero; 2];
    for row in xt {
        for v in 0..2 {
            let x = ld(row, v);
            let bigger = f32x4_gt(f32x4_abs(x), amax[v]);
            amax[v] = v128_bitselect(f32x4_abs(x), amax[v], bigger);
            max[v] = v128_bitselect(x, max[v], bigger);
        }
    }
    let (t0, t1, t2) = (table(0), table(1), table(2));
    let mut d = [zero; 2];
    let mut id = [zero; 2];
    for v in 0..2 {
        d[v] = f32x4_div(f32x4_neg(max[v]), v0);
        id[v] = f32x4_div(f32x4_splat(1.0), d[v]);
    }
    let mut sumqx = [zero; 2];
    let mut sumq2 = [zero; 2];
    for row in xt {
        for v in 0..2 {
            let x = ld(row, v);
            let q = lookup(t0, best_index(f32x4_mul(id[v], x)));
            let wq = f32x4_mul(f32x4_mul(x, x), q);
            sumqx[v] = f32x4_add(sumqx[v], f32x4_mul(wq, x));
            sumq2[v] = f32x4_add(sumq2[v], f32x4_mul(wq, q));
        }
    }
    let mut best = [zero; 2];
    for v in 0..2 {
        let pos = f32x4_gt(sumq2[v], zero);
        d[v] = v128_and(f32x4_div(sumqx[v], sumq2[v]), pos);
        best[v] = f32x4_mul(d[v], sumqx[v]);
    }
    // Per value: weight, lowest entry, the two steps up and the midpoints where they are taken.
    let first = f32x4_splat((-NTRY + i32::from(VALUES[0])) as f32);
    let last = f32x4_splat((NTRY + i32::from(VALUES[0])) as f32);
    let id_first = [f32x4_div(first, max[0]), f32x4_div(first, max[1])];
    let id_last = [f32x4_div(last, max[0]), f32x4_div(last, max[1])];
    let half = f32x4_splat(0.5);
    let mut pre = [[[zero; 6]; 2]; 32];
    for (row, pre) in xt.iter().zip(pre.iter_mut()) {
        for v in 0..2 {
            let x = ld(row, v);
            let (a, b) = (f32x4_mul(id_first[v], x), f32x4_mul(id_last[v], x));
            // `if b < a { b } else { a }`
            let n = best_index(f32x4_pmin(a, b));
            let (ea, eb, ec) = (lookup(t0, n), lookup(t1, n), lookup(t2, n));
            // The steps up as bit differences: with m2 ⇒ m1 (mb ≥ ma), ea ^ (m1 & (ea ^ eb)) ^
            // (m2 & (eb ^ ec)) is ea, eb or ec exactly, as ea + (m1 & (eb − ea)) + (m2 & (ec −
            // eb)) was (whole numbers), with logic operations in place of two float adds.
            pre[v] = [
                f32x4_mul(x, x),
                ea,
                v128_xor(eb, ea),
                v128_xor(ec, eb),
                f32x4_mul(f32x4_add(ea, eb), half),
                f32x4_mul(f32x4_add(eb, ec), half),
            ];
        }
    }
    // Two tries at a time, compared in ggml's order (the last group's second try, past NTRY,
    // is computed and ignored).
    const T: usize = 2;
    // Every try's inverse scale (and one past the last), divided before the tries: none
    // depends on an earlier try, and a try waiting on its division at its start cost time.
    const TRIES: usize = (2 * NTRY as usize + 1).div_ceil(T) * T;
    let mut all_ids = [[zero; 2]; TRIES];
    for (k, ids) in all_ids.iter_mut().enumerate() {
        let num = f32x4_splat((-NTRY + k as i32 + i32::from(VALUES[0])) as f32);
        *ids = [f32x4_div(num, max[0]), f32x4_div(num, max[1])];
    }
    for first in (-NTRY..=NTRY).step_by(T) {
        let k0 = (first + NTRY) as usize;
        let ids: [[v128; 2]; T] = std::array::from_fn(|t| all_ids[k0 + t]);
        // One vector at a time: both at once (three tries) kept 12 running sums, 6 inverse
        // scales and two values' 6 precomputed vectors live, and V8 (16 xmm registers) spilled
        // the sums, a load and a store per sum and row. Each vector's tries are compared right
        // after its rows (the lanes are independent): sums kept until the other vector's rows
        // were done were spilled by Chromium's V8 with a store per sum in every row.
        for v in 0..2 {
            let (mut sxv, mut s2v) = ([zero; T], [zero; T]);
            let idv: [v128; T] = std::array::from_fn(|t| ids[t][v]);
            for (row, pre) in xt.iter().zip(&pre) {
                let x = ld(row, v);
                let [w, ea, up1, up2, ma, mb] = pre[v];
                for t in 0..T {
                    let al = f32x4_mul(idv[t], x);
                    let q = v128_xor(
                        v128_xor(ea, v128_and(f32x4_ge(al, ma), up1)),
                        v128_and(f32x4_ge(al, mb), up2),
                    );
                    let wq = f32x4_mul(w, q);
                    sxv[t] = f32x4_add(sxv[t], f32x4_mul(wq, x));
                    s2v[t] = f32x4_add(s2v[t], f32x4_mul(wq, q));
                }
            }
            for t in 0..T {
                if first + t as i32 > NTRY {
                    break;
                }
                let (sumqx, sumq2) = (sxv[t], s2v[t]);
                let take = v128_and(
                    f32x4_gt(sumq2, zero),
                    f32x4_gt(f32x4_mul(sumqx, sumqx), f32x4_mul(best[v], sumq2)),
                );
                let dt = f32x4_div(sumqx, sumq2);
                d[v] = v128_bitselect(dt, d[v], take);
                best[v] = v128_bitselect(f32x4_mul(dt, sumqx), best[v], take);
            }
        }
    }
    let mut out = [0.0f32; 8];
    for v in 0..2 {
        let dead = f32x4_lt(amax[v], f32x4_splat(GROUP_MAX_EPS));
        let r = v128_andnot(d[v], dead);
        // SAFETY: 4 floats at 4·v ≤ 4 of `out`.
        unsafe { v128_store(out.as_mut_ptr().add(4 * v).cast(), r) };
    }
    out
}

/// `best_index(id·x[j])` for one 32-value block into `l[..32]`.
pub(super) fn indices(id: f32, x: &[f32], l: &mut [u8]) {
    let (x, l) = (&x[..32], &mut l[..32]);
    let id = f32x4_splat(id);
    let mut q = [i32x4_splat(0); 8];
    for (v, q) in q.iter_mut().enumerate() {
        // SAFETY: 4 floats at 4·v ≤ 28 of the 32.
        let xv = unsafe { v128_load(x.as_ptr().add(4 * v).cast()) };
        *q = best_index(f32x4_mul(id, xv));
    }
    let mut out = [0u8; 32];
    for h in 0..2 {
        let a = i16x8_narrow_i32x4(q[4 * h], q[4 * h + 1]);
        let b = i16x8_narrow_i32x4(q[4 * h + 2], q[4 * h + 3]);
        // SAFETY: 16 bytes at 16·h ≤ 16 of `out`.
        unsafe {
            v128_store(
                out.as_mut_ptr().add(16 * h).cast(),
                u8x16_narrow_i16x8(a, b),
            )
        };
    }
    l.copy_from_slice(&out);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Per lane equal to the portable `best_index`, on every kind of input.
    #[test]
    fn simd128_best_index_equals_portable() {
        let mut state = 0x5555_1234_abcd_0001u64;
        let mut xs = vec![
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
            -127.0,
            113.0,
        ];
        for v in -600..600 {
            xs.push(v as f32 * 0.25);
        }
        for _ in 0..1_000_000 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            xs.push(f32::from_bits((state >> 32) as u32));
            xs.push(f32::from_bits((state >> 40) as u32 | 0x4200_0000) - 64.0);
        }
        for c in xs.chunks_exact(4) {
            let mut out = [0i32; 4];
            let i = best_index(f32x4(c[0], c[1], c[2], c[3]));
            // SAFETY: 16 bytes into `out`.
            unsafe { v128_store(out.as_mut_ptr().cast(), i) };
            for k in 0..4 {
                assert_eq!(
                    out[k],
                    i32::from(super::super::iq4_table::best_index(c[k])),
                    "{:e}",
                    c[k]
                );
            }
        }
    }

    /// Bit for bit the portable search (itself held to ggml's in `iq4_ref.rs`), on varied blocks.
    #[test]
    fn simd128_scales_equal_portable() {
        use super::super::iq4::block_scales;
        use super::super::iq4_ref::{block, Rng};
        let mut rng = Rng(0x0bad_cafe_1234_5678);
        for round in 0..3000u32 {
            let mut xt = [[0.0f32; 8]; 32];
            for b in 0..8 {
                let blk = block(&mut rng, round * 8 + b as u32);
                for j in 0..32 {
                    xt[j][b] = blk[j];
                }
            }
            let (ours, want) = (scales8(&xt), block_scales(&xt));
            for b in 0..8 {
                assert_eq!(
                    ours[b].to_bits(),
                    want[b].to_bits(),
                    "round {round} lane {b}"
                );
            }
        }
    }
}
