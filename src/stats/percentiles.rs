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

super::isa::dispatch! {
    /// Counts `values` per bucket of their key's top 16 bits (`coarse` has `BUCKETS` entries).
    pub(crate) fn count_coarse(coarse: &mut [u64], values: &[f32]) -> () => count_coarse_body
}

#[inline(always)]
fn count_coarse_body(coarse: &mut [u64], values: &[f32]) {
    let coarse = &mut coarse[..BUCKETS];
    let mut tops = [0u16; 256];
    for block in values.chunks(256) {
        // The buckets in one vectorized loop, the increments in a short scalar one.
        for (t, &v) in tops.iter_mut().zip(block) {
            *t = (key(v) >> 16) as u16;
        }
        for &t in &tops[..block.len()] {
            coarse[t as usize] += 1;
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
        let mut c = vec![0u64; BUCKETS];
        count_coarse(&mut c, &vs);
        assert_eq!(c.iter().sum::<u64>(), 1001);
        assert_eq!(c[(key(0.0) >> 16) as usize], 143);
    }
}
