//! GGUF: parse a header (from the whole file or any prefix of it), then read tensor views.
//!
//! Layout of a file: `GGUF` magic, u32 version, tensor count and key/value count (u32 in v1,
//! u64 after), key/value pairs, tensor infos (name, n_dims, dims innermost first, ggml type,
//! offset relative to the data section), padding to `general.alignment`, tensor data.
//! Big-endian files carry no marker: their version reads as 0x03000000 little-endian.

mod file;
mod io;
mod tensor;
mod value;

pub use file::{
    parse, parse_owned, Endian, GgufFile, ParseStatus, DEFAULT_ALIGNMENT, MAX_ESTIMATE_GROWTH,
};
pub use io::{read_header, read_range, read_range_into, row_chunks, RowReader, FIRST_READ};
pub use tensor::TensorInfo;
pub use value::{ArrayView, GgufStr, Value, ValueType};

use crate::cursor::Cursor;
use crate::error::{Error, ErrorKind, Result};

/// Longest string (key, value or tensor name) accepted: 1 GiB.
pub const MAX_STRING_LEN: u64 = 1 << 30;
/// Deepest nesting of arrays inside arrays.
pub const MAX_NESTING_DEPTH: u32 = 8;
/// Most metadata key/value pairs.
pub const MAX_KV_COUNT: u64 = 1 << 24;
/// Most tensors.
pub const MAX_TENSOR_COUNT: u64 = 1 << 24;
/// Most dimensions of a tensor (ggml's GGML_MAX_DIMS).
pub const MAX_DIMS: u32 = 4;
/// ggml's GGML_MAX_NAME: a tensor name must be shorter than this many bytes (ggml's
/// `gguf_init_from_file` refuses the file otherwise).
pub const MAX_TENSOR_NAME_LEN: u64 = 64;
/// Largest header kept in memory: element offsets are u32, and wasm32 has 4 GiB in all.
pub const MAX_HEADER_BYTES: u64 = (1 << 31) - 1;

/// The caps one parse applies, plus the file size when it is known.
#[derive(Debug, Clone)]
pub struct Limits {
    pub max_string_len: u64,
    pub max_depth: u32,
    pub max_kv_count: u64,
    pub max_tensor_count: u64,
    pub max_header_bytes: u64,
    /// Total file length, when known: counts are checked against the bytes it can hold.
    pub(crate) file_size: Option<u64>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_string_len: MAX_STRING_LEN,
            max_depth: MAX_NESTING_DEPTH,
            max_kv_count: MAX_KV_COUNT,
            max_tensor_count: MAX_TENSOR_COUNT,
            max_header_bytes: MAX_HEADER_BYTES,
            file_size: None,
        }
    }
}

impl Limits {
    /// Checks that `len` more bytes after the cursor can exist: within the file when its size is
    /// known, within the header cap always. This is what keeps a claimed count of 2^60 from
    /// costing anything but this comparison.
    pub(crate) fn check_fits(&self, cur: &Cursor<'_>, len: u64, what: &str, at: u64) -> Result<()> {
        let end = cur.pos().checked_add(len);
        if let (Some(size), Some(end)) = (self.file_size, end) {
            if end > size {
                return Err(Error::at(
                    ErrorKind::TooMany {
                        what: format!("{what} of {len} bytes"),
                        count: len,
                        limit: size.saturating_sub(cur.pos()),
                    },
                    at,
                ));
            }
        }
        match end {
            Some(end) if end <= self.max_header_bytes => Ok(()),
            _ => Err(Error::at(
                ErrorKind::HeaderTooLarge {
                    needed: end.unwrap_or(u64::MAX),
                    limit: self.max_header_bytes,
                },
                at,
            )),
        }
    }
}
