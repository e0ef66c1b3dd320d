//! Exact percentiles (numpy's default `percentile`, method "linear") in the same two passes as
//! the histogram, with bounded memory.
//!
//! For `n` finite values and percentile `p`, numpy takes the sorted values `v` at the virtual
//! index `i = (n - 1) * p / 100` and interpolates `v[floor(i)]` and `v[floor(i) + 1]` with
//! weight `i - floor(i)`. Those order statistics are found without sorting: every f32 has an
//! order-preserving 32-bit [`key`]; pass 1 counts the values per bucket of the key's top 16 bits
//! (`coarse`), which locates each wanted rank's bucket; pass 2 counts the values of those few
//! buckets by the key's low 16 bits, which gives the exact value at each rank.
//!
//! The coarse counts also give most of the display histogram: a bucket whose lowest and highest
//! possible values fall in the same numpy bin adds its count there, and only the values of the
//! buckets an edge cuts (at most `bins + 1`) are binned one by one in pass 2.

use serde::{Deserialize, Serialize};

/// The percentiles reported: p1, p50 (median), p99.
pub const PERCENTILES: [f64; 3] = [1.0, 50.0, 99.0];

/// Buckets of the coarse count (the key's top 16 bits), and values of the fine one (low bits).
pub(crate) const BUCKETS: usize = 1 << 16;

/// The order-preserving key of `v`: for finite values `a < b` ⇔ `key(a) < key(b)` (and -0 just
/// below +0). Keys of NaN and the infinities fall in buckets no finite value shares
/// (`0x0000..=0x007f` and `0xff80..=0xffff`), so no finiteness test is needed when counting.
#[inline(always)]
pub(crate) fn key(v: f32) -> u32 {
    let b = v.to_bits();
    b ^ (((b as i32 >> 31) as u32) | 0x8000_0000)
}

/// The value whose [`key`] is `k`.
pub(crate) fn from_key(k: u32) -> f32 {
    f32::from_bits(k ^ ((!(k as i32 >> 31) as u32) | 0x8000_0000))
}

/// Sets of counters of the coarse count: value `i` of a run goes to set `i % SETS`, so the values
/// of a run in one bucket (tensors of few distinct values, zeros) do not wait each for the last
/// one's increment to be stored. Two, not four: half the counters' cache footprint costs less
/// than the waits it brings back (docs/benchmarks.md).
const SETS: usize = 2;

/// Pass 1's count of values per coarse bucket (the key's top 16 bits), empty when not wanted.
/// Serialized as the totals (a sparse array of `BUCKETS`); the sets are this process's own.
#[derive(Debug, Clone, Default)]
pub(crate) struct Coarse {
    /// Totals folded from `sets`, and counts that came from elsewhere.
    base: Vec<u64>,
    /// `SETS` counters per bucket, side by side (allocated on the first count).
    sets: Vec<u32>,
    /// Values counted into `sets` since they were last folded (u32 counters).
    pending: u64,
}

impl Coarse {
    pub(crate) fn new(wanted: bool) -> Coarse {
        Coarse {
            base: if wanted { vec![0; BUCKETS] } else { Vec::new() },
            ..Coarse::default()
        }
    }

    /// An empty count of the same kind.
    pub(crate) fn emptied(&self) -> Coarse {
        Coarse::new(!self.base.is_empty())
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.base.is_empty()
    }

    /// Empty or of `BUCKETS` (a state from another worker is checked before use).
    pub(crate) fn is_valid(&self) -> bool {
        self.base.is_empty() || self.base.len() == BUCKETS
    }

    /// Counts `values` (a no-op when empty).
    pub(crate) fn count(&mut self, values: &[f32]) {
        if self.base.len() != BUCKETS {
            return;
        }
        if self.sets.len() != SETS * BUCKETS {
            self.sets = vec![0; SETS * BUCKETS];
        }
        if self.pending + values.len() as u64 > u64::from(u32::MAX) {
            self.fold();
        }
        self.pending += values.len() as u64;
        for run in values.chunks(u32::MAX as usize) {
            count_sets(&mut self.sets, run);
        }
    }

    /// The totals, as a mutable array (for counts added per bucket).
    pub(crate) fn base_mut(&mut self) -> &mut [u64] {
        self.fold();
        &mut self.base
    }

    fn fold(&mut self) {
        if self.sets.len() == SETS * BUCKETS && self.pending > 0 {
            for (b, s) in self.base.iter_mut().zip(self.sets.chunks_exact_mut(SETS)) {
                *b += s.iter().map(|&x| u64::from(x)).sum::<u64>();
                s.fill(0);
            }
        }
        self.pending = 0;
    }

    /// The count per bucket.
    pub(crate) fn totals(&self) -> Vec<u64> {
        let mut out = self.base.clone();
        if self.sets.len() == SETS * BUCKETS && self.pending > 0 {
            for (b, s) in out.iter_mut().zip(self.sets.chunks_exact(SETS)) {
                *b += s.iter().map(|&x| u64::from(x)).sum::<u64>();
            }
        }
        out
    }

    /// Adds another count's totals (of the same length; others are not added).
    pub(crate) fn merge(&mut self, other: &Coarse) {
        if other.base.len() == self.base.len() {
            for (a, b) in self.base.iter_mut().zip(other.totals()) {
                *a += b;
            }
        }
    }
}

impl Serialize for Coarse {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        sparse::serialize(&self.totals(), s)
    }
}

impl<'de> Deserialize<'de> for Coarse {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Coarse, D::Error> {
        Ok(Coarse {
            base: sparse::deserialize(d)?,
            ..Coarse::default()
        })
    }
}

super::kernels::dispatch! {
    /// Counts `values` per bucket of their key's top 16 bits into `sets` (`SETS` per bucket).
    fn count_sets(sets: &mut [u32], values: &[f32]) -> () => count_sets_body
}

#[inline(always)]
fn count_sets_body(sets: &mut [u32], values: &[f32]) {
    let sets = &mut sets[..SETS * BUCKETS];
    let mask = SETS * BUCKETS - 1;
    let mut index = [0u32; 256];
    for block in values.chunks(256) {
        // Each value's counter in one vectorized loop (value `i` of a set of `SETS` in set `i`),
        // the increments in a short scalar one.
        let mut whole = block.chunks_exact(SETS);
        let mut at = index.chunks_exact_mut(SETS);
        for (c, out) in (&mut whole).zip(&mut at) {
            for (l, (o, &v)) in out.iter_mut().zip(c).enumerate() {
                *o = (key(v) >> 16) * SETS as u32 + l as u32;
            }
        }
        let done = block.len() / SETS * SETS;
        for (l, &v) in whole.remainder().iter().enumerate() {
            index[done + l] = (key(v) >> 16) * SETS as u32 + l as u32;
        }
        for &i in &index[..block.len()] {
            sets[i as usize & mask] += 1;
        }
    }
}

/// One bucket whose values pass 2 counts by their key's low 16 bits.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Target {
    pub(crate) bucket: u32,
    #[serde(with = "sparse")]
    pub(crate) low: Vec<u64>,
}

impl Target {
    pub(crate) fn new(bucket: u32) -> Target {
        Target {
            bucket,
            low: vec![0; BUCKETS],
        }
    }

    pub(crate) fn emptied(&self) -> Target {
        Target::new(self.bucket)
    }

    /// The value of rank `rank` (0-based) among this bucket's values, once counted.
    pub(crate) fn value_at(&self, rank: u64) -> f32 {
        let mut below = 0u64;
        for (low, &c) in self.low.iter().enumerate() {
            if rank < below + c {
                return from_key(self.bucket << 16 | low as u32);
            }
            below += c;
        }
        // Fewer values than pass 1 counted: the data changed between passes.
        f32::NAN
    }
}

/// The bucket holding rank `rank` (0-based among the counted values in key order) and the rank
/// within it.
pub(crate) fn locate(coarse: &[u64], rank: u64) -> Option<(u32, u64)> {
    let mut below = 0u64;
    for (b, &c) in coarse.iter().enumerate() {
        if rank < below + c {
            return Some((b as u32, rank - below));
        }
        below += c;
    }
    None
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

/// The serde form of a long, mostly zero count array (see `state.rs`).
pub(crate) use super::state::sparse;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_the_order_and_invert() {
        let vs = [
            f32::MIN,
            -1e30,
            -1.5,
            -1e-40,
            -0.0,
            0.0,
            1e-45,
            1e-40,
            0.3,
            1.0,
            1e30,
            f32::MAX,
        ];
        for w in vs.windows(2) {
            assert!(key(w[0]) < key(w[1]), "{} {}", w[0], w[1]);
        }
        for v in vs {
            assert_eq!(from_key(key(v)).to_bits(), v.to_bits());
        }
        // Non-finite keys are in buckets of their own.
        for v in [f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let b = key(v) >> 16;
            assert!(b <= 0x7f || b >= 0xff80, "{v}");
        }
        let (lo, hi) = (key(f32::MIN) >> 16, key(f32::MAX) >> 16);
        assert_eq!((lo, hi), (0x80, 0xff7f));
    }

    #[test]
    fn coarse_counts_every_value() {
        let vs: Vec<f32> = (0..1001).map(|i| ((i % 7) as f32 - 3.0) * 0.5).collect();
        let mut coarse = Coarse::new(true);
        coarse.count(&vs);
        coarse.count(&vs[..3]);
        let c = coarse.totals();
        assert_eq!(c.iter().sum::<u64>(), 1004);
        assert_eq!(coarse.base_mut().iter().sum::<u64>(), 1004);
        coarse.count(&vs[..3]);
        assert_eq!(coarse.totals().iter().sum::<u64>(), 1007);
        assert_eq!(c[(key(-1.5) >> 16) as usize], 144);
        assert_eq!(c[(key(0.0) >> 16) as usize], 143);
    }
}
