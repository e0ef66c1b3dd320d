//! safetensors: parse a header from any prefix of a file (the first 8 bytes say exactly how
//! long it is), validate it as the `safetensors` crate does, read plain tensors as f32, and map
//! the tensors of a sharded checkpoint to their shards (`model.safetensors.index.json`).
//!
//! Layout of a file: u64 little-endian header length N, N bytes of JSON (an object mapping each
//! tensor name to `{"dtype", "shape", "data_offsets": [begin, end]}`, plus an optional
//! `"__metadata__"` string-to-string map), then the data section. Offsets are relative to the
//! data section, which starts at 8 + N; tensors tile it exactly, in offset order.

mod dtype;
mod file;
mod index;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128;

pub use dtype::{to_f32, Dtype};
pub use file::{parse, ParseStatus, SafetensorsFile, Tensor};
pub use index::{is_plain_file_name, not_plain_file_name, ShardIndex};

/// Largest header accepted: the `safetensors` crate's limit (100 MB).
pub const MAX_HEADER_LEN: u64 = 100_000_000;

/// Converts a serde_json error inside the header to a byte offset from the header's start.
pub(crate) fn json_error_offset(json: &[u8], err: &serde_json::Error) -> u64 {
    let mut line = 1;
    let mut pos = 0u64;
    for (i, &b) in json.iter().enumerate() {
        if line == err.line() {
            pos = i as u64;
            break;
        }
        if b == b'\n' {
            line += 1;
        }
    }
    pos + (err.column() as u64).saturating_sub(1)
}
