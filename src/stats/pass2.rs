//! Pass 2 over one piece: the values of the buckets a histogram edge cuts are binned one by one,
//! those of the target buckets counted by their low key bits; the rest (nearly all) are only
//! looked up (`table`: 1 an edge cuts the bucket, 2 a target). Equal flagged values in a row are
//! added as one count: a tensor of few distinct values (ternary, FP4) or many zeros would
//! otherwise make each increment of one counter wait for the last.

use super::histogram::Histogram;
use super::percentiles::{from_key, key, Target, BUCKETS};

/// Adds the flagged values of `values` to the histogram and targets.
pub(super) fn pass2(
    table: &[u8],
    histogram: Option<&mut Histogram>,
    targets: &mut [Target],
    values: &[f32],
) {
    let table = &table[..BUCKETS];
    let mut run = Run::default();
    let mut out = Out {
        table,
        histogram,
        targets,
    };
    by_table(&mut out, &mut run, values);
    out.commit(&run);
}

/// Where flagged values go.
struct Out<'a, 'h> {
    table: &'a [u8],
    histogram: Option<&'h mut Histogram>,
    targets: &'a mut [Target],
}

/// Equal keys in a row among the flagged values (often one value: zeros, a tensor of few
/// distinct values), added at once.
#[derive(Default)]
struct Run {
    key: u32,
    n: u64,
}

impl Out<'_, '_> {
    /// Takes `k`, the key of a value; flagged ones extend the run or start a new one.
    #[inline]
    fn take(&mut self, run: &mut Run, k: u32) {
        if self.table[(k >> 16) as usize] == 0 {
            return;
        }
        if k == run.key && run.n > 0 {
            run.n += 1;
        } else {
            self.commit(run);
            *run = Run { key: k, n: 1 };
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

super::isa::dispatch! {
    /// Every value's bucket looked up; the flagged values taken.
    fn by_table(out: &mut Out<'_, '_>, run: &mut Run, values: &[f32]) -> () => by_table_body
}

#[inline(always)]
fn by_table_body(out: &mut Out, run: &mut Run, values: &[f32]) {
    let mut flagged = [0u16; 256];
    let mut tops = [0u16; 256];
    for block in values.chunks(256) {
        for (t, &v) in tops.iter_mut().zip(block) {
            *t = (key(v) >> 16) as u16;
        }
        // The flagged values' positions first, without branches (a few percent of the values),
        // then those values one by one.
        let mut n = 0;
        for (i, &t) in tops[..block.len()].iter().enumerate() {
            flagged[n] = i as u16;
            n += usize::from(out.table[t as usize] != 0);
        }
        for &i in &flagged[..n] {
            out.take(run, key(block[i as usize]));
        }
    }
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
            let mut table = vec![0u8; BUCKETS];
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
            for (a, b) in targets.iter().zip(&want_targets) {
                assert_eq!(a.low, b.low);
                assert!(a.low.iter().sum::<u64>() > 0);
            }
            assert_eq!(table.contains(&1), bins > 1);
        }
    }
}
