//! Editing a GGUF's metadata: a new header (keys set, added, removed) followed by the untouched
//! tensor data, copied file to file in big chunks (never held in memory).
//!
//! Untouched keys are re-encoded from their parsed values in the file's byte order, which gives
//! the same bytes; tensor infos are copied verbatim, so tensor offsets (relative to the data
//! section) do not change — unless the alignment changes, when the tensors are laid out anew
//! (see [`plan`]). For split models, edit the first shard: it holds the metadata.

mod encode;
mod plan;
mod values;
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
mod write;

pub use encode::{build_header, build_header_with_tensors, new_alignment, NewTensor, NewValue};
pub use plan::{plan, EditPlan, Piece};
pub use values::{from_json, type_name, typed};
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub use write::edit_file;

use crate::error::{Error, ErrorKind};

/// An edit the file cannot take, in plain words naming the key or tensor.
pub(crate) fn bad_edit(message: String) -> Error {
    Error::new(ErrorKind::BadEdit { message })
}

/// The changes to make, applied in order: removals, then sets (a set of an existing key replaces
/// its value in place; a new key goes at the end).
#[derive(Debug, Clone, Default)]
pub struct Edits {
    pub set: Vec<(String, NewValue)>,
    pub remove: Vec<String>,
}
