//! Feeding a [`StatsJob`] straight from a GGUF tensor's bytes: each piece of values is
//! dequantized into a small buffer just before the job reads it (it stays in L1 cache), so no
//! chunk-sized f32 array is ever written and read back.

use super::job::{StatsJob, PIECE};
use crate::error::{Error, ErrorKind, Result};
use crate::gguf::{GgufFile, TensorInfo};
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
    job.add_with(first_row, n_rows, &mut |range, out| {
        let piece = bytes
            .get(range.start / block * size..range.end / block * size)
            .ok_or_else(|| {
                Error::new(ErrorKind::InvalidRequest {
                    message: format!("statistics: values {range:?} are not in the bytes given"),
                })
            })?;
        file.dequantize_rows_with(kernel, tensor, piece, out)
    })
}
