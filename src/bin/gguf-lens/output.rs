//! Output files: the library's [`AtomicFile`] (never one of the inputs, a random exclusive
//! temporary beside the target renamed at the end, the replaced file's mode kept), and f32
//! values written in one call.

use std::io::Write;
use std::path::Path;

use gguf_lens::atomic_write::same_file;
pub use gguf_lens::atomic_write::AtomicFile as Output;
use gguf_lens::{Error, ErrorKind};

/// Starts writing `path`, which must not be any of `inputs` (also through a link): that is an
/// invalid request naming `path`; an I/O error names `path` too.
pub fn create(path: &str, inputs: &[&Path]) -> Result<Output, Error> {
    let out = Path::new(path);
    if inputs.iter().any(|input| same_file(input, out)) {
        return Err(Error::new(ErrorKind::InvalidRequest {
            message: format!("{path}: input and output are the same file"),
        }));
    }
    Ok(Output::create(out, inputs)?)
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
