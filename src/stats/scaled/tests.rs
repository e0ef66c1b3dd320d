use super::table::put;
use super::*;
use crate::error::Result;
use crate::stats::layout::{layout_of, Form, LAYOUTS};
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
    layout: &'static Layout,
}

impl ReadRows for Rows<'_> {
    fn add_to(&mut self, job: &mut StatsJob, rows: Range<u64>) -> Result<()> {
        let (block, block_bytes) = (self.layout.block, self.layout.block_bytes);
        let row_bytes = self.row as usize / block * block_bytes;
        let bytes = &self.bytes[rows.start as usize * row_bytes..rows.end as usize * row_bytes];
        let n = rows.end - rows.start;
        let blocks = self.feed == Feed::Blocks || (self.feed == Feed::Mixed && rows.start % 2 == 0);
        if blocks {
            return job.add_blocks(rows.start, n, self.layout, crate::Kernel::best(), bytes);
        }
        let ty = self.layout.ty;
        job.add_with(rows.start, n, &mut |r, out| {
            let b = &bytes[r.start / block * block_bytes..r.end / block * block_bytes];
            crate::quant::dequantize_with(crate::Kernel::Scalar, ty, b, out)
        })
    }
}

fn stats(
    layout: &'static Layout,
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
    run_native(&mut job, threads, chunk, || {
        Ok(Rows {
            bytes,
            row,
            feed,
            layout,
        })
    })
    .unwrap();
    job.report()
}

/// A splitmix64 stream.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Block `b`'s f16 scale: one of `scales` multiples of `unit` of either sign, with `odd` an
    /// infinite, NaN or signed zero one every few blocks.
    fn f16_scale(&mut self, b: usize, scales: u64, unit: f32, odd: bool) -> half::f16 {
        let magnitude = ((self.next() % scales) as f32 + 1.0) * unit;
        let d = half::f16::from_f32(if self.next() % 5 == 0 {
            -magnitude
        } else {
            magnitude
        });
        match (odd, b % 61) {
            (true, 7) => half::f16::INFINITY,
            (true, 8) => half::f16::NEG_INFINITY,
            (true, 11) => half::f16::NAN,
            (true, 13) => half::f16::NEG_ZERO,
            (true, 14) => half::f16::ZERO,
            _ => d,
        }
    }
}

/// `blocks` Q8_0 blocks from a splitmix64 stream: scales of either sign (`scales` distinct
/// at most), codes over the whole byte range or near zero, and with `odd` a few blocks
/// with an infinite, NaN or signed zero scale.
fn q8_blocks(blocks: usize, scales: u64, odd: bool) -> Vec<u8> {
    let mut mix = Mix(0x0123_4567_89ab_cdef);
    const BLOCK: usize = 32;
    let mut out = Vec::with_capacity(blocks * 34);
    for b in 0..blocks {
        let d = mix.f16_scale(b, scales, 1e-5, odd);
        out.extend_from_slice(&d.to_bits().to_le_bytes());
        let narrow = b % 3 == 0;
        for _ in 0..BLOCK {
            let q = mix.next() as u8;
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

fn q8() -> &'static Layout {
    layout_of(crate::GgmlType::Q8_0).unwrap()
}

/// `blocks` blocks of `layout` from a splitmix64 stream: random bytes, the scale field set to
/// one of `scales` values of either sign (E8M0: exponents from 100 on), with `odd` a few blocks
/// whose scale is infinite, NaN, a signed zero (E8M0: the subnormal and the largest, whose
/// products overflow).
fn any_blocks(layout: &Layout, blocks: usize, scales: u64, odd: bool) -> Vec<u8> {
    let mut mix = Mix(0x0fed_cba9_8765_4321 ^ layout.block_bytes as u64);
    let mut out = Vec::with_capacity(blocks * layout.block_bytes);
    for b in 0..blocks {
        let start = out.len();
        out.extend((0..layout.block_bytes).map(|_| mix.next() as u8));
        let block = &mut out[start..];
        let at = layout.scale_at;
        match layout.scale {
            Scale::F16 => {
                let d = mix.f16_scale(b, scales, 1e-4, odd);
                block[at..at + 2].copy_from_slice(&d.to_bits().to_le_bytes());
            }
            Scale::E8m0Half => {
                block[at] = match (odd, b % 61) {
                    (true, 7) => 255,
                    (true, 8) => 0,
                    (true, 9) => 1,
                    _ => 100 + (mix.next() % scales.min(150)) as u8,
                };
            }
        }
    }
    out
}

#[test]
fn every_layout_gives_the_per_value_results() {
    for layout in scaled_layouts() {
        let block = layout.block as u64;
        for (row, n_rows, scales, odd) in [
            (4096, 24, 300, true),
            (block * 3, 500, 40, false),
            (block * 65, 33, 2000, true),
        ] {
            let bytes = any_blocks(layout, (row * n_rows / block) as usize, scales, odd);
            let rows = 0..n_rows;
            let want = stats(layout, &bytes, row, rows.clone(), Feed::Values, 1, 1 << 20);
            let got = stats(layout, &bytes, row, rows.clone(), Feed::Blocks, 1, 1 << 20);
            same(&got, &want);
            same(
                &stats(layout, &bytes, row, rows.clone(), Feed::Mixed, 3, 5000),
                &want,
            );
            for (threads, chunk) in [(2, 1 << 20), (3, 70_000)] {
                assert_eq!(
                    stats(
                        layout,
                        &bytes,
                        row,
                        rows.clone(),
                        Feed::Blocks,
                        threads,
                        chunk
                    ),
                    got,
                    "{:?}",
                    layout.ty
                );
            }
            if odd && layout.scale == Scale::F16 {
                let m = got.moments;
                assert!(
                    m.nan > 0 && m.pos_inf > 0 && m.neg_inf > 0,
                    "{:?}",
                    layout.ty
                );
            }
        }
    }
}

/// The levels read through the kernels with the scales set to one are the per-value kernel's
/// values divided by the scale: `d · level` gives the reference bits for every block.
#[test]
fn levels_times_scales_are_the_kernels_values() {
    for layout in scaled_layouts() {
        let bytes = any_blocks(layout, 64, 50, false);
        let mut piece = Levels::default();
        piece.decode(layout, crate::Kernel::best(), &bytes).unwrap();
        let mut want = vec![0f32; 64 * layout.block];
        crate::quant::dequantize_with(crate::Kernel::Scalar, layout.ty, &bytes, &mut want).unwrap();
        let view = piece.view(layout, &bytes);
        for (i, &w) in want.iter().enumerate() {
            let (b, j) = (i / layout.block, i % layout.block);
            let d = layout.scale.value(piece.scales[b]);
            assert_eq!(
                value(d, view.block(b)[j] as i8).to_bits(),
                w.to_bits(),
                "{:?} {i}",
                layout.ty
            );
        }
    }
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
        let bytes = q8_blocks(row as usize * n_rows / 32, scales, odd);
        let rows = 0..n_rows as u64;
        let want = stats(q8(), &bytes, row, rows.clone(), Feed::Values, 1, 1 << 20);
        let got = stats(q8(), &bytes, row, rows.clone(), Feed::Blocks, 1, 1 << 20);
        same(&got, &want);
        if odd {
            let m = got.moments;
            assert!(m.nan > 0 && m.pos_inf > 0 && m.neg_inf > 0 && m.zeros > 0);
        }
        same(
            &stats(q8(), &bytes, row, rows.clone(), Feed::Mixed, 3, 5000),
            &want,
        );
        // The same bits for any thread count and chunk size, and a range off the grid.
        for (threads, chunk) in [(2, 1 << 20), (3, 70_000), (5, 1)] {
            assert_eq!(
                stats(
                    q8(),
                    &bytes,
                    row,
                    rows.clone(),
                    Feed::Blocks,
                    threads,
                    chunk
                ),
                got
            );
        }
        let end = n_rows as u64 - 1;
        let part = stats(q8(), &bytes, row, 3..end, Feed::Blocks, 1, 1 << 20);
        assert_eq!(
            stats(q8(), &bytes, row, 3..end, Feed::Blocks, 4, 5000),
            part
        );
        same(
            &part,
            &stats(q8(), &bytes, row, 3..end, Feed::Values, 2, 5000),
        );
    }
}

#[test]
fn zero_scales_and_zero_ranges() {
    // Every scale zero (all values ±0), and codes of one sign (ranges ending at zero).
    let mut bytes = q8_blocks(512, 100, false);
    for (i, b) in bytes.chunks_exact_mut(34).enumerate() {
        let d = if i % 3 == 0 {
            half::f16::NEG_ZERO
        } else {
            half::f16::ZERO
        };
        b[..2].copy_from_slice(&d.to_bits().to_le_bytes());
    }
    let want = stats(q8(), &bytes, 256, 0..64, Feed::Values, 1, 1 << 20);
    same(
        &stats(q8(), &bytes, 256, 0..64, Feed::Blocks, 2, 1000),
        &want,
    );
    let mut bytes = q8_blocks(512, 100, false);
    for b in bytes.chunks_exact_mut(34) {
        b[..2].copy_from_slice(&half::f16::from_f32(0.01).to_bits().to_le_bytes());
        for q in &mut b[2..] {
            *q &= 0x7f;
        }
    }
    let want = stats(q8(), &bytes, 256, 0..64, Feed::Values, 1, 1 << 20);
    assert_eq!(want.moments.min, 0.0);
    same(
        &stats(q8(), &bytes, 256, 0..64, Feed::Blocks, 2, 1000),
        &want,
    );
}

#[test]
fn a_full_table_spills_into_buckets() {
    // More distinct scales than a table holds: the parts spill, the results stay.
    let mut bytes = q8_blocks(3 * ROWS, 40_000, false);
    for (i, b) in bytes.chunks_exact_mut(34).enumerate() {
        // Every scale its own (finite, either sign).
        let d = (0x1000 + i as u16) | if i % 3 == 0 { 0x8000 } else { 0 };
        b[..2].copy_from_slice(&d.to_le_bytes());
    }
    let mut piece = Levels::default();
    piece.decode(q8(), crate::Kernel::best(), &bytes).unwrap();
    assert!(Table::default().add(&piece.scales, piece.view(q8(), &bytes), &[]) < 3 * ROWS);
    let want = stats(
        q8(),
        &bytes,
        64,
        0..3 * ROWS as u64 / 2,
        Feed::Values,
        1,
        1 << 20,
    );
    for threads in [1, 2, 7] {
        same(
            &stats(
                q8(),
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
    let bytes = q8_blocks(2000, 500, true);
    let mut piece = Levels::default();
    piece.decode(q8(), crate::Kernel::best(), &bytes).unwrap();
    let mut t = Table::default();
    assert_eq!(t.add(&piece.scales, piece.view(q8(), &bytes), &[]), 2000);
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
    put(&mut many, 0);
    put(&mut many, ROWS as u64 + 1);
    assert!(Table::from_bytes(&many).is_none());
}

/// The table's [`Form::Scaled`] rows.
fn scaled_layouts() -> impl Iterator<Item = &'static Layout> {
    LAYOUTS
        .iter()
        .filter(|l| matches!(l.form, Form::Scaled { .. }))
}
