//! One model, whatever its storage: a GGUF file or split model ([`GgufModel`]), or a
//! safetensors checkpoint, one file or sharded, plain or with GPTQ, MLX or FP8 block-scaled
//! layers ([`Checkpoint`]).
//! Everything that reads tensors goes through [`Model`]: the tensor list in logical shape
//! ([`Model::tensors`]), any tensor as f32 rows ([`Model::rows`], whatever the storage), the
//! name a tensor is read under (a GPTQ or MLX layer as `<layer>.weight`), the one [`Summary`]
//! ([`Model::summary`]). [`detect`] is the one place
//! a format is chosen; adding a format is one more [`Model`] variant and storage file here.
//!
//! Logical shapes are row-major, outermost first: a safetensors shape as stored, a GGUF shape
//! reversed (GGUF lists ggml's `[ne0, ne1, ...]`, innermost first), so a GGUF `[4096, 11008]`
//! and a safetensors `[11008, 4096]` are the same logical `[11008, 4096]`. A row is the last
//! logical dimension in both (`ne0`), so rows line up across formats.
//!
//! A model holds headers only; the bytes come from a [`Shards`] (native files:
//! [`Files`], opened by [`open`]; or buffers in memory).

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
mod files;
mod gguf;
mod rows;
mod safetensors;
mod summary;

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub use files::{open, Files, Opened};
pub use gguf::{split_paths, GgufModel, SplitCheck};
pub use rows::{ReadSeek, Rows, Shards};
pub use safetensors::Checkpoint;
pub use summary::{
    file_type_label, BnbSummary, CheckpointDetail, CtSummary, Detail, Fp8Summary, GgufDetail,
    GptqSummary, MlxSummary, Mxfp4Summary, Summary, TypeShare,
};

use crate::error::Result;
use crate::gguf::GgufFile;
use crate::gptq::V1Zeros;
use crate::quant::Kernel;
use crate::types::GgmlType;

/// A model's storage format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Gguf,
    Safetensors,
}

impl Format {
    /// `gguf` or `safetensors`, as every front end names it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Gguf => "gguf",
            Format::Safetensors => "safetensors",
        }
    }
}

/// The format of the file named `name` whose first bytes are `head` (9 are enough; fewer when
/// the file is shorter or unreadable): GGUF by its magic; else safetensors by extension
/// (`.safetensors`, a shard index `.index.json`) or by content (a little-endian header length
/// whose top bytes are zero, then `{`); else GGUF (whose parser then says what is wrong).
pub fn detect(name: &str, head: &[u8]) -> Format {
    if head.starts_with(b"GGUF") {
        return Format::Gguf;
    }
    let by_content = head.len() > 8 && head[8] == b'{' && head[6..8].iter().all(|&b| b == 0);
    if name.ends_with(".safetensors") || name.ends_with(".index.json") || by_content {
        Format::Safetensors
    } else {
        Format::Gguf
    }
}

/// A model of any format: headers, tensor lookup and layers.
#[derive(Debug)]
pub enum Model {
    Gguf(GgufModel),
    Safetensors(Box<Checkpoint>),
}

/// A tensor's type as listed: a ggml type when both models of a comparison are GGUF files
/// (ordered by type id), else a type name (ggml's or a safetensors dtype's, or a GPTQ layer's
/// `GPTQ-<bits>bit`, an MLX layer's `MLX-<bits>bit-g<group>`, an FP8 layer's
/// `FP8-E4M3-block<side>`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TensorType {
    Ggml(GgmlType),
    Named(String),
}

impl TensorType {
    pub fn name(&self) -> &str {
        match self {
            TensorType::Ggml(t) => t.name(),
            TensorType::Named(n) => n,
        }
    }
}

/// A tensor as listed: name, type, logical shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorEntry {
    pub name: String,
    pub ty: TensorType,
    /// Row-major, outermost first (a GGUF tensor's `ne` reversed).
    pub shape: Vec<u64>,
}

/// How [`Model::tensors`] names types. Shapes are logical either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// ggml types (two GGUF models, as `gguf-lens diff`).
    Gguf,
    /// Type names, across formats.
    Logical,
}

impl Model {
    pub fn format(&self) -> Format {
        match self {
            Model::Gguf(_) => Format::Gguf,
            Model::Safetensors(_) => Format::Safetensors,
        }
    }

    /// Every tensor with its logical shape: a GGUF model's in shard then file order; a
    /// checkpoint's plain tensors plus one `<layer>.weight` per GPTQ layer (`[out_features,
    /// in_features]`) and per MLX layer (its last dimension unpacked) in place of its parts,
    /// sorted by name (header order is a JSON object's, and shards split it).
    pub fn tensors(&self, layout: Layout) -> Vec<TensorEntry> {
        match self {
            Model::Gguf(m) => {
                let shards: Vec<&GgufFile> = m.shards().iter().collect();
                gguf_tensors(&shards, layout)
            }
            Model::Safetensors(c) => c.logical_tensors(),
        }
    }

    /// A reader of `name`'s rows as f32, bytes from `shards`: a GGUF tensor, a safetensors
    /// tensor (rows: its last dimension), a GPTQ layer by its prefix or `<prefix>.weight`
    /// (rows: output features, `[out, in]`; its parts read here, v1 zeros read as `v1` says),
    /// an MLX layer by its path or `<path>.weight` (rows: its last logical dimension, read by
    /// row range as `mx.dequantize` computes them), or an FP8 block-scaled layer likewise
    /// (rows: output features, as transformers' `Fp8Dequantize`).
    pub fn rows<'m>(
        &'m self,
        name: &str,
        shards: &'m dyn Shards,
        kernel: Kernel,
        v1: V1Zeros,
    ) -> Result<Rows<'m>> {
        match self {
            Model::Gguf(m) => Rows::gguf(m, name, shards, kernel),
            Model::Safetensors(c) => Rows::checkpoint(c, name, shards, v1),
        }
    }

    /// The model at a glance, one type for every format (see [`Summary`]).
    pub fn summary(&self) -> Summary {
        match self {
            Model::Gguf(m) => m.summary(),
            Model::Safetensors(c) => c.summary(),
        }
    }

    /// The GGUF model, when it is one (the planner and lint read GGUF metadata only).
    pub fn gguf(&self) -> Option<&GgufModel> {
        match self {
            Model::Gguf(m) => Some(m),
            Model::Safetensors(_) => None,
        }
    }
}

/// The tensors of GGUF shards in logical shape (see [`Model::tensors`]).
pub fn gguf_tensors(shards: &[&GgufFile], layout: Layout) -> Vec<TensorEntry> {
    shards
        .iter()
        .flat_map(|f| f.tensors())
        .map(|t| TensorEntry {
            name: t.name().to_string(),
            ty: match layout {
                Layout::Gguf => TensorType::Ggml(t.ggml_type()),
                Layout::Logical => TensorType::Named(t.ggml_type().name().to_string()),
            },
            shape: t.dims().iter().rev().copied().collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detect_by_magic_extension_and_content() {
        let st_head = [2, 0, 0, 0, 0, 0, 0, 0, b'{'];
        assert_eq!(detect("m.safetensors", b"GGUF\x03\0\0\0\0"), Format::Gguf);
        assert_eq!(detect("m.safetensors", b""), Format::Safetensors);
        assert_eq!(
            detect("model.safetensors.index.json", b"{\"metadata"),
            Format::Safetensors
        );
        assert_eq!(detect("m.bin", &st_head), Format::Safetensors);
        // A length whose top bytes are not zero is no safetensors header.
        let mut long = st_head;
        long[7] = 1;
        assert_eq!(detect("m.bin", &long), Format::Gguf);
        assert_eq!(detect("m.gguf", b""), Format::Gguf);
    }
}
