//! The statistics loops for wasm32 SIMD, one module per concept (see `kernels/mod.rs`); each
//! gives the bits of its concept's portable loop. Called only when `kernels::isa` chose simd128.

pub(in crate::stats) mod moments {
    use crate::stats::moments::{deviation, moments_of, Lanes, Moments, LANES, RUN};
    use std::arch::wasm32::*;

    /// [`crate::stats::moments::moments_of`] with the lanes in simd128 registers (two f32x4, four f64x2), the
    /// same operations per lane, so the same bits. `pmin`/`pmax` are `lane_min`/`lane_max`
    /// with the operands swapped (`f32x4_min` would order -0 and +0 its own way).
    pub(in crate::stats) fn of(values: &[f32]) -> Moments {
        if values.len() > RUN {
            return moments_of(values);
        }
        let n8 = values.len() / LANES * LANES;
        let p = values.as_ptr();
        let inf = f32x4_splat(f32::INFINITY);
        let ninf = f32x4_splat(f32::NEG_INFINITY);
        let zero = f32x4_splat(0.0);
        let mut nan = [i32x4_splat(0); 2];
        let mut infs = nan;
        let mut neg = nan;
        let mut zeros = nan;
        let mut fin = nan;
        let mut lo = [inf; 2];
        let mut hi = [ninf; 2];
        let mut sum = [f64x2_splat(0.0); 4];
        // Finite values only, first (see the AVX2 loop: finite lane sums tell).
        let mut i = 0;
        while i < n8 {
            for h in 0..2 {
                // SAFETY: i + 4h + 4 <= n8 <= values.len(); v128_load takes unaligned pointers.
                let v = unsafe { v128_load(p.add(i + 4 * h).cast()) };
                zeros[h] = i32x4_sub(zeros[h], f32x4_eq(v, zero));
                lo[h] = f32x4_pmin(v, lo[h]);
                hi[h] = f32x4_pmax(v, hi[h]);
                sum[2 * h] = f64x2_add(sum[2 * h], f64x2_promote_low_f32x4(v));
                sum[2 * h + 1] = f64x2_add(
                    sum[2 * h + 1],
                    f64x2_promote_low_f32x4(i32x4_shuffle::<2, 3, 2, 3>(v, v)),
                );
            }
            i += LANES;
        }
        let sum_inf = f64x2_splat(f64::INFINITY);
        let finite_only = sum
            .iter()
            .all(|&x| i64x2_all_true(f64x2_lt(f64x2_abs(x), sum_inf)));
        if finite_only {
            fin = [i32x4_splat((n8 / LANES) as i32); 2];
        } else {
            zeros = [i32x4_splat(0); 2];
            (lo, hi) = ([inf; 2], [ninf; 2]);
            sum = [f64x2_splat(0.0); 4];
        }
        let mut i = if finite_only { n8 } else { 0 };
        while i < n8 {
            for h in 0..2 {
                // SAFETY: i + 4h + 4 <= n8 <= values.len(); v128_load takes unaligned pointers.
                let v = unsafe { v128_load(p.add(i + 4 * h).cast()) };
                let a = f32x4_abs(v);
                let is_fin = f32x4_lt(a, inf);
                nan[h] = i32x4_sub(nan[h], f32x4_ne(v, v));
                infs[h] = i32x4_sub(infs[h], f32x4_eq(a, inf));
                neg[h] = i32x4_sub(neg[h], f32x4_eq(v, ninf));
                zeros[h] = i32x4_sub(zeros[h], f32x4_eq(v, zero));
                fin[h] = i32x4_sub(fin[h], is_fin);
                lo[h] = f32x4_pmin(v128_bitselect(v, inf, is_fin), lo[h]);
                hi[h] = f32x4_pmax(v128_bitselect(v, ninf, is_fin), hi[h]);
                let x = v128_and(v, is_fin);
                sum[2 * h] = f64x2_add(sum[2 * h], f64x2_promote_low_f32x4(x));
                sum[2 * h + 1] = f64x2_add(
                    sum[2 * h + 1],
                    f64x2_promote_low_f32x4(i32x4_shuffle::<2, 3, 2, 3>(x, x)),
                );
            }
            i += LANES;
        }
        let mut lanes = Lanes::new();
        let u32s = |x: [v128; 2]| {
            let mut out = [0u32; LANES];
            for (h, v) in x.iter().enumerate() {
                for l in 0..4 {
                    out[4 * h + l] = lane4(*v, l);
                }
            }
            out
        };
        lanes.nan = u32s(nan);
        lanes.inf = u32s(infs);
        lanes.neg = u32s(neg);
        lanes.zero = u32s(zeros);
        lanes.fin = u32s(fin);
        for l in 0..LANES {
            lanes.lo[l] = f32::from_bits(lane4(lo[l / 4], l % 4));
            lanes.hi[l] = f32::from_bits(lane4(hi[l / 4], l % 4));
            lanes.sum[l] = lane2(sum[l / 2], l % 2);
        }
        for (l, &v) in values[n8..].iter().enumerate() {
            lanes.add(l, v);
        }
        let mut m = lanes.moments(values.len());
        if m.finite == 0 {
            return m;
        }
        let mean = f64x2_splat(m.mean);
        let mut dev = [f64x2_splat(0.0); 4];
        let mut i = 0;
        while finite_only && i < n8 {
            for h in 0..2 {
                // SAFETY: as above.
                let v = unsafe { v128_load(p.add(i + 4 * h).cast()) };
                let x0 = f64x2_sub(f64x2_promote_low_f32x4(v), mean);
                let x1 = f64x2_sub(
                    f64x2_promote_low_f32x4(i32x4_shuffle::<2, 3, 2, 3>(v, v)),
                    mean,
                );
                dev[2 * h] = f64x2_add(dev[2 * h], f64x2_mul(x0, x0));
                dev[2 * h + 1] = f64x2_add(dev[2 * h + 1], f64x2_mul(x1, x1));
            }
            i += LANES;
        }
        while i < n8 {
            for h in 0..2 {
                // SAFETY: as above.
                let v = unsafe { v128_load(p.add(i + 4 * h).cast()) };
                let is_fin = f32x4_lt(f32x4_abs(v), inf);
                let hv = i32x4_shuffle::<2, 3, 2, 3>(v, v);
                // The f32 mask widened to f64 lanes (sign extension of all-ones / zero).
                let x0 = v128_and(
                    f64x2_sub(f64x2_promote_low_f32x4(v), mean),
                    i64x2_extend_low_i32x4(is_fin),
                );
                let x1 = v128_and(
                    f64x2_sub(f64x2_promote_low_f32x4(hv), mean),
                    i64x2_extend_high_i32x4(is_fin),
                );
                dev[2 * h] = f64x2_add(dev[2 * h], f64x2_mul(x0, x0));
                dev[2 * h + 1] = f64x2_add(dev[2 * h + 1], f64x2_mul(x1, x1));
            }
            i += LANES;
        }
        let mut d = [0f64; LANES];
        for (l, x) in d.iter_mut().enumerate() {
            *x = lane2(dev[l / 2], l % 2);
        }
        for (l, &v) in values[n8..].iter().enumerate() {
            d[l] += deviation(v, m.mean);
        }
        m.m2 = d.iter().sum();
        m
    }

    /// Lane `l` (0..4) of a vector of 32-bit lanes.
    pub(in crate::stats) fn lane4(v: v128, l: usize) -> u32 {
        match l {
            0 => u32x4_extract_lane::<0>(v),
            1 => u32x4_extract_lane::<1>(v),
            2 => u32x4_extract_lane::<2>(v),
            _ => u32x4_extract_lane::<3>(v),
        }
    }

    /// Lane `l` (0..2) of a vector of f64.
    pub(in crate::stats) fn lane2(v: v128, l: usize) -> f64 {
        if l == 0 {
            f64x2_extract_lane::<0>(v)
        } else {
            f64x2_extract_lane::<1>(v)
        }
    }
}

pub(in crate::stats) mod counted {
    use crate::stats::counted::{counted_from, deviations_from, State, LANES};
    use crate::stats::kernels::simd128::moments::{lane2, lane4};
    use crate::stats::moments::Moments;
    use std::arch::wasm32::*;

    /// The portable loops in simd128 (two f32x4, four f64x2 per 8 lanes; `pmin(b, a)` is
    /// `lane_min(a, b)`): the same bits.
    pub(in crate::stats) fn counted(values: &[f32], counts: &[u32], count: u64) -> Moments {
        let n = values.len().min(counts.len());
        let (values, counts) = (&values[..n], &counts[..n]);
        let n8 = n / LANES * LANES;
        let (vp, cp) = (values.as_ptr(), counts.as_ptr());
        let inf = f32x4_splat(f32::INFINITY);
        let ninf = f32x4_splat(f32::NEG_INFINITY);
        let zero = f32x4_splat(0.0);
        let izero = i32x4_splat(0);
        let (mut lo, mut hi) = ([inf; 2], [ninf; 2]);
        let mut sum = [f64x2_splat(0.0); 4];
        let mut zeros = [izero; 2];
        let mut i = 0;
        while i < n8 {
            for h in 0..2 {
                // SAFETY: i + 4h + 4 <= n8 <= n; v128_load takes unaligned pointers.
                let (v, c) = unsafe {
                    (
                        v128_load(vp.add(i + 4 * h).cast()),
                        v128_load(cp.add(i + 4 * h).cast()),
                    )
                };
                let present = i32x4_gt(c, izero);
                lo[h] = f32x4_pmin(v128_bitselect(v, inf, present), lo[h]);
                hi[h] = f32x4_pmax(v128_bitselect(v, ninf, present), hi[h]);
                let c23 = i32x4_shuffle::<2, 3, 2, 3>(c, c);
                let v23 = i32x4_shuffle::<2, 3, 2, 3>(v, v);
                sum[2 * h] = f64x2_add(
                    sum[2 * h],
                    f64x2_mul(f64x2_convert_low_i32x4(c), f64x2_promote_low_f32x4(v)),
                );
                sum[2 * h + 1] = f64x2_add(
                    sum[2 * h + 1],
                    f64x2_mul(f64x2_convert_low_i32x4(c23), f64x2_promote_low_f32x4(v23)),
                );
                zeros[h] = i32x4_add(zeros[h], v128_and(f32x4_eq(v, zero), c));
            }
            i += LANES;
        }
        let mut state = State::new();
        for l in 0..LANES {
            state.lo[l] = f32::from_bits(lane4(lo[l / 4], l % 4));
            state.hi[l] = f32::from_bits(lane4(hi[l / 4], l % 4));
            state.sum[l] = lane2(sum[l / 2], l % 2);
            state.zero[l] = lane4(zeros[l / 4], l % 4);
        }
        let (mut m, more) = counted_from(values, counts, count, n8, &mut state);
        if !more {
            return m;
        }
        let mean = f64x2_splat(m.mean);
        let mut dev = [f64x2_splat(0.0); 4];
        let mut i = 0;
        while i < n8 {
            for h in 0..2 {
                // SAFETY: as above.
                let (v, c) = unsafe {
                    (
                        v128_load(vp.add(i + 4 * h).cast()),
                        v128_load(cp.add(i + 4 * h).cast()),
                    )
                };
                let c23 = i32x4_shuffle::<2, 3, 2, 3>(c, c);
                let v23 = i32x4_shuffle::<2, 3, 2, 3>(v, v);
                let x0 = f64x2_sub(f64x2_promote_low_f32x4(v), mean);
                let x1 = f64x2_sub(f64x2_promote_low_f32x4(v23), mean);
                dev[2 * h] = f64x2_add(
                    dev[2 * h],
                    f64x2_mul(f64x2_mul(x0, x0), f64x2_convert_low_i32x4(c)),
                );
                dev[2 * h + 1] = f64x2_add(
                    dev[2 * h + 1],
                    f64x2_mul(f64x2_mul(x1, x1), f64x2_convert_low_i32x4(c23)),
                );
            }
            i += LANES;
        }
        let mut lanes = [0f64; LANES];
        for (l, d) in lanes.iter_mut().enumerate() {
            *d = lane2(dev[l / 2], l % 2);
        }
        deviations_from(values, counts, n8, &mut m, &mut lanes);
        m
    }
}

pub(in crate::stats) mod planes {
    use std::arch::wasm32::*;

    #[inline(always)]
    pub(in crate::stats) fn masks(x: &[u8; 16]) -> [u32; 8] {
        // SAFETY: 16 bytes; v128_load takes unaligned pointers.
        let q = unsafe { v128_load(x.as_ptr().cast()) };
        // 16-bit shifts (one instruction, where a byte shift is several): a low byte's bits
        // never reach its high byte's top bit.
        let m = |s: u32| u32::from(i8x16_bitmask(i16x8_shl(q, s)));
        [m(7), m(6), m(5), m(4), m(3), m(2), m(1), m(0)]
    }
}

pub(in crate::stats) mod scaled {
    use crate::stats::scaled::{Sums, View};
    use std::arch::wasm32::*;

    /// Sum of the four lanes.
    #[inline(always)]
    fn total(v: v128) -> i32 {
        let v = i32x4_add(v, i32x4_shuffle::<2, 3, 0, 1>(v, v));
        i32x4_extract_lane::<0>(i32x4_add(v, i32x4_shuffle::<1, 0, 3, 2>(v, v)))
    }

    /// [`crate::stats::scaled::portable_sums`] for blocks of 32 levels, a block in two registers
    /// (squares of i8 fit i16).
    pub(in crate::stats) fn sums(view: View<'_>, d: &[f32], out: &mut [Sums]) {
        let zero = i8x16_splat(0);
        for (i, (s, &d)) in out.iter_mut().zip(d).take(view.blocks).enumerate() {
            let b = view.block(i);
            assert!(b.len() == 32);
            // SAFETY: 32 levels in the block; v128_load takes unaligned pointers.
            let (lo, hi) = unsafe {
                (
                    v128_load(b.as_ptr().cast()),
                    v128_load(b.as_ptr().add(16).cast()),
                )
            };
            let mut mn = i8x16_min(lo, hi);
            let mut mx = i8x16_max(lo, hi);
            mn = i8x16_min(mn, i64x2_shuffle::<1, 0>(mn, mn));
            mx = i8x16_max(mx, i64x2_shuffle::<1, 0>(mx, mx));
            mn = i8x16_min(mn, i32x4_shuffle::<1, 0, 3, 2>(mn, mn));
            mx = i8x16_max(mx, i32x4_shuffle::<1, 0, 3, 2>(mx, mx));
            mn = i8x16_min(mn, i16x8_shuffle::<1, 0, 3, 2, 5, 4, 7, 6>(mn, mn));
            mx = i8x16_max(mx, i16x8_shuffle::<1, 0, 3, 2, 5, 4, 7, 6>(mx, mx));
            let min = i8x16_extract_lane::<0>(mn).min(i8x16_extract_lane::<1>(mn));
            let max = i8x16_extract_lane::<0>(mx).max(i8x16_extract_lane::<1>(mx));
            let sum = i32x4_extadd_pairwise_i16x8(i16x8_add(
                i16x8_extadd_pairwise_i8x16(lo),
                i16x8_extadd_pairwise_i8x16(hi),
            ));
            let (l0, l1) = (i16x8_extend_low_i8x16(lo), i16x8_extend_high_i8x16(lo));
            let (h0, h1) = (i16x8_extend_low_i8x16(hi), i16x8_extend_high_i8x16(hi));
            let squares = i32x4_add(
                i32x4_add(i32x4_dot_i16x8(l0, l0), i32x4_dot_i16x8(l1, l1)),
                i32x4_add(i32x4_dot_i16x8(h0, h0), i32x4_dot_i16x8(h1, h1)),
            );
            let zeros = u32::from(i8x16_bitmask(i8x16_eq(lo, zero))).count_ones()
                + u32::from(i8x16_bitmask(i8x16_eq(hi, zero))).count_ones();
            *s = Sums {
                d,
                sum: total(sum),
                squares: total(squares),
                zeros,
                min,
                max,
            };
        }
    }
}

pub(in crate::stats) mod codes {
    use crate::stats::planes::CODES;
    use std::arch::wasm32::*;

    /// Codes `4k + l` match where low-bits mask `l` (planes 0 and 1) and high-bits mask `k`
    /// (planes 2 and 3) do: the 4 low masks in one vector, ANDed with each high mask, and 16
    /// population counts at once.
    pub(in crate::stats) fn count_codes(planes: &[[u32; 4]], counts: &mut [u32]) {
        // Lane l takes plane 0 as is where bit 0 of l is set, inverted elsewhere; plane 1 by bit 1.
        let flip0 = i32x4(-1, 0, -1, 0);
        let flip1 = i32x4(-1, -1, 0, 0);
        let both = |a: u32, b: u32| {
            v128_and(
                v128_xor(u32x4_splat(a), flip0),
                v128_xor(u32x4_splat(b), flip1),
            )
        };
        let pop =
            |x: v128| u32x4_extadd_pairwise_u16x8(u16x8_extadd_pairwise_u8x16(i8x16_popcnt(x)));
        for (p, out) in planes.iter().zip(counts.chunks_exact_mut(CODES)) {
            let low = both(p[0], p[1]);
            let high = both(p[2], p[3]);
            let c = [
                pop(v128_and(low, i32x4_shuffle::<0, 0, 0, 0>(high, high))),
                pop(v128_and(low, i32x4_shuffle::<1, 1, 1, 1>(high, high))),
                pop(v128_and(low, i32x4_shuffle::<2, 2, 2, 2>(high, high))),
                pop(v128_and(low, i32x4_shuffle::<3, 3, 3, 3>(high, high))),
            ];
            for (k, v) in c.into_iter().enumerate() {
                // SAFETY: `out` holds 16 u32 (4k + 4 <= 16); v128_store takes unaligned pointers.
                unsafe { v128_store(out.as_mut_ptr().add(4 * k).cast(), v) };
            }
        }
    }
}

pub(in crate::stats) mod affine {
    use crate::stats::planes::CODES;
    use std::arch::wasm32::*;

    /// Counts narrowed to i16 (each at most 32) and dotted with the codes and their squares.
    #[inline(always)]
    pub(in crate::stats) fn code_sums(c: &[u32; CODES]) -> (i32, i32, u32) {
        let p: *const v128 = c.as_ptr().cast();
        // SAFETY: 16 u32 are 4 v128; v128_load takes unaligned pointers.
        let [c0, c1, c2, c3] = unsafe { [0, 1, 2, 3].map(|k| v128_load(p.add(k))) };
        let (lo, hi) = (i16x8_narrow_i32x4(c0, c1), i16x8_narrow_i32x4(c2, c3));
        let d1 = i32x4_add(
            i32x4_dot_i16x8(lo, i16x8(0, 1, 2, 3, 4, 5, 6, 7)),
            i32x4_dot_i16x8(hi, i16x8(8, 9, 10, 11, 12, 13, 14, 15)),
        );
        let d2 = i32x4_add(
            i32x4_dot_i16x8(lo, i16x8(0, 1, 4, 9, 16, 25, 36, 49)),
            i32x4_dot_i16x8(hi, i16x8(64, 81, 100, 121, 144, 169, 196, 225)),
        );
        let t = i32x4_add(
            i32x4_shuffle::<0, 2, 4, 6>(d1, d2),
            i32x4_shuffle::<1, 3, 5, 7>(d1, d2),
        );
        let zero = i16x8_splat(0);
        let present = i8x16_bitmask(i8x16_narrow_i16x8(i16x8_ne(lo, zero), i16x8_ne(hi, zero)));
        (
            i32x4_extract_lane::<0>(t) + i32x4_extract_lane::<1>(t),
            i32x4_extract_lane::<2>(t) + i32x4_extract_lane::<3>(t),
            u32::from(present),
        )
    }

    #[inline(always)]
    pub(in crate::stats) fn any_zero(v: &[f32; CODES]) -> bool {
        let p: *const v128 = v.as_ptr().cast();
        let zero = f32x4_splat(0.0);
        // SAFETY: 16 f32 are 4 v128; v128_load takes unaligned pointers.
        let [a, b, c, d] = unsafe { [0, 1, 2, 3].map(|k| f32x4_eq(v128_load(p.add(k)), zero)) };
        v128_any_true(v128_or(v128_or(a, b), v128_or(c, d)))
    }
}
