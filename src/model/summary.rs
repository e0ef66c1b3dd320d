//! A model at a glance, whatever its format: one [`Summary`] with the fields every format has
//! (parameters, bytes, tensor count, type mix, bits per weight, a file type label) and a
//! format's own part ([`Detail`]): a GGUF model's architecture and hyper-parameters, a
//! checkpoint's quantization configs. GGUF summaries are built here; a checkpoint's in
//! `model/safetensors.rs`, beside the layers it counts (its part's types are here). Shared by the CLI and the wasm API.

use std::collections::BTreeMap;

use super::{Format, TensorType};
use crate::bnb::BnbConfig;
use crate::ct::CtConfig;
use crate::gguf::{GgufFile, Value};
use crate::gptq::CheckpointFormat;
/// llama.cpp's `LLAMA_FTYPE` labels for `general.file_type` (not ggml's `GGML_FTYPE`).
/// Removed ids have no label.
pub fn file_type_label(file_type: u64) -> Option<&'static str> {
    Some(match file_type {
        0 => "ALL_F32",
        1 => "MOSTLY_F16",
        2 => "MOSTLY_Q4_0",
        3 => "MOSTLY_Q4_1",
        7 => "MOSTLY_Q8_0",
        8 => "MOSTLY_Q5_0",
        9 => "MOSTLY_Q5_1",
        10 => "MOSTLY_Q2_K",
        11 => "MOSTLY_Q3_K_S",
        12 => "MOSTLY_Q3_K_M",
        13 => "MOSTLY_Q3_K_L",
        14 => "MOSTLY_Q4_K_S",
        15 => "MOSTLY_Q4_K_M",
        16 => "MOSTLY_Q5_K_S",
        17 => "MOSTLY_Q5_K_M",
        18 => "MOSTLY_Q6_K",
        19 => "MOSTLY_IQ2_XXS",
        20 => "MOSTLY_IQ2_XS",
        21 => "MOSTLY_Q2_K_S",
        22 => "MOSTLY_IQ3_XS",
        23 => "MOSTLY_IQ3_XXS",
        24 => "MOSTLY_IQ1_S",
        25 => "MOSTLY_IQ4_NL",
        26 => "MOSTLY_IQ3_S",
        27 => "MOSTLY_IQ3_M",
        28 => "MOSTLY_IQ2_S",
        29 => "MOSTLY_IQ2_M",
        30 => "MOSTLY_IQ4_XS",
        31 => "MOSTLY_IQ1_M",
        32 => "MOSTLY_BF16",
        36 => "MOSTLY_TQ1_0",
        37 => "MOSTLY_TQ2_0",
        38 => "MOSTLY_MXFP4_MOE",
        39 => "MOSTLY_NVFP4",
        40 => "MOSTLY_Q1_0",
        41 => "MOSTLY_Q2_0",
        1024 => "GUESSED",
        _ => return None,
    })
}

/// The tensors of one type.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeShare {
    /// A ggml type in a GGUF model; a dtype name or a quantized layer's type name
    /// (`GPTQ-4bit`, `MLX-4bit-g64`, …) in a checkpoint.
    pub ty: TensorType,
    pub tensors: u64,
    pub elements: u64,
    pub bytes: u64,
    /// Fraction of all tensor bytes (0..=1).
    pub byte_share: f64,
}

/// A model at a glance: the fields every format has, then its own ([`Summary::detail`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub format: Format,
    /// Stored tensors (a checkpoint's quantized layer counts each part).
    pub tensor_count: u64,
    /// Elements of every tensor; a checkpoint's quantized layer by its logical shape (not its
    /// packed parts, scales or zeros), as the Hub counts parameters.
    pub parameter_count: u64,
    /// Bytes of every stored tensor.
    pub tensor_bytes: u64,
    /// Tensor bits per parameter over the whole model (0 without tensors).
    pub bits_per_weight: f64,
    /// One entry per type: a GGUF model's in type id order; a checkpoint's by bytes, largest
    /// first (ties in first-seen order: quantized layers, then header order), a quantized
    /// layer counted as one tensor of its type.
    pub type_mix: Vec<TypeShare>,
    /// llama.cpp's label of the model's file type (a GGUF `general.file_type`); None when
    /// the format has no such field or the id has no label.
    pub file_type_label: Option<&'static str>,
    pub detail: Detail,
}

/// A format's own part of a [`Summary`].
#[derive(Debug, Clone, PartialEq)]
pub enum Detail {
    Gguf(GgufDetail),
    Checkpoint(CheckpointDetail),
}

/// A GGUF model's own summary fields, read from (the first shard's) metadata. Hyper-parameters
/// are None when their key is absent.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GgufDetail {
    pub architecture: Option<String>,
    pub name: Option<String>,
    pub file_type: Option<u64>,
    /// The file type the tensor mix points to, only when `file_type` is missing or disagrees
    /// (see `effective_ftype`).
    pub file_type_by_tensor_mix: Option<u64>,
    pub context_length: Option<u64>,
    pub block_count: Option<u64>,
    pub head_count: Option<u64>,
    pub head_count_kv: Option<u64>,
    pub embedding_length: Option<u64>,
    /// `{arch}.vocab_size`, else the length of `tokenizer.ggml.tokens`.
    pub vocab_size: Option<u64>,
}

/// The GPTQ side of a checkpoint: the config's values, else the first layer's.
#[derive(Debug, Clone, PartialEq)]
pub struct GptqSummary {
    pub layers: u64,
    pub bits: Option<u32>,
    /// −1 for one group over all inputs (as the config says it).
    pub group_size: Option<i64>,
    pub desc_act: Option<bool>,
    pub sym: Option<bool>,
    pub checkpoint_format: CheckpointFormat,
}

/// The MLX side of a checkpoint: its layers and config.json's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct MlxSummary {
    pub layers: u64,
    /// The defaults' bits and group size (layers may override them: see the dtype mix).
    pub bits: u32,
    pub group_size: u64,
    /// Layers quantized otherwise than the defaults.
    pub overrides: u64,
}

/// The FP8 side of a checkpoint: its layers and config.json's block size.
#[derive(Debug, Clone, PartialEq)]
pub struct Fp8Summary {
    pub layers: u64,
    pub block: [u64; 2],
    /// `modules_to_not_convert`, as the config lists them.
    pub not_converted: Vec<String>,
}

/// A checkpoint's own summary part: its quantization configs and the layers found with them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CheckpointDetail {
    /// None without GPTQ layers and config.
    pub gptq: Option<GptqSummary>,
    /// None without an MLX `quantization` config.
    pub mlx: Option<MlxSummary>,
    /// None without an FP8 `quantization_config`.
    pub fp8: Option<Fp8Summary>,
    /// None without a compressed-tensors `quantization_config`.
    pub ct: Option<CtSummary>,
    /// None without an MXFP4 `quantization_config` or MXFP4 tensors found by name and shape.
    pub mxfp4: Option<Mxfp4Summary>,
    /// None without bitsandbytes layers or config.
    pub bnb: Option<BnbSummary>,
}

/// The bitsandbytes side of a checkpoint: its layers and config.json's settings (None when
/// the layers were found by their quant-state tensors alone).
#[derive(Debug, Clone, PartialEq)]
pub struct BnbSummary {
    pub layers: u64,
    pub config: Option<BnbConfig>,
}

/// The MXFP4 side of a checkpoint: its tensors and config.json's modules left unquantized.
#[derive(Debug, Clone, PartialEq)]
pub struct Mxfp4Summary {
    pub layers: u64,
    /// Found by tensor names and shapes alone (no MXFP4 config.json).
    pub inferred: bool,
    /// `modules_to_not_convert`, as the config lists them.
    pub not_converted: Vec<String>,
}

/// The compressed-tensors side of a checkpoint: its layers and config.json's scheme.
#[derive(Debug, Clone, PartialEq)]
pub struct CtSummary {
    pub layers: u64,
    pub scheme: CtConfig,
}

impl Summary {
    /// The GGUF part, when the model is one.
    pub fn gguf(&self) -> Option<&GgufDetail> {
        match &self.detail {
            Detail::Gguf(d) => Some(d),
            Detail::Checkpoint(_) => None,
        }
    }

    /// The checkpoint part, when the model is one.
    pub fn checkpoint(&self) -> Option<&CheckpointDetail> {
        match &self.detail {
            Detail::Checkpoint(d) => Some(d),
            Detail::Gguf(_) => None,
        }
    }

    /// The summary of a GGUF model without shards.
    fn empty_gguf() -> Summary {
        Summary {
            format: Format::Gguf,
            tensor_count: 0,
            parameter_count: 0,
            tensor_bytes: 0,
            bits_per_weight: 0.0,
            type_mix: Vec::new(),
            file_type_label: None,
            detail: Detail::Gguf(GgufDetail::default()),
        }
    }

    /// Summarizes a GGUF model from its shards in order (one for a single file): fields from
    /// the first shard's metadata (as llama.cpp reads a split model), counts, bytes, type mix
    /// and bits per weight over every shard's tensors.
    pub fn of_gguf_shards(shards: &[&GgufFile]) -> Summary {
        let mut parts = shards.iter().map(|f| Summary::of_gguf(f));
        let Some(first) = parts.next() else {
            return Summary::empty_gguf();
        };
        let mut summary = parts.fold(first, Summary::with_tensors_of);
        // The guess needs every shard's tensors, not the first shard's.
        let kinds: Vec<_> = shards
            .iter()
            .flat_map(|f| f.tensors())
            .map(crate::effective_ftype::TensorKind::of)
            .collect();
        if let Detail::Gguf(d) = &mut summary.detail {
            d.file_type_by_tensor_mix = crate::effective_ftype::guess_file_type(&kinds)
                .filter(|guess| Some(*guess) != d.file_type);
        }
        summary
    }

    /// `self` (a GGUF model's) with `other`'s tensors added (type counts, elements, bytes),
    /// shares and bits per weight recomputed over both; the rest stays `self`'s. Sums
    /// saturate: the counts come from the files.
    pub fn with_tensors_of(mut self, other: Summary) -> Summary {
        let mut mix: BTreeMap<TensorType, (u64, u64, u64)> = BTreeMap::new();
        for share in self.type_mix.iter().chain(&other.type_mix) {
            let entry = mix.entry(share.ty.clone()).or_default();
            entry.0 = entry.0.saturating_add(share.tensors);
            entry.1 = entry.1.saturating_add(share.elements);
            entry.2 = entry.2.saturating_add(share.bytes);
        }
        self.tensor_count = self.tensor_count.saturating_add(other.tensor_count);
        self.parameter_count = self.parameter_count.saturating_add(other.parameter_count);
        self.tensor_bytes = self.tensor_bytes.saturating_add(other.tensor_bytes);
        self.type_mix = shares(mix, self.tensor_bytes);
        self.bits_per_weight = ratio(self.tensor_bytes as f64 * 8.0, self.parameter_count as f64);
        self
    }

    /// Summarizes one parsed GGUF header.
    pub fn of_gguf(file: &GgufFile) -> Summary {
        let text = |key: &str| {
            file.get(key)
                .and_then(|v| v.as_str().map(|s| s.into_owned()))
        };
        let architecture = text("general.architecture");
        let arch_u64 = |suffix: &str| {
            let arch = architecture.as_deref()?;
            file.get(&format!("{arch}.{suffix}"))
                .and_then(|v| first_u64(&v))
        };
        let mut mix: BTreeMap<TensorType, (u64, u64, u64)> = BTreeMap::new();
        for t in file.tensors() {
            let entry = mix.entry(TensorType::Ggml(t.ggml_type())).or_default();
            entry.0 += 1;
            entry.1 = entry.1.saturating_add(t.n_elements());
            entry.2 = entry.2.saturating_add(t.n_bytes());
        }
        let parameter_count = mix.values().map(|m| m.1).fold(0u64, u64::saturating_add);
        let tensor_bytes = mix.values().map(|m| m.2).fold(0u64, u64::saturating_add);
        let file_type = file.get("general.file_type").and_then(|v| v.as_u64());
        let vocab_size = arch_u64("vocab_size").or_else(|| {
            file.get("tokenizer.ggml.tokens")
                .and_then(|v| v.as_array().map(|a| a.len() as u64))
        });
        let detail = GgufDetail {
            name: text("general.name"),
            file_type,
            file_type_by_tensor_mix: crate::effective_ftype::guess_file_type_of(file)
                .filter(|guess| Some(*guess) != file_type),
            context_length: arch_u64("context_length"),
            block_count: arch_u64("block_count"),
            head_count: arch_u64("attention.head_count"),
            head_count_kv: arch_u64("attention.head_count_kv"),
            embedding_length: arch_u64("embedding_length"),
            vocab_size,
            architecture,
        };
        Summary {
            format: Format::Gguf,
            tensor_count: file.tensors().len() as u64,
            parameter_count,
            tensor_bytes,
            bits_per_weight: ratio(tensor_bytes as f64 * 8.0, parameter_count as f64),
            type_mix: shares(mix, tensor_bytes),
            file_type_label: file_type.and_then(file_type_label),
            detail: Detail::Gguf(detail),
        }
    }
}

/// One share per type, in the map's (type id) order, of `(tensors, elements, bytes)` per type.
fn shares(mix: BTreeMap<TensorType, (u64, u64, u64)>, tensor_bytes: u64) -> Vec<TypeShare> {
    mix.into_iter()
        .map(|(ty, (tensors, elements, bytes))| TypeShare {
            ty,
            tensors,
            elements,
            bytes,
            byte_share: ratio(bytes as f64, tensor_bytes as f64),
        })
        .collect()
}

/// An integer, or the first element of an integer array (per-layer head counts).
fn first_u64(value: &Value<'_>) -> Option<u64> {
    match value {
        Value::Array(array) => array.get(0).and_then(|v| v.as_u64()),
        other => other.as_u64(),
    }
}

/// `num / den`, 0 when `den` is not positive (a model without tensors).
pub(super) fn ratio(num: f64, den: f64) -> f64 {
    if den > 0.0 {
        num / den
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_follow_llama_cpp_numbering() {
        assert_eq!(file_type_label(15), Some("MOSTLY_Q4_K_M"));
        assert_eq!(file_type_label(0), Some("ALL_F32"));
        assert_eq!(file_type_label(1024), Some("GUESSED"));
        assert_eq!(file_type_label(4), None);
        assert_eq!(file_type_label(34), None);
    }

    #[test]
    fn summary_of_an_empty_header() {
        let mut bytes = b"GGUF".to_vec();
        bytes.extend_from_slice(&3u32.to_le_bytes());
        bytes.extend_from_slice(&0u64.to_le_bytes());
        bytes.extend_from_slice(&0u64.to_le_bytes());
        let file = GgufFile::from_bytes(&bytes).unwrap();
        let summary = Summary::of_gguf(&file);
        assert_eq!(summary.format, Format::Gguf);
        assert_eq!(summary.parameter_count, 0);
        assert_eq!(summary.bits_per_weight, 0.0);
        assert!(summary.type_mix.is_empty());
        assert_eq!(summary.gguf().unwrap().architecture, None);
        assert!(summary.checkpoint().is_none());
    }
}
