//! Feeding a [`StatsJob`] straight from a GGUF tensor's bytes: each piece of values is
//! dequantized into a small buffer just before the job reads it (it stays in L1 cache), so no
//! chunk-sized f32 array is ever written and read back.

use super::affine::exact_block;
use super::codes::{self, Groups, CODES};
use super::job::{StatsJob, PIECE};
use super::planes;
use super::scaled;
use crate::error::{Error, ErrorKind, Result};
use crate::gguf::{Endian, GgufFile, TensorInfo};
use crate::quant::scalar::f16_to_f32;
use crate::quant::scalar::grids::KVALUES_IQ4NL;
use crate::quant::Kernel;
use crate::GgmlType;

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
    // Blocks of `d · level` values from their scales and levels (scaled.rs), past the same
    // reference rule.
    if kernel != Kernel::Scalar && file.endian() == Endian::Little {
        if let Some(layout) = scaled::layout_of(ty) {
            return job.add_scaled(first_row, n_rows, layout, kernel, bytes);
        }
    }
    // Types with 4-bit codes go by groups of codes (the scalar kernel keeps the per-value path:
    // it is the reference the faster paths are measured and tested against).
    if kernel != Kernel::Scalar && file.endian() == Endian::Little && codes::fast() {
        if let Some(decode) = groups_decoder(ty) {
            return job.add_groups_with(first_row, n_rows, &mut |range, groups| {
                decode(piece_of(range)?, groups);
                Ok(())
            });
        }
    }
    job.add_with(first_row, n_rows, &mut |range, out| {
        file.dequantize_rows_with(kernel, tensor, piece_of(range)?, out)
    })
}

/// Writes whole blocks as groups of codes.
type Decode = fn(&[u8], &mut Groups);

/// The groups decoder of a type whose blocks hold 4-bit codes in groups of 32 values.
pub(crate) fn groups_decoder(ty: GgmlType) -> Option<Decode> {
    match ty {
        GgmlType::Q4_K => Some(q4_k_groups),
        GgmlType::Q4_0 => Some(q4_0_groups),
        GgmlType::Q4_1 => Some(q4_1_groups),
        GgmlType::IQ4_NL => Some(iq4_nl_groups),
        GgmlType::IQ4_XS => Some(iq4_xs_groups),
        _ => None,
    }
}

/// Q4_K: 144-byte blocks of 256 values, 8 groups of 32 with a 6-bit scale and min each; group
/// `2j` is the low nibbles of quant bytes `32j..32j + 32`, group `2j + 1` their high nibbles.
/// A value is `(d * sc) * q - dmin * m` in f32, as the kernels compute it.
fn q4_k_groups(bytes: &[u8], groups: &mut Groups) {
    let blocks = bytes.len() / 144;
    let (at, vat) = (groups.planes.len(), groups.values.len());
    groups.planes.resize(at + 8 * blocks, [0; 4]);
    groups.values.resize(vat + 8 * CODES * blocks, 0.0);
    let lat = groups.lines.len();
    groups.lines.resize(lat + 8 * blocks, [0.0; 2]);
    let exact = q4_k_into(
        bytes,
        &mut groups.planes[at..],
        &mut groups.values[vat..],
        &mut groups.lines[lat..],
    );
    groups.inexact |= !exact;
}

super::kernels::dispatch! {
    /// Writes the blocks' planes, values and lines; whether every value is exact on its line.
    fn q4_k_into(bytes: &[u8], planes: &mut [[u32; 4]], values: &mut [f32], lines: &mut [[f32; 2]]) -> bool => q4_k_body
}

#[inline(always)]
fn q4_k_body(
    bytes: &[u8],
    planes: &mut [[u32; 4]],
    values: &mut [f32],
    lines: &mut [[f32; 2]],
) -> bool {
    let blocks = bytes
        .chunks_exact(144)
        .zip(planes.chunks_exact_mut(8))
        .zip(values.chunks_exact_mut(8 * CODES))
        .zip(lines.chunks_exact_mut(8));
    let mut exact = true;
    for (((b, planes), values), lines) in blocks {
        let d = f16_to_f32(u16::from_le_bytes([b[0], b[1]]));
        let min = f16_to_f32(u16::from_le_bytes([b[2], b[3]]));
        exact &= exact_block(d, min);
        let pairs = scale_min_k4(&b[4..16]);
        for (j, pair) in planes.chunks_exact_mut(2).enumerate() {
            let qs: &[u8; 32] = b[16 + 32 * j..48 + 32 * j].try_into().unwrap();
            (pair[0], pair[1]) = planes::of_pair(qs);
        }
        for (g, values) in values.chunks_exact_mut(CODES).enumerate() {
            let (sc, m) = pairs[g];
            let d1 = d * f32::from(sc);
            let m1 = min * f32::from(m);
            for (q, v) in values.iter_mut().enumerate() {
                *v = d1 * q as f32 - m1;
            }
            lines[g] = [d1, m1];
        }
    }
    exact
}

/// Q4_0: 18-byte blocks of 32 values (one group), `(q - 8) as f32 * d`; value `j` is the low
/// nibble of byte `j`, value `16 + j` its high nibble.
fn q4_0_groups(bytes: &[u8], groups: &mut Groups) {
    legacy_groups(bytes, 18, groups, |b| {
        let d = half(b, 0);
        std::array::from_fn(|q| (q as i32 - 8) as f32 * d)
    });
}

/// Q4_1: 20-byte blocks of 32 values, `q as f32 * d + m`.
fn q4_1_groups(bytes: &[u8], groups: &mut Groups) {
    legacy_groups(bytes, 20, groups, |b| {
        let (d, m) = (half(b, 0), half(b, 2));
        std::array::from_fn(|q| q as f32 * d + m)
    });
}

/// IQ4_NL: 18-byte blocks of 32 values, `d * KVALUES_IQ4NL[q]`, nibbles as Q4_0's.
fn iq4_nl_groups(bytes: &[u8], groups: &mut Groups) {
    legacy_groups(bytes, 18, groups, |b| {
        let d = half(b, 0);
        std::array::from_fn(|q| d * f32::from(KVALUES_IQ4NL[q]))
    });
}

/// IQ4_XS: 136-byte blocks of 256 values: `d`, the high 2 bits of 8 6-bit scales (u16), their
/// low 4 bits (nibbles of 4 bytes), then 8 groups of 16 nibble bytes (low nibbles first); a
/// value is `(d * (scale - 32)) * KVALUES_IQ4NL[q]`.
fn iq4_xs_groups(bytes: &[u8], groups: &mut Groups) {
    for b in bytes.chunks_exact(136) {
        let d = half(b, 0);
        let high = u16::from_le_bytes([b[2], b[3]]);
        for i in 0..8 {
            let low = (b[4 + i / 2] >> (4 * (i % 2))) & 0x0F;
            let ls = i32::from(low) | i32::from((high >> (2 * i)) & 3) << 4;
            let dl = d * (ls - 32) as f32;
            let qs: &[u8; 16] = b[8 + 16 * i..24 + 16 * i].try_into().unwrap();
            groups.planes.push(planes::of_nibbles(qs));
            let values: [f32; CODES] = std::array::from_fn(|q| dl * f32::from(KVALUES_IQ4NL[q]));
            groups.values.extend_from_slice(&values);
        }
    }
}

fn half(b: &[u8], at: usize) -> f32 {
    f16_to_f32(u16::from_le_bytes([b[at], b[at + 1]]))
}

/// Blocks of `size` bytes ending in 16 bytes of nibbles: one group each, its 16 values (of codes
/// 0..16) given by `values(block)`, whose scale is decoded once per block.
#[inline(always)]
fn legacy_groups(
    bytes: &[u8],
    size: usize,
    groups: &mut Groups,
    values: impl Fn(&[u8]) -> [f32; CODES],
) {
    let blocks = bytes.len() / size;
    groups.planes.reserve(blocks);
    groups.values.reserve(blocks * CODES);
    for b in bytes.chunks_exact(size) {
        let qs: &[u8; 16] = b[size - 16..].try_into().unwrap();
        groups.planes.push(planes::of_nibbles(qs));
        groups.values.extend_from_slice(&values(b));
    }
}

/// Q4_K's 8 (scale, min) pairs of 6 bits: pairs 0..4 are the low 6 bits of bytes 0..4 and
/// 4..8; pairs 4..8 take nibbles of bytes 8..12 and the top two bits of bytes 0..8.
fn scale_min_k4(p: &[u8]) -> [(u8, u8); 8] {
    std::array::from_fn(|j| {
        if j < 4 {
            (p[j] & 63, p[j + 4] & 63)
        } else {
            (
                (p[j + 4] & 0x0F) | (p[j - 4] >> 6) << 4,
                (p[j + 4] >> 4) | (p[j] >> 6) << 4,
            )
        }
    })
}

#[cfg(all(test, not(all(target_arch = "wasm32", target_os = "unknown"))))]
mod tests {
    use super::*;
    use crate::stats::{run_native, ReadRows, StatsReport, StatsRequest};
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
                let decode = groups_decoder(ty).unwrap();
                job.add_groups_with(rows.start, n, &mut |r, g| {
                    decode(piece(r), g);
                    Ok(())
                })
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
