//! The [`Table`] of a tensor's `d · level` values: counts per (scale, level), filled in pass 1,
//! replayed for the histogram and percentiles, and crossing to other workers as compact bytes.

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::{value, Scale, View, ROWS};
use crate::stats::histogram::Histogram;
use crate::stats::percentiles::{key, Target, BUCKETS};

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

/// Counts of a tensor's values per (scale, level): row `r` holds the blocks whose scale has the
/// bits `scales[r]`, column `q` the level `q as i8`. Narrow u16 counts take the increments
/// (a row stays small in cache); a row's counts move to a wide u64 copy before they could
/// overflow.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Table {
    /// How the scale bits read.
    scale: Scale,
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
    /// An empty table of scales read as `scale`.
    pub(crate) fn new(scale: Scale) -> Table {
        Table {
            scale,
            ..Table::default()
        }
    }

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

    /// Counts the values of the blocks of `view` (`scales` their scale bits, `set` every level
    /// they can hold when few, else empty); returns how many blocks it took (fewer than given
    /// when a new scale found the table full).
    pub(crate) fn add(&mut self, scales: &[u16], view: View<'_>, set: &[i8]) -> usize {
        if self.index.is_empty() {
            self.index = vec![0; 1 << 16];
        }
        add_blocks(self, scales, view, set)
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
    pub(super) fn rows(&self) -> impl Iterator<Item = (u16, [u64; 256])> + '_ {
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
        if other.scale != self.scale && !other.scales.is_empty() {
            return false;
        }
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
            let d = self.scale.value(d);
            for (q, &c) in counts.iter().enumerate() {
                if c != 0 {
                    f(value(d, q as u8 as i8), c);
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

    /// Compact bytes (a job's state crosses to workers): the scale kind, the value count, then
    /// per row its scale and its levels counted (how many, then each level and its count), as
    /// LEB128 numbers.
    pub(super) fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put(&mut out, u64::from(self.scale.id()));
        put(&mut out, self.values);
        put(&mut out, self.scales.len() as u64);
        for (d, counts) in self.rows() {
            put(&mut out, u64::from(d));
            put(&mut out, counts.iter().filter(|&&c| c != 0).count() as u64);
            for (level, &c) in counts.iter().enumerate().filter(|(_, &c)| c != 0) {
                put(&mut out, level as u64);
                put(&mut out, c);
            }
        }
        out
    }

    pub(super) fn from_bytes(bytes: &[u8]) -> Option<Table> {
        let mut at = 0;
        let scale = Scale::from_id(u8::try_from(get(bytes, &mut at)?).ok()?)?;
        let mut table = Table {
            scale,
            values: get(bytes, &mut at)?,
            ..Table::default()
        };
        let rows = get(bytes, &mut at)?;
        if rows > ROWS as u64 {
            return None;
        }
        for _ in 0..rows {
            let d = u16::try_from(get(bytes, &mut at)?).ok()?;
            if !scale.finite(d) || (scale == Scale::E8m0Half && d > 0xff) {
                return None;
            }
            if table.index.get(d as usize).is_some_and(|&r| r != 0) {
                return None;
            }
            let r = table.row(d)?;
            let mut counts = [0u64; 256];
            let (mut last, filled) = (None, get(bytes, &mut at)?);
            if filled > 256 {
                return None;
            }
            for _ in 0..filled {
                let level = usize::try_from(get(bytes, &mut at)?)
                    .ok()
                    .filter(|&l| l < 256)?;
                // Ascending, each once, none zero: one form per table.
                if last.is_some_and(|l| l >= level) {
                    return None;
                }
                last = Some(level);
                counts[level] = get(bytes, &mut at)?;
                if counts[level] == 0 {
                    return None;
                }
            }
            table.add_counts(r, &counts);
        }
        (at == bytes.len()).then_some(table)
    }
}

/// [`Table::add`]'s loop (its index made). Plain code on every instruction set: the increments
/// gain nothing from wider registers.
fn add_blocks(table: &mut Table, scales: &[u16], view: View<'_>, set: &[i8]) -> usize {
    let block = view.block;
    let step = u32::try_from(block).unwrap_or(u32::MAX);
    // Few levels only: with more, the compares cost more than the waits they save.
    let set = if set.len() <= FEW { set } else { &[] };
    let blocks = scales.len().min(view.blocks);
    for (i, &d) in scales[..blocks].iter().enumerate() {
        let b = view.block(i);
        // The row of a block a few ahead into cache: a table of a few thousand rows is
        // bigger than L2, and a block's first increment would wait for its row.
        if let Some(&ahead) = scales.get(i + AHEAD) {
            let r = table.index[ahead as usize];
            if r != 0 {
                prefetch(&table.narrow[r as usize - 1]);
            }
        }
        if !table.scale.finite(d) {
            // NaN or an infinite scale: no finite value.
            table.values += block as u64;
            continue;
        }
        let Some(r) = table.row(d) else {
            return i;
        };
        if table.since[r] > u32::from(u16::MAX).saturating_sub(step) {
            table.flush(r);
        }
        table.since[r] += step;
        let row = &mut table.narrow[r];
        // Few levels: each one's count by compares, then one add per level.
        let mut counts = [0u16; FEW];
        if !set.is_empty() && count_few(b, set, &mut counts) == b.len() {
            for (&c, &l) in counts.iter().zip(set) {
                row[l as u8 as usize] += c;
            }
        } else if let Ok(b) = <&[u8; 32]>::try_from(b) {
            // The common block, a loop of known length (unrolled).
            for &q in b {
                row[q as usize] += 1;
            }
        } else {
            for &q in b {
                row[q as usize] += 1;
            }
        }
        table.values += block as u64;
    }
    blocks
}

crate::stats::kernels::dispatch! {
    /// Counts each level of `set` in `b` (by compares, in vectors); how many values it counted.
    fn count_few(b: &[u8], set: &[i8], counts: &mut [u16; FEW]) -> usize => count_few_body
}

#[inline(always)]
fn count_few_body(b: &[u8], set: &[i8], counts: &mut [u16; FEW]) -> usize {
    let mut total = 0;
    for (c, &l) in counts.iter_mut().zip(set) {
        let n = b.iter().filter(|&&x| x == l as u8).count();
        *c = n as u16;
        total += n;
    }
    total
}

/// Most levels counted by compares.
const FEW: usize = 4;

pub(super) fn put(out: &mut Vec<u8>, mut x: u64) {
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
                f.write_str("a count table as bytes")
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
        Table::from_bytes(&bytes).ok_or_else(|| de::Error::custom("a malformed count table"))
    }
}
