//! Exact percentiles (numpy's default `percentile`, method "linear") with bounded memory: the
//! order statistics they need are found by narrowing histograms over the data, then collecting
//! the few values left in the narrowed bin and sorting them.
//!
//! For `n` finite values and percentile `p`, numpy takes the sorted values `v` at the virtual
//! index `i = (n - 1) * p / 100` and interpolates `v[floor(i)]` and `v[floor(i) + 1]` with
//! weight `i - floor(i)`. Each of those ranks is located in a fine histogram of the pass that
//! counts the display histogram; a bin holding at most `COLLECT_LIMIT` values is then collected
//! in one more pass, a larger one is histogrammed again (4096 bins over that bin) until it is
//! small or holds a single value. A typical tensor needs one extra pass.

use super::histogram::Histogram;

/// Bins of each narrowing histogram.
pub const FINE_BINS: usize = 4096;
/// Most values collected for one rank in memory (4 MiB of f32).
pub const COLLECT_LIMIT: u64 = 1 << 20;

/// The percentiles reported: p1, p50 (median), p99.
pub const PERCENTILES: [f64; 3] = [1.0, 50.0, 99.0];

/// Where one rank's value is being looked for.
#[derive(Debug, Clone)]
pub(crate) enum Search {
    /// The rank lies in the fine histogram's bins (of the parent pass or a narrowing pass):
    /// `rank` counts the values below this one in the histogram's range.
    Narrow {
        hist: Histogram,
        /// Values exactly equal to the upper edge count (the range's last bin includes it).
        include_hi: bool,
        rank: u64,
        /// The smallest and largest value seen in range, to stop when they are one value.
        seen: (f32, f32),
    },
    /// The rank is the `rank`-th of the values collected in `[lo, hi)` (`hi` included when
    /// `include_hi`).
    Collect {
        lo: f64,
        hi: f64,
        include_hi: bool,
        rank: u64,
        values: Vec<f32>,
    },
    Found(f32),
}

impl Search {
    fn in_range(lo: f64, hi: f64, include_hi: bool, x: f64) -> bool {
        x >= lo && (x < hi || (include_hi && x == hi))
    }

    /// Feeds one pass's values.
    pub(crate) fn add(&mut self, values: &[f32]) {
        match self {
            Search::Narrow {
                hist,
                include_hi,
                seen,
                ..
            } => {
                let (lo, hi) = (hist.edges()[0], *hist.edges().last().unwrap_or(&0.0));
                for &v in values {
                    let x = f64::from(v);
                    if Search::in_range(lo, hi, *include_hi, x) {
                        if let Some(i) = hist.bin_of(x) {
                            hist.count(i);
                            seen.0 = seen.0.min(v);
                            seen.1 = seen.1.max(v);
                        }
                    }
                }
            }
            Search::Collect {
                lo,
                hi,
                include_hi,
                values: kept,
                ..
            } => {
                for &v in values {
                    if Search::in_range(*lo, *hi, *include_hi, f64::from(v)) {
                        kept.push(v);
                    }
                }
            }
            Search::Found(_) => {}
        }
    }

    /// The same search with nothing counted yet (a part for another thread).
    pub(crate) fn fork(&self) -> Search {
        match self {
            Search::Narrow {
                hist,
                include_hi,
                rank,
                ..
            } => Search::Narrow {
                hist: hist.emptied(),
                include_hi: *include_hi,
                rank: *rank,
                seen: (f32::INFINITY, f32::NEG_INFINITY),
            },
            Search::Collect {
                lo,
                hi,
                include_hi,
                rank,
                ..
            } => Search::Collect {
                lo: *lo,
                hi: *hi,
                include_hi: *include_hi,
                rank: *rank,
                values: Vec::new(),
            },
            Search::Found(v) => Search::Found(*v),
        }
    }

    /// Adds a part's counts or values (parts absorbed in order).
    pub(crate) fn absorb(&mut self, part: Search) {
        match (self, part) {
            (
                Search::Narrow { hist, seen, .. },
                Search::Narrow {
                    hist: h2, seen: s2, ..
                },
            ) => {
                hist.merge(&h2);
                *seen = (seen.0.min(s2.0), seen.1.max(s2.1));
            }
            (Search::Collect { values, .. }, Search::Collect { values: v2, .. }) => {
                values.extend(v2)
            }
            _ => {}
        }
    }

    /// After a pass: the next step (Found, Collect or a narrower Narrow).
    pub(crate) fn step(&mut self) {
        let next = match std::mem::replace(self, Search::Found(0.0)) {
            Search::Narrow {
                hist,
                include_hi,
                rank,
                seen,
            } => {
                if seen.0 == seen.1 {
                    Search::Found(seen.0)
                } else {
                    locate(&hist, include_hi, rank)
                }
            }
            Search::Collect {
                mut values, rank, ..
            } => {
                values.sort_unstable_by(f32::total_cmp);
                let at = usize::try_from(rank).unwrap_or(usize::MAX);
                // The counts said the rank is in this bin; values are there unless the data
                // changed between passes.
                Search::Found(values.get(at).copied().unwrap_or(f32::NAN))
            }
            found => found,
        };
        *self = next;
    }

    pub(crate) fn found(&self) -> Option<f32> {
        match self {
            Search::Found(v) => Some(*v),
            _ => None,
        }
    }
}

/// The search for the value of `rank` (0-based among the values counted in `hist`) after `hist`
/// was counted: the bin holding it, to collect or to narrow further.
pub(crate) fn locate(hist: &Histogram, include_hi: bool, rank: u64) -> Search {
    let counts = hist.counts();
    let mut below = 0u64;
    for (b, &c) in counts.iter().enumerate() {
        if rank < below + c {
            let (lo, hi) = (hist.edges()[b], hist.edges()[b + 1]);
            let last = b + 1 == counts.len();
            let include_hi = last && include_hi;
            let rank = rank - below;
            return if c <= COLLECT_LIMIT || lo == hi {
                Search::Collect {
                    lo,
                    hi,
                    include_hi,
                    rank,
                    values: Vec::new(),
                }
            } else {
                match Histogram::new(FINE_BINS, lo, hi) {
                    Some(hist) if hist.edges()[0] == lo => Search::Narrow {
                        hist,
                        include_hi,
                        rank,
                        seen: (f32::INFINITY, f32::NEG_INFINITY),
                    },
                    _ => Search::Collect {
                        lo,
                        hi,
                        include_hi,
                        rank,
                        values: Vec::new(),
                    },
                }
            };
        }
        below += c;
    }
    Search::Found(f32::NAN)
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
