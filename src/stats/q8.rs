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

#[cfg(target_arch = "x86_64")]
use super::kernels::avx2;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
use super::kernels::simd128;
use super::kernels::{isa, Isa};
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
pub(in crate::stats) struct Sums {
    pub(in crate::stats) d: f32,
    pub(in crate::stats) sum: i32,
    pub(in crate::stats) squares: i32,
    pub(in crate::stats) zeros: u32,
    pub(in crate::stats) min: i8,
    pub(in crate::stats) max: i8,
}

/// The [`Sums`] of whole blocks (`out` at least as long as the blocks).
fn block_sums(bytes: &[u8], out: &mut [Sums]) {
    match isa() {
        // SAFETY: `isa` chose AVX2 only on a CPU with AVX2, F16C and POPCNT, all `sums` needs.
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => unsafe { avx2::q8::sums(bytes, out) },
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        Isa::Simd128 => simd128::q8::sums(bytes, out),
        Isa::Scalar => portable_sums(bytes, out),
    }
}

pub(in crate::stats) fn portable_sums(bytes: &[u8], out: &mut [Sums]) {
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
