//! One tensor's statistics as a sequence of passes over its rows, fed chunk by chunk from any
//! source (a file natively, bytes fetched by JS in wasm), split across threads or workers and
//! merged in a fixed order, so the result is the same bits for any chunk size and thread count.
//!
//! Pass 1 computes [`Moments`] per cell of a fixed grid (`CELL_ELEMENTS` values, whole rows) and
//! merges the cells in order. Pass 2 counts the histogram over exactly `[min, max]` of the finite
//! values (numpy's rule) and, for percentiles, a fine histogram locating their ranks. Later
//! passes, only for percentiles, narrow those ranks down (see `percentiles.rs`).

use std::collections::BTreeMap;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::histogram::Histogram;
use super::moments::Moments;
use super::percentiles::{self, lerp, ranks, Binning, Search, FINE_BINS, PERCENTILES};
use crate::error::{Error, ErrorKind, Result};

/// Values per cell of the grid the moments are computed on (whole rows, at least one).
pub const CELL_ELEMENTS: u64 = 1 << 16;

/// What to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatsRequest {
    /// Bins of the histogram over `[min, max]` (0: no histogram).
    pub bins: usize,
    /// p1, p50 and p99, exact (usually one more pass).
    pub percentiles: bool,
}

/// Which pass the job wants next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pass {
    Moments,
    Histogram,
    Percentiles,
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
    cells: BTreeMap<u64, Moments>,
    moments: Moments,
    histogram: Option<Histogram>,
    /// Pass 2's fine histogram over `[min, max]`, for the percentiles' ranks.
    fine: Option<(Binning, Vec<u64>)>,
    /// One search per distinct rank the percentiles read.
    searches: Vec<(u64, Search)>,
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

impl StatsJob {
    /// Statistics of rows `rows` of a tensor whose rows hold `row_len` values.
    pub fn new(rows: Range<u64>, row_len: u64, request: StatsRequest) -> StatsJob {
        let row_len = row_len.max(1);
        StatsJob {
            request,
            cell_rows: (CELL_ELEMENTS / row_len).max(1),
            rows,
            row_len,
            pass: Pass::Moments,
            cells: BTreeMap::new(),
            moments: Moments::default(),
            histogram: None,
            fine: None,
            searches: Vec::new(),
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
        if n_rows * self.row_len != values.len() as u64
            || first_row < self.rows.start
            || first_row.saturating_add(n_rows) > self.rows.end
        {
            return Err(bad_chunk(format!(
                "rows {first_row}.. with {} values do not fit rows {}..{} of {} values",
                values.len(),
                self.rows.start,
                self.rows.end,
                self.row_len
            )));
        }
        match self.pass {
            Pass::Moments => {
                let offset = first_row - self.rows.start;
                if offset % self.cell_rows != 0 {
                    return Err(bad_chunk(format!(
                        "the moments pass reads whole cells of {} rows; row {first_row} starts none",
                        self.cell_rows
                    )));
                }
                let cell_values =
                    usize::try_from(self.cell_rows * self.row_len).unwrap_or(usize::MAX);
                for (i, cell) in values.chunks(cell_values).enumerate() {
                    self.cells
                        .insert(offset / self.cell_rows + i as u64, Moments::of(cell));
                }
            }
            Pass::Histogram => {
                if let Some(h) = &mut self.histogram {
                    h.add(values);
                }
                if let Some((binning, counts)) = &mut self.fine {
                    percentiles::count_bins(binning, counts, values);
                }
            }
            Pass::Percentiles => self.add_to_searches(values),
            Pass::Done => {}
        }
        Ok(())
    }

    /// An empty part of the current pass, for another thread or worker; give its values back
    /// with [`StatsJob::absorb`].
    pub fn fork(&self) -> StatsJob {
        StatsJob {
            cells: BTreeMap::new(),
            histogram: self.histogram.as_ref().map(Histogram::emptied),
            fine: self.fine.as_ref().map(|(b, c)| (*b, vec![0; c.len()])),
            searches: self.searches.iter().map(|(r, s)| (*r, s.fork())).collect(),
            ..self.clone()
        }
    }

    /// Takes a forked part's counts back (parts of a pass absorbed in any order give the same
    /// result: cells are keyed, counts are integers, collected values are sorted).
    pub fn absorb(&mut self, part: StatsJob) {
        self.cells.extend(part.cells);
        if let (Some(h), Some(p)) = (&mut self.histogram, &part.histogram) {
            h.merge(p);
        }
        if let (Some((_, counts)), Some((_, more))) = (&mut self.fine, &part.fine) {
            for (a, b) in counts.iter_mut().zip(more) {
                *a += b;
            }
        }
        for ((_, s), (_, p)) in self.searches.iter_mut().zip(part.searches) {
            s.absorb(p);
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
                let range = self.moments.range();
                self.histogram = range
                    .filter(|_| self.request.bins > 0)
                    .and_then(|(lo, hi)| Histogram::new(self.request.bins, lo.into(), hi.into()));
                self.fine = range.filter(|_| self.request.percentiles).map(|(lo, hi)| {
                    let binning = Binning::new(lo.into(), hi.into(), FINE_BINS);
                    (binning, vec![0; binning.bins() as usize])
                });
                self.pass = if self.histogram.is_some() || self.fine.is_some() {
                    Pass::Histogram
                } else {
                    Pass::Done
                };
            }
            Pass::Histogram => {
                if let Some((binning, counts)) = &self.fine {
                    let n = self.moments.finite;
                    let mut wanted: Vec<u64> = PERCENTILES
                        .iter()
                        .flat_map(|&p| {
                            let (a, b, _) = ranks(n, p);
                            [a, b]
                        })
                        .collect();
                    wanted.sort_unstable();
                    wanted.dedup();
                    self.searches = wanted
                        .into_iter()
                        .map(|r| (r, Search::locate(*binning, counts, r)))
                        .collect();
                }
                self.advance_searches();
            }
            Pass::Percentiles => {
                for (_, s) in &mut self.searches {
                    s.step();
                }
                self.advance_searches();
            }
            Pass::Done => {}
        }
        Ok(())
    }

    /// The percentiles pass: each finite value goes to the searches whose first-level bin it is
    /// in (a bitmap of those bins first: most values are in none).
    fn add_to_searches(&mut self, values: &[f32]) {
        let Some((binning, _)) = &self.fine else {
            return;
        };
        let binning = *binning;
        let mut wanted = vec![0u64; (binning.bins() as usize).div_ceil(64)];
        for (_, s) in &self.searches {
            if let (Some(b), None) = (s.first_bin(), s.found()) {
                wanted[b as usize / 64] |= 1 << (b % 64);
            }
        }
        let mut candidates = Vec::new();
        percentiles::in_bins(&binning, &wanted, values, &mut candidates);
        for (v, b) in candidates {
            for (_, s) in &mut self.searches {
                if s.first_bin() == Some(b) {
                    s.add(v);
                }
            }
        }
    }

    fn advance_searches(&mut self) {
        let open = self.searches.iter().any(|(_, s)| s.found().is_none());
        self.pass = if open { Pass::Percentiles } else { Pass::Done };
    }

    /// The statistics (complete once [`StatsJob::pass`] is `Done`).
    pub fn report(&self) -> StatsReport {
        let m = self.moments;
        let value = |rank: u64| {
            self.searches
                .iter()
                .find(|(r, _)| *r == rank)
                .and_then(|(_, s)| s.found())
        };
        let percentiles = (self.request.percentiles && m.finite > 0 && self.pass == Pass::Done)
            .then(|| {
                PERCENTILES
                    .iter()
                    .map(|&p| {
                        let (a, b, t) = ranks(m.finite, p);
                        let (va, vb) = (value(a), value(b));
                        let v = match (va, vb) {
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
    }
    impl ReadRows for Table<'_> {
        fn read(&mut self, rows: Range<u64>) -> Result<&[f32]> {
            let (a, b) = (
                (rows.start * self.row_len) as usize,
                (rows.end * self.row_len) as usize,
            );
            self.out.clear();
            self.out.extend_from_slice(&self.values[a..b]);
            Ok(&self.out)
        }
    }

    fn run(
        values: &[f32],
        row_len: u64,
        rows: Range<u64>,
        threads: usize,
        chunk: u64,
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
    fn percentiles_narrow_past_a_bin_too_big_to_collect() {
        // 3M values in a narrow band around 1.0 plus a few far outliers: the median's fine bin
        // holds more than COLLECT_LIMIT values, so it is narrowed before it is collected.
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
