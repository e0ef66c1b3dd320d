//! The model summary as JS sees it (`ModelHeader.summary()`, a split model's too): one serde type, so
//! the field names live in one place. Counts are JS numbers (f64), as every JS number is.

use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::model::{Detail, Summary, TensorType};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct QuantShareJs {
    #[serde(rename = "type")]
    type_name: String,
    /// A ggml type id; -1 in a checkpoint's quantMix; absent from its dtypeMix.
    #[serde(skip_serializing_if = "Option::is_none")]
    type_id: Option<i64>,
    tensors: f64,
    elements: f64,
    bytes: f64,
    share: f64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SummaryJs<'a> {
    /// "gguf" or "safetensors": one type, so both formats have the same fields.
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
    /// A checkpoint's own: the quantMix shares without typeId.
    #[serde(skip_serializing_if = "Option::is_none")]
    dtype_mix: Option<Vec<QuantShareJs>>,
    /// A checkpoint's own: Some(None) is null (no GPTQ layers nor config).
    #[serde(skip_serializing_if = "Option::is_none")]
    gptq: Option<Option<GptqJs>>,
    /// A checkpoint's own: Some(None) is null (no MLX config).
    #[serde(skip_serializing_if = "Option::is_none")]
    mlx: Option<Option<MlxJs>>,
    /// A checkpoint's own: Some(None) is null (no FP8 config).
    #[serde(skip_serializing_if = "Option::is_none")]
    fp8: Option<Option<Fp8Js>>,
    /// A checkpoint's own: Some(None) is null (no compressed-tensors config).
    #[serde(skip_serializing_if = "Option::is_none")]
    ct: Option<Option<CtJs>>,
    /// A checkpoint's own: Some(None) is null (no MXFP4 config).
    #[serde(skip_serializing_if = "Option::is_none")]
    mxfp4: Option<Option<Mxfp4Js>>,
    /// A checkpoint's own: Some(None) is null (no bitsandbytes layers nor config).
    #[serde(skip_serializing_if = "Option::is_none")]
    bnb: Option<Option<BnbJs>>,
}

#[cfg_attr(not(feature = "wasm-full"), allow(dead_code))]
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BnbJs {
    layers: f64,
    /// config.json's settings; null when the layers were found by their quant states alone.
    config: Option<BnbConfigJs>,
}

#[cfg_attr(not(feature = "wasm-full"), allow(dead_code))]
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BnbConfigJs {
    quant_type: &'static str,
    double_quant: bool,
    modules_to_not_convert: Vec<String>,
}

#[cfg_attr(not(feature = "wasm-full"), allow(dead_code))]
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Mxfp4Js {
    layers: f64,
    not_converted: Vec<String>,
}

#[cfg_attr(not(feature = "wasm-full"), allow(dead_code))]
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CtJs {
    layers: f64,
    /// The layers' type label (`CT-W4A16-g128`).
    label: String,
    format: &'static str,
    bits: u32,
    strategy: &'static str,
    group_size: Option<f64>,
    symmetric: bool,
    ignore: Vec<String>,
}

#[cfg_attr(not(feature = "wasm-full"), allow(dead_code))]
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Fp8Js {
    layers: f64,
    block: [f64; 2],
    not_converted: Vec<String>,
}

#[cfg_attr(not(feature = "wasm-full"), allow(dead_code))]
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MlxJs {
    layers: f64,
    bits: u32,
    group_size: f64,
    overrides: f64,
}

#[cfg_attr(not(feature = "wasm-full"), allow(dead_code))]
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GptqJs {
    layers: f64,
    bits: Option<u32>,
    group_size: Option<f64>,
    desc_act: Option<bool>,
    sym: Option<bool>,
    checkpoint_format: &'static str,
    config_source: Option<String>,
}

/// `s` as the JS object `js/types.js` declares (`Summary`): one function for every format.
/// The GGUF fields a checkpoint has no such thing for are null; a checkpoint's own fields
/// (`dtypeMix`, `gptq`, `mlx`, …) are absent from a GGUF model's. `config_source` says where
/// a checkpoint's quantization config came from (`gptq.configSource`).
pub(super) fn summary_to_js(s: &Summary, config_source: Option<String>) -> JsValue {
    let num = |v: Option<u64>| v.map(|n| n as f64);
    // A checkpoint's quantMix entries carry typeId -1 (no ggml type), its dtypeMix none.
    let shares = |no_type: Option<i64>| -> Vec<QuantShareJs> {
        s.type_mix
            .iter()
            .map(|m| QuantShareJs {
                type_name: m.ty.name().to_string(),
                type_id: match &m.ty {
                    TensorType::Ggml(t) => Some(i64::from(t.id())),
                    TensorType::Named(_) => no_type,
                },
                tensors: m.tensors as f64,
                elements: m.elements as f64,
                bytes: m.bytes as f64,
                share: m.byte_share,
            })
            .collect()
    };
    let mut value = SummaryJs {
        format: s.format.name(),
        tensor_count: s.tensor_count as f64,
        architecture: None,
        name: None,
        parameter_count: s.parameter_count as f64,
        tensor_bytes: s.tensor_bytes as f64,
        file_type: None,
        file_type_label: s.file_type_label,
        quant_mix: shares(Some(-1)),
        bits_per_weight: s.bits_per_weight,
        context_length: None,
        layers: None,
        heads: None,
        kv_heads: None,
        embedding_size: None,
        vocab_size: None,
        dtype_mix: None,
        gptq: None,
        mlx: None,
        fp8: None,
        ct: None,
        mxfp4: None,
        bnb: None,
    };
    match &s.detail {
        Detail::Gguf(d) => {
            value.architecture = d.architecture.as_deref();
            value.name = d.name.as_deref();
            value.file_type = num(d.file_type);
            value.context_length = num(d.context_length);
            value.layers = num(d.block_count);
            value.heads = num(d.head_count);
            value.kv_heads = num(d.head_count_kv);
            value.embedding_size = num(d.embedding_length);
            value.vocab_size = num(d.vocab_size);
        }
        // The core module parses no checkpoint: its summary code stays out of that module.
        #[cfg(not(feature = "wasm-full"))]
        Detail::Checkpoint(_) => drop(config_source),
        #[cfg(feature = "wasm-full")]
        Detail::Checkpoint(c) => {
            value.dtype_mix = Some(shares(None));
            value.gptq = Some(c.gptq.as_ref().map(|g| GptqJs {
                layers: g.layers as f64,
                bits: g.bits,
                group_size: g.group_size.map(|n| n as f64),
                desc_act: g.desc_act,
                sym: g.sym,
                checkpoint_format: g.checkpoint_format.name(),
                config_source: config_source.clone(),
            }));
            value.mlx = Some(c.mlx.as_ref().map(|m| MlxJs {
                layers: m.layers as f64,
                bits: m.bits,
                group_size: m.group_size as f64,
                overrides: m.overrides as f64,
            }));
            value.fp8 = Some(c.fp8.as_ref().map(|f| Fp8Js {
                layers: f.layers as f64,
                block: [f.block[0] as f64, f.block[1] as f64],
                not_converted: f.not_converted.clone(),
            }));
            value.ct = Some(c.ct.as_ref().map(|c| {
                use crate::ct::CtStrategy;
                let (strategy, group_size) = match c.scheme.strategy {
                    CtStrategy::Tensor => ("tensor", None),
                    CtStrategy::Channel => ("channel", None),
                    CtStrategy::Group(g) => ("group", Some(g as f64)),
                };
                CtJs {
                    layers: c.layers as f64,
                    label: c.scheme.type_name(),
                    format: c.scheme.format.name(),
                    bits: c.scheme.bits,
                    strategy,
                    group_size,
                    symmetric: c.scheme.symmetric,
                    ignore: c.scheme.ignore.clone(),
                }
            }));
            value.mxfp4 = Some(c.mxfp4.as_ref().map(|m| Mxfp4Js {
                layers: m.layers as f64,
                not_converted: m.not_converted.clone(),
            }));
            value.bnb = Some(c.bnb.as_ref().map(|b| BnbJs {
                layers: b.layers as f64,
                config: b.config.as_ref().map(|q| BnbConfigJs {
                    quant_type: q.quant_type.name(),
                    double_quant: q.double_quant,
                    modules_to_not_convert: q.not_converted.clone(),
                }),
            }));
        }
    }
    super::to_js(&value)
}
