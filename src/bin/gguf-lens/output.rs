//! Output files that are never left half-written: written under a temporary name in the same
//! folder and renamed over the destination at the end; on failure (or a panic) the temporary
//! file is removed. A destination that exists and is not a regular file (`/dev/null`, a FIFO, a
//! terminal) is written in place.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

pub struct Output {
    file: File,
    /// The temporary path while the output is not committed.
    temp: Option<PathBuf>,
    path: PathBuf,
}

impl Output {
    pub fn create(path: &str) -> io::Result<Output> {
        let path = PathBuf::from(path);
        let special = fs::metadata(&path).is_ok_and(|m| !m.is_file());
        if special {
            let file = fs::OpenOptions::new().write(true).open(&path)?;
            return Ok(Output {
                file,
                temp: None,
                path,
            });
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let temp = dir.join(format!(".{name}.{}.gguf-lens-tmp", std::process::id()));
        let file = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        Ok(Output {
            file,
            temp: Some(temp),
            path,
        })
    }

    pub fn file(&mut self) -> &mut File {
        &mut self.file
    }

    /// Renames the finished file over the destination.
    pub fn commit(mut self) -> io::Result<()> {
        if let Some(temp) = self.temp.take() {
            if let Err(err) = fs::rename(&temp, &self.path) {
                let _ = fs::remove_file(&temp);
                return Err(err);
            }
        }
        Ok(())
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Some(temp) = self.temp.take() {
            let _ = fs::remove_file(temp);
        }
    }
}

/// Writes f32 values as little-endian bytes in one call (no per-value writes).
pub fn write_f32s(out: &mut impl Write, values: &[f32]) -> std::io::Result<()> {
    #[cfg(target_endian = "little")]
    {
        // SAFETY: f32 is 4 bytes with no padding and u8 needs no alignment; the byte slice
        // covers exactly the values' memory and lives as long as `values`.
        let bytes = unsafe {
            std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), std::mem::size_of_val(values))
        };
        out.write_all(bytes)
    }
    #[cfg(target_endian = "big")]
    {
        let mut bytes = Vec::with_capacity(std::mem::size_of_val(values));
        for v in values {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        out.write_all(&bytes)
    }
}
