//! Tensor infos: name, dims (GGUF order, innermost first), ggml type, offset; and the sizes
//! derived from them, computed once with checked arithmetic at parse time.

use std::ops::Range;

use super::value::{read_string_span, Format};
use super::{Limits, MAX_DIMS, MAX_TENSOR_NAME_LEN};
use crate::cursor::Cursor;
use crate::error::{Error, ErrorKind, Result};
use crate::types::GgmlType;

/// One tensor of a GGUF file, validated: its sizes never overflow and its bytes lie inside the
/// data section (inside the file, when the file size was known at parse time).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorInfo {
    name: String,
    dims: Vec<u64>,
    ggml_type: GgmlType,
    offset: u64,
    n_elements: u64,
    n_bytes: u64,
    info_offset: u64,
}

impl TensorInfo {
    /// The tensor's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Dimensions in GGUF order (ggml's `ne`): `dims()[0]` is the row length (innermost).
    pub fn dims(&self) -> &[u64] {
        &self.dims
    }

    /// The public shape: row-major, outermost first, as numpy, PyTorch and safetensors give it
    /// (`dims()` reversed; the row length is the last).
    pub fn shape(&self) -> Vec<u64> {
        self.dims.iter().rev().copied().collect()
    }

    /// The ggml type of its elements.
    pub fn ggml_type(&self) -> GgmlType {
        self.ggml_type
    }

    /// Offset of its bytes relative to the start of the data section.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Number of elements (the product of the dims).
    pub fn n_elements(&self) -> u64 {
        self.n_elements
    }

    /// Number of bytes its data takes.
    pub fn n_bytes(&self) -> u64 {
        self.n_bytes
    }

    /// Where its info record starts in the header.
    pub fn info_offset(&self) -> u64 {
        self.info_offset
    }

    /// Elements in one row (`dims[0]`; 1 for a tensor without dims).
    pub fn row_len(&self) -> u64 {
        self.dims.first().copied().unwrap_or(1)
    }

    /// Number of rows: elements / row length (0 when rows are empty).
    pub fn n_rows(&self) -> u64 {
        self.n_elements.checked_div(self.row_len()).unwrap_or(0)
    }

    /// Bytes of one row. Exact: the row length is a whole number of blocks (checked at parse).
    pub fn row_bytes(&self) -> u64 {
        let blocks = self.row_len() / u64::from(self.ggml_type.block_size());
        blocks * u64::from(self.ggml_type.type_size())
    }

    /// Byte range of rows `rows` relative to the tensor's start, or an error when the rows are
    /// not inside the tensor.
    pub fn row_byte_range(&self, rows: Range<u64>) -> Result<Range<u64>> {
        if rows.start > rows.end || rows.end > self.n_rows() {
            return Err(Error::new(ErrorKind::BadRowRange {
                name: self.name.clone(),
                start: rows.start,
                end: rows.end,
                rows: self.n_rows(),
            }));
        }
        // rows.end <= n_rows, so these products are at most n_bytes: no overflow.
        Ok(rows.start * self.row_bytes()..rows.end * self.row_bytes())
    }
}

/// Reads one tensor info record and checks everything that needs no other tensor.
pub(crate) fn read_tensor_info(
    cur: &mut Cursor<'_>,
    format: Format,
    limits: &Limits,
) -> Result<TensorInfo> {
    let info_offset = cur.pos();
    let (start, bytes) = read_string_span(cur, format, limits, "tensor name")?;
    let name = std::str::from_utf8(bytes)
        .map_err(|e| {
            Error::at(
                ErrorKind::InvalidUtf8 {
                    what: "tensor name".to_string(),
                },
                start as u64 + e.valid_up_to() as u64,
            )
        })?
        .to_string();
    if name.len() as u64 >= MAX_TENSOR_NAME_LEN {
        return Err(Error::at(
            ErrorKind::TensorNameTooLong {
                len: name.len() as u64,
                name,
                limit: MAX_TENSOR_NAME_LEN,
            },
            info_offset,
        ));
    }
    let dims_at = cur.pos();
    let n_dims = cur.u32("tensor n_dims")?;
    if n_dims > MAX_DIMS {
        return Err(Error::at(
            ErrorKind::TooManyDims {
                name,
                n_dims,
                limit: MAX_DIMS,
            },
            dims_at,
        ));
    }
    let mut dims = Vec::with_capacity(n_dims as usize);
    for _ in 0..n_dims {
        let dim = if format.v1 {
            u64::from(cur.u32("tensor dim")?)
        } else {
            cur.u64("tensor dim")?
        };
        dims.push(dim);
    }
    let type_at = cur.pos();
    let type_id = cur.u32("tensor type")?;
    let ggml_type = GgmlType::from_id(type_id).ok_or_else(|| {
        let kind = match GgmlType::removed_name(type_id) {
            Some(type_name) => ErrorKind::RemovedTensorType {
                name: name.clone(),
                type_id,
                type_name,
            },
            None => ErrorKind::UnknownTensorType {
                name: name.clone(),
                type_id,
            },
        };
        Error::at(kind, type_at)
    })?;
    let offset = cur.u64("tensor offset")?;
    let overflow = || Error::at(ErrorKind::DimsOverflow { name: name.clone() }, dims_at);
    // ggml keeps dims as int64: each dim and the product must fit.
    let mut n_elements: u64 = 1;
    for &dim in &dims {
        if dim > i64::MAX as u64 {
            return Err(overflow());
        }
        n_elements = n_elements
            .checked_mul(dim)
            .filter(|&n| n <= i64::MAX as u64)
            .ok_or_else(overflow)?;
    }
    let ne0 = dims.first().copied().unwrap_or(1);
    if ne0 % u64::from(ggml_type.block_size()) != 0 {
        return Err(Error::at(
            ErrorKind::PartialBlock {
                name,
                ne0,
                block_size: ggml_type.block_size(),
            },
            dims_at,
        ));
    }
    let n_bytes = ggml_type.bytes_for(n_elements).ok_or_else(overflow)?;
    Ok(TensorInfo {
        name,
        dims,
        ggml_type,
        offset,
        n_elements,
        n_bytes,
        info_offset,
    })
}

/// Checks the tensors against each other and the file: alignment, no overlaps, inside the file.
pub(crate) fn check_layout(
    tensors: &[TensorInfo],
    alignment: u64,
    data_offset: u64,
    file_size: Option<u64>,
) -> Result<()> {
    for t in tensors {
        if t.offset % alignment != 0 {
            return Err(Error::at(
                ErrorKind::Misaligned {
                    name: t.name.clone(),
                    offset: t.offset,
                    alignment,
                },
                t.info_offset,
            ));
        }
        let end = data_offset
            .checked_add(t.offset)
            .and_then(|start| start.checked_add(t.n_bytes));
        if let Some(size) = file_size {
            if end.map_or(true, |end| end > size) {
                return Err(Error::at(
                    ErrorKind::TensorOutOfFile {
                        name: t.name.clone(),
                        offset: t.offset,
                        size: t.n_bytes,
                        file_size: size,
                    },
                    t.info_offset,
                ));
            }
        } else if end.is_none() {
            return Err(Error::at(
                ErrorKind::DimsOverflow {
                    name: t.name.clone(),
                },
                t.info_offset,
            ));
        }
    }
    let mut by_offset: Vec<&TensorInfo> = tensors.iter().filter(|t| t.n_bytes > 0).collect();
    by_offset.sort_by_key(|t| t.offset);
    for pair in by_offset.windows(2) {
        if let [first, second] = pair {
            // Ends cannot overflow: checked above against data_offset + offset + n_bytes.
            if first.offset + first.n_bytes > second.offset {
                return Err(Error::at(
                    ErrorKind::TensorsOverlap {
                        first: first.name.clone(),
                        second: second.name.clone(),
                    },
                    second.info_offset,
                ));
            }
        }
    }
    Ok(())
}
