//! Blocks whose every value is `d · level`: one scale `d` per block (f16, or an E8M0 power of
//! two) and a small integer level per value (Q8_0's int8 codes, Q5_0's `q − 16`, MXFP4's code
//! book, the ternary types' `t − 1`, Q1_0's ±1, Q2_0's `q − 1`): the [`Form::Scaled`] rows of
//! `layout.rs`'s table. The levels come from the type's own dequantization kernel run with every
//! scale set to one (Q8_0's are its bytes). Every value
//! `d · level` is one f32 product, the kernels' bits, so:
//! - a block's moments come from integer sums of its levels (Σl, Σl², counts of zero, the
//!   smallest and largest level), with no per-value float work;
//! - a tensor has few distinct scales (a few thousand), so its values as a multiset fit a
//!   [`Table`] of counts per (scale, level): pass 1 fills it with one increment per value, and
//!   the histogram and percentiles then come from the table (each distinct value once, with
//!   its count) instead of a second pass over the data.
//!
//! Results equal the per-value path's: the table replays pass 2's own logic on exact values, and
//! the moments differ from per-value sums only by rounding (they are more accurate).

#[cfg(target_arch = "x86_64")]
use super::kernels::avx2;
use super::kernels::isa;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
use super::kernels::simd128;
use super::moments::Moments;

pub(crate) use super::layout::{value, Layout, Scale};
use crate::error::Result;
use crate::quant::scalar::f16_to_f32;
use crate::quant::scalar::fp4::e8m0_to_f32_half;
use crate::quant::Kernel;

/// Most rows (distinct scales) a table holds: 8 MiB of narrow counts. Beyond it, the values are
/// counted per coarse bucket as on the per-value path (a tensor of that many distinct scales is
/// not one quantized from real weights).
const ROWS: usize = 1 << 14;

/// One piece of whole blocks, decoded: each block's scale bits and value, and its values'
/// levels (in `levels`, or, where a block's bytes are its levels, in the blocks themselves).
#[derive(Debug, Default)]
pub(crate) struct Levels {
    pub(crate) scales: Vec<u16>,
    /// The scales' values.
    pub(crate) d: Vec<f32>,
    /// Levels as bytes (`l as u8`), block after block; unused where the blocks hold them.
    levels: Vec<u8>,
    ones: Vec<u8>,
    values: Vec<f32>,
}

/// Whole blocks' levels where they lie: block `i`'s `block` levels (bytes read as i8) start at
/// byte `at + i · stride` of `data`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct View<'a> {
    data: &'a [u8],
    stride: usize,
    at: usize,
    pub(crate) block: usize,
    pub(crate) blocks: usize,
}

impl<'a> View<'a> {
    /// Block `i`'s levels (`i < blocks`).
    #[inline(always)]
    pub(crate) fn block(&self, i: usize) -> &'a [u8] {
        &self.data[self.at + i * self.stride..][..self.block]
    }

    /// Blocks `first..first + n`.
    pub(crate) fn part(&self, first: usize, n: usize) -> View<'a> {
        View {
            data: &self.data[first * self.stride..],
            blocks: n.min(self.blocks.saturating_sub(first)),
            ..*self
        }
    }
}

impl Levels {
    /// Decodes whole blocks `bytes` of `layout` (the levels from `kernel`, the scales set to one).
    pub(crate) fn decode(&mut self, layout: &Layout, kernel: Kernel, bytes: &[u8]) -> Result<()> {
        let blocks = bytes.len() / layout.block_bytes;
        let n = blocks * layout.block;
        self.scales.resize(blocks, 0);
        for (s, b) in self
            .scales
            .iter_mut()
            .zip(bytes.chunks_exact(layout.block_bytes))
        {
            *s = layout.scale_bits(b);
        }
        self.d.resize(blocks, 0.0);
        match layout.scale {
            Scale::F16 => f16_values(&self.scales, &mut self.d),
            Scale::E8m0Half => {
                for (d, &bits) in self.d.iter_mut().zip(&self.scales) {
                    *d = e8m0_to_f32_half(bits as u8);
                }
            }
        }
        if layout.levels_at().is_some() {
            return Ok(());
        }
        self.levels.resize(n, 0);
        self.ones.clear();
        self.ones
            .extend_from_slice(&bytes[..blocks * layout.block_bytes]);
        let one = layout.scale.one().to_le_bytes();
        for b in self.ones.chunks_exact_mut(layout.block_bytes) {
            match layout.scale {
                Scale::F16 => b[layout.scale_at..layout.scale_at + 2].copy_from_slice(&one),
                Scale::E8m0Half => b[layout.scale_at] = one[0],
            }
        }
        self.values.resize(n, 0.0);
        crate::quant::dequantize_with(kernel, layout.ty, &self.ones, &mut self.values)?;
        to_levels(&self.values, &mut self.levels);
        Ok(())
    }

    /// The levels of the blocks decoded last (`bytes` those blocks).
    pub(crate) fn view<'a>(&'a self, layout: &Layout, bytes: &'a [u8]) -> View<'a> {
        let blocks = self.d.len();
        match layout.levels_at() {
            Some(at) => View {
                data: &bytes[..blocks * layout.block_bytes],
                stride: layout.block_bytes,
                at,
                block: layout.block,
                blocks,
            },
            None => View {
                data: &self.levels[..blocks * layout.block],
                stride: layout.block,
                at: 0,
                block: layout.block,
                blocks,
            },
        }
    }
}

/// f16 bits to f32 values, many at once.
fn f16_values(bits: &[u16], out: &mut [f32]) {
    match isa() {
        // SAFETY: `isa` chose AVX2 only on a CPU with AVX2 and F16C, all `f16_values` needs.
        #[cfg(target_arch = "x86_64")]
        super::kernels::Isa::Avx2 => unsafe { avx2::scaled::f16_values(bits, out) },
        _ => {
            for (o, &b) in out.iter_mut().zip(bits) {
                *o = f16_to_f32(b);
            }
        }
    }
}

super::kernels::dispatch! {
    /// Small integers (|v| < 128) in f32 to i8, exactly: `v + 1.5·2^23` holds `v` in its low
    /// mantissa bits (a form the compiler keeps in vectors, unlike a saturating `as`).
    fn to_levels(values: &[f32], levels: &mut [u8]) -> () => to_levels_body
}

#[inline(always)]
fn to_levels_body(values: &[f32], levels: &mut [u8]) {
    for (l, &v) in levels.iter_mut().zip(values) {
        *l = (v + 12_582_912.0).to_bits() as u8;
    }
}

/// One block's scale and integer sums of its levels.
#[derive(Clone, Copy, Default)]
pub(in crate::stats) struct Sums {
    pub(in crate::stats) d: f32,
    pub(in crate::stats) sum: i32,
    pub(in crate::stats) squares: i32,
    pub(in crate::stats) zeros: u32,
    pub(in crate::stats) min: i8,
    pub(in crate::stats) max: i8,
}

/// The [`Sums`] of the blocks of `view` whose scales are `d` (`out` at least as long as the
/// blocks).
fn block_sums(view: View<'_>, d: &[f32], out: &mut [Sums]) {
    match isa() {
        // SAFETY: `isa` chose AVX2 only on a CPU with AVX2, all `sums` needs.
        #[cfg(target_arch = "x86_64")]
        super::kernels::Isa::Avx2 if view.block == 32 => unsafe {
            avx2::scaled::sums(view, d, out)
        },
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        super::kernels::Isa::Simd128 if view.block == 32 => simd128::scaled::sums(view, d, out),
        _ => sums_by_lanes(view, d, out),
    }
}

super::kernels::dispatch! {
    /// The portable sums (blocks longer than 32 levels: the compiler's vectors).
    fn sums_by_lanes(view: View<'_>, d: &[f32], out: &mut [Sums]) -> () => portable_sums
}

#[inline(always)]
pub(in crate::stats) fn portable_sums(view: View<'_>, d: &[f32], out: &mut [Sums]) {
    for (i, (s, &d)) in out.iter_mut().zip(d).take(view.blocks).enumerate() {
        let (mut sum, mut squares, mut zeros) = (0i32, 0i32, 0u32);
        let (mut min, mut max) = (i8::MAX, i8::MIN);
        for &x in view.block(i) {
            let x = x as i8;
            sum += i32::from(x);
            squares += i32::from(x) * i32::from(x);
            zeros += u32::from(x == 0);
            min = min.min(x);
            max = max.max(x);
        }
        *s = Sums {
            d,
            sum,
            squares,
            zeros,
            min,
            max,
        };
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

/// Blocks of 32 values per call of [`moments`] (a piece's worth).
const RUN: usize = 128;

/// The moments of a decoded piece from its levels' sums, or None where the per-value path must
/// give them: a scale not finite (NaN and infinities to count), a value not finite, or a block
/// whose smallest or largest value is zero (which zero, -0 or +0, the per-value loops keep
/// depends on their order).
///
/// Per block of `B` values, the sum `d·Σl` and `m2 = d²·(B·Σl² − (Σl)²)/B` are exact in f64
/// (integers below 2^25 times `d` or `d²`); blocks combine around the run's mean (Chan's formula
/// with a common mean), so only the deviations of block means round.
pub(crate) fn moments(piece: &Levels, view: View<'_>) -> Option<Moments> {
    let blocks = piece.d.len().min(view.blocks);
    let per_run = (RUN * 32 / view.block).max(1);
    if blocks > per_run {
        let mut m = Moments::default();
        for (r, d) in piece.d[..blocks].chunks(per_run).enumerate() {
            m.merge(&run_moments(d, view.part(r * per_run, d.len()))?);
        }
        return Some(m);
    }
    run_moments(&piece.d[..blocks], view)
}

fn run_moments(d: &[f32], view: View<'_>) -> Option<Moments> {
    let (block, blocks) = (view.block, d.len().min(view.blocks));
    let mut sums = [Sums::default(); RUN];
    let sums = &mut sums[..blocks];
    block_sums(view, d, sums);
    // (A scale not finite makes a block's smallest or largest value NaN or infinite.)
    // Four lanes (block `i` in lane `i % 4`, combined in lane order): independent chains.
    let sums = &*sums;
    let (mut lo, mut hi) = ([f32::INFINITY; LANES], [f32::NEG_INFINITY; LANES]);
    let (mut total, mut zeros, mut plain) = ([0f64; LANES], 0u64, true);
    let step = |l: usize, s: &Sums| {
        let d = s.d;
        let (a, z) = (value(d, s.min), value(d, s.max));
        let (small, large) = if d < 0.0 { (z, a) } else { (a, z) };
        plain &= small.is_finite() & large.is_finite() & (small != 0.0) & (large != 0.0);
        lo[l] = lo[l].min(small);
        hi[l] = hi[l].max(large);
        zeros += u64::from(s.zeros);
        total[l] += f64::from(d) * f64::from(s.sum);
    };
    by_lanes(sums, step);
    if !plain {
        return None;
    }
    let n = (blocks * block) as u64;
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
    // Blocks are powers of two: shifts and a product by the exact inverse, not divisions.
    let (b, inverse, shift) = (block as f64, 1.0 / block as f64, block.trailing_zeros());
    let step = |l: usize, s: &Sums| {
        let d = f64::from(s.d);
        let spread = (i64::from(s.squares) << shift) - i64::from(s.sum) * i64::from(s.sum);
        let dev = d * f64::from(s.sum) * inverse - mean;
        m2[l] += d * d * spread as f64 * inverse + b * dev * dev;
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
