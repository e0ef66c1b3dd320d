//! Feeding a [`StatsJob`] straight from a GGUF tensor's bytes: each piece of values is
//! dequantized into a small buffer just before the job reads it (it stays in L1 cache), so no
//! chunk-sized f32 array is ever written and read back.

use super::codes::{self, Groups, CODES, GROUP};
use super::job::{StatsJob, PIECE};
use crate::error::{Error, ErrorKind, Result};
use crate::gguf::{Endian, GgufFile, TensorInfo};
use crate::quant::scalar::f16_to_f32;
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
        _ => None,
    }
}

/// Q4_K: 144-byte blocks of 256 values, 8 groups of 32 with a 6-bit scale and min each; group
/// `2j` is the low nibbles of quant bytes `32j..32j + 32`, group `2j + 1` their high nibbles.
/// A value is `(d * sc) * q - dmin * m` in f32, as the kernels compute it.
fn q4_k_groups(bytes: &[u8], groups: &mut Groups) {
    let blocks = bytes.len() / 144;
    let (at, vat) = (groups.codes.len(), groups.values.len());
    groups.codes.resize(at + 8 * blocks, [0; GROUP]);
    groups.values.resize(vat + 8 * CODES * blocks, 0.0);
    q4_k_into(bytes, &mut groups.codes[at..], &mut groups.values[vat..]);
}

super::isa::dispatch! {
    fn q4_k_into(bytes: &[u8], codes: &mut [[u8; GROUP]], values: &mut [f32]) -> () => q4_k_body
}

#[inline(always)]
fn q4_k_body(bytes: &[u8], codes: &mut [[u8; GROUP]], values: &mut [f32]) {
    let blocks = bytes
        .chunks_exact(144)
        .zip(codes.chunks_exact_mut(8))
        .zip(values.chunks_exact_mut(8 * CODES));
    for ((b, codes), values) in blocks {
        let d = f16_to_f32(u16::from_le_bytes([b[0], b[1]]));
        let min = f16_to_f32(u16::from_le_bytes([b[2], b[3]]));
        let pairs = scale_min_k4(&b[4..16]);
        for (g, (codes, values)) in codes
            .iter_mut()
            .zip(values.chunks_exact_mut(CODES))
            .enumerate()
        {
            let (j, h) = (g / 2, g % 2);
            let qs = &b[16 + 32 * j..48 + 32 * j];
            for (c, &q) in codes.iter_mut().zip(qs) {
                *c = (q >> (4 * h)) & 0x0F;
            }
            let (sc, m) = pairs[g];
            let d1 = d * f32::from(sc);
            let m1 = min * f32::from(m);
            for (q, v) in values.iter_mut().enumerate() {
                *v = d1 * q as f32 - m1;
            }
        }
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
