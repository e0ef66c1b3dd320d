//! Reading a header from anything seekable (a file on disk) without reading the whole file:
//! start with a small prefix and grow it as the parser asks, as the range-request wrapper does.

use std::io::{Read, Seek, SeekFrom};

use super::file::{parse, GgufFile, ParseStatus};
use crate::error::{Error, ErrorKind, Result};

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
    let len = crate::cursor::to_usize(
        range.end.saturating_sub(range.start),
        "read size",
        range.start,
    )?;
    let mut buf = Vec::new();
    buf.try_reserve_exact(len).map_err(|e| {
        Error::new(ErrorKind::Io {
            message: e.to_string(),
        })
    })?;
    reader.seek(SeekFrom::Start(range.start))?;
    reader.take(len as u64).read_to_end(&mut buf)?;
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
    Ok(buf)
}
