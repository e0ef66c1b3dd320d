//! Pass 2 over one piece: the values of the buckets a histogram edge cuts are binned one by one,
//! those of the target buckets counted by their low key bits; the rest (nearly all) are only
//! looked up (`table`: 1 an edge cuts the bucket, 2 a target), eight at a time where AVX2 is
//! chosen. Flagged values of one key are added as one count: the two commonest (hot) keys are
//! only counted in the filter, the others gather in slots by key. A tensor of few distinct
//! values (ternary, FP4) or many zeros would otherwise make each increment of one counter wait
//! for the last.

use super::histogram::Histogram;
#[cfg(target_arch = "x86_64")]
use super::kernels::{avx2, isa, Isa};
use super::percentiles::{from_key, key, Target, BUCKETS};

/// Adds the flagged values of `values` to the histogram and targets.
pub(super) fn pass2(
    table: &[u8],
    histogram: Option<&mut Histogram>,
    targets: &mut [Target],
    values: &[f32],
) {
    let table = &table[..BUCKETS.max(table.len())];
    let mut run = Runs::default();
    let mut out = Out {
        table,
        histogram,
        targets,
    };
    by_table(&mut out, &mut run, values);
    for r in &run.slots {
        out.commit(r);
    }
}

/// Where flagged values go.
struct Out<'a, 'h> {
    table: &'a [u8],
    histogram: Option<&'h mut Histogram>,
    targets: &'a mut [Target],
}

/// A flagged key and how many of its values are pending, added at once.
#[derive(Default, Clone, Copy)]
struct Run {
    key: u32,
    n: u64,
}

/// Slots of pending runs, one per hash of their key (flagged values of many distinct keys, as an
/// FP4 tensor's, each find theirs), and the key taken last.
struct Runs {
    slots: [Run; SLOTS],
    last: u32,
}

const SLOTS: usize = 64;

impl Default for Runs {
    fn default() -> Runs {
        Runs {
            slots: [Run::default(); SLOTS],
            last: COLD[0],
        }
    }
}

impl Out<'_, '_> {
    /// Takes `k`, the key of a value; flagged ones extend the run or start a new one.
    #[inline]
    fn take(&mut self, runs: &mut Runs, k: u32) {
        if self.table[(k >> 16) as usize] == 0 {
            return;
        }
        runs.last = k;
        let run = &mut runs.slots[(k.wrapping_mul(0x9e37_79b1) >> 26) as usize % SLOTS];
        if k == run.key && run.n > 0 {
            run.n += 1;
        } else {
            let old = *run;
            *run = Run { key: k, n: 1 };
            self.commit(&old);
        }
    }

    fn commit(&mut self, run: &Run) {
        if run.n == 0 {
            return;
        }
        let k = run.key;
        let flag = self.table[(k >> 16) as usize];
        if flag & 1 != 0 {
            if let Some(h) = self.histogram.as_deref_mut() {
                if let Some(i) = h.bin_of(f64::from(from_key(k))) {
                    h.add_count(i, run.n);
                }
            }
        }
        if flag & 2 != 0 {
            for t in self.targets.iter_mut() {
                if t.bucket == k >> 16 {
                    t.low[(k & 0xffff) as usize] += run.n;
                }
            }
        }
    }
}

super::kernels::dispatch! {
    /// Every value's bucket looked up; the flagged values taken.
    fn by_table(out: &mut Out<'_, '_>, run: &mut Runs, values: &[f32]) -> () => by_table_body
}

/// Two keys counted apart from the one-by-one path (a tensor of few distinct values has most of
/// its flagged values on one or two keys: zeros of both signs, a ternary tensor's levels): the
/// key taken last one by one becomes hot when a block still had many to take. Any choice gives
/// the same counts (they are integers); the first two never match a flagged finite value.
const COLD: [u32; 2] = [u32::MAX, u32::MAX - 1];

/// Flagged values of a block taken one by one above which the last taken key becomes hot.
const REHEAT: usize = 16;

#[inline(always)]
fn by_table_body(out: &mut Out, run: &mut Runs, values: &[f32]) {
    let mut flagged = [0u16; 256];
    let mut keys = [0u32; 256];
    let mut hot = COLD;
    let mut hits = [0u64; 2];
    for block in values.chunks(256) {
        // The flagged values that are not hot: their positions first, without branches, then
        // those values one by one; the hot ones only counted.
        let (n, [c0, c1]) = filter(out.table, block, &mut keys, &mut flagged, hot);
        hits[0] += u64::from(c0);
        hits[1] += u64::from(c1);
        for &i in &flagged[..n] {
            out.take(run, keys[i as usize]);
        }
        if n > REHEAT && run.last != hot[0] && run.last != hot[1] {
            out.commit(&Run {
                key: hot[1],
                n: hits[1],
            });
            (hot[1], hits[1]) = (hot[0], hits[0]);
            (hot[0], hits[0]) = (run.last, 0);
        }
    }
    for (key, n) in hot.into_iter().zip(hits) {
        out.commit(&Run { key, n });
    }
}

/// Bytes past `BUCKETS` a table needs for the vector filter (it reads 4 bytes per bucket).
pub(super) const PAD: usize = 3;

/// Writes the keys of `block` (at most 256 values), the positions of its flagged values that are
/// not `hot`, and how many values equal each hot key; returns the number of positions.
#[inline(always)]
fn filter(
    table: &[u8],
    block: &[f32],
    keys: &mut [u32; 256],
    flagged: &mut [u16; 256],
    hot: [u32; 2],
) -> (usize, [u32; 2]) {
    #[cfg(target_arch = "x86_64")]
    {
        if table.len() >= BUCKETS + PAD && isa() == Isa::Avx2 {
            // SAFETY: the CPU has AVX2 (`isa` chose it only then); the table holds every
            // 4-byte read at a bucket index (checked just above).
            return unsafe { avx2::pass2::filter(table, block, keys, flagged, hot) };
        }
    }
    filter_scalar(table, block, keys, flagged, hot, 0, (0, [0; 2]))
}

/// [`filter`] from value `from` of the block on, adding to `(n, c)` found before it.
#[inline(always)]
pub(in crate::stats) fn filter_scalar(
    table: &[u8],
    block: &[f32],
    keys: &mut [u32; 256],
    flagged: &mut [u16; 256],
    hot: [u32; 2],
    from: usize,
    (mut n, mut c): (usize, [u32; 2]),
) -> (usize, [u32; 2]) {
    for (i, &v) in block.iter().enumerate().skip(from) {
        let k = key(v);
        keys[i] = k;
        let (h0, h1) = (k == hot[0], k == hot[1]);
        c[0] += u32::from(h0);
        c[1] += u32::from(h1);
        flagged[n] = i as u16;
        n += usize::from((table[(k >> 16) as usize] != 0) & !(h0 | h1));
    }
    (n, c)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs of equal values (zeros of both signs, repeats) and values of every kind give the
    /// counts of a plain value-by-value reference, on edges that fall inside crowded buckets.
    #[test]
    fn runs_count_as_their_values() {
        let mut values: Vec<f32> = (0..40_000u32)
            .map(|i| {
                let x = i.wrapping_mul(2_654_435_761);
                let m = (x >> 8) as f32 / (1u32 << 24) as f32 - 0.5;
                match (i / 7) % 5 {
                    0 => 0.0,
                    1 if i % 3 == 0 => -0.0,
                    2 => 0.25,
                    3 => f32::from_bits(x & 0x807f_ffff),
                    _ => m,
                }
            })
            .collect();
        values.extend([f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.5, -0.5]);
        for bins in [1usize, 3, 32, 1000] {
            let h = Histogram::new(bins, -0.5, 0.5).unwrap();
            // The buckets an edge cuts, by the job's rule, and three targets.
            let mut table = vec![0u8; BUCKETS + PAD];
            let (klo, khi) = (key(-0.5), key(0.5));
            for b in (key(f32::MIN) >> 16)..=(key(f32::MAX) >> 16) {
                let (first, last) = (klo.max(b << 16), khi.min(b << 16 | 0xffff));
                if first <= last
                    && h.bin_of(from_key(first).into()) != h.bin_of(from_key(last).into())
                {
                    table[b as usize] = 1;
                }
            }
            let picks = [key(0.0) >> 16, key(-0.0) >> 16, key(0.25) >> 16];
            for &b in &picks {
                table[b as usize] |= 2;
            }
            let mut got = h.clone();
            let mut targets: Vec<Target> = picks.iter().map(|&b| Target::new(b)).collect();
            for piece in values.chunks(4096) {
                pass2(&table, Some(&mut got), &mut targets, piece);
            }
            // Unpadded: the scalar filter, the same counts.
            let mut scalar = h.clone();
            let mut scalar_targets: Vec<Target> = picks.iter().map(|&b| Target::new(b)).collect();
            for piece in values.chunks(4096) {
                pass2(
                    &table[..BUCKETS],
                    Some(&mut scalar),
                    &mut scalar_targets,
                    piece,
                );
            }
            assert_eq!(scalar.counts(), got.counts(), "{bins} bins, scalar filter");
            let mut want = h.clone();
            let mut want_targets: Vec<Target> = picks.iter().map(|&b| Target::new(b)).collect();
            for &v in &values {
                let k = key(v);
                let flag = table[(k >> 16) as usize];
                if flag & 1 != 0 {
                    if let Some(i) = want.bin_of(v.into()) {
                        want.add_count(i, 1);
                    }
                }
                for t in want_targets
                    .iter_mut()
                    .filter(|t| flag & 2 != 0 && t.bucket == k >> 16)
                {
                    t.low[(k & 0xffff) as usize] += 1;
                }
            }
            assert_eq!(got.counts(), want.counts(), "{bins} bins");
            for ((a, b), c) in targets.iter().zip(&want_targets).zip(&scalar_targets) {
                assert_eq!(a.low, b.low);
                assert_eq!(c.low, b.low);
                assert!(a.low.iter().sum::<u64>() > 0);
            }
            assert_eq!(table.contains(&1), bins > 1);
        }
    }
}
