//! The statistics loops for x86_64 AVX2, one module per concept (see `kernels/mod.rs`); each
//! gives the bits of its concept's portable loop. Called only when `kernels::isa` chose AVX2.

pub(in crate::stats) mod moments {
    use crate::stats::moments::{deviation, moments_of, Lanes, Moments, LANES, RUN};
    use std::arch::x86_64::*;

    /// [`crate::stats::moments::moments_of`] with the lanes in AVX2 registers: the same operations per lane
    /// (no fused multiply-add), so the same bits.
    #[target_feature(enable = "avx2")]
    pub(in crate::stats) unsafe fn of(values: &[f32]) -> Moments {
        if values.len() > RUN {
            return moments_of(values);
        }
        let n8 = values.len() / LANES * LANES;
        let p = values.as_ptr();
        let abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fff_ffff));
        let inf = _mm256_set1_ps(f32::INFINITY);
        let ninf = _mm256_set1_ps(f32::NEG_INFINITY);
        let zero = _mm256_setzero_ps();
        let (mut nan, mut infs, mut neg, mut zeros, mut fin) = (
            _mm256_setzero_si256(),
            _mm256_setzero_si256(),
            _mm256_setzero_si256(),
            _mm256_setzero_si256(),
            _mm256_setzero_si256(),
        );
        let (mut lo, mut hi) = (inf, ninf);
        let (mut s0, mut s1) = (_mm256_setzero_pd(), _mm256_setzero_pd());
        // Most pieces hold only finite values: a shorter loop first (no NaN/infinity counts, no
        // masking, which change nothing when every value is finite), the full one only when a
        // value was not finite. The sums tell: f32 values summed in f64 never overflow, so a
        // lane sum is finite exactly when all its values were.
        let mut i = 0;
        while i < n8 {
            let v = _mm256_loadu_ps(p.add(i));
            zeros = _mm256_sub_epi32(
                zeros,
                _mm256_castps_si256(_mm256_cmp_ps::<_CMP_EQ_OQ>(v, zero)),
            );
            lo = _mm256_min_ps(lo, v);
            hi = _mm256_max_ps(hi, v);
            s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
            s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(v)));
            i += LANES;
        }
        let sum_inf = _mm256_set1_pd(f64::INFINITY);
        let finite_sums = _mm256_and_pd(
            _mm256_cmp_pd::<_CMP_LT_OQ>(_mm256_andnot_pd(_mm256_set1_pd(-0.0), s0), sum_inf),
            _mm256_cmp_pd::<_CMP_LT_OQ>(_mm256_andnot_pd(_mm256_set1_pd(-0.0), s1), sum_inf),
        );
        let finite_only = _mm256_movemask_pd(finite_sums) == 0xf;
        if finite_only {
            fin = _mm256_set1_epi32((n8 / LANES) as i32);
        } else {
            zeros = _mm256_setzero_si256();
            (lo, hi) = (inf, ninf);
            (s0, s1) = (_mm256_setzero_pd(), _mm256_setzero_pd());
        }
        let mut i = if finite_only { n8 } else { 0 };
        while i < n8 {
            let v = _mm256_loadu_ps(p.add(i));
            let a = _mm256_and_ps(v, abs_mask);
            let is_fin = _mm256_cmp_ps::<_CMP_LT_OQ>(a, inf);
            nan = _mm256_sub_epi32(
                nan,
                _mm256_castps_si256(_mm256_cmp_ps::<_CMP_UNORD_Q>(v, v)),
            );
            infs = _mm256_sub_epi32(
                infs,
                _mm256_castps_si256(_mm256_cmp_ps::<_CMP_EQ_OQ>(a, inf)),
            );
            neg = _mm256_sub_epi32(
                neg,
                _mm256_castps_si256(_mm256_cmp_ps::<_CMP_EQ_OQ>(v, ninf)),
            );
            zeros = _mm256_sub_epi32(
                zeros,
                _mm256_castps_si256(_mm256_cmp_ps::<_CMP_EQ_OQ>(v, zero)),
            );
            fin = _mm256_sub_epi32(fin, _mm256_castps_si256(is_fin));
            lo = _mm256_min_ps(lo, _mm256_blendv_ps(inf, v, is_fin));
            hi = _mm256_max_ps(hi, _mm256_blendv_ps(ninf, v, is_fin));
            let x = _mm256_and_ps(v, is_fin);
            s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(x)));
            s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(x)));
            i += LANES;
        }
        let mut lanes = Lanes::new();
        let u32s = |x: __m256i| {
            let mut out = [0u32; LANES];
            _mm256_storeu_si256(out.as_mut_ptr().cast(), x);
            out
        };
        lanes.nan = u32s(nan);
        lanes.inf = u32s(infs);
        lanes.neg = u32s(neg);
        lanes.zero = u32s(zeros);
        lanes.fin = u32s(fin);
        _mm256_storeu_ps(lanes.lo.as_mut_ptr(), lo);
        _mm256_storeu_ps(lanes.hi.as_mut_ptr(), hi);
        _mm256_storeu_pd(lanes.sum.as_mut_ptr(), s0);
        _mm256_storeu_pd(lanes.sum.as_mut_ptr().add(4), s1);
        for (l, &v) in values[n8..].iter().enumerate() {
            lanes.add(l, v);
        }
        let mut m = lanes.moments(values.len());
        if m.finite == 0 {
            return m;
        }
        let mean = _mm256_set1_pd(m.mean);
        let (mut d0, mut d1) = (_mm256_setzero_pd(), _mm256_setzero_pd());
        let mut i = 0;
        while finite_only && i < n8 {
            let v = _mm256_loadu_ps(p.add(i));
            let x0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), mean);
            let x1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps::<1>(v)), mean);
            d0 = _mm256_add_pd(d0, _mm256_mul_pd(x0, x0));
            d1 = _mm256_add_pd(d1, _mm256_mul_pd(x1, x1));
            i += LANES;
        }
        while i < n8 {
            let v = _mm256_loadu_ps(p.add(i));
            let is_fin =
                _mm256_castps_si256(_mm256_cmp_ps::<_CMP_LT_OQ>(_mm256_and_ps(v, abs_mask), inf));
            // The f32 mask widened to f64 lanes (sign extension of all-ones / zero).
            let m0 = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(is_fin)));
            let m1 =
                _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm256_extracti128_si256::<1>(is_fin)));
            let x0 = _mm256_and_pd(
                _mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), mean),
                m0,
            );
            let x1 = _mm256_and_pd(
                _mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps::<1>(v)), mean),
                m1,
            );
            d0 = _mm256_add_pd(d0, _mm256_mul_pd(x0, x0));
            d1 = _mm256_add_pd(d1, _mm256_mul_pd(x1, x1));
            i += LANES;
        }
        let mut dev = [0f64; LANES];
        _mm256_storeu_pd(dev.as_mut_ptr(), d0);
        _mm256_storeu_pd(dev.as_mut_ptr().add(4), d1);
        for (l, &v) in values[n8..].iter().enumerate() {
            dev[l] += deviation(v, m.mean);
        }
        m.m2 = dev.iter().sum();
        m
    }
}

pub(in crate::stats) mod counted {
    use crate::stats::counted::{counted_from, deviations_from, State, LANES};
    use crate::stats::moments::Moments;
    use std::arch::x86_64::*;

    /// The portable loops with the lanes in AVX2 registers (pair `i` in lane `i % 8`, no fused
    /// multiply-add): the same bits.
    #[target_feature(enable = "avx2")]
    pub(in crate::stats) unsafe fn counted(values: &[f32], counts: &[u32], count: u64) -> Moments {
        let n = values.len().min(counts.len());
        let (values, counts) = (&values[..n], &counts[..n]);
        let n8 = n / LANES * LANES;
        let (vp, cp) = (values.as_ptr(), counts.as_ptr());
        let inf = _mm256_set1_ps(f32::INFINITY);
        let ninf = _mm256_set1_ps(f32::NEG_INFINITY);
        let zero = _mm256_setzero_ps();
        let (mut lo, mut hi) = (inf, ninf);
        let (mut s0, mut s1) = (_mm256_setzero_pd(), _mm256_setzero_pd());
        let mut zeros = _mm256_setzero_si256();
        let mut i = 0;
        while i < n8 {
            let v = _mm256_loadu_ps(vp.add(i));
            let c = _mm256_loadu_si256(cp.add(i).cast());
            let present = _mm256_castsi256_ps(_mm256_cmpgt_epi32(c, _mm256_setzero_si256()));
            lo = _mm256_min_ps(lo, _mm256_blendv_ps(inf, v, present));
            hi = _mm256_max_ps(hi, _mm256_blendv_ps(ninf, v, present));
            let c0 = _mm256_cvtepi32_pd(_mm256_castsi256_si128(c));
            let c1 = _mm256_cvtepi32_pd(_mm256_extracti128_si256::<1>(c));
            s0 = _mm256_add_pd(
                s0,
                _mm256_mul_pd(c0, _mm256_cvtps_pd(_mm256_castps256_ps128(v))),
            );
            s1 = _mm256_add_pd(
                s1,
                _mm256_mul_pd(c1, _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(v))),
            );
            let z = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_EQ_OQ>(v, zero));
            zeros = _mm256_add_epi32(zeros, _mm256_and_si256(z, c));
            i += LANES;
        }
        let mut state = State::new();
        _mm256_storeu_ps(state.lo.as_mut_ptr(), lo);
        _mm256_storeu_ps(state.hi.as_mut_ptr(), hi);
        _mm256_storeu_pd(state.sum.as_mut_ptr(), s0);
        _mm256_storeu_pd(state.sum.as_mut_ptr().add(4), s1);
        _mm256_storeu_si256(state.zero.as_mut_ptr().cast(), zeros);
        let (mut m, more) = counted_from(values, counts, count, n8, &mut state);
        if !more {
            return m;
        }
        let mean = _mm256_set1_pd(m.mean);
        let (mut d0, mut d1) = (_mm256_setzero_pd(), _mm256_setzero_pd());
        let mut i = 0;
        while i < n8 {
            let v = _mm256_loadu_ps(vp.add(i));
            let c = _mm256_loadu_si256(cp.add(i).cast());
            let c0 = _mm256_cvtepi32_pd(_mm256_castsi256_si128(c));
            let c1 = _mm256_cvtepi32_pd(_mm256_extracti128_si256::<1>(c));
            let x0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), mean);
            let x1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps::<1>(v)), mean);
            d0 = _mm256_add_pd(d0, _mm256_mul_pd(_mm256_mul_pd(x0, x0), c0));
            d1 = _mm256_add_pd(d1, _mm256_mul_pd(_mm256_mul_pd(x1, x1), c1));
            i += LANES;
        }
        let mut dev = [0f64; LANES];
        _mm256_storeu_pd(dev.as_mut_ptr(), d0);
        _mm256_storeu_pd(dev.as_mut_ptr().add(4), d1);
        deviations_from(values, counts, n8, &mut m, &mut dev);
        m
    }
}

pub(in crate::stats) mod pass2 {
    use crate::stats::pass2::{filter_scalar, PAD};
    use crate::stats::percentiles::BUCKETS;
    use std::arch::x86_64::*;

    /// [`crate::stats::pass2::filter`] eight values at a time: keys in a vector, their buckets' flags by one
    /// gather from the byte table, the flagged positions from the mask's set bits.
    #[target_feature(enable = "avx2")]
    pub(in crate::stats) unsafe fn filter(
        table: &[u8],
        block: &[f32],
        keys: &mut [u32; 256],
        flagged: &mut [u16; 256],
        hot: [u32; 2],
    ) -> (usize, [u32; 2]) {
        assert!(table.len() >= BUCKETS + PAD && block.len() <= 256);
        let n8 = block.len() / 8 * 8;
        let top_bit = _mm256_set1_epi32(i32::MIN);
        let low_byte = _mm256_set1_epi32(0xff);
        let zero = _mm256_setzero_si256();
        let h0 = _mm256_set1_epi32(hot[0] as i32);
        let h1 = _mm256_set1_epi32(hot[1] as i32);
        let (mut n, mut c) = (0usize, [0u32; 2]);
        let mut i = 0;
        while i < n8 {
            let b = _mm256_loadu_si256(block.as_ptr().add(i).cast());
            let k = _mm256_xor_si256(b, _mm256_or_si256(_mm256_srai_epi32::<31>(b), top_bit));
            _mm256_storeu_si256(keys.as_mut_ptr().add(i).cast(), k);
            let tops = _mm256_srli_epi32::<16>(k);
            // Bucket indices are below BUCKETS: each read of 4 bytes is inside the table.
            let f = _mm256_and_si256(
                _mm256_i32gather_epi32::<1>(table.as_ptr().cast(), tops),
                low_byte,
            );
            let e0 = _mm256_cmpeq_epi32(k, h0);
            let e1 = _mm256_cmpeq_epi32(k, h1);
            c[0] += (_mm256_movemask_ps(_mm256_castsi256_ps(e0)) as u32).count_ones();
            c[1] += (_mm256_movemask_ps(_mm256_castsi256_ps(e1)) as u32).count_ones();
            let unflagged = _mm256_or_si256(_mm256_cmpeq_epi32(f, zero), _mm256_or_si256(e0, e1));
            let mut m = !_mm256_movemask_ps(_mm256_castsi256_ps(unflagged)) as u32 & 0xff;
            while m != 0 {
                flagged[n] = (i + m.trailing_zeros() as usize) as u16;
                n += 1;
                m &= m - 1;
            }
            i += 8;
        }
        filter_scalar(table, block, keys, flagged, hot, n8, (n, c))
    }
}

pub(in crate::stats) mod planes {
    use std::arch::x86_64::*;

    /// [`masks`] of 32 bytes at once (bit `j` of `m[k]`: bit `k` of byte `j`).
    #[target_feature(enable = "avx2")]
    pub(in crate::stats) unsafe fn masks32(x: &[u8; 32]) -> [u32; 8] {
        let q = _mm256_loadu_si256(x.as_ptr().cast());
        [
            _mm256_movemask_epi8(_mm256_slli_epi16::<7>(q)) as u32,
            _mm256_movemask_epi8(_mm256_slli_epi16::<6>(q)) as u32,
            _mm256_movemask_epi8(_mm256_slli_epi16::<5>(q)) as u32,
            _mm256_movemask_epi8(_mm256_slli_epi16::<4>(q)) as u32,
            _mm256_movemask_epi8(_mm256_slli_epi16::<3>(q)) as u32,
            _mm256_movemask_epi8(_mm256_slli_epi16::<2>(q)) as u32,
            _mm256_movemask_epi8(_mm256_slli_epi16::<1>(q)) as u32,
            _mm256_movemask_epi8(q) as u32,
        ]
    }

    /// SSE2 (every x86_64): bit k to each byte's top bit (16-bit shifts: a low byte's bits
    /// never reach its high byte's top bit), then the top bits as a mask.
    #[inline(always)]
    pub(in crate::stats) fn masks(x: &[u8; 16]) -> [u32; 8] {
        // SAFETY: SSE2 is part of x86_64; a 16-byte unaligned load of 16 bytes.
        unsafe {
            let q = _mm_loadu_si128(x.as_ptr().cast());
            [
                _mm_movemask_epi8(_mm_slli_epi16::<7>(q)) as u32,
                _mm_movemask_epi8(_mm_slli_epi16::<6>(q)) as u32,
                _mm_movemask_epi8(_mm_slli_epi16::<5>(q)) as u32,
                _mm_movemask_epi8(_mm_slli_epi16::<4>(q)) as u32,
                _mm_movemask_epi8(_mm_slli_epi16::<3>(q)) as u32,
                _mm_movemask_epi8(_mm_slli_epi16::<2>(q)) as u32,
                _mm_movemask_epi8(_mm_slli_epi16::<1>(q)) as u32,
                _mm_movemask_epi8(q) as u32,
            ]
        }
    }
}

pub(in crate::stats) mod scaled {
    use crate::stats::scaled::{Sums, View};
    use std::arch::x86_64::*;

    /// f16 bits to f32, eight at a time by F16C (the same conversion as `f16_to_f32`).
    #[target_feature(enable = "avx2,f16c")]
    pub(in crate::stats) unsafe fn f16_values(bits: &[u16], out: &mut [f32]) {
        let n = bits.len().min(out.len());
        let mut i = 0;
        while i + 8 <= n {
            let h = _mm_loadu_si128(bits.as_ptr().add(i).cast());
            _mm256_storeu_ps(out.as_mut_ptr().add(i), _mm256_cvtph_ps(h));
            i += 8;
        }
        for (o, &b) in out[i..n].iter_mut().zip(&bits[i..n]) {
            *o = crate::quant::scalar::f16_to_f32(b);
        }
    }

    /// [`crate::stats::scaled::portable_sums`] for blocks of 32 levels, a block in one register:
    /// sums by byte multiply-adds (|l| ≤ 127 keeps the pairs of squares in i16; a block holding
    /// -128 takes the portable loop), range by byte minima.
    #[target_feature(enable = "avx2")]
    pub(in crate::stats) unsafe fn sums(view: View<'_>, d: &[f32], out: &mut [Sums]) {
        let ones8 = _mm256_set1_epi8(1);
        let ones16 = _mm256_set1_epi16(1);
        let k80 = _mm256_set1_epi8(0x80u8 as i8);
        let k7f = _mm256_set1_epi8(0x7f);
        for (i, (s, &d)) in out.iter_mut().zip(d).take(view.blocks).enumerate() {
            let b = view.block(i);
            assert!(b.len() == 32);
            let q = _mm256_loadu_si256(b.as_ptr().cast());
            // Smallest and largest level: byte minima of q ^ 0x80 (order kept) and q ^ 0x7f
            // (order reversed), 8 candidates each side by side, then halved three times.
            let (a, z) = (_mm256_xor_si256(q, k80), _mm256_xor_si256(q, k7f));
            let a = _mm_min_epu8(_mm256_castsi256_si128(a), _mm256_extracti128_si256::<1>(a));
            let z = _mm_min_epu8(_mm256_castsi256_si128(z), _mm256_extracti128_si256::<1>(z));
            let m = _mm_min_epu8(_mm_unpacklo_epi64(a, z), _mm_unpackhi_epi64(a, z));
            let m = _mm_min_epu8(m, _mm_srli_epi64::<32>(m));
            let m = _mm_min_epu8(m, _mm_srli_epi64::<16>(m));
            let m = _mm_min_epu8(m, _mm_srli_epi64::<8>(m));
            let min = (_mm_extract_epi8::<0>(m) as u8 ^ 0x80) as i8;
            let max = (_mm_extract_epi8::<8>(m) as u8 ^ 0x7f) as i8;
            if min == i8::MIN {
                crate::stats::scaled::portable_sums(view.part(i, 1), &[d], std::slice::from_mut(s));
                continue;
            }
            let abs = _mm256_abs_epi8(q);
            let sq = _mm256_madd_epi16(_mm256_maddubs_epi16(abs, abs), ones16);
            let sm = _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, q), ones16);
            let h = _mm256_hadd_epi32(sq, sm);
            let h = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256::<1>(h));
            let h = _mm_hadd_epi32(h, h);
            let zeros = _mm256_movemask_epi8(_mm256_cmpeq_epi8(q, _mm256_setzero_si256()));
            *s = Sums {
                d,
                sum: _mm_extract_epi32::<1>(h),
                squares: _mm_cvtsi128_si32(h),
                zeros: (zeros as u32).count_ones(),
                min,
                max,
            };
        }
    }
}

pub(in crate::stats) mod affine {
    use crate::stats::planes::CODES;
    use std::arch::x86_64::*;

    /// The simd128 loop's steps in SSE2 (every x86_64): counts packed to i16, `pmaddwd` with the
    /// codes and their squares, the nonzero counts as a byte mask.
    #[inline(always)]
    pub(in crate::stats) fn code_sums(c: &[u32; CODES]) -> (i32, i32, u32) {
        // SAFETY: SSE2 is part of x86_64; 16 u32 are 4 unaligned 16-byte loads.
        unsafe {
            let p: *const __m128i = c.as_ptr().cast();
            let [c0, c1, c2, c3] = [0, 1, 2, 3].map(|k| _mm_loadu_si128(p.add(k)));
            let (lo, hi) = (_mm_packs_epi32(c0, c1), _mm_packs_epi32(c2, c3));
            let d1 = _mm_add_epi32(
                _mm_madd_epi16(lo, _mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7)),
                _mm_madd_epi16(hi, _mm_setr_epi16(8, 9, 10, 11, 12, 13, 14, 15)),
            );
            let d2 = _mm_add_epi32(
                _mm_madd_epi16(lo, _mm_setr_epi16(0, 1, 4, 9, 16, 25, 36, 49)),
                _mm_madd_epi16(hi, _mm_setr_epi16(64, 81, 100, 121, 144, 169, 196, 225)),
            );
            // [d1 lanes 0+2, 1+3, d2 lanes 0+2, 1+3].
            let t = _mm_add_epi32(_mm_unpacklo_epi64(d1, d2), _mm_unpackhi_epi64(d1, d2));
            let mut lanes = [0i32; 4];
            _mm_storeu_si128(lanes.as_mut_ptr().cast(), t);
            let zero = _mm_setzero_si128();
            let absent = _mm_packs_epi16(_mm_cmpeq_epi16(lo, zero), _mm_cmpeq_epi16(hi, zero));
            let present = !(_mm_movemask_epi8(absent) as u32) & 0xffff;
            (lanes[0] + lanes[1], lanes[2] + lanes[3], present)
        }
    }
}
