use super::table::put;
use super::*;
use crate::error::Result;
use crate::stats::{run_native, ReadRows, StatsJob, StatsReport, StatsRequest};
use std::ops::Range;

/// How rows reach the job: from blocks, value by value (the reference), or alternating.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Feed {
    Blocks,
    Values,
    Mixed,
}

struct Rows<'a> {
    bytes: &'a [u8],
    row: u64,
    feed: Feed,
}

impl ReadRows for Rows<'_> {
    fn add_to(&mut self, job: &mut StatsJob, rows: Range<u64>) -> Result<()> {
        let row_bytes = self.row as usize / BLOCK * BLOCK_BYTES;
        let bytes = &self.bytes[rows.start as usize * row_bytes..rows.end as usize * row_bytes];
        let n = rows.end - rows.start;
        let blocks = self.feed == Feed::Blocks || (self.feed == Feed::Mixed && rows.start % 2 == 0);
        if blocks {
            return job.add_q8_0(rows.start, n, bytes);
        }
        job.add_with(rows.start, n, &mut |r, out| {
            let b = &bytes[r.start / BLOCK * BLOCK_BYTES..r.end / BLOCK * BLOCK_BYTES];
            crate::quant::dequantize_with(crate::Kernel::Scalar, crate::GgmlType::Q8_0, b, out)
        })
    }
}

fn stats(
    bytes: &[u8],
    row: u64,
    rows: Range<u64>,
    feed: Feed,
    threads: usize,
    chunk: u64,
) -> StatsReport {
    let request = StatsRequest {
        bins: 41,
        percentiles: true,
    };
    let mut job = StatsJob::new(rows, row, request);
    run_native(&mut job, threads, chunk, || Ok(Rows { bytes, row, feed })).unwrap();
    job.report()
}

/// `blocks` Q8_0 blocks from a splitmix64 stream: scales of either sign (`scales` distinct
/// at most), codes over the whole byte range or near zero, and with `odd` a few blocks
/// with an infinite, NaN or signed zero scale.
fn blocks(blocks: usize, scales: u64, odd: bool) -> Vec<u8> {
    let mut x = 0x0123_4567_89ab_cdefu64;
    let mut next = || {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut out = Vec::with_capacity(blocks * BLOCK_BYTES);
    for b in 0..blocks {
        let d = half::f16::from_f32(
            ((next() % scales) as f32 + 1.0) * 1e-5 * if next() % 5 == 0 { -1.0 } else { 1.0 },
        );
        let d = match (odd, b % 61) {
            (true, 7) => half::f16::INFINITY,
            (true, 8) => half::f16::NEG_INFINITY,
            (true, 11) => half::f16::NAN,
            (true, 13) => half::f16::NEG_ZERO,
            (true, 14) => half::f16::ZERO,
            _ => d,
        };
        out.extend_from_slice(&d.to_bits().to_le_bytes());
        let narrow = b % 3 == 0;
        for _ in 0..BLOCK {
            let q = next() as u8;
            out.push(if narrow { (q as i8 / 16) as u8 } else { q });
        }
        if b % 17 == 0 {
            // Codes of one sign only (ranges that touch zero), and -128.
            let last = out.len();
            for q in &mut out[last - BLOCK..] {
                *q &= 0x7f;
            }
            out[last - 1] = if b % 34 == 0 { 0x80 } else { 0 };
        }
    }
    out
}

fn close(a: f64, b: f64, scale: f64) -> bool {
    (a - b).abs() <= 1e-12 * scale
}

fn same(got: &StatsReport, want: &StatsReport) {
    let (a, b) = (got.moments, want.moments);
    assert_eq!(
        (a.count, a.nan, a.pos_inf, a.neg_inf, a.zeros, a.finite),
        (b.count, b.nan, b.pos_inf, b.neg_inf, b.zeros, b.finite)
    );
    assert_eq!(
        (a.min.to_bits(), a.max.to_bits()),
        (b.min.to_bits(), b.max.to_bits()),
        "{a:?} {b:?}"
    );
    if b.finite > 0 {
        let scale = b.mean.abs().max(want.std.unwrap());
        assert!(close(a.mean, b.mean, scale), "{a:?} {b:?}");
        assert!(
            close(got.std.unwrap(), want.std.unwrap(), scale),
            "{a:?} {b:?}"
        );
    }
    assert_eq!(got.histogram, want.histogram);
    assert_eq!(got.percentiles, want.percentiles);
}

#[test]
fn blocks_give_the_per_value_results() {
    // Row lengths: a piece's worth and more, and one not dividing a piece.
    // One scale magnitude: rows of the table pass u16 counts (flushes, wide merges).
    for (row, n_rows, scales, odd) in [
        (256, 1200, 1, false),
        (4096, 40, 3000, true),
        (96, 700, 200, false),
        (2080, 31, 9000, true),
    ] {
        let bytes = blocks(row as usize * n_rows / BLOCK, scales, odd);
        let rows = 0..n_rows as u64;
        let want = stats(&bytes, row, rows.clone(), Feed::Values, 1, 1 << 20);
        let got = stats(&bytes, row, rows.clone(), Feed::Blocks, 1, 1 << 20);
        same(&got, &want);
        if odd {
            let m = got.moments;
            assert!(m.nan > 0 && m.pos_inf > 0 && m.neg_inf > 0 && m.zeros > 0);
        }
        same(
            &stats(&bytes, row, rows.clone(), Feed::Mixed, 3, 5000),
            &want,
        );
        // The same bits for any thread count and chunk size, and a range off the grid.
        for (threads, chunk) in [(2, 1 << 20), (3, 70_000), (5, 1)] {
            assert_eq!(
                stats(&bytes, row, rows.clone(), Feed::Blocks, threads, chunk),
                got
            );
        }
        let end = n_rows as u64 - 1;
        let part = stats(&bytes, row, 3..end, Feed::Blocks, 1, 1 << 20);
        assert_eq!(stats(&bytes, row, 3..end, Feed::Blocks, 4, 5000), part);
        same(&part, &stats(&bytes, row, 3..end, Feed::Values, 2, 5000));
    }
}

#[test]
fn zero_scales_and_zero_ranges() {
    // Every scale zero (all values ±0), and codes of one sign (ranges ending at zero).
    let mut bytes = blocks(512, 100, false);
    for (i, b) in bytes.chunks_exact_mut(BLOCK_BYTES).enumerate() {
        let d = if i % 3 == 0 {
            half::f16::NEG_ZERO
        } else {
            half::f16::ZERO
        };
        b[..2].copy_from_slice(&d.to_bits().to_le_bytes());
    }
    let want = stats(&bytes, 256, 0..64, Feed::Values, 1, 1 << 20);
    same(&stats(&bytes, 256, 0..64, Feed::Blocks, 2, 1000), &want);
    let mut bytes = blocks(512, 100, false);
    for b in bytes.chunks_exact_mut(BLOCK_BYTES) {
        b[..2].copy_from_slice(&half::f16::from_f32(0.01).to_bits().to_le_bytes());
        for q in &mut b[2..] {
            *q &= 0x7f;
        }
    }
    let want = stats(&bytes, 256, 0..64, Feed::Values, 1, 1 << 20);
    assert_eq!(want.moments.min, 0.0);
    same(&stats(&bytes, 256, 0..64, Feed::Blocks, 2, 1000), &want);
}

#[test]
fn a_full_table_spills_into_buckets() {
    // More distinct scales than a table holds: the parts spill, the results stay.
    let mut bytes = blocks(3 * ROWS, 40_000, false);
    for (i, b) in bytes.chunks_exact_mut(BLOCK_BYTES).enumerate() {
        // Every scale its own (finite, either sign).
        let d = (0x1000 + i as u16) | if i % 3 == 0 { 0x8000 } else { 0 };
        b[..2].copy_from_slice(&d.to_le_bytes());
    }
    assert!(Table::default().add(&bytes) < 3 * ROWS);
    let want = stats(&bytes, 64, 0..3 * ROWS as u64 / 2, Feed::Values, 1, 1 << 20);
    for threads in [1, 2, 7] {
        same(
            &stats(
                &bytes,
                64,
                0..3 * ROWS as u64 / 2,
                Feed::Blocks,
                threads,
                1 << 14,
            ),
            &want,
        );
    }
}

#[test]
fn a_table_crosses_as_bytes() {
    let bytes = blocks(2000, 500, true);
    let mut t = Table::default();
    assert_eq!(t.add(&bytes), 2000);
    let back = Table::from_bytes(&t.to_bytes()).unwrap();
    assert_eq!(back.values(), t.values());
    assert_eq!(
        back.rows().collect::<Vec<_>>(),
        t.rows().collect::<Vec<_>>()
    );
    // Through serde (a job's state as JSON: the bytes as numbers).
    let json = serde_json::to_string(&t).unwrap();
    let again: Table = serde_json::from_str(&json).unwrap();
    assert_eq!(
        again.rows().collect::<Vec<_>>(),
        t.rows().collect::<Vec<_>>()
    );
    // Malformed bytes are an error, never a panic.
    let good = t.to_bytes();
    for cut in [0, 1, 5, good.len() / 2, good.len() - 1] {
        assert!(Table::from_bytes(&good[..cut]).is_none());
    }
    let mut long = good.clone();
    long.push(0);
    assert!(Table::from_bytes(&long).is_none());
    assert!(Table::from_bytes(&[0xff; 11]).is_none());
    // A row count past the cap.
    let mut many = Vec::new();
    put(&mut many, 0);
    put(&mut many, ROWS as u64 + 1);
    assert!(Table::from_bytes(&many).is_none());
}
