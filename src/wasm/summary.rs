//! The model summary as JS sees it (`GgufHeader.summary()`, `SplitSummary`): one serde type, so
//! the field names live in one place. Counts are JS numbers (f64), as every JS number is.

use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::GgufHeader;
use crate::model::SplitCheck;
use crate::summary::Summary;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct QuantShareJs {
    #[serde(rename = "type")]
    type_name: &'static str,
    type_id: u32,
    tensors: f64,
    elements: f64,
    bytes: f64,
    share: f64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SummaryJs<'a> {
    /// Always "gguf" here; a safetensors summary has the same fields with "safetensors".
    format: &'static str,
    tensor_count: f64,
    architecture: Option<&'a str>,
    name: Option<&'a str>,
    parameter_count: f64,
    tensor_bytes: f64,
    file_type: Option<f64>,
    file_type_label: Option<&'static str>,
    quant_mix: Vec<QuantShareJs>,
    bits_per_weight: f64,
    context_length: Option<f64>,
    layers: Option<f64>,
    heads: Option<f64>,
    kv_heads: Option<f64>,
    embedding_size: Option<f64>,
    vocab_size: Option<f64>,
}

/// `summary` as the JS object `js/index.d.ts` declares (`Summary`).
pub(super) fn summary_to_js(s: &Summary) -> JsValue {
    let num = |v: Option<u64>| v.map(|n| n as f64);
    let value = SummaryJs {
        format: "gguf",
        tensor_count: s.quant_mix.iter().map(|m| m.tensors as f64).sum(),
        architecture: s.architecture.as_deref(),
        name: s.name.as_deref(),
        parameter_count: s.parameter_count as f64,
        tensor_bytes: s.tensor_bytes as f64,
        file_type: num(s.file_type),
        file_type_label: s.file_type_label,
        quant_mix: s
            .quant_mix
            .iter()
            .map(|m| QuantShareJs {
                type_name: m.ggml_type.name(),
                type_id: m.ggml_type.id(),
                tensors: m.tensors as f64,
                elements: m.elements as f64,
                bytes: m.bytes as f64,
                share: m.byte_share,
            })
            .collect(),
        bits_per_weight: s.bits_per_weight,
        context_length: num(s.context_length),
        layers: num(s.block_count),
        heads: num(s.head_count),
        kv_heads: num(s.head_count_kv),
        embedding_size: num(s.embedding_length),
        vocab_size: num(s.vocab_size),
    };
    super::to_js(&value)
}

/// The summary of a split model, built shard by shard in order (the core's
/// `Summary::with_tensors_of`): metadata fields from the first shard, tensors from all. The
/// shards are checked as the core's `GgufModel` checks them (`SplitCheck`).
#[wasm_bindgen]
#[derive(Default)]
pub struct SplitSummary {
    summary: Option<Summary>,
    check: SplitCheck,
}

#[wasm_bindgen]
impl SplitSummary {
    #[wasm_bindgen(constructor)]
    pub fn new() -> SplitSummary {
        SplitSummary::default()
    }

    /// Adds the next shard; throws when it does not belong (split.no, a tensor twice).
    pub fn add(&mut self, shard: &GgufHeader) -> Result<(), JsError> {
        self.check.add(&shard.file).map_err(super::js_error)?;
        let next = Summary::of(&shard.file);
        self.summary = Some(match self.summary.take() {
            None => next,
            Some(summary) => summary.with_tensors_of(next),
        });
        Ok(())
    }

    /// The summary of every shard added; throws when they are not the whole model
    /// (split.count, split.tensors.count).
    pub fn result(&self) -> Result<JsValue, JsError> {
        self.check.finish().map_err(super::js_error)?;
        Ok(summary_to_js(&self.summary.clone().unwrap_or_default()))
    }
}
