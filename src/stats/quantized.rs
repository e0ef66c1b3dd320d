//! Feeding a [`StatsJob`] straight from a GGUF tensor's bytes: each piece of values is
//! dequantized into a small buffer just before the job reads it (it stays in L1 cache), so no
//! chunk-sized f32 array is ever written and read back.

use super::codes;
use super::job::{StatsJob, PIECE};
use super::layout::{self, Form};
use crate::error::{Error, ErrorKind, Result};
use crate::gguf::{Endian, GgufFile, TensorInfo};
use crate::quant::Kernel;

/// Adds rows `first_row..` of `tensor` (of `file`) to `job`'s pass, from `bytes`, exactly those
/// whole rows' data.
pub fn add_gguf_rows(
    job: &mut StatsJob,
    file: &GgufFile,
    tensor: &TensorInfo,
    kernel: Kernel,
    first_row: u64,
    bytes: &[u8],
) -> Result<()> {
    let row_bytes = tensor.row_bytes();
    let len = bytes.len() as u64;
    if row_bytes == 0 || len % row_bytes != 0 {
        return Err(Error::new(ErrorKind::InvalidRequest {
            message: format!(
                "statistics: {len} bytes are not whole rows of {} ({row_bytes} bytes per row)",
                tensor.name()
            ),
        }));
    }
    let n_rows = len / row_bytes;
    let ty = tensor.ggml_type();
    let (block, size) = (ty.block_size() as usize, ty.type_size() as usize);
    if block == 0 || PIECE % block != 0 || tensor.row_len() % block as u64 != 0 {
        // Pieces would cut blocks (no GGUF type does this): all the rows at once.
        let n = crate::cursor::to_usize(n_rows * tensor.row_len(), "row chunk elements", 0)?;
        let mut values = vec![0f32; n];
        file.dequantize_rows_with(kernel, tensor, bytes, &mut values)?;
        return job.add(first_row, &values);
    }
    let piece_of = move |range: std::ops::Range<usize>| {
        bytes
            .get(range.start / block * size..range.end / block * size)
            .ok_or_else(|| {
                Error::new(ErrorKind::InvalidRequest {
                    message: format!("statistics: values {range:?} are not in the bytes given"),
                })
            })
    };
    // The types of `layout.rs`'s table go by their blocks (the scalar kernel keeps the per-value
    // path: it is the reference the shortcuts are measured and tested against; a coded type's
    // shortcut is slower than it without vector code counting).
    if kernel != Kernel::Scalar && file.endian() == Endian::Little {
        if let Some(layout) = layout::layout_of(ty) {
            if codes::fast() || !matches!(layout.form, Form::Coded(_)) {
                return job.add_blocks(first_row, n_rows, layout, kernel, bytes);
            }
        }
    }
    job.add_with(first_row, n_rows, &mut |range, out| {
        file.dequantize_rows_with(kernel, tensor, piece_of(range)?, out)
    })
}

#[cfg(all(test, not(all(target_arch = "wasm32", target_os = "unknown"))))]
mod tests {
    use super::*;
    use crate::stats::{run_native, ReadRows, StatsReport, StatsRequest};
    use crate::GgmlType;
    use std::ops::Range;

    const ROW: u64 = 512;

    /// Rows of `ty` (a type with groups of codes) from a splitmix64 stream: random codes, scales and
    /// mins, `d` of either sign, a few blocks with `d` infinite or NaN and a few with zero
    /// scales (signed zeros).
    fn blocks(ty: GgmlType, rows: u64, odd: bool) -> Vec<u8> {
        let (size, values) = (ty.type_size() as usize, ty.block_size() as u64);
        let mut x = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let blocks = rows * ROW / values;
        let mut out = Vec::new();
        for b in 0..blocks {
            let mut block = vec![0u8; size];
            for byte in block.iter_mut() {
                *byte = next() as u8;
            }
            // d and dmin: small normal halves, either sign.
            let d = half::f16::from_f32((next() % 1000) as f32 * 1e-5 - 2e-3);
            let m = half::f16::from_f32((next() % 1000) as f32 * 2e-5);
            let (d, m) = match (odd, b % 53) {
                (true, 7) => (half::f16::INFINITY, m),
                (true, 11) => (half::f16::NAN, m),
                (true, 13) => (half::f16::NEG_ZERO, half::f16::ZERO),
                (_, 17) => (d, half::f16::ZERO),
                _ => (d, m),
            };
            block[..2].copy_from_slice(&d.to_bits().to_le_bytes());
            if matches!(ty, GgmlType::Q4_K | GgmlType::Q4_1) {
                block[2..4].copy_from_slice(&m.to_bits().to_le_bytes());
            }
            out.extend_from_slice(&block);
        }
        out
    }

    struct Rows<'a> {
        ty: GgmlType,
        bytes: &'a [u8],
        groups: bool,
    }

    impl ReadRows for Rows<'_> {
        fn add_to(&mut self, job: &mut StatsJob, rows: Range<u64>) -> Result<()> {
            let ty = self.ty;
            let (size, block) = (ty.type_size() as usize, ty.block_size() as usize);
            let row_bytes = ROW as usize / block * size;
            let bytes = &self.bytes[rows.start as usize * row_bytes..rows.end as usize * row_bytes];
            let n = rows.end - rows.start;
            let piece = |r: Range<usize>| &bytes[r.start / block * size..r.end / block * size];
            if self.groups {
                let layout = layout::layout_of(ty).unwrap();
                job.add_blocks(rows.start, n, layout, Kernel::best(), bytes)
            } else {
                job.add_with(rows.start, n, &mut |r, out| {
                    crate::quant::dequantize_with(Kernel::Scalar, ty, piece(r), out)
                })
            }
        }
    }

    fn stats(
        ty: GgmlType,
        bytes: &[u8],
        rows: Range<u64>,
        groups: bool,
        threads: usize,
        chunk: u64,
    ) -> StatsReport {
        let request = StatsRequest {
            bins: 41,
            percentiles: true,
        };
        let mut job = StatsJob::new(rows, ROW, request);
        run_native(&mut job, threads, chunk, || Ok(Rows { ty, bytes, groups })).unwrap();
        job.report()
    }

    fn close(a: f64, b: f64, scale: f64) -> bool {
        (a - b).abs() <= 1e-12 * scale
    }

    #[test]
    fn groups_of_codes_give_the_per_value_results() {
        let types = [
            GgmlType::Q4_K,
            GgmlType::Q4_0,
            GgmlType::Q4_1,
            GgmlType::IQ4_NL,
            GgmlType::IQ4_XS,
        ];
        for (ty, odd) in types.into_iter().flat_map(|t| [(t, false), (t, true)]) {
            let bytes = blocks(ty, 600, odd);
            let rows = 0..600;
            let want = stats(ty, &bytes, rows.clone(), false, 1, 1 << 20);
            let got = stats(ty, &bytes, rows.clone(), true, 1, 1 << 20);
            let (a, b) = (got.moments, want.moments);
            assert_eq!(
                (a.count, a.nan, a.pos_inf, a.neg_inf, a.zeros, a.finite),
                (b.count, b.nan, b.pos_inf, b.neg_inf, b.zeros, b.finite)
            );
            assert!(a.min == b.min && a.max == b.max, "{ty:?} {a:?} {b:?}");
            let scale = a.mean.abs().max(got.std.unwrap());
            assert!(close(a.mean, b.mean, scale), "{a:?} {b:?}");
            assert!(close(got.std.unwrap(), want.std.unwrap(), scale));
            assert_eq!(got.histogram, want.histogram);
            assert_eq!(got.percentiles, want.percentiles);
            if odd {
                assert!(a.nan > 0 && a.pos_inf + a.neg_inf > 0);
            }
            // The same bits for any thread count and chunk size, and a range off the grid.
            for (threads, chunk) in [(2, 1 << 20), (3, 70_000), (5, 1)] {
                assert_eq!(stats(ty, &bytes, rows.clone(), true, threads, chunk), got);
            }
            let part = stats(ty, &bytes, 131..577, true, 1, 1 << 20);
            assert_eq!(stats(ty, &bytes, 131..577, true, 4, 5000), part);
            assert_eq!(
                stats(ty, &bytes, 131..577, false, 2, 5000).histogram,
                part.histogram
            );
        }
    }
}
