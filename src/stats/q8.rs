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

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::histogram::Histogram;
use super::moments::Moments;
use super::percentiles::{key, Target, BUCKETS};
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
        is_x86_feature_detected!("avx2")
            && is_x86_feature_detected!("f16c")
            && is_x86_feature_detected!("popcnt")
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

/// Blocks ahead whose row [`Table::add`] fetches.
const AHEAD: usize = 8;

/// Asks for a row's cache lines (a hint; nothing where there is no such instruction).
#[inline(always)]
fn prefetch(row: &[u16; 256]) {
    #[cfg(target_arch = "x86_64")]
    for line in row.chunks_exact(32) {
        // SAFETY: a prefetch reads nothing and cannot fault; the address is in `row`.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                line.as_ptr().cast(),
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = row;
}

/// Counts of a tensor's values per (scale, code): row `r` holds the blocks whose scale has the
/// bits `scales[r]`, column `q` the code `q` (as a byte). Narrow u16 counts take the increments
/// (a row stays small in cache); a row's counts move to a wide u64 copy before they could
/// overflow.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Table {
    /// Values seen, blocks of non-finite scales included (they have no row: no finite values).
    values: u64,
    /// Row number + 1 per scale bits (0: none yet); empty until the first block.
    index: Vec<u16>,
    scales: Vec<u16>,
    narrow: Vec<[u16; 256]>,
    since: Vec<u32>,
    wide: Vec<Option<Box<[u64; 256]>>>,
}

impl Table {
    /// Values counted (every value fed, finite or not).
    pub(crate) fn values(&self) -> u64 {
        self.values
    }

    /// The row of scale bits `d`, made if new; None when the table is full.
    #[inline(always)]
    fn row(&mut self, d: u16) -> Option<usize> {
        if self.index.is_empty() {
            self.index = vec![0; 1 << 16];
        }
        let r = self.index[d as usize];
        if r != 0 {
            return Some(r as usize - 1);
        }
        if self.scales.len() >= ROWS {
            return None;
        }
        self.scales.push(d);
        self.narrow.push([0; 256]);
        self.since.push(0);
        self.wide.push(None);
        self.index[d as usize] = self.scales.len() as u16;
        Some(self.scales.len() - 1)
    }

    /// Moves row `r`'s narrow counts to its wide copy.
    fn flush(&mut self, r: usize) {
        let wide = self.wide[r].get_or_insert_with(|| Box::new([0; 256]));
        for (w, n) in wide.iter_mut().zip(self.narrow[r].iter_mut()) {
            *w += u64::from(*n);
            *n = 0;
        }
        self.since[r] = 0;
    }

    /// Counts the values of whole blocks; returns how many blocks it took (fewer than given
    /// when a new scale found the table full).
    pub(crate) fn add(&mut self, bytes: &[u8]) -> usize {
        if self.index.is_empty() {
            self.index = vec![0; 1 << 16];
        }
        for (i, b) in bytes.chunks_exact(BLOCK_BYTES).enumerate() {
            // The row of a block a few ahead into cache: a table of a few thousand rows is
            // bigger than L2, and a block's first increment would wait for its row.
            if let Some(ahead) = bytes.get((i + AHEAD) * BLOCK_BYTES..(i + AHEAD) * BLOCK_BYTES + 2)
            {
                let r = self.index[u16::from_le_bytes([ahead[0], ahead[1]]) as usize];
                if r != 0 {
                    prefetch(&self.narrow[r as usize - 1]);
                }
            }
            let d = u16::from_le_bytes([b[0], b[1]]);
            if d & 0x7c00 == 0x7c00 {
                // NaN or an infinite scale: no finite value.
                self.values += BLOCK as u64;
                continue;
            }
            let Some(r) = self.row(d) else {
                return i;
            };
            if self.since[r] > u32::from(u16::MAX) - BLOCK as u32 {
                self.flush(r);
            }
            self.since[r] += BLOCK as u32;
            let row = &mut self.narrow[r];
            for &q in &b[2..] {
                row[q as usize] += 1;
            }
            self.values += BLOCK as u64;
        }
        bytes.len() / BLOCK_BYTES
    }

    /// Adds counts per code to row `r`: into the narrow counts while the row's total fits
    /// them (no cell can pass it; most rows of a part are small, and a wide copy for every
    /// row is megabytes to fault in), else into the wide copy.
    fn add_counts(&mut self, r: usize, counts: &[u64; 256]) {
        let total = counts.iter().fold(0u64, |a, &c| a.saturating_add(c));
        if u64::from(self.since[r]) + total <= u64::from(u16::MAX) {
            for (n, &c) in self.narrow[r].iter_mut().zip(counts) {
                *n += c as u16;
            }
            self.since[r] += total as u32;
            return;
        }
        let wide = self.wide[r].get_or_insert_with(|| Box::new([0; 256]));
        for (w, &c) in wide.iter_mut().zip(counts) {
            *w = w.saturating_add(c);
        }
    }

    /// Each row's scale and its total count per code.
    fn rows(&self) -> impl Iterator<Item = (u16, [u64; 256])> + '_ {
        self.scales.iter().enumerate().map(|(r, &d)| {
            let mut c = self.wide[r].as_deref().copied().unwrap_or([0; 256]);
            for (c, &n) in c.iter_mut().zip(&self.narrow[r]) {
                *c = c.saturating_add(u64::from(n));
            }
            (d, c)
        })
    }

    /// Adds another table's counts; false (self unchanged in what it counts) when the rows
    /// would not fit.
    pub(crate) fn merge(&mut self, other: &Table) -> bool {
        let new = other
            .scales
            .iter()
            .filter(|&&d| self.index.get(d as usize).map_or(true, |&r| r == 0))
            .count();
        if self.scales.len() + new > ROWS {
            return false;
        }
        for (d, counts) in other.rows() {
            let r = self.row(d).expect("room checked above");
            self.add_counts(r, &counts);
        }
        self.values = self.values.saturating_add(other.values);
        true
    }

    /// Each distinct finite value with its count, row by row.
    fn each(&self, mut f: impl FnMut(f32, u64)) {
        for (d, counts) in self.rows() {
            let d = f16_to_f32(d);
            for (q, &c) in counts.iter().enumerate() {
                if c != 0 {
                    f(value(d, q as u8), c);
                }
            }
        }
    }

    /// Adds the values to the coarse bucket counts (as `count_coarse` would, value by value).
    pub(crate) fn add_to_coarse(&self, coarse: &mut [u64]) {
        let Some(coarse) = coarse.get_mut(..BUCKETS) else {
            return;
        };
        self.each(|v, c| {
            let b = &mut coarse[(key(v) >> 16) as usize];
            *b = b.saturating_add(c);
        });
    }

    /// Pass 2 on the table: what the per-value pass 2 does with each value of a flagged bucket
    /// (`table`: 1 an edge cuts it, 2 a target), once per distinct value with its count.
    pub(crate) fn replay(
        &self,
        table: &[u8],
        mut histogram: Option<&mut Histogram>,
        targets: &mut [Target],
    ) {
        let Some(table) = table.get(..BUCKETS) else {
            return;
        };
        self.each(|v, c| {
            let k = key(v);
            let flag = table[(k >> 16) as usize];
            if flag & 1 != 0 {
                if let Some(h) = histogram.as_deref_mut() {
                    if let Some(i) = h.bin_of(f64::from(v)) {
                        h.add_count(i, c);
                    }
                }
            }
            if flag & 2 != 0 {
                for t in targets.iter_mut() {
                    if t.bucket == k >> 16 {
                        t.low[(k & 0xffff) as usize] += c;
                    }
                }
            }
        });
    }

    /// Compact bytes (a job's state crosses to workers): the value count, then per row its
    /// scale and 256 counts, as LEB128 numbers.
    fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put(&mut out, self.values);
        put(&mut out, self.scales.len() as u64);
        for (d, counts) in self.rows() {
            put(&mut out, u64::from(d));
            for c in counts {
                put(&mut out, c);
            }
        }
        out
    }

    fn from_bytes(bytes: &[u8]) -> Option<Table> {
        let mut at = 0;
        let mut table = Table {
            values: get(bytes, &mut at)?,
            ..Table::default()
        };
        let rows = get(bytes, &mut at)?;
        if rows > ROWS as u64 {
            return None;
        }
        for _ in 0..rows {
            let d = u16::try_from(get(bytes, &mut at)?).ok()?;
            if table.index.get(d as usize).is_some_and(|&r| r != 0) {
                return None;
            }
            let r = table.row(d)?;
            let mut counts = [0u64; 256];
            for c in counts.iter_mut() {
                *c = get(bytes, &mut at)?;
            }
            table.add_counts(r, &counts);
        }
        (at == bytes.len()).then_some(table)
    }
}

fn put(out: &mut Vec<u8>, mut x: u64) {
    while x >= 0x80 {
        out.push(x as u8 | 0x80);
        x >>= 7;
    }
    out.push(x as u8);
}

fn get(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut x = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*at)?;
        *at += 1;
        x |= u64::from(b & 0x7f).checked_shl(shift)?;
        if b & 0x80 == 0 {
            return Some(x);
        }
    }
    None
}

impl Serialize for Table {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.to_bytes())
    }
}

impl<'de> Deserialize<'de> for Table {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Table, D::Error> {
        struct Bytes;
        impl<'de> Visitor<'de> for Bytes {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a Q8_0 count table as bytes")
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
                Ok(v.to_vec())
            }
            fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
                Ok(v)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
                let mut v = Vec::new();
                while let Some(b) = seq.next_element::<u8>()? {
                    v.push(b);
                }
                Ok(v)
            }
        }
        let bytes = d.deserialize_byte_buf(Bytes)?;
        Table::from_bytes(&bytes).ok_or_else(|| de::Error::custom("a malformed Q8_0 count table"))
    }
}

#[cfg(all(test, not(all(target_arch = "wasm32", target_os = "unknown"))))]
mod tests {
    use super::*;
    use crate::error::Result;
    use crate::stats::{run_native, ReadRows, StatsJob, StatsReport, StatsRequest};
    use std::ops::Range;

    /// How rows reach the job: from blocks, value by value (the reference), or alternating.
    #[derive(Clone, Copy, PartialEq, Debug)]
    enum Feed {
        Blocks,
        Values,
        Mixed,
    }

    struct Rows<'a> {
        bytes: &'a [u8],
        row: u64,
        feed: Feed,
    }

    impl ReadRows for Rows<'_> {
        fn add_to(&mut self, job: &mut StatsJob, rows: Range<u64>) -> Result<()> {
            let row_bytes = self.row as usize / BLOCK * BLOCK_BYTES;
            let bytes = &self.bytes[rows.start as usize * row_bytes..rows.end as usize * row_bytes];
            let n = rows.end - rows.start;
            let blocks =
                self.feed == Feed::Blocks || (self.feed == Feed::Mixed && rows.start % 2 == 0);
            if blocks {
                return job.add_q8_0(rows.start, n, bytes);
            }
            job.add_with(rows.start, n, &mut |r, out| {
                let b = &bytes[r.start / BLOCK * BLOCK_BYTES..r.end / BLOCK * BLOCK_BYTES];
                crate::quant::dequantize_with(crate::Kernel::Scalar, crate::GgmlType::Q8_0, b, out)
            })
        }
    }

    fn stats(
        bytes: &[u8],
        row: u64,
        rows: Range<u64>,
        feed: Feed,
        threads: usize,
        chunk: u64,
    ) -> StatsReport {
        let request = StatsRequest {
            bins: 41,
            percentiles: true,
        };
        let mut job = StatsJob::new(rows, row, request);
        run_native(&mut job, threads, chunk, || Ok(Rows { bytes, row, feed })).unwrap();
        job.report()
    }

    /// `blocks` Q8_0 blocks from a splitmix64 stream: scales of either sign (`scales` distinct
    /// at most), codes over the whole byte range or near zero, and with `odd` a few blocks
    /// with an infinite, NaN or signed zero scale.
    fn blocks(blocks: usize, scales: u64, odd: bool) -> Vec<u8> {
        let mut x = 0x0123_4567_89ab_cdefu64;
        let mut next = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let mut out = Vec::with_capacity(blocks * BLOCK_BYTES);
        for b in 0..blocks {
            let d = half::f16::from_f32(
                ((next() % scales) as f32 + 1.0) * 1e-5 * if next() % 5 == 0 { -1.0 } else { 1.0 },
            );
            let d = match (odd, b % 61) {
                (true, 7) => half::f16::INFINITY,
                (true, 8) => half::f16::NEG_INFINITY,
                (true, 11) => half::f16::NAN,
                (true, 13) => half::f16::NEG_ZERO,
                (true, 14) => half::f16::ZERO,
                _ => d,
            };
            out.extend_from_slice(&d.to_bits().to_le_bytes());
            let narrow = b % 3 == 0;
            for _ in 0..BLOCK {
                let q = next() as u8;
                out.push(if narrow { (q as i8 / 16) as u8 } else { q });
            }
            if b % 17 == 0 {
                // Codes of one sign only (ranges that touch zero), and -128.
                let last = out.len();
                for q in &mut out[last - BLOCK..] {
                    *q &= 0x7f;
                }
                out[last - 1] = if b % 34 == 0 { 0x80 } else { 0 };
            }
        }
        out
    }

    fn close(a: f64, b: f64, scale: f64) -> bool {
        (a - b).abs() <= 1e-12 * scale
    }

    fn same(got: &StatsReport, want: &StatsReport) {
        let (a, b) = (got.moments, want.moments);
        assert_eq!(
            (a.count, a.nan, a.pos_inf, a.neg_inf, a.zeros, a.finite),
            (b.count, b.nan, b.pos_inf, b.neg_inf, b.zeros, b.finite)
        );
        assert_eq!(
            (a.min.to_bits(), a.max.to_bits()),
            (b.min.to_bits(), b.max.to_bits()),
            "{a:?} {b:?}"
        );
        if b.finite > 0 {
            let scale = b.mean.abs().max(want.std.unwrap());
            assert!(close(a.mean, b.mean, scale), "{a:?} {b:?}");
            assert!(
                close(got.std.unwrap(), want.std.unwrap(), scale),
                "{a:?} {b:?}"
            );
        }
        assert_eq!(got.histogram, want.histogram);
        assert_eq!(got.percentiles, want.percentiles);
    }

    #[test]
    fn blocks_give_the_per_value_results() {
        // Row lengths: a piece's worth and more, and one not dividing a piece.
        // One scale magnitude: rows of the table pass u16 counts (flushes, wide merges).
        for (row, n_rows, scales, odd) in [
            (256, 1200, 1, false),
            (4096, 40, 3000, true),
            (96, 700, 200, false),
            (2080, 31, 9000, true),
        ] {
            let bytes = blocks(row as usize * n_rows / BLOCK, scales, odd);
            let rows = 0..n_rows as u64;
            let want = stats(&bytes, row, rows.clone(), Feed::Values, 1, 1 << 20);
            let got = stats(&bytes, row, rows.clone(), Feed::Blocks, 1, 1 << 20);
            same(&got, &want);
            if odd {
                let m = got.moments;
                assert!(m.nan > 0 && m.pos_inf > 0 && m.neg_inf > 0 && m.zeros > 0);
            }
            same(
                &stats(&bytes, row, rows.clone(), Feed::Mixed, 3, 5000),
                &want,
            );
            // The same bits for any thread count and chunk size, and a range off the grid.
            for (threads, chunk) in [(2, 1 << 20), (3, 70_000), (5, 1)] {
                assert_eq!(
                    stats(&bytes, row, rows.clone(), Feed::Blocks, threads, chunk),
                    got
                );
            }
            let end = n_rows as u64 - 1;
            let part = stats(&bytes, row, 3..end, Feed::Blocks, 1, 1 << 20);
            assert_eq!(stats(&bytes, row, 3..end, Feed::Blocks, 4, 5000), part);
            same(&part, &stats(&bytes, row, 3..end, Feed::Values, 2, 5000));
        }
    }

    #[test]
    fn zero_scales_and_zero_ranges() {
        // Every scale zero (all values ±0), and codes of one sign (ranges ending at zero).
        let mut bytes = blocks(512, 100, false);
        for (i, b) in bytes.chunks_exact_mut(BLOCK_BYTES).enumerate() {
            let d = if i % 3 == 0 {
                half::f16::NEG_ZERO
            } else {
                half::f16::ZERO
            };
            b[..2].copy_from_slice(&d.to_bits().to_le_bytes());
        }
        let want = stats(&bytes, 256, 0..64, Feed::Values, 1, 1 << 20);
        same(&stats(&bytes, 256, 0..64, Feed::Blocks, 2, 1000), &want);
        let mut bytes = blocks(512, 100, false);
        for b in bytes.chunks_exact_mut(BLOCK_BYTES) {
            b[..2].copy_from_slice(&half::f16::from_f32(0.01).to_bits().to_le_bytes());
            for q in &mut b[2..] {
                *q &= 0x7f;
            }
        }
        let want = stats(&bytes, 256, 0..64, Feed::Values, 1, 1 << 20);
        assert_eq!(want.moments.min, 0.0);
        same(&stats(&bytes, 256, 0..64, Feed::Blocks, 2, 1000), &want);
    }

    #[test]
    fn a_full_table_spills_into_buckets() {
        // More distinct scales than a table holds: the parts spill, the results stay.
        let mut bytes = blocks(3 * ROWS, 40_000, false);
        for (i, b) in bytes.chunks_exact_mut(BLOCK_BYTES).enumerate() {
            // Every scale its own (finite, either sign).
            let d = (0x1000 + i as u16) | if i % 3 == 0 { 0x8000 } else { 0 };
            b[..2].copy_from_slice(&d.to_le_bytes());
        }
        assert!(Table::default().add(&bytes) < 3 * ROWS);
        let want = stats(&bytes, 64, 0..3 * ROWS as u64 / 2, Feed::Values, 1, 1 << 20);
        for threads in [1, 2, 7] {
            same(
                &stats(
                    &bytes,
                    64,
                    0..3 * ROWS as u64 / 2,
                    Feed::Blocks,
                    threads,
                    1 << 14,
                ),
                &want,
            );
        }
    }

    #[test]
    fn a_table_crosses_as_bytes() {
        let bytes = blocks(2000, 500, true);
        let mut t = Table::default();
        assert_eq!(t.add(&bytes), 2000);
        let back = Table::from_bytes(&t.to_bytes()).unwrap();
        assert_eq!(back.values(), t.values());
        assert_eq!(
            back.rows().collect::<Vec<_>>(),
            t.rows().collect::<Vec<_>>()
        );
        // Through serde (a job's state as JSON: the bytes as numbers).
        let json = serde_json::to_string(&t).unwrap();
        let again: Table = serde_json::from_str(&json).unwrap();
        assert_eq!(
            again.rows().collect::<Vec<_>>(),
            t.rows().collect::<Vec<_>>()
        );
        // Malformed bytes are an error, never a panic.
        let good = t.to_bytes();
        for cut in [0, 1, 5, good.len() / 2, good.len() - 1] {
            assert!(Table::from_bytes(&good[..cut]).is_none());
        }
        let mut long = good.clone();
        long.push(0);
        assert!(Table::from_bytes(&long).is_none());
        assert!(Table::from_bytes(&[0xff; 11]).is_none());
        // A row count past the cap.
        let mut many = Vec::new();
        put(&mut many, 0);
        put(&mut many, ROWS as u64 + 1);
        assert!(Table::from_bytes(&many).is_none());
    }
}
