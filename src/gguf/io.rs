//! Reading a header from anything seekable (a file on disk) without reading the whole file:
//! start with a small prefix and grow it as the parser asks, as the range-request wrapper does.

use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;

use super::file::{parse, GgufFile, ParseStatus};
use super::tensor::TensorInfo;
use crate::error::{Error, ErrorKind, Result};
use crate::quant::{AlignedF32, Kernel};

/// The first read: enough for most headers without a big vocabulary.
pub const FIRST_READ: u64 = 1 << 20;

/// Reads and parses the header of a file of `file_size` bytes.
pub fn read_header<R: Read + Seek>(reader: &mut R, file_size: u64) -> Result<GgufFile> {
    let mut prefix = Vec::new();
    let mut want = FIRST_READ.min(file_size);
    loop {
        read_prefix(reader, &mut prefix, want)?;
        match parse(&prefix, Some(file_size))? {
            ParseStatus::Complete(file) => return Ok(file),
            ParseStatus::NeedMore { at_least, estimate } => {
                // Grow at least geometrically so re-parsing stays linear in the header size.
                let doubled = (prefix.len() as u64).saturating_mul(2);
                want = at_least.max(estimate).max(doubled).min(file_size);
                if want <= prefix.len() as u64 {
                    return Err(Error::at(
                        ErrorKind::Truncated {
                            what: "header".to_string(),
                            needed: at_least,
                            available: file_size,
                        },
                        file_size,
                    ));
                }
            }
        }
    }
}

/// Extends `prefix` to `want` bytes from the start of the file.
fn read_prefix<R: Read + Seek>(reader: &mut R, prefix: &mut Vec<u8>, want: u64) -> Result<()> {
    let have = prefix.len() as u64;
    if want <= have {
        return Ok(());
    }
    reader.seek(SeekFrom::Start(have))?;
    let more = crate::cursor::to_usize(want - have, "read size", have)?;
    prefix.try_reserve_exact(more).map_err(|e| {
        Error::new(ErrorKind::Io {
            message: e.to_string(),
        })
    })?;
    reader.take(want - have).read_to_end(prefix)?;
    if (prefix.len() as u64) < want {
        return Err(Error::at(
            ErrorKind::Truncated {
                what: "file (it is shorter than its reported size)".to_string(),
                needed: want - have,
                available: prefix.len() as u64 - have,
            },
            prefix.len() as u64,
        ));
    }
    Ok(())
}

/// Reads `range` of the file into a new buffer.
pub fn read_range<R: Read + Seek>(reader: &mut R, range: std::ops::Range<u64>) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    read_range_into(reader, range, &mut buf)?;
    Ok(buf)
}

/// Reads `range` of the file into `buf` (replacing its contents, reusing its allocation).
pub fn read_range_into<R: Read + Seek>(
    reader: &mut R,
    range: std::ops::Range<u64>,
    buf: &mut Vec<u8>,
) -> Result<()> {
    let len = crate::cursor::to_usize(
        range.end.saturating_sub(range.start),
        "read size",
        range.start,
    )?;
    buf.clear();
    buf.try_reserve_exact(len).map_err(|e| {
        Error::new(ErrorKind::Io {
            message: e.to_string(),
        })
    })?;
    reader.seek(SeekFrom::Start(range.start))?;
    reader.take(len as u64).read_to_end(buf)?;
    if buf.len() != len {
        return Err(Error::at(
            ErrorKind::Truncated {
                what: "tensor data".to_string(),
                needed: len as u64,
                available: buf.len() as u64,
            },
            range.start,
        ));
    }
    Ok(())
}

/// Reads and dequantizes whole rows of one tensor, a chunk at a time, reusing its buffers: the
/// streaming primitive of `dequant`, `stats` and `diff --values` (memory stays one chunk).
pub struct RowReader<'f> {
    file: &'f GgufFile,
    tensor: &'f TensorInfo,
    kernel: Kernel,
    bytes: Vec<u8>,
    values: AlignedF32,
}

impl<'f> RowReader<'f> {
    /// A reader for `tensor` of `file`, dequantizing with `kernel`.
    pub fn new(file: &'f GgufFile, tensor: &'f TensorInfo, kernel: Kernel) -> RowReader<'f> {
        RowReader {
            file,
            tensor,
            kernel,
            bytes: Vec::new(),
            values: AlignedF32::new(),
        }
    }

    /// The kernel it dequantizes with.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// Rows per chunk so that one chunk holds at most `max_elements` values (at least one row).
    pub fn rows_per_chunk(&self, max_elements: u64) -> u64 {
        (max_elements / self.tensor.row_len().max(1)).max(1)
    }

    /// Reads rows `rows` from `reader` (the file the header came from) and returns their values.
    pub fn read<R: Read + Seek>(&mut self, reader: &mut R, rows: Range<u64>) -> Result<&[f32]> {
        let mut values = std::mem::take(&mut self.values);
        let read = self.read_aligned(reader, rows, &mut values);
        self.values = values;
        read?;
        Ok(self.values.as_slice())
    }

    /// Reads rows `rows` from `reader` into `values` (resized to their count; cache-line aligned,
    /// where the SIMD kernels store faster): for callers that keep or hand over the buffer, e.g.
    /// to a writer thread.
    pub fn read_aligned<R: Read + Seek>(
        &mut self,
        reader: &mut R,
        rows: Range<u64>,
        values: &mut AlignedF32,
    ) -> Result<()> {
        let n = self.read_bytes(reader, rows)?;
        let values = values.resize(n)?;
        self.file
            .dequantize_rows_with(self.kernel, self.tensor, &self.bytes, values)
    }

    /// Reads the bytes of rows `rows` into `self.bytes`; returns their number of values.
    fn read_bytes<R: Read + Seek>(&mut self, reader: &mut R, rows: Range<u64>) -> Result<usize> {
        let range = self.file.rows_range(self.tensor, rows.clone())?;
        read_range_into(reader, range.clone(), &mut self.bytes)?;
        let n = (rows.end - rows.start).saturating_mul(self.tensor.row_len());
        crate::cursor::to_usize(n, "row chunk elements", range.start)
    }
}

/// `rows` cut into consecutive ranges of at most `step` rows (`step` 0 counts as 1).
pub fn row_chunks(rows: Range<u64>, step: u64) -> impl Iterator<Item = Range<u64>> {
    let step = step.max(1);
    let mut start = rows.start;
    std::iter::from_fn(move || {
        if start >= rows.end {
            return None;
        }
        let end = rows.end.min(start.saturating_add(step));
        let chunk = start..end;
        start = end;
        Some(chunk)
    })
}
