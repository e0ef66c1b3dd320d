//! wasm simd128 versions of the IQ4 scale search and index pick (`iq4.rs`), the same f32
//! operations per lane, so the same bits. The bracket of a value in the 16-entry table is the
//! count of entries ≤ it; its two ends are read from the table with a byte swizzle (LLVM's
//! vectorisation of the portable selects left half the search scalar on wasm).
#![cfg(all(target_arch = "wasm32", target_feature = "simd128"))]

use std::arch::wasm32::*;

use crate::quant::scalar::grids::KVALUES_IQ4NL as VALUES;

const GROUP_MAX_EPS: f32 = 1e-15;
const NTRY: i32 = 7;

#[inline(always)]
fn val(k: usize) -> f32 {
    f32::from(VALUES[k])
}

/// Table entry `idx` (an i32 in 0..16 per lane) as f32.
#[inline(always)]
fn lookup(idx: v128) -> v128 {
    let table = i8x16(
        VALUES[0], VALUES[1], VALUES[2], VALUES[3], VALUES[4], VALUES[5], VALUES[6], VALUES[7],
        VALUES[8], VALUES[9], VALUES[10], VALUES[11], VALUES[12], VALUES[13], VALUES[14],
        VALUES[15],
    );
    // Each lane's low byte is its index (the other bytes pick entry 0 and are shifted out).
    let b = i8x16_swizzle(table, idx);
    f32x4_convert_i32x4(i32x4_shr(i32x4_shl(b, 24), 24))
}

/// `iq4::best_index` per lane, as i32: the count of entries ≤ x (`ml`, ≤ 14) brackets x in
/// (ml, ml + 1); below the table that picks 0, above it 15, by the same comparison; NaN 15.
#[inline(always)]
fn best_index(x: v128) -> v128 {
    let mut ml = i32x4_splat(0);
    for k in 1..15 {
        ml = i32x4_sub(ml, f32x4_le(f32x4_splat(val(k)), x));
    }
    let up = i32x4_add(ml, i32x4_splat(1));
    let (lo, hi) = (lookup(ml), lookup(up));
    // The mask is −1 where x is nearer the lower end.
    let index = i32x4_add(up, f32x4_lt(f32x4_sub(x, lo), f32x4_sub(hi, x)));
    v128_bitselect(i32x4_splat(15), index, f32x4_ne(x, x))
}

/// `VALUES[best_index(x)]` per lane.
#[inline(always)]
fn best_value(x: v128) -> v128 {
    lookup(best_index(x))
}

#[inline(always)]
fn ld(row: &[f32; 8], v: usize) -> v128 {
    // SAFETY: 4 floats from 4·v ≤ 4 of an 8-float row; v128_load has no alignment requirement.
    unsafe { v128_load(row.as_ptr().add(4 * v).cast()) }
}

/// `iq4::block_scales` for 8 lanes.
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
    let sums = |id: [v128; 2]| {
        let mut sumqx = [zero; 2];
        let mut sumq2 = [zero; 2];
        for row in xt {
            for v in 0..2 {
                let x = ld(row, v);
                let q = best_value(f32x4_mul(id[v], x));
                let wq = f32x4_mul(f32x4_mul(x, x), q);
                sumqx[v] = f32x4_add(sumqx[v], f32x4_mul(wq, x));
                sumq2[v] = f32x4_add(sumq2[v], f32x4_mul(wq, q));
            }
        }
        (sumqx, sumq2)
    };
    let mut d = [zero; 2];
    let mut id = [zero; 2];
    for v in 0..2 {
        d[v] = f32x4_div(f32x4_neg(max[v]), v0);
        id[v] = f32x4_div(f32x4_splat(1.0), d[v]);
    }
    let (sumqx, sumq2) = sums(id);
    let mut best = [zero; 2];
    for v in 0..2 {
        let pos = f32x4_gt(sumq2[v], zero);
        d[v] = v128_and(f32x4_div(sumqx[v], sumq2[v]), pos);
        best[v] = f32x4_mul(d[v], sumqx[v]);
    }
    for itry in -NTRY..=NTRY {
        let num = f32x4_splat((itry + i32::from(VALUES[0])) as f32);
        let id = [f32x4_div(num, max[0]), f32x4_div(num, max[1])];
        let (sumqx, sumq2) = sums(id);
        for v in 0..2 {
            let take = v128_and(
                f32x4_gt(sumq2[v], zero),
                f32x4_gt(f32x4_mul(sumqx[v], sumqx[v]), f32x4_mul(best[v], sumq2[v])),
            );
            d[v] = v128_bitselect(f32x4_div(sumqx[v], sumq2[v]), d[v], take);
            best[v] = v128_bitselect(f32x4_mul(d[v], sumqx[v]), best[v], take);
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
                    i32::from(super::super::iq4::best_index(c[k])),
                    "{:e}",
                    c[k]
                );
            }
        }
    }
}
