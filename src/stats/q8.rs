//! Q8_0 pieces straight from their blocks (an f16 scale `d`, then 32 int8 codes `q`). Every
//! value `d·q` is exact in f32 (11 significant bits times 8), so:
//! - a block's moments come from integer sums of its codes (Σq, Σq², counts of zero, the
//!   smallest and largest code), with no per-value float work;
//! - a tensor has few distinct scales (a few thousand), so its values as a multiset fit a
//!   [`Table`] of counts per (scale, code): pass 1 fills it with one increment per value, and the
//!   histogram and percentiles then come from the table (each distinct value once, with its
//!   count) instead of a second pass over the data.
//!
//! Results equal the per-value path's: the table replays pass 2's own logic on exact values, and
//! the moments differ from per-value sums only by rounding (they are more accurate).

use super::moments::Moments;

use crate::quant::scalar::f16_to_f32;

/// Bytes per block, values per block.
pub(crate) const BLOCK_BYTES: usize = 34;
pub(crate) const BLOCK: usize = 32;

/// Most rows (distinct scales) a table holds: 4 MiB of narrow counts. Beyond it, the values are
/// counted per coarse bucket as on the per-value path (a tensor of that many distinct scales is
/// not one quantized from real weights).
const ROWS: usize = 8192;

/// A block's value `d·q`, as the dequantization kernels compute it.
#[inline(always)]
fn value(d: f32, q: u8) -> f32 {
    f32::from(q as i8) * d
}

/// Writes the values of whole blocks (the kernels' bits).
pub(crate) fn dequant(bytes: &[u8], out: &mut [f32]) {
    for (b, y) in bytes
        .chunks_exact(BLOCK_BYTES)
        .zip(out.chunks_exact_mut(BLOCK))
    {
        let d = f16_to_f32(u16::from_le_bytes([b[0], b[1]]));
        for (y, &q) in y.iter_mut().zip(&b[2..]) {
            *y = value(d, q);
        }
    }
}

/// Calls `step(lane, item)` for every item, item `i` in lane `i % LANES`: whole runs of `LANES`
/// first, so the lanes' accumulators can stay in registers, then the remainder.
#[inline(always)]
fn by_lanes<T>(items: &[T], mut step: impl FnMut(usize, &T)) {
    let mut runs = items.chunks_exact(LANES);
    for run in &mut runs {
        for (l, item) in run.iter().enumerate() {
            step(l, item);
        }
    }
    for (l, item) in runs.remainder().iter().enumerate() {
        step(l, item);
    }
}

/// One block's scale and integer sums of its codes.
#[derive(Clone, Copy, Default)]
struct Sums {
    d: f32,
    sum: i32,
    squares: i32,
    zeros: u32,
    min: i8,
    max: i8,
}

/// The [`Sums`] of whole blocks (`out` at least as long as the blocks).
fn block_sums(bytes: &[u8], out: &mut [Sums]) {
    #[cfg(target_arch = "x86_64")]
    {
        if x86::fast() {
            // SAFETY: the CPU has what `x86::sums` needs (checked by `fast`).
            return unsafe { x86::sums(bytes, out) };
        }
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        return wasm::sums(bytes, out);
    }
    #[allow(unreachable_code)]
    portable_sums(bytes, out)
}

fn portable_sums(bytes: &[u8], out: &mut [Sums]) {
    for (b, s) in bytes.chunks_exact(BLOCK_BYTES).zip(out.iter_mut()) {
        let (mut sum, mut squares, mut zeros) = (0i32, 0i32, 0u32);
        let (mut min, mut max) = (i8::MAX, i8::MIN);
        for &x in &b[2..] {
            let x = x as i8;
            sum += i32::from(x);
            squares += i32::from(x) * i32::from(x);
            zeros += u32::from(x == 0);
            min = min.min(x);
            max = max.max(x);
        }
        *s = Sums {
            d: f16_to_f32(u16::from_le_bytes([b[0], b[1]])),
            sum,
            squares,
            zeros,
            min,
            max,
        };
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Sums, BLOCK_BYTES};
    use std::arch::x86_64::*;

    pub(super) fn fast() -> bool {
        // The process's one switch; it implies AVX2, F16C and POPCNT.
        crate::quant::avx2_chosen()
    }

    /// [`super::portable_sums`] with a block's 32 codes in one register: sums by byte
    /// multiply-adds (|q| ≤ 127 keeps the pairs of squares in i16; a block holding -128 takes
    /// the portable loop), range by byte minima.
    #[target_feature(enable = "avx2,f16c,popcnt")]
    pub(super) unsafe fn sums(bytes: &[u8], out: &mut [Sums]) {
        let ones8 = _mm256_set1_epi8(1);
        let ones16 = _mm256_set1_epi16(1);
        let k80 = _mm256_set1_epi8(0x80u8 as i8);
        let k7f = _mm256_set1_epi8(0x7f);
        for (b, s) in bytes.chunks_exact(BLOCK_BYTES).zip(out.iter_mut()) {
            let q = _mm256_loadu_si256(b.as_ptr().add(2).cast());
            // Smallest and largest code: byte minima of q ^ 0x80 (order kept) and q ^ 0x7f
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
                super::portable_sums(b, std::slice::from_mut(s));
                continue;
            }
            let abs = _mm256_abs_epi8(q);
            let sq = _mm256_madd_epi16(_mm256_maddubs_epi16(abs, abs), ones16);
            let sm = _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, q), ones16);
            let h = _mm256_hadd_epi32(sq, sm);
            let h = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256::<1>(h));
            let h = _mm_hadd_epi32(h, h);
            let zeros = _mm256_movemask_epi8(_mm256_cmpeq_epi8(q, _mm256_setzero_si256()));
            let d = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(i32::from(
                u16::from_le_bytes([b[0], b[1]]),
            ))));
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

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod wasm {
    use super::{Sums, BLOCK_BYTES};
    use crate::quant::scalar::f16_to_f32;
    use std::arch::wasm32::*;

    /// Sum of the four lanes.
    #[inline(always)]
    fn total(v: v128) -> i32 {
        let v = i32x4_add(v, i32x4_shuffle::<2, 3, 0, 1>(v, v));
        i32x4_extract_lane::<0>(i32x4_add(v, i32x4_shuffle::<1, 0, 3, 2>(v, v)))
    }

    /// [`super::portable_sums`] with a block's codes in two registers (squares of i8 fit i16).
    pub(super) fn sums(bytes: &[u8], out: &mut [Sums]) {
        let zero = i8x16_splat(0);
        for (b, s) in bytes.chunks_exact(BLOCK_BYTES).zip(out.iter_mut()) {
            // SAFETY: 2 + 32 bytes in the block; v128_load takes unaligned pointers.
            let (lo, hi) = unsafe {
                (
                    v128_load(b.as_ptr().add(2).cast()),
                    v128_load(b.as_ptr().add(18).cast()),
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
                d: f16_to_f32(u16::from_le_bytes([b[0], b[1]])),
                sum: total(sum),
                squares: total(squares),
                zeros,
                min,
                max,
            };
        }
    }
}

/// Blocks per call of [`moments`] (a piece's worth).
const RUN: usize = 128;

/// The moments of whole blocks from their codes' sums, or None where the per-value path must
/// give them: a scale not finite (NaN and infinities to count), or a block whose smallest or
/// largest value is zero (which zero, -0 or +0, the per-value loops keep depends on their order).
///
/// Per block, the sum `d·Σq` and `m2 = d²·(32·Σq² − (Σq)²)/32` are exact in f64 (integers
/// below 2^25 times `d` or `d²`); blocks combine around the run's mean (Chan's formula with a
/// common mean), so only the deviations of block means round.
pub(crate) fn moments(bytes: &[u8]) -> Option<Moments> {
    let blocks = bytes.len() / BLOCK_BYTES;
    if blocks > RUN {
        let mut m = Moments::default();
        for run in bytes.chunks(RUN * BLOCK_BYTES) {
            m.merge(&moments(run)?);
        }
        return Some(m);
    }
    let mut sums = [Sums::default(); RUN];
    block_sums(bytes, &mut sums);
    // Four lanes (block `i` in lane `i % 4`, combined in lane order): independent chains.
    let sums = &sums[..blocks];
    let (mut lo, mut hi) = ([f32::INFINITY; LANES], [f32::NEG_INFINITY; LANES]);
    let (mut total, mut zeros, mut plain) = ([0f64; LANES], 0u64, true);
    let step = |l: usize, s: &Sums| {
        let d = s.d;
        let (a, z) = (value(d, s.min as u8), value(d, s.max as u8));
        let (small, large) = if d < 0.0 { (z, a) } else { (a, z) };
        plain &= d.is_finite() & (small != 0.0) & (large != 0.0);
        lo[l] = lo[l].min(small);
        hi[l] = hi[l].max(large);
        zeros += u64::from(s.zeros);
        total[l] += f64::from(d) * f64::from(s.sum);
    };
    by_lanes(sums, step);
    if !plain {
        return None;
    }
    let n = (blocks * BLOCK) as u64;
    let mut m = Moments {
        count: n,
        finite: n,
        zeros,
        ..Moments::default()
    };
    if blocks == 0 {
        return Some(m);
    }
    m.min = lo.into_iter().fold(f32::INFINITY, f32::min);
    m.max = hi.into_iter().fold(f32::NEG_INFINITY, f32::max);
    m.mean = total.iter().sum::<f64>() / n as f64;
    let mut m2 = [0f64; LANES];
    let mean = m.mean;
    let step = |l: usize, s: &Sums| {
        let d = f64::from(s.d);
        let spread = i64::from(BLOCK as i32 * s.squares) - i64::from(s.sum) * i64::from(s.sum);
        let dev = d * f64::from(s.sum) / BLOCK as f64 - mean;
        m2[l] += d * d * spread as f64 / BLOCK as f64 + BLOCK as f64 * dev * dev;
    };
    by_lanes(sums, step);
    m.m2 = m2.iter().sum();
    Some(m)
}

/// Lanes of [`moments`]' sums.
const LANES: usize = 4;

mod table;
pub(crate) use table::Table;

#[cfg(all(test, not(all(target_arch = "wasm32", target_os = "unknown"))))]
mod tests;
