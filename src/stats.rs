//! Streaming statistics over f32 values fed chunk by chunk: min, max, mean, standard deviation,
//! NaN / infinity / zero counts and a histogram whose range grows as values arrive.
//!
//! The histogram starts on the first chunk's finite range; a value outside it doubles the range
//! (merging neighbouring bins in pairs) until it fits, so counts stay exact per final bin and
//! memory stays `bins` counters whatever the tensor size.

/// Accumulates statistics; feed with [`Stats::add`], read at any time.
#[derive(Debug, Clone)]
pub struct Stats {
    count: u64,
    nan: u64,
    infinite: u64,
    neg_infinite: u64,
    zero: u64,
    finite: u64,
    min: f32,
    max: f32,
    mean: f64,
    /// Sum of squared deviations from the mean (merged chunk by chunk).
    m2: f64,
    hist_start: f64,
    hist_width: f64,
    bins: Vec<u64>,
}

impl Stats {
    /// An empty accumulator with `bins` histogram bins (at least 2, rounded up to even).
    pub fn new(bins: usize) -> Stats {
        let bins = bins.max(2).div_ceil(2) * 2;
        Stats {
            count: 0,
            nan: 0,
            infinite: 0,
            neg_infinite: 0,
            zero: 0,
            finite: 0,
            min: f32::INFINITY,
            max: f32::NEG_INFINITY,
            mean: 0.0,
            m2: 0.0,
            hist_start: 0.0,
            hist_width: 0.0,
            bins: vec![0; bins],
        }
    }

    /// Adds a chunk of values.
    pub fn add(&mut self, values: &[f32]) {
        if self.hist_width == 0.0 && !self.bins.is_empty() {
            self.start_histogram(values);
        }
        self.count += values.len() as u64;
        // The chunk's own counts, range and sum, then its squared deviations from its mean, merged
        // into the totals with Chan et al.'s pairwise update: no division per value.
        let (mut finite, mut sum) = (0u64, 0f64);
        for &v in values {
            if v.is_nan() {
                self.nan += 1;
                continue;
            }
            if v.is_infinite() {
                self.infinite += 1;
                self.neg_infinite += u64::from(v < 0.0);
                continue;
            }
            self.zero += u64::from(v == 0.0);
            finite += 1;
            self.min = self.min.min(v);
            self.max = self.max.max(v);
            sum += f64::from(v);
        }
        if finite == 0 {
            return;
        }
        let n_b = finite as f64;
        let mean_b = sum / n_b;
        let finite_values = values.iter().copied().filter(|v| v.is_finite());
        let m2_b: f64 = finite_values
            .clone()
            .map(|v| (f64::from(v) - mean_b).powi(2))
            .sum();
        let n_a = self.finite as f64;
        let n = n_a + n_b;
        let delta = mean_b - self.mean;
        self.mean += delta * (n_b / n);
        self.m2 += m2_b + delta * delta * (n_a * n_b / n);
        self.finite += finite;
        if !self.bins.is_empty() {
            for v in finite_values {
                self.count_in_histogram(f64::from(v));
            }
        }
    }

    /// An empty accumulator without a histogram (moments and counts only; `bins()` is empty).
    pub fn without_histogram() -> Stats {
        Stats {
            bins: Vec::new(),
            ..Stats::new(2)
        }
    }

    /// Values seen, including NaN and infinities.
    pub fn count(&self) -> u64 {
        self.count
    }
    pub fn nan_count(&self) -> u64 {
        self.nan
    }
    /// Infinities of either sign.
    pub fn infinite_count(&self) -> u64 {
        self.infinite
    }
    /// Negative infinities.
    pub fn neg_infinite_count(&self) -> u64 {
        self.neg_infinite
    }
    /// Values that are finite.
    pub fn finite_count(&self) -> u64 {
        self.finite
    }
    pub fn zero_count(&self) -> u64 {
        self.zero
    }
    /// Smallest finite value (None before any).
    pub fn min(&self) -> Option<f32> {
        (self.finite > 0).then_some(self.min)
    }
    /// Largest finite value (None before any).
    pub fn max(&self) -> Option<f32> {
        (self.finite > 0).then_some(self.max)
    }
    /// Mean of the finite values (None before any).
    pub fn mean(&self) -> Option<f64> {
        (self.finite > 0).then_some(self.mean)
    }
    /// Population standard deviation of the finite values (None before any).
    pub fn std_dev(&self) -> Option<f64> {
        (self.finite > 0).then(|| (self.m2 / self.finite as f64).sqrt())
    }
    /// Histogram bin counts of the finite values.
    pub fn bins(&self) -> &[u64] {
        &self.bins
    }
    /// Bin edges: `bins().len() + 1` values, evenly spaced.
    pub fn bin_edges(&self) -> Vec<f64> {
        (0..=self.bins.len())
            .map(|i| self.hist_start + self.hist_width * i as f64)
            .collect()
    }

    fn start_histogram(&mut self, values: &[f32]) {
        let finite = values.iter().copied().filter(|v| v.is_finite());
        let (lo, hi) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(f64::from(v)), hi.max(f64::from(v)))
        });
        if lo > hi {
            return;
        }
        let span = if hi > lo { hi - lo } else { lo.abs().max(1.0) };
        // A little headroom so the largest value falls inside the last bin.
        self.hist_width = span * (1.0 + 1e-9) / self.bins.len() as f64;
        self.hist_start = lo;
    }

    fn count_in_histogram(&mut self, x: f64) {
        if self.hist_width == 0.0 {
            return;
        }
        let n = self.bins.len();
        loop {
            let pos = (x - self.hist_start) / self.hist_width;
            if pos < 0.0 {
                self.grow_down();
            } else if pos >= n as f64 {
                self.grow_up();
            } else {
                self.bins[(pos as usize).min(n - 1)] += 1;
                return;
            }
        }
    }

    /// Doubles the range upwards: old bins pair up into the lower half.
    fn grow_up(&mut self) {
        let n = self.bins.len();
        for i in 0..n / 2 {
            self.bins[i] = self.bins[2 * i] + self.bins[2 * i + 1];
        }
        self.bins[n / 2..].fill(0);
        self.hist_width *= 2.0;
    }

    /// Doubles the range downwards: old bins pair up into the upper half.
    fn grow_down(&mut self) {
        let n = self.bins.len();
        for i in (0..n / 2).rev() {
            self.bins[n / 2 + i] = self.bins[2 * i] + self.bins[2 * i + 1];
        }
        self.bins[..n / 2].fill(0);
        self.hist_start -= self.hist_width * n as f64;
        self.hist_width *= 2.0;
    }
}

/// A histogram over a range known in advance, numpy's `histogram(x, bins, range=(lo, hi))` rule:
/// edges are f64, `edge[i] = lo + i * ((hi - lo) / bins)` for `i < bins` and `edge[bins] = hi`
/// (numpy's `linspace`); bin `i` holds `edge[i] <= x < edge[i + 1]`, the last bin also holds
/// `x == hi`. Values outside `[lo, hi]` and non-finite values are not counted. When `lo == hi`
/// the range is widened to `[lo - 0.5, hi + 0.5]`, as numpy does.
///
/// Used for the second pass of `gguf-lens stats`: a first pass ([`Stats`]) finds the finite
/// min and max, this one counts over exactly `[min, max]`.
#[derive(Debug, Clone)]
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

    /// Counts the values of a chunk that fall in the range.
    pub fn add(&mut self, values: &[f32]) {
        let n = self.counts.len();
        let (lo, hi) = (self.edges[0], self.edges[n]);
        for &v in values {
            let x = f64::from(v);
            // Also skips NaN (every comparison is false).
            if !(x >= lo && x <= hi) {
                continue;
            }
            // An estimate, then the edges decide (the estimate is off by one at most).
            let mut i = (((x - lo) * self.norm) as usize).min(n - 1);
            while i > 0 && x < self.edges[i] {
                i -= 1;
            }
            while i + 1 < n && x >= self.edges[i + 1] {
                i += 1;
            }
            self.counts[i] += 1;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_and_counts() {
        let mut s = Stats::new(4);
        s.add(&[1.0, 2.0, f32::NAN]);
        s.add(&[3.0, 0.0, f32::INFINITY, -0.0]);
        assert_eq!(s.count(), 7);
        assert_eq!(s.nan_count(), 1);
        assert_eq!(s.infinite_count(), 1);
        assert_eq!(s.neg_infinite_count(), 0);
        assert_eq!(s.finite_count(), 5);
        assert_eq!(s.zero_count(), 2);
        assert_eq!(s.min(), Some(0.0));
        assert_eq!(s.max(), Some(3.0));
        assert!((s.mean().unwrap() - 1.2).abs() < 1e-12);
        let var = [1.0, 2.0, 3.0, 0.0, 0.0]
            .iter()
            .map(|x: &f64| (x - 1.2).powi(2))
            .sum::<f64>()
            / 5.0;
        assert!((s.std_dev().unwrap() - var.sqrt()).abs() < 1e-12);
        assert_eq!(s.bins().iter().sum::<u64>(), 5);
    }

    #[test]
    fn histogram_grows_both_ways_and_keeps_every_value() {
        let mut s = Stats::new(8);
        s.add(&[0.0, 1.0]);
        s.add(&[100.0, -50.0, 0.5]);
        assert_eq!(s.bins().iter().sum::<u64>(), 5);
        let edges = s.bin_edges();
        assert!(edges[0] <= -50.0 && *edges.last().unwrap() > 100.0);
    }

    #[test]
    fn moments_merge_across_chunks_like_one_pass() {
        let values: Vec<f32> = (0..1000).map(|i| 1e4 + (i as f32 * 0.7).sin()).collect();
        let mut one = Stats::without_histogram();
        one.add(&values);
        let mut many = Stats::new(8);
        for c in values.chunks(7) {
            many.add(c);
        }
        let mean = values.iter().map(|&v| f64::from(v)).sum::<f64>() / 1000.0;
        let var = values
            .iter()
            .map(|&v| (f64::from(v) - mean).powi(2))
            .sum::<f64>()
            / 1000.0;
        for s in [&one, &many] {
            assert!((s.mean().unwrap() - mean).abs() < 1e-9);
            assert!((s.std_dev().unwrap() - var.sqrt()).abs() < 1e-9);
        }
        assert!(one.bins().is_empty());
        assert_eq!(many.bins().iter().sum::<u64>(), 1000);
    }

    #[test]
    fn empty_has_no_moments() {
        let s = Stats::new(3);
        assert_eq!(s.bins().len(), 4);
        assert_eq!(s.min(), None);
        assert_eq!(s.std_dev(), None);
    }

    #[test]
    fn fixed_histogram_follows_numpys_edges() {
        // numpy: np.histogram([0, 1, 2, 3, 4, 10], bins=5, range=(0, 10))
        //   -> counts [2, 2, 1, 0, 1], edges [0, 2, 4, 6, 8, 10]
        let mut h = Histogram::new(5, 0.0, 10.0).unwrap();
        h.add(&[0.0, 1.0, 2.0, 3.0, 4.0]);
        h.add(&[10.0, f32::NAN, f32::INFINITY, -1.0, 11.0]);
        assert_eq!(h.counts(), [2, 2, 1, 0, 1]);
        assert_eq!(h.edges(), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
    }

    #[test]
    fn fixed_histogram_of_one_value_widens_like_numpy() {
        // numpy: np.histogram([3, 3], bins=2, range=(3, 3)) -> [0, 2], edges [2.5, 3, 3.5]
        let mut h = Histogram::new(2, 3.0, 3.0).unwrap();
        h.add(&[3.0, 3.0]);
        assert_eq!(h.counts(), [0, 2]);
        assert_eq!(h.edges(), [2.5, 3.0, 3.5]);
        assert!(Histogram::new(4, 1.0, 0.0).is_none());
        assert!(Histogram::new(4, 0.0, f64::INFINITY).is_none());
    }
}
