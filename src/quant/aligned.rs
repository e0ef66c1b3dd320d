//! A reusable f32 buffer whose values start on a 64-byte boundary.
//!
//! Big allocations start 16 bytes into a page, where the AVX2 kernels must split every 32-byte
//! store in two halves (a whole one would straddle cache lines). Into an output that stays in
//! L2, whole stores are markedly faster.

use crate::error::{Error, ErrorKind, Result};

/// Up to this many f32 are skipped to reach a 64-byte boundary (a `Vec<f32>` is 4-byte aligned).
const PAD: usize = 64 / std::mem::size_of::<f32>() - 1;

#[derive(Debug, Default)]
pub struct AlignedF32 {
    buf: Vec<f32>,
    start: usize,
    len: usize,
}

impl AlignedF32 {
    pub const fn new() -> AlignedF32 {
        AlignedF32 {
            buf: Vec::new(),
            start: 0,
            len: 0,
        }
    }

    /// Makes the buffer `len` values long and returns them, 64-byte aligned. The allocation is
    /// reused when large enough (then the values are whatever was there: callers overwrite
    /// them all); a larger one is zero-filled once.
    pub fn resize(&mut self, len: usize) -> Result<&mut [f32]> {
        let need = len.checked_add(PAD).ok_or_else(|| too_big(len))?;
        if self.buf.len() < need {
            self.buf = Vec::new(); // the old allocation goes before the new one comes
            self.buf.try_reserve_exact(need).map_err(|_| too_big(len))?;
            self.buf.resize(need, 0.0);
        }
        let start = self.buf.as_ptr().align_offset(64);
        self.start = if start <= PAD { start } else { 0 };
        self.len = len;
        Ok(&mut self.buf[self.start..self.start + len])
    }

    /// The values of the last `resize`.
    pub fn as_slice(&self) -> &[f32] {
        &self.buf[self.start..self.start + self.len]
    }
}

fn too_big(len: usize) -> Error {
    Error::new(ErrorKind::Io {
        message: format!("cannot allocate {len} f32 values"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_start_on_a_cache_line_and_keep_their_length() {
        let mut values = AlignedF32::new();
        for len in [0, 1, 1000, 1 << 18, 7, 1 << 18] {
            let slice = values.resize(len).unwrap();
            assert_eq!(slice.len(), len);
            if len > 0 {
                assert_eq!(slice.as_ptr() as usize % 64, 0, "{len}");
            }
            slice.fill(1.5);
            assert_eq!(values.as_slice().len(), len);
            assert!(values.as_slice().iter().all(|&v| v == 1.5));
        }
    }

    #[test]
    fn an_impossible_length_is_an_error() {
        assert!(AlignedF32::new().resize(usize::MAX).is_err());
        assert!(AlignedF32::new().resize(usize::MAX / 8).is_err());
    }
}
