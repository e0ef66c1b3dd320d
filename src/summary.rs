//! A model at a glance: architecture, size, llama.cpp's file type label, quant mix, bits per
//! weight and the hyper-parameters people look for first. Shared by the CLI and the wasm API.

use std::collections::BTreeMap;

use crate::gguf::{GgufFile, Value};
use crate::types::GgmlType;

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

/// The tensors of one ggml type.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeShare {
    pub ggml_type: GgmlType,
    pub tensors: u64,
    pub elements: u64,
    pub bytes: u64,
    /// Fraction of all tensor bytes (0..=1).
    pub byte_share: f64,
}

/// The model at a glance. Hyper-parameters are None when their key is absent.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Summary {
    pub architecture: Option<String>,
    pub name: Option<String>,
    /// Sum of every tensor's element count.
    pub parameter_count: u64,
    /// Sum of every tensor's byte size.
    pub tensor_bytes: u64,
    pub file_type: Option<u64>,
    pub file_type_label: Option<&'static str>,
    /// The file type the tensor mix points to, only when `file_type` is missing or disagrees
    /// (see `effective_ftype`).
    pub file_type_by_tensor_mix: Option<u64>,
    /// One entry per type, in type id order.
    pub quant_mix: Vec<TypeShare>,
    /// Tensor bits per element over the whole model (0 without tensors).
    pub bits_per_weight: f64,
    pub context_length: Option<u64>,
    pub block_count: Option<u64>,
    pub head_count: Option<u64>,
    pub head_count_kv: Option<u64>,
    pub embedding_length: Option<u64>,
    /// `{arch}.vocab_size`, else the length of `tokenizer.ggml.tokens`.
    pub vocab_size: Option<u64>,
}

impl Summary {
    /// Summarizes a model from its shards in order (one for a single file): fields from the
    /// first shard's metadata (as llama.cpp reads a split model), counts, bytes, quant mix and
    /// bits per weight over every shard's tensors.
    pub fn of_shards(shards: &[&GgufFile]) -> Summary {
        let mut parts = shards.iter().map(|f| Summary::of(f));
        let Some(first) = parts.next() else {
            return Summary::default();
        };
        let mut summary = parts.fold(first, Summary::with_tensors_of);
        // The guess needs every shard's tensors, not the first shard's.
        let kinds: Vec<_> = shards
            .iter()
            .flat_map(|f| f.tensors())
            .map(crate::effective_ftype::TensorKind::of)
            .collect();
        summary.file_type_by_tensor_mix = crate::effective_ftype::guess_file_type(&kinds)
            .filter(|guess| Some(*guess) != summary.file_type);
        summary
    }

    /// `self` with `other`'s tensors added (type counts, elements, bytes), shares and bits per
    /// weight recomputed over both. Sums saturate: the counts come from the files.
    pub fn with_tensors_of(mut self, other: Summary) -> Summary {
        let mut mix: BTreeMap<GgmlType, (u64, u64, u64)> = BTreeMap::new();
        for share in self.quant_mix.iter().chain(&other.quant_mix) {
            let entry = mix.entry(share.ggml_type).or_default();
            entry.0 = entry.0.saturating_add(share.tensors);
            entry.1 = entry.1.saturating_add(share.elements);
            entry.2 = entry.2.saturating_add(share.bytes);
        }
        self.parameter_count = self.parameter_count.saturating_add(other.parameter_count);
        self.tensor_bytes = self.tensor_bytes.saturating_add(other.tensor_bytes);
        self.quant_mix = shares(mix, self.tensor_bytes);
        self.bits_per_weight = ratio(self.tensor_bytes as f64 * 8.0, self.parameter_count as f64);
        self
    }

    /// Summarizes a parsed header.
    pub fn of(file: &GgufFile) -> Summary {
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
        let mut mix: BTreeMap<GgmlType, (u64, u64, u64)> = BTreeMap::new();
        for t in file.tensors() {
            let entry = mix.entry(t.ggml_type()).or_default();
            entry.0 += 1;
            entry.1 = entry.1.saturating_add(t.n_elements());
            entry.2 = entry.2.saturating_add(t.n_bytes());
        }
        let parameter_count = mix.values().map(|m| m.1).fold(0u64, u64::saturating_add);
        let tensor_bytes = mix.values().map(|m| m.2).fold(0u64, u64::saturating_add);
        let quant_mix = shares(mix, tensor_bytes);
        let file_type = file.get("general.file_type").and_then(|v| v.as_u64());
        let vocab_size = arch_u64("vocab_size").or_else(|| {
            file.get("tokenizer.ggml.tokens")
                .and_then(|v| v.as_array().map(|a| a.len() as u64))
        });
        Summary {
            name: text("general.name"),
            parameter_count,
            tensor_bytes,
            file_type,
            file_type_label: file_type.and_then(file_type_label),
            file_type_by_tensor_mix: crate::effective_ftype::guess_file_type_of(file)
                .filter(|guess| Some(*guess) != file_type),
            quant_mix,
            bits_per_weight: ratio(tensor_bytes as f64 * 8.0, parameter_count as f64),
            context_length: arch_u64("context_length"),
            block_count: arch_u64("block_count"),
            head_count: arch_u64("attention.head_count"),
            head_count_kv: arch_u64("attention.head_count_kv"),
            embedding_length: arch_u64("embedding_length"),
            vocab_size,
            architecture,
        }
    }
}

/// One share per type, in type id order, of `(tensors, elements, bytes)` per type.
fn shares(mix: BTreeMap<GgmlType, (u64, u64, u64)>, tensor_bytes: u64) -> Vec<TypeShare> {
    mix.into_iter()
        .map(|(ggml_type, (tensors, elements, bytes))| TypeShare {
            ggml_type,
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

fn ratio(num: f64, den: f64) -> f64 {
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
        let summary = Summary::of(&file);
        assert_eq!(summary.parameter_count, 0);
        assert_eq!(summary.bits_per_weight, 0.0);
        assert!(summary.quant_mix.is_empty());
        assert_eq!(summary.architecture, None);
    }
}
