//! A histogram over a range known in advance, with numpy's bin rule.

use serde::{Deserialize, Serialize};

/// numpy's `histogram(x, bins, range=(lo, hi))`: edges are f64, `edge[i] = lo + i * ((hi - lo) /
/// bins)` for `i < bins` and `edge[bins] = hi` (numpy's `linspace`); bin `i` holds
/// `edge[i] <= x < edge[i + 1]`, the last bin also `x == hi`. Values outside `[lo, hi]` and
/// non-finite values are not counted. When `lo == hi` the range is widened to
/// `[lo - 0.5, hi + 0.5]`, as numpy does. Counts merge exactly (integers).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    edges: Vec<f64>,
    counts: Vec<u64>,
    norm: f64,
}

impl Histogram {
    /// `bins` bins (at least 1) over `[lo, hi]`; None when either bound is not finite or
    /// `lo > hi`.
    pub fn new(bins: usize, lo: f64, hi: f64) -> Option<Histogram> {
        if !lo.is_finite() || !hi.is_finite() || lo > hi {
            return None;
        }
        let (lo, hi) = if lo == hi {
            (lo - 0.5, hi + 0.5)
        } else {
            (lo, hi)
        };
        let bins = bins.max(1);
        let step = (hi - lo) / bins as f64;
        let mut edges: Vec<f64> = (0..bins).map(|i| i as f64 * step + lo).collect();
        edges.push(hi);
        Some(Histogram {
            edges,
            counts: vec![0; bins],
            norm: bins as f64 / (hi - lo),
        })
    }

    /// The bin `x` falls in, or None outside `[lo, hi]` (and for NaN).
    #[inline]
    pub fn bin_of(&self, x: f64) -> Option<usize> {
        let n = self.counts.len();
        let (lo, hi) = (self.edges[0], self.edges[n]);
        if !(x >= lo && x <= hi) {
            return None;
        }
        // An estimate, then the edges decide (the estimate is off by one at most).
        let mut i = (((x - lo) * self.norm) as usize).min(n - 1);
        while i > 0 && x < self.edges[i] {
            i -= 1;
        }
        while i + 1 < n && x >= self.edges[i + 1] {
            i += 1;
        }
        Some(i)
    }

    /// Counts the values of a chunk that fall in the range.
    pub fn add(&mut self, values: &[f32]) {
        count_into(&self.edges, self.norm, &mut self.counts, values);
    }

    /// Adds `n` to bin `bin` (a bin number from [`Histogram::bin_of`]).
    pub(crate) fn add_count(&mut self, bin: usize, n: u64) {
        self.counts[bin] += n;
    }

    /// Adds another histogram's counts (same edges; counts of a histogram over other edges are
    /// not added).
    pub fn merge(&mut self, other: &Histogram) {
        if other.edges == self.edges {
            for (a, b) in self.counts.iter_mut().zip(&other.counts) {
                *a += b;
            }
        }
    }

    /// The same edges with every count zero.
    pub fn emptied(&self) -> Histogram {
        Histogram {
            counts: vec![0; self.counts.len()],
            ..self.clone()
        }
    }

    /// Count per bin.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// The `counts().len() + 1` bin edges.
    pub fn edges(&self) -> &[f64] {
        &self.edges
    }
}

super::kernels::dispatch! {
    /// Counts `values` into `counts` by numpy's rule over `edges` (`norm` = bins / range).
    fn count_into(edges: &[f64], norm: f64, counts: &mut [u64], values: &[f32]) -> () => count_into_body
}

#[inline(always)]
fn count_into_body(edges: &[f64], norm: f64, counts: &mut [u64], values: &[f32]) {
    let n = counts.len();
    let (lo, hi) = (edges[0], edges[n]);
    let last = n - 1;
    let exact = |x: f64| {
        let mut i = (((x - lo) * norm) as usize).min(last);
        while i > 0 && x < edges[i] {
            i -= 1;
        }
        while i < last && x >= edges[i + 1] {
            i += 1;
        }
        i
    };
    let bins = n as f64;
    // Bin numbers a block at a time without branches (the compiler keeps this loop in vector
    // registers): `t` is x's position in bins, off from the edges' own positions by far less than
    // 1e-9 (both are a few roundings of the same product), so a fraction clear of 0 and 1 by
    // 1e-6 decides the bin. OUTSIDE marks a value out of range or NaN; EDGE one that close to an
    // edge, which then asks the edges.
    const BLOCK: usize = 256;
    const OUTSIDE: u32 = u32::MAX;
    const EDGE: u32 = u32::MAX - 1;
    let mut index = [0u32; BLOCK];
    // Neighbouring values often share a bin: four sets of counters, one per value of a group of
    // four, keep the increments independent (one set would make each wait for the last).
    let mut lanes = vec![0u32; 4 * n];
    for block in values.chunks(1 << 30) {
        for part in block.chunks(BLOCK) {
            for (slot, &v) in index.iter_mut().zip(part) {
                let x = f64::from(v);
                let t = (x - lo) * norm;
                let whole = t.floor();
                let frac = t - whole;
                let inside = x >= lo && x <= hi;
                let clear = frac > 1e-6 && frac < 1.0 - 1e-6 && whole < bins;
                let bin = whole as u32;
                *slot = if !inside {
                    OUTSIDE
                } else if clear {
                    bin
                } else {
                    EDGE
                };
            }
            for (k, (&b, &v)) in index.iter().zip(part).enumerate() {
                let bin = match b {
                    OUTSIDE => continue,
                    EDGE => exact(f64::from(v)),
                    b => b as usize,
                };
                lanes[4 * bin + (k & 3)] += 1;
            }
        }
        // u32 lanes: at most 2^30 values per block.
        for (c, l) in counts.iter_mut().zip(lanes.chunks_exact(4)) {
            *c += l.iter().map(|&x| u64::from(x)).sum::<u64>();
        }
        lanes.fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_numpys_edges() {
        // numpy: np.histogram([0, 1, 2, 3, 4, 10], bins=5, range=(0, 10))
        //   -> counts [2, 2, 1, 0, 1], edges [0, 2, 4, 6, 8, 10]
        let mut h = Histogram::new(5, 0.0, 10.0).unwrap();
        h.add(&[0.0, 1.0, 2.0, 3.0, 4.0]);
        h.add(&[10.0, f32::NAN, f32::INFINITY, -1.0, 11.0]);
        assert_eq!(h.counts(), [2, 2, 1, 0, 1]);
        assert_eq!(h.edges(), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let mut twice = h.clone();
        twice.merge(&h);
        assert_eq!(twice.counts(), [4, 4, 2, 0, 2]);
        assert_eq!(h.emptied().counts(), [0; 5]);
    }

    #[test]
    fn one_value_widens_like_numpy() {
        // numpy: np.histogram([3, 3], bins=2, range=(3, 3)) -> [0, 2], edges [2.5, 3, 3.5]
        let mut h = Histogram::new(2, 3.0, 3.0).unwrap();
        h.add(&[3.0, 3.0]);
        assert_eq!(h.counts(), [0, 2]);
        assert_eq!(h.edges(), [2.5, 3.0, 3.5]);
        assert!(Histogram::new(4, 1.0, 0.0).is_none());
        assert!(Histogram::new(4, 0.0, f64::INFINITY).is_none());
    }
}
