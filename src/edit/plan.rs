//! What an edited file is made of: the new header, then pieces of the input's data section
//! (or zeros), so each front end can write it its own way — natively a sparse, in-kernel copy,
//! in the browser a `Blob` of the header and `File.slice`s.

use super::bad_edit;
use crate::error::Result;
use serde::Serialize;

use super::encode::{encode_header, new_alignment, NewTensor};
use super::Edits;
use crate::gguf::GgufFile;

/// A run of the output after the header: `len` bytes from the input at `from`, or zeros.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Piece {
    pub from: Option<u64>,
    pub len: u64,
}

/// The edited file: `header`, then `pieces` in order; `len` bytes in all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditPlan {
    pub header: Vec<u8>,
    pub pieces: Vec<Piece>,
    pub len: u64,
}

/// Plans `edits` on `file`, whose whole size is `file_size`. With the alignment unchanged the
/// data section is one piece, byte for byte. With a new alignment every tensor moves: they are
/// laid out in tensor-info order, each at the next multiple of the alignment and padded to one,
/// as gguf-py and ggml write files.
pub fn plan(file: &GgufFile, file_size: u64, edits: &Edits) -> Result<EditPlan> {
    let alignment = new_alignment(file, edits)?;
    let data_len = file_size
        .checked_sub(file.data_offset())
        .ok_or_else(|| bad_edit("the data section starts past the end of the file".to_string()))?;
    if alignment == file.alignment() {
        let header = encode_header(file, edits, alignment, None)?;
        let len = header.len() as u64 + data_len;
        return Ok(EditPlan {
            header,
            pieces: vec![Piece {
                from: Some(file.data_offset()),
                len: data_len,
            }],
            len,
        });
    }
    let mut tensors = Vec::with_capacity(file.tensors().len());
    let mut pieces = Vec::new();
    let mut at = 0u64;
    let overflow = || bad_edit("tensor data past 2^64 bytes".to_string());
    for tensor in file.tensors() {
        tensors.push(NewTensor {
            name: tensor.name().to_string(),
            dims: tensor.dims().to_vec(),
            ty: tensor.ggml_type(),
            offset: at,
        });
        let n = tensor.n_bytes();
        let range = file.tensor_range(tensor);
        if range.end > file_size {
            return Err(bad_edit(format!(
                "tensor {} ends at byte {} past the end of the file ({file_size} bytes)",
                tensor.name(),
                range.end
            )));
        }
        pieces.push(Piece {
            from: Some(range.start),
            len: n,
        });
        let padded = n.checked_next_multiple_of(alignment).ok_or_else(overflow)?;
        if padded > n {
            pieces.push(Piece {
                from: None,
                len: padded - n,
            });
        }
        at = at.checked_add(padded).ok_or_else(overflow)?;
    }
    let header = encode_header(file, edits, alignment, Some(&tensors))?;
    let len = (header.len() as u64).checked_add(at).ok_or_else(overflow)?;
    Ok(EditPlan {
        header,
        pieces,
        len,
    })
}
