//! Exact percentiles (numpy's default `percentile`, method "linear") with bounded memory.
//!
//! For `n` finite values and percentile `p`, numpy takes the sorted values `v` at the virtual
//! index `i = (n - 1) * p / 100` and interpolates `v[floor(i)]` and `v[floor(i) + 1]` with
//! weight `i - floor(i)`. Those order statistics are found without sorting the data: the pass
//! that counts the display histogram also counts a fine one ([`Binning`], `FINE_BINS` bins over
//! `[min, max]`); the bin holding a rank is then collected in one more pass and sorted when it
//! holds at most `COLLECT_LIMIT` values, else binned again, finer, until it is small or holds a
//! single value. A typical tensor needs one extra pass.
//!
//! Bins here are any monotone map of values to bin numbers, applied the same way in every pass:
//! whether a value is in a bin is decided by the same arithmetic each time, so counts and
//! membership agree exactly (the numpy edges matter only for the display histogram).

/// Bins of each fine histogram.
pub const FINE_BINS: u32 = 4096;
/// Most values collected for one rank in memory (4 MiB of f32).
pub const COLLECT_LIMIT: u64 = 1 << 20;

/// The percentiles reported: p1, p50 (median), p99.
pub const PERCENTILES: [f64; 3] = [1.0, 50.0, 99.0];

/// `floor((x - lo) * scale)` in f64, clamped to `0..bins`: monotone in `x`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Binning {
    lo: f64,
    scale: f64,
    bins: u32,
}

impl Binning {
    pub(crate) fn new(lo: f64, hi: f64, bins: u32) -> Binning {
        let span = hi - lo;
        Binning {
            lo,
            scale: if span > 0.0 && span.is_finite() {
                f64::from(bins) / span
            } else {
                0.0
            },
            bins: bins.max(1),
        }
    }

    #[inline]
    pub(crate) fn bin(&self, x: f32) -> u32 {
        // `as` saturates (negative to 0); the data's minimum is `lo`, so nothing is below.
        (((f64::from(x) - self.lo) * self.scale) as u32).min(self.bins - 1)
    }

    /// The approximate value range of bin `b` (for binning it again, finer).
    fn range_of(&self, b: u32) -> (f64, f64) {
        if self.scale == 0.0 {
            return (self.lo, self.lo);
        }
        (
            self.lo + f64::from(b) / self.scale,
            self.lo + f64::from(b + 1) / self.scale,
        )
    }

    pub(crate) fn bins(&self) -> u32 {
        self.bins
    }
}

super::isa::dispatch! {
    /// Counts the finite `values` per bin of `binning`.
    pub(crate) fn count_bins(binning: &Binning, counts: &mut [u64], values: &[f32]) -> () => count_bins_body
}

#[inline(always)]
fn count_bins_body(binning: &Binning, counts: &mut [u64], values: &[f32]) {
    for &v in values {
        if v.is_finite() {
            counts[binning.bin(v) as usize] += 1;
        }
    }
}

super::isa::dispatch! {
    /// The finite `values` whose bin is set in the bitmap `wanted`, with their bin.
    pub(crate) fn in_bins(binning: &Binning, wanted: &[u64], values: &[f32], out: &mut Vec<(f32, u32)>) -> () => in_bins_body
}

#[inline(always)]
fn in_bins_body(binning: &Binning, wanted: &[u64], values: &[f32], out: &mut Vec<(f32, u32)>) {
    for &v in values {
        if v.is_finite() {
            let b = binning.bin(v);
            if wanted[b as usize / 64] & (1 << (b % 64)) != 0 {
                out.push((v, b));
            }
        }
    }
}

/// Where one rank's value is being looked for: the values whose bins match `path` at every level.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Search {
    /// (binning, bin) per level; a value is a member when it falls in every one.
    path: Vec<(Binning, u32)>,
    /// The rank among the members (0-based).
    rank: u64,
    step: Step,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
enum Step {
    /// Counting the members per bin of `next`, and their range.
    Narrow {
        next: Binning,
        counts: Vec<u64>,
        seen: (f32, f32),
    },
    /// Collecting the members.
    Collect {
        values: Vec<f32>,
    },
    Found(f32),
}

impl Search {
    /// The search for `rank` (0-based among the values counted in `counts` by `binning`) after
    /// a pass counted them.
    pub(crate) fn locate(binning: Binning, counts: &[u64], rank: u64) -> Search {
        Search::within(Vec::new(), binning, counts, rank)
    }

    fn within(
        mut path: Vec<(Binning, u32)>,
        binning: Binning,
        counts: &[u64],
        rank: u64,
    ) -> Search {
        let mut below = 0u64;
        for (b, &c) in counts.iter().enumerate() {
            if rank < below + c {
                let b = b as u32;
                path.push((binning, b));
                let rank = rank - below;
                let step = if c <= COLLECT_LIMIT {
                    Step::Collect { values: Vec::new() }
                } else {
                    let (lo, hi) = binning.range_of(b);
                    let next = Binning::new(lo, hi, FINE_BINS);
                    Step::Narrow {
                        counts: vec![0; next.bins() as usize],
                        next,
                        seen: (f32::INFINITY, f32::NEG_INFINITY),
                    }
                };
                return Search { path, rank, step };
            }
            below += c;
        }
        // The counts hold fewer values than the rank: the data changed between passes.
        Search {
            path,
            rank,
            step: Step::Found(f32::NAN),
        }
    }

    /// The first level's bin, for a quick test before [`Search::add`].
    pub(crate) fn first_bin(&self) -> Option<u32> {
        self.path.first().map(|(_, b)| *b)
    }

    /// Feeds one finite value whose first-level bin is [`Search::first_bin`].
    #[inline]
    pub(crate) fn add(&mut self, x: f32) {
        if self.path[1..]
            .iter()
            .any(|(binning, b)| binning.bin(x) != *b)
        {
            return;
        }
        match &mut self.step {
            Step::Narrow { next, counts, seen } => {
                counts[next.bin(x) as usize] += 1;
                seen.0 = seen.0.min(x);
                seen.1 = seen.1.max(x);
            }
            Step::Collect { values } => values.push(x),
            Step::Found(_) => {}
        }
    }

    /// The same search with nothing counted (a part for another thread).
    pub(crate) fn fork(&self) -> Search {
        let step = match &self.step {
            Step::Narrow { next, counts, .. } => Step::Narrow {
                next: *next,
                counts: vec![0; counts.len()],
                seen: (f32::INFINITY, f32::NEG_INFINITY),
            },
            Step::Collect { .. } => Step::Collect { values: Vec::new() },
            Step::Found(v) => Step::Found(*v),
        };
        Search {
            path: self.path.clone(),
            rank: self.rank,
            step,
        }
    }

    /// Adds a part's counts or values.
    pub(crate) fn absorb(&mut self, part: Search) {
        match (&mut self.step, part.step) {
            (
                Step::Narrow { counts, seen, .. },
                Step::Narrow {
                    counts: c2,
                    seen: s2,
                    ..
                },
            ) => {
                for (a, b) in counts.iter_mut().zip(c2) {
                    *a += b;
                }
                *seen = (seen.0.min(s2.0), seen.1.max(s2.1));
            }
            (Step::Collect { values }, Step::Collect { values: v2 }) => values.extend(v2),
            _ => {}
        }
    }

    /// After a pass: found, or the next narrower search.
    pub(crate) fn step(&mut self) {
        match std::mem::replace(&mut self.step, Step::Found(f32::NAN)) {
            Step::Narrow { next, counts, seen } => {
                if seen.0 == seen.1 {
                    self.step = Step::Found(seen.0);
                } else {
                    *self =
                        Search::within(std::mem::take(&mut self.path), next, &counts, self.rank);
                }
            }
            Step::Collect { mut values } => {
                values.sort_unstable_by(f32::total_cmp);
                let at = usize::try_from(self.rank).unwrap_or(usize::MAX);
                self.step = Step::Found(values.get(at).copied().unwrap_or(f32::NAN));
            }
            found => self.step = found,
        }
    }

    pub(crate) fn found(&self) -> Option<f32> {
        match self.step {
            Step::Found(v) => Some(v),
            _ => None,
        }
    }
}

/// The ranks numpy's linear percentile reads for `p` over `n` values, and the weight of the
/// second: (k, k + 1 capped at n - 1, fraction).
pub fn ranks(n: u64, p: f64) -> (u64, u64, f64) {
    let index = (n.saturating_sub(1)) as f64 * p / 100.0;
    let k = index.floor();
    let k_u = k as u64;
    (k_u, (k_u + 1).min(n.saturating_sub(1)), index - k)
}

/// numpy's `_lerp(a, b, t)`: `a + (b - a) * t`, computed from `b` when `t >= 0.5`.
pub fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}
