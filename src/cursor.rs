//! A bounds-checked reader over file bytes: every read checks the length, every u64 that becomes
//! an index goes through `try_into` (usize is 32 bits on wasm32), and running out of bytes is a
//! `Truncated` error at the exact offset, which prefix parsing turns into "need more bytes".

use crate::error::{Error, ErrorKind, Result};

/// Reads numbers and byte runs from `bytes`, little- or big-endian.
#[derive(Clone)]
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    big_endian: bool,
}

/// Converts a file-derived u64 to usize, or reports it as too large for this platform.
pub(crate) fn to_usize(value: u64, what: &str, offset: u64) -> Result<usize> {
    value.try_into().map_err(|_| {
        Error::at(
            ErrorKind::TooMany {
                what: what.to_string(),
                count: value,
                limit: usize::MAX as u64,
            },
            offset,
        )
    })
}

macro_rules! read_number {
    ($name:ident, $ty:ty) => {
        pub(crate) fn $name(&mut self, what: &str) -> Result<$ty> {
            let bytes = self.array::<{ core::mem::size_of::<$ty>() }>(what)?;
            Ok(if self.big_endian {
                <$ty>::from_be_bytes(bytes)
            } else {
                <$ty>::from_le_bytes(bytes)
            })
        }
    };
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Cursor<'a> {
        Cursor {
            bytes,
            pos: 0,
            big_endian: false,
        }
    }

    /// A cursor over the same bytes at `pos` (clamped to the end).
    pub(crate) fn at(bytes: &'a [u8], pos: usize, big_endian: bool) -> Cursor<'a> {
        Cursor {
            bytes,
            pos: pos.min(bytes.len()),
            big_endian,
        }
    }

    pub(crate) fn set_big_endian(&mut self, big_endian: bool) {
        self.big_endian = big_endian;
    }

    /// Current position, as an absolute file offset.
    pub(crate) fn pos(&self) -> u64 {
        self.pos as u64
    }

    pub(crate) fn pos_usize(&self) -> usize {
        self.pos
    }

    /// Every byte before the current position.
    pub(crate) fn slice_to_pos(&self) -> &'a [u8] {
        self.bytes.get(..self.pos).unwrap_or_default()
    }

    /// Bytes left after the current position.
    pub(crate) fn remaining(&self) -> u64 {
        (self.bytes.len() - self.pos) as u64
    }

    fn truncated(&self, what: &str, needed: u64) -> Error {
        Error::at(
            ErrorKind::Truncated {
                what: what.to_string(),
                needed,
                available: self.remaining(),
            },
            self.pos(),
        )
    }

    /// The next `len` bytes.
    pub(crate) fn take(&mut self, len: u64, what: &str) -> Result<&'a [u8]> {
        let end = usize::try_from(len)
            .ok()
            .and_then(|len| self.pos.checked_add(len))
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| self.truncated(what, len))?;
        let slice = self
            .bytes
            .get(self.pos..end)
            .ok_or_else(|| self.truncated(what, len))?;
        self.pos = end;
        Ok(slice)
    }

    /// Skips `len` bytes.
    pub(crate) fn skip(&mut self, len: u64, what: &str) -> Result<()> {
        self.take(len, what).map(|_| ())
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let slice = self.take(N as u64, what)?;
        let mut out = [0u8; N];
        out.copy_from_slice(slice);
        Ok(out)
    }

    pub(crate) fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.array::<1>(what)?[0])
    }

    pub(crate) fn i8(&mut self, what: &str) -> Result<i8> {
        Ok(i8::from_ne_bytes(self.array::<1>(what)?))
    }

    read_number!(u16, u16);
    read_number!(i16, i16);
    read_number!(u32, u32);
    read_number!(i32, i32);
    read_number!(u64, u64);
    read_number!(i64, i64);
    read_number!(f32, f32);
    read_number!(f64, f64);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_byte_orders_and_reports_truncation() {
        let bytes = [1u8, 0, 0, 0, 0, 0, 0, 1, 9];
        let mut le = Cursor::new(&bytes);
        assert_eq!(le.u32("x").unwrap(), 1);
        let mut be = Cursor::at(&bytes, 4, true);
        assert_eq!(be.u32("y").unwrap(), 1);
        let err = be.u16("z").unwrap_err();
        assert_eq!(err.offset, Some(8));
        assert!(matches!(
            err.kind,
            ErrorKind::Truncated {
                needed: 2,
                available: 1,
                ..
            }
        ));
        assert_eq!(be.pos(), 8, "a failed read does not move the cursor");
    }

    #[test]
    fn take_refuses_huge_lengths() {
        let bytes = [0u8; 4];
        let mut cur = Cursor::new(&bytes);
        assert!(cur.take(u64::MAX, "blob").is_err());
        assert_eq!(cur.take(4, "blob").unwrap().len(), 4);
    }
}
