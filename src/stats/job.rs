//! One tensor's statistics as two passes over its rows, fed chunk by chunk from any source (a
//! file natively, bytes fetched by JS in wasm), split across threads or workers and merged in a
//! fixed order, so the result is the same bits for any chunk size and thread count.
//!
//! Values are taken a piece at a time (`PIECE` values, small enough to stay in L1: a source
//! dequantizes each piece just before it is read). Pass 1 computes [`Moments`] per piece, merges
//! the pieces of each cell of a fixed grid (`CELL_ELEMENTS` values, whole rows) in order, then the
//! cells in order; it also counts the values per coarse key bucket (`percentiles.rs`). Pass 2
//! bins, one by one, only the values of the buckets a histogram edge cuts, and counts the
//! buckets holding the wanted percentile ranks by their low key bits. Two passes in all; for
//! blocks of `d · level` values (Q8_0, Q4_0, MXFP4, ...) one over the data, pass 2 running on
//! pass 1's counts per (scale, level) (`scaled.rs`).

use std::collections::BTreeMap;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::codes::Groups;
use super::histogram::Histogram;
use super::layout::{Coded, Form};
use super::moments::Moments;
use super::percentiles::{
    from_key, key, lerp, locate, ranks, Coarse, Target, BUCKETS, PERCENTILES,
};
use super::scaled::{self, Layout, Levels, Table};
use crate::error::{Error, ErrorKind, Result};
use crate::quant::Kernel;

/// Values per cell of the grid the moments are computed on (whole rows, at least one).
pub const CELL_ELEMENTS: u64 = 1 << 16;

/// Values per piece: pieces start every `PIECE` values from a cell's (or chunk's) first value.
/// Every block size of a GGUF type divides it, so a piece is whole quantized blocks.
pub const PIECE: usize = 4096;

/// What to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatsRequest {
    /// Bins of the histogram over `[min, max]` (0: no histogram).
    pub bins: usize,
    /// p1, p50 and p99, exact (counted in the same two passes).
    pub percentiles: bool,
}

/// Which pass the job wants next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pass {
    Moments,
    Histogram,
    Done,
}

/// The statistics of a tensor's rows being computed; see the module doc.
/// Serializable (serde), so a job and its forked parts can cross to other workers and back.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatsJob {
    request: StatsRequest,
    rows: Range<u64>,
    row_len: u64,
    cell_rows: u64,
    pass: Pass,
    #[serde(with = "super::state::cells")]
    cells: BTreeMap<u64, Moments>,
    moments: Moments,
    histogram: Option<Histogram>,
    /// Pass 1's count per coarse key bucket (empty when neither histogram nor percentiles).
    coarse: Coarse,
    /// The buckets whose values pass 2 bins one by one (an edge cuts them), ascending.
    straddle: Vec<u32>,
    /// The buckets holding wanted ranks, counted by low key bits in pass 2.
    targets: Vec<Target>,
    /// Each wanted rank: (rank, index in `targets`, rank within that bucket).
    wanted: Vec<(u64, usize, u64)>,
    /// Pass 1's values as counts per (scale, level), when they came as `d · level` blocks.
    #[serde(default)]
    scaled: Tabled,
    /// Pass 2's flag per bucket (1: straddles, 2: a target), rebuilt from the fields above.
    #[serde(skip)]
    table: Vec<u8>,
}

/// Where pass 1 counted values that came as `d · level` blocks: a [`Table`] (then, if it holds
/// every value, pass 2 runs on the table instead of the data), or, once the table was full,
/// `coarse`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Tabled {
    #[default]
    Unused,
    Table(Box<Table>),
    Spilled,
}

/// The result, as the CLI prints it and JS receives it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatsReport {
    pub moments: Moments,
    pub mean: Option<f64>,
    pub std: Option<f64>,
    pub histogram: Option<Histogram>,
    /// `[(p, value)]` for p1, p50, p99 when asked for and there are finite values.
    pub percentiles: Option<Vec<(f64, f64)>>,
}

/// Writes the values of a range (counted from a chunk's first value) into a buffer.
pub type Fill<'a> = dyn FnMut(Range<usize>, &mut [f32]) -> Result<()> + 'a;

/// Where a piece's values come from: a slice, a function writing them into a buffer, or whole
/// blocks of a type of `layout.rs`'s table.
enum Source<'a> {
    Slice(&'a [f32]),
    Fill(&'a mut Fill<'a>),
    /// Whole `d · level` blocks of the rows fed, dequantized by `kernel` where values are read.
    Scaled(&'a [u8], &'static Layout, Kernel),
    /// Whole coded blocks of the rows fed, read as groups.
    Coded(&'a [u8], &'static Layout, &'static Coded),
}

/// One piece's values, as they came.
enum Piece<'s> {
    Values(&'s [f32]),
    Groups(&'s mut Groups),
}

impl Source<'_> {
    fn get<'s>(
        &'s mut self,
        range: Range<usize>,
        buf: &'s mut [f32],
        groups: &'s mut Groups,
    ) -> Result<Piece<'s>> {
        match self {
            Source::Slice(values) => Ok(Piece::Values(&values[range])),
            Source::Fill(fill) => {
                let out = &mut buf[..range.len()];
                fill(range, out)?;
                Ok(Piece::Values(out))
            }
            Source::Scaled(bytes, layout, kernel) => {
                let out = &mut buf[..range.len()];
                let piece = scaled_piece(bytes, layout, range)?;
                crate::quant::dequantize_with(*kernel, layout.ty, piece, out)?;
                Ok(Piece::Values(out))
            }
            Source::Coded(bytes, layout, coded) => {
                groups.decode(layout, coded, scaled_piece(bytes, layout, range)?);
                Ok(Piece::Groups(groups))
            }
        }
    }
}

impl StatsJob {
    /// Statistics of rows `rows` of a tensor whose rows hold `row_len` values.
    pub fn new(rows: Range<u64>, row_len: u64, request: StatsRequest) -> StatsJob {
        let row_len = row_len.max(1);
        let keyed = request.bins > 0 || request.percentiles;
        StatsJob {
            request,
            cell_rows: (CELL_ELEMENTS / row_len).max(1),
            rows,
            row_len,
            pass: Pass::Moments,
            cells: BTreeMap::new(),
            moments: Moments::default(),
            histogram: None,
            coarse: Coarse::new(keyed),
            straddle: Vec::new(),
            targets: Vec::new(),
            wanted: Vec::new(),
            scaled: Tabled::Unused,
            table: Vec::new(),
        }
    }

    /// The pass the next values are for.
    pub fn pass(&self) -> Pass {
        self.pass
    }

    /// The rows this job covers.
    pub fn rows(&self) -> Range<u64> {
        self.rows.clone()
    }

    /// Rows per read: a whole number of grid cells of at most about `max_elements` values.
    pub fn chunk_rows(&self, max_elements: u64) -> u64 {
        let cells = (max_elements / (self.cell_rows * self.row_len)).max(1);
        cells * self.cell_rows
    }

    /// The grid cell boundaries of `rows`: chunks start on them (for the moments pass).
    pub fn cell_rows(&self) -> u64 {
        self.cell_rows
    }

    /// The rows cut into at most `n` runs of whole grid cells, for `n` threads or workers (each
    /// feeds a [`StatsJob::fork`] its run; absorb them back in any order).
    pub fn parts(&self, n: usize) -> Vec<Range<u64>> {
        let rows = self.rows();
        let len = rows.end - rows.start;
        let cells = len.div_ceil(self.cell_rows);
        let per = cells.div_ceil(n.max(1) as u64).max(1) * self.cell_rows;
        (0..n.max(1) as u64)
            .map(|t| rows.start + (t * per).min(len)..rows.start + ((t + 1) * per).min(len))
            .filter(|r| r.start < r.end)
            .collect()
    }

    /// Adds the values of rows `first_row..` (a whole number of rows). In the moments pass,
    /// `first_row` must start a grid cell (see [`StatsJob::chunk_rows`]).
    pub fn add(&mut self, first_row: u64, values: &[f32]) -> Result<()> {
        let n_rows = values.len() as u64 / self.row_len;
        if n_rows * self.row_len != values.len() as u64 {
            return Err(bad_chunk(format!(
                "{} values are not whole rows of {}",
                values.len(),
                self.row_len
            )));
        }
        self.feed(first_row, n_rows, Source::Slice(values))
    }

    /// Adds rows `first_row..first_row + n_rows` whose values `fill(range, out)` writes on
    /// request, a piece at a time: `range` counts values from `first_row`'s first, starts on a
    /// multiple of [`PIECE`] from a row start and ends on one or on a row end (so a piece of a
    /// quantized tensor is whole blocks), `out` is `range.len()` long. Gives the same result as
    /// [`StatsJob::add`] with all the values.
    pub fn add_with(&mut self, first_row: u64, n_rows: u64, fill: &mut Fill<'_>) -> Result<()> {
        self.feed(first_row, n_rows, Source::Fill(fill))
    }

    /// Adds rows `first_row..first_row + n_rows` of a tensor of a type of `layout.rs`'s table
    /// (`layout`) from their bytes: the same counts, range, histogram and percentiles as the
    /// values would give, the mean and standard deviation to rounding (same bits for any chunk
    /// size and thread count). `kernel` dequantizes where values are read.
    pub(crate) fn add_blocks(
        &mut self,
        first_row: u64,
        n_rows: u64,
        layout: &'static Layout,
        kernel: Kernel,
        bytes: &[u8],
    ) -> Result<()> {
        let values = n_rows.saturating_mul(self.row_len);
        let (block, block_bytes) = (layout.block as u64, layout.block_bytes);
        if self.row_len % block != 0
            || (bytes.len() / block_bytes) as u64 != values / block
            || bytes.len() % block_bytes != 0
        {
            return Err(bad_chunk(format!(
                "{} bytes are not the {} blocks of {n_rows} rows of {}",
                bytes.len(),
                layout.ty.name(),
                self.row_len
            )));
        }
        let source = match &layout.form {
            Form::Scaled { .. } => Source::Scaled(bytes, layout, kernel),
            Form::Coded(coded) => Source::Coded(bytes, layout, coded),
        };
        self.feed(first_row, n_rows, source)
    }

    /// Counts a decoded piece's values for pass 1: into the table, or per coarse bucket once it
    /// is full (`bytes` the piece's blocks, `buf` holds a piece).
    fn count_scaled(
        &mut self,
        layout: &Layout,
        kernel: Kernel,
        bytes: &[u8],
        piece: &Levels,
        buf: &mut [f32],
    ) -> Result<()> {
        if let Tabled::Unused = self.scaled {
            self.scaled = Tabled::Table(Box::new(Table::new(layout.scale)));
        }
        let mut rest = bytes;
        if let Tabled::Table(t) = &mut self.scaled {
            let took = t.add(&piece.scales, piece.view(layout, bytes), layout.few());
            if took == piece.scales.len() {
                return Ok(());
            }
            t.add_to_coarse(self.coarse.base_mut());
            self.scaled = Tabled::Spilled;
            rest = &bytes[took * layout.block_bytes..];
        }
        let out = &mut buf[..rest.len() / layout.block_bytes * layout.block];
        crate::quant::dequantize_with(kernel, layout.ty, rest, out)?;
        self.coarse.count(out);
        Ok(())
    }

    fn feed(&mut self, first_row: u64, n_rows: u64, mut source: Source<'_>) -> Result<()> {
        if first_row < self.rows.start || first_row.saturating_add(n_rows) > self.rows.end {
            return Err(bad_chunk(format!(
                "rows {first_row}..+{n_rows} do not fit rows {}..{} of {} values",
                self.rows.start, self.rows.end, self.row_len
            )));
        }
        // A job may come from another worker's state (untrusted): its arrays must have their
        // lengths before they are indexed.
        if !self.coarse.is_valid()
            || self.targets.iter().any(|t| t.low.len() != BUCKETS)
            || self.straddle.iter().any(|&b| b as usize >= BUCKETS)
        {
            return Err(bad_chunk("a malformed job state".to_string()));
        }
        let too_big = || bad_chunk("a chunk too big for this machine".to_string());
        let n = usize::try_from(n_rows * self.row_len).map_err(|_| too_big())?;
        let mut buf = match source {
            Source::Fill(..) | Source::Scaled(..) => vec![0f32; PIECE.min(n)],
            _ => Vec::new(),
        };
        let mut groups = Groups::default();
        let mut levels = Levels::default();
        match self.pass {
            Pass::Moments => {
                let offset = first_row - self.rows.start;
                if offset % self.cell_rows != 0 {
                    return Err(bad_chunk(format!(
                        "the moments pass reads whole cells of {} rows; row {first_row} starts none",
                        self.cell_rows
                    )));
                }
                let cell = usize::try_from(self.cell_rows * self.row_len).map_err(|_| too_big())?;
                let mut start = 0;
                let mut index = offset / self.cell_rows;
                while start < n {
                    let end = (start + cell).min(n);
                    let mut m = Moments::default();
                    let mut at = start;
                    while at < end {
                        let stop = (at + PIECE).min(end);
                        if let Source::Scaled(bytes, layout, kernel) = source {
                            let b = scaled_piece(bytes, layout, at..stop)?;
                            levels.decode(layout, kernel, b)?;
                            m.merge(&match scaled::moments(&levels, levels.view(layout, b)) {
                                Some(m) => m,
                                None => {
                                    let out = &mut buf[..stop - at];
                                    crate::quant::dequantize_with(kernel, layout.ty, b, out)?;
                                    Moments::of(out)
                                }
                            });
                            if !self.coarse.is_empty() {
                                self.count_scaled(layout, kernel, b, &levels, &mut buf)?;
                            }
                            at = stop;
                            continue;
                        }
                        match source.get(at..stop, &mut buf, &mut groups)? {
                            Piece::Values(values) => {
                                m.merge(&Moments::of(values));
                                self.coarse.count(values);
                            }
                            Piece::Groups(g) => m.merge(&g.pass1(if self.coarse.is_empty() {
                                &mut []
                            } else {
                                self.coarse.base_mut()
                            })),
                        }
                        at = stop;
                    }
                    self.cells.insert(index, m);
                    index += 1;
                    start = end;
                }
            }
            Pass::Histogram => {
                self.build_table();
                let mut at = 0;
                while at < n {
                    let stop = (at + PIECE).min(n);
                    match source.get(at..stop, &mut buf, &mut groups)? {
                        Piece::Values(values) => super::pass2::pass2(
                            &self.table,
                            self.histogram.as_mut(),
                            &mut self.targets,
                            values,
                        ),
                        Piece::Groups(g) => {
                            g.pass2(&self.table, self.histogram.as_mut(), &mut self.targets)
                        }
                    }
                    at = stop;
                }
            }
            Pass::Done => {}
        }
        Ok(())
    }

    /// Pass 2's per-bucket flags (a job or part from another worker arrives without them).
    fn build_table(&mut self) {
        if !self.table.is_empty() {
            return;
        }
        // Padded for the vector pass 2's 4-byte reads.
        let mut table = vec![0u8; BUCKETS + super::pass2::PAD];
        for &b in &self.straddle {
            if let Some(f) = table.get_mut(b as usize) {
                *f |= 1;
            }
        }
        for t in &self.targets {
            if let Some(f) = table.get_mut(t.bucket as usize) {
                *f |= 2;
            }
        }
        self.table = table;
    }

    /// An empty part of the current pass, for another thread or worker; give its values back
    /// with [`StatsJob::absorb`].
    pub fn fork(&self) -> StatsJob {
        StatsJob {
            request: self.request,
            rows: self.rows.clone(),
            row_len: self.row_len,
            cell_rows: self.cell_rows,
            pass: self.pass,
            cells: BTreeMap::new(),
            moments: self.moments,
            histogram: self.histogram.as_ref().map(Histogram::emptied),
            coarse: if self.pass == Pass::Moments {
                self.coarse.emptied()
            } else {
                Coarse::default()
            },
            straddle: self.straddle.clone(),
            targets: self.targets.iter().map(Target::emptied).collect(),
            wanted: self.wanted.clone(),
            scaled: Tabled::Unused,
            table: self.table.clone(),
        }
    }

    /// Takes a forked part's counts back (parts of a pass absorbed in any order give the same
    /// result: cells are keyed, counts are integers).
    pub fn absorb(&mut self, part: StatsJob) {
        self.cells.extend(part.cells);
        if self.pass == Pass::Moments {
            self.coarse.merge(&part.coarse);
            // Tables merge while they fit; any other mix ends in `coarse` (exact either way).
            self.scaled = match (std::mem::take(&mut self.scaled), part.scaled) {
                (Tabled::Unused, x) | (x, Tabled::Unused) => x,
                (Tabled::Table(mut a), Tabled::Table(b)) => {
                    if a.merge(&b) {
                        Tabled::Table(a)
                    } else {
                        a.add_to_coarse(self.coarse.base_mut());
                        b.add_to_coarse(self.coarse.base_mut());
                        Tabled::Spilled
                    }
                }
                (Tabled::Table(a), Tabled::Spilled) | (Tabled::Spilled, Tabled::Table(a)) => {
                    a.add_to_coarse(self.coarse.base_mut());
                    Tabled::Spilled
                }
                (Tabled::Spilled, Tabled::Spilled) => Tabled::Spilled,
            };
        }
        if let (Some(h), Some(p)) = (&mut self.histogram, &part.histogram) {
            h.merge(p);
        }
        for (t, p) in self.targets.iter_mut().zip(part.targets) {
            if t.bucket == p.bucket && t.low.len() == p.low.len() {
                for (a, b) in t.low.iter_mut().zip(p.low) {
                    *a += b;
                }
            }
        }
    }

    /// Ends the current pass; errors when the moments pass did not see every row.
    pub fn finish_pass(&mut self) -> Result<()> {
        match self.pass {
            Pass::Moments => {
                let mut total = Moments::default();
                for m in std::mem::take(&mut self.cells).values() {
                    total.merge(m);
                }
                let want = (self.rows.end - self.rows.start).saturating_mul(self.row_len);
                if total.count != want {
                    return Err(bad_chunk(format!(
                        "the moments pass saw {} of {want} values",
                        total.count
                    )));
                }
                self.moments = total;
                // A table holding every value stands for the data in pass 2.
                let table = match std::mem::take(&mut self.scaled) {
                    Tabled::Table(t) => {
                        t.add_to_coarse(self.coarse.base_mut());
                        (t.values() == total.count).then_some(t)
                    }
                    _ => None,
                };
                let coarse = std::mem::take(&mut self.coarse).totals();
                self.plan_pass2(&coarse);
                self.pass = if self.straddle.is_empty() && self.targets.is_empty() {
                    Pass::Done
                } else if let Some(t) = table {
                    self.build_table();
                    t.replay(&self.table, self.histogram.as_mut(), &mut self.targets);
                    Pass::Done
                } else {
                    Pass::Histogram
                };
            }
            Pass::Histogram => self.pass = Pass::Done,
            Pass::Done => {}
        }
        Ok(())
    }

    /// After pass 1: the histogram's counts from whole buckets, the buckets left to pass 2, and
    /// the buckets of the wanted ranks.
    fn plan_pass2(&mut self, coarse: &[u64]) {
        let Some((lo, hi)) = self.moments.range() else {
            return;
        };
        if coarse.len() != BUCKETS {
            return;
        }
        // Buckets of finite values only (the others hold NaN and infinities, see `key`).
        let finite = (key(f32::MIN) >> 16) as usize..=(key(f32::MAX) >> 16) as usize;
        let (key_lo, key_hi) = (key(lo), key(hi));
        if self.request.bins > 0 {
            self.histogram = Histogram::new(self.request.bins, lo.into(), hi.into());
        }
        if let Some(h) = &mut self.histogram {
            for b in finite.clone() {
                let c = coarse[b];
                if c == 0 {
                    continue;
                }
                let first = key_lo.max((b as u32) << 16);
                let last = key_hi.min((b as u32) << 16 | 0xffff);
                let (x, y) = (from_key(first), from_key(last));
                match (h.bin_of(x.into()), h.bin_of(y.into())) {
                    (Some(i), Some(j)) if i == j => h.add_count(i, c),
                    _ => self.straddle.push(b as u32),
                }
            }
        }
        if self.request.percentiles {
            let mut finite_counts = vec![0u64; BUCKETS];
            finite_counts[finite.clone()].copy_from_slice(&coarse[finite]);
            let n = self.moments.finite;
            let mut ranks_wanted: Vec<u64> = PERCENTILES
                .iter()
                .flat_map(|&p| {
                    let (a, b, _) = ranks(n, p);
                    [a, b]
                })
                .collect();
            ranks_wanted.sort_unstable();
            ranks_wanted.dedup();
            for r in ranks_wanted {
                let Some((bucket, within)) = locate(&finite_counts, r) else {
                    continue;
                };
                let i = match self.targets.iter().position(|t| t.bucket == bucket) {
                    Some(i) => i,
                    None => {
                        self.targets.push(Target::new(bucket));
                        self.targets.len() - 1
                    }
                };
                self.wanted.push((r, i, within));
            }
        }
    }

    /// The statistics (complete once [`StatsJob::pass`] is `Done`).
    pub fn report(&self) -> StatsReport {
        let m = self.moments;
        let value = |rank: u64| {
            self.wanted
                .iter()
                .find(|(r, _, _)| *r == rank)
                .and_then(|&(_, i, within)| self.targets.get(i).map(|t| t.value_at(within)))
        };
        let percentiles = (self.request.percentiles && m.finite > 0 && self.pass == Pass::Done)
            .then(|| {
                PERCENTILES
                    .iter()
                    .map(|&p| {
                        let (a, b, t) = ranks(m.finite, p);
                        let v = match (value(a), value(b)) {
                            (Some(x), Some(y)) if x == y => f64::from(x),
                            (Some(x), Some(y)) => lerp(x.into(), y.into(), t),
                            _ => f64::NAN,
                        };
                        (p, v)
                    })
                    .collect()
            });
        StatsReport {
            moments: m,
            mean: (m.finite > 0).then_some(m.mean),
            std: m.std_dev(),
            histogram: self.histogram.clone(),
            percentiles,
        }
    }
}

/// The blocks of values `range` (whole blocks, counted from the first value fed).
fn scaled_piece<'b>(bytes: &'b [u8], layout: &Layout, range: Range<usize>) -> Result<&'b [u8]> {
    let (a, b) = (range.start / layout.block, range.end / layout.block);
    bytes
        .get(a * layout.block_bytes..b * layout.block_bytes)
        .ok_or_else(|| bad_chunk(format!("values {range:?} are not in the blocks given")))
}

fn bad_chunk(message: String) -> Error {
    Error::new(ErrorKind::InvalidRequest {
        message: format!("statistics: {message}"),
    })
}

#[cfg(all(test, not(all(target_arch = "wasm32", target_os = "unknown"))))]
mod tests {
    use super::*;
    use crate::stats::threads::{run_native, ReadRows};

    /// Rows of a fixed value table.
    struct Table<'a> {
        values: &'a [f32],
        row_len: u64,
        out: Vec<f32>,
        fill: bool,
    }
    impl ReadRows for Table<'_> {
        fn add_to(&mut self, job: &mut StatsJob, rows: Range<u64>) -> Result<()> {
            let (a, b) = (
                (rows.start * self.row_len) as usize,
                (rows.end * self.row_len) as usize,
            );
            if self.fill {
                // Piece by piece, as a quantized source feeds it.
                let values = &self.values[a..b];
                return job.add_with(rows.start, rows.end - rows.start, &mut |r, out| {
                    out.copy_from_slice(&values[r]);
                    Ok(())
                });
            }
            self.out.clear();
            self.out.extend_from_slice(&self.values[a..b]);
            job.add(rows.start, &self.out)
        }
    }

    fn run(
        values: &[f32],
        row_len: u64,
        rows: Range<u64>,
        threads: usize,
        chunk: u64,
    ) -> StatsReport {
        run_with(values, row_len, rows, threads, chunk, false)
    }

    fn run_with(
        values: &[f32],
        row_len: u64,
        rows: Range<u64>,
        threads: usize,
        chunk: u64,
        fill: bool,
    ) -> StatsReport {
        let request = StatsRequest {
            bins: 37,
            percentiles: true,
        };
        let mut job = StatsJob::new(rows, row_len, request);
        run_native(&mut job, threads, chunk, || {
            Ok(Table {
                values,
                row_len,
                out: Vec::new(),
                fill,
            })
        })
        .unwrap();
        job.report()
    }

    /// A splitmix64 stream of values with duplicates, zeros, NaN and infinities.
    fn data(n: usize) -> Vec<f32> {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        (0..n)
            .map(|i| {
                x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = x;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                z ^= z >> 31;
                match i % 97 {
                    0 => f32::NAN,
                    1 => f32::INFINITY,
                    2 => 0.0,
                    3 => 0.25,
                    _ => ((z >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 3.0,
                }
            })
            .collect()
    }

    /// numpy's linear percentile from a full sort (this test's reference).
    fn sorted_percentile(values: &[f32], p: f64) -> f64 {
        let mut v: Vec<f32> = values.iter().copied().filter(|v| v.is_finite()).collect();
        v.sort_unstable_by(f32::total_cmp);
        let (a, b, t) = ranks(v.len() as u64, p);
        let (x, y) = (v[a as usize], v[b as usize]);
        if x == y {
            x.into()
        } else {
            lerp(x.into(), y.into(), t)
        }
    }

    #[test]
    fn same_bits_for_any_thread_count_and_chunk_size() {
        let row_len = 300;
        let values = data(300 * 1000);
        let one = run(&values, row_len, 0..1000, 1, 1 << 20);
        for (threads, chunk) in [(2, 1 << 20), (3, 70_000), (7, 1), (1, 1 << 16)] {
            assert_eq!(
                run(&values, row_len, 0..1000, threads, chunk),
                one,
                "{threads} threads, chunk {chunk}"
            );
        }
        // Piece by piece through `add_with`.
        assert_eq!(run_with(&values, row_len, 0..1000, 2, 70_000, true), one);
        // A row range not starting on a cell.
        let part = run(&values, row_len, 217..990, 1, 1 << 18);
        assert_eq!(run(&values, row_len, 217..990, 4, 5000), part);
        assert_eq!(part.moments.count, 773 * 300);
    }

    #[test]
    fn percentiles_equal_a_full_sort() {
        let values = data(100_003);
        let r = run(&values, 1, 0..100_003, 2, 1 << 14);
        let got = r.percentiles.unwrap();
        for (p, v) in got {
            assert_eq!(v, sorted_percentile(&values, p), "p{p}");
        }
        let h = r.histogram.unwrap();
        assert_eq!(h.counts().iter().sum::<u64>(), r.moments.finite);
    }

    #[test]
    fn percentiles_of_a_crowded_bucket() {
        // 3M values in a narrow band around 1.0 plus two far outliers: the median's coarse
        // bucket holds most values, its low key bits tell them apart.
        let n = 3 * (1 << 20);
        let mut values: Vec<f32> = (0..n).map(|i| 1.0 + (i % 1013) as f32 * 1e-7).collect();
        values.push(-1e6);
        values.push(1e6);
        let r = run(&values, 1, 0..values.len() as u64, 2, 1 << 20);
        for (p, v) in r.percentiles.unwrap() {
            assert_eq!(v, sorted_percentile(&values, p), "p{p}");
        }
        // All equal: found without collecting.
        let same = vec![2.5f32; 2 * (1 << 20) + 5];
        let r = run(&same, 1, 0..same.len() as u64, 1, 1 << 20);
        assert!(r.percentiles.unwrap().iter().all(|&(_, v)| v == 2.5));
    }

    #[test]
    fn a_malformed_state_is_an_error_not_a_panic() {
        let request = StatsRequest {
            bins: 4,
            percentiles: true,
        };
        let mut job = StatsJob::new(0..4, 4, request);
        job.coarse = serde_json::from_str("[10,0,0,0]").unwrap();
        assert!(job.add(0, &[1.0; 16]).is_err());
        let mut job = StatsJob::new(0..4, 4, request);
        job.add(0, &[1.0, 2.0, 3.0, 4.0].repeat(4)).unwrap();
        job.finish_pass().unwrap();
        job.straddle.push(1 << 20);
        job.table.clear();
        assert!(job.add(0, &[1.0; 16]).is_err());
    }

    #[test]
    fn misfed_chunks_are_errors() {
        let mut job = StatsJob::new(
            0..10,
            4,
            StatsRequest {
                bins: 4,
                percentiles: false,
            },
        );
        assert!(job.add(0, &[0.0; 6]).is_err(), "not whole rows");
        assert!(job.add(9, &[0.0; 8]).is_err(), "past the range");
        job.add(0, &[1.0; 8]).unwrap();
        // Rows 2..10 never came: the pass refuses to end.
        assert!(job
            .finish_pass()
            .unwrap_err()
            .to_string()
            .contains("saw 8 of 40 values"));
    }
}
