//! A safetensors checkpoint as JS sees it (`SafetensorsHeader.metadata()`, `.tensors()`, GPTQ
//! and MLX layers and configs): serde types with the field names of `js/types.js`. Sizes are
//! JS numbers.

use serde::Serialize;
use wasm_bindgen::JsValue;

use super::to_js;

use crate::bnb::BnbConfig;
use crate::ct::{CtConfig, CtFormat, CtStrategy};
use crate::fp8::Fp8Config;
use crate::gptq::QuantConfig;
use crate::mlx::MlxQuantization;
use crate::model::Checkpoint;
use crate::mxfp4::Mxfp4Config;
use crate::safetensors::SafetensorsFile;

#[derive(Serialize)]
struct MetadataEntryJs<'a> {
    key: &'a str,
    value: &'a str,
}

/// `__metadata__` as `[{ key, value }]`, in header order.
pub(super) fn metadata_to_js(file: &SafetensorsFile) -> JsValue {
    let entries: Vec<MetadataEntryJs<'_>> = file
        .metadata()
        .iter()
        .map(|(key, value)| MetadataEntryJs { key, value })
        .collect();
    to_js(&entries)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TensorJs<'a> {
    name: &'a str,
    /// The dtype as the header spells it: `type`, as a GGUF tensor's ggml type name.
    #[serde(rename = "type")]
    type_name: &'static str,
    /// -1: no ggml type (as a checkpoint's `quantMix`).
    type_id: i32,
    shape: Vec<f64>,
    n_elements: f64,
    offset: f64,
    relative_offset: f64,
    n_bytes: f64,
    row_length: f64,
    n_rows: f64,
    /// Null for dtypes narrower than a byte per element row (sub-byte rows).
    row_bytes: Option<f64>,
    plain: bool,
}

/// The stored tensors, in header order.
pub(super) fn tensors_to_js(file: &SafetensorsFile) -> JsValue {
    let tensors: Vec<TensorJs<'_>> = file
        .tensors()
        .iter()
        .map(|t| {
            let bits = u64::from(t.dtype().bits());
            TensorJs {
                name: t.name(),
                type_name: t.dtype().name(),
                type_id: -1,
                shape: t.shape().iter().map(|&d| d as f64).collect(),
                n_elements: t.n_elements() as f64,
                offset: file.data_range(t).start as f64,
                relative_offset: t.offset() as f64,
                n_bytes: t.n_bytes() as f64,
                row_length: t.row_len() as f64,
                n_rows: t.n_rows() as f64,
                row_bytes: (bits % 8 == 0).then(|| (t.row_len() * bits / 8) as f64),
                plain: t.dtype().is_plain(),
            }
        })
        .collect();
    to_js(&tensors)
}

#[derive(Serialize)]
struct PartsJs {
    qweight: String,
    qzeros: String,
    scales: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    g_idx: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LayerJs<'a> {
    name: &'a str,
    bits: u32,
    group_size: f64,
    in_features: f64,
    out_features: f64,
    n_groups: f64,
    has_g_idx: bool,
    act_order: Option<bool>,
    checkpoint_format: &'static str,
    scales_dtype: &'static str,
    parts: PartsJs,
    /// `[out, in]` as rows: outFeatures rows of inFeatures values.
    n_rows: f64,
    row_length: f64,
    n_elements: f64,
    /// Bytes of every part.
    n_bytes: f64,
}

/// The GPTQ layers of a checkpoint, with the config's act-order and format.
pub(super) fn layers_to_js(checkpoint: &Checkpoint) -> JsValue {
    let config = checkpoint.config();
    let format = checkpoint.checkpoint_format();
    let layers: Vec<LayerJs<'_>> = checkpoint
        .layers()
        .iter()
        .map(|l| LayerJs {
            name: &l.name,
            bits: l.bits,
            group_size: l.group_size as f64,
            in_features: l.in_features as f64,
            out_features: l.out_features as f64,
            n_groups: l.n_groups as f64,
            has_g_idx: l.has_g_idx,
            act_order: config.and_then(|c| c.desc_act),
            checkpoint_format: format.name(),
            scales_dtype: l.scales_dtype.name(),
            parts: PartsJs {
                qweight: l.part("qweight"),
                qzeros: l.part("qzeros"),
                scales: l.part("scales"),
                g_idx: l.has_g_idx.then(|| l.part("g_idx")),
            },
            n_rows: l.out_features as f64,
            row_length: l.in_features as f64,
            n_elements: l.out_features as f64 * l.in_features as f64,
            n_bytes: checkpoint.layer_bytes(l) as f64,
        })
        .collect();
    to_js(&layers)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ConfigJs {
    bits: Option<u32>,
    group_size: Option<f64>,
    desc_act: Option<bool>,
    sym: Option<bool>,
    checkpoint_format: &'static str,
}

/// The quantization config, or null.
pub(super) fn config_to_js(config: Option<&QuantConfig>) -> JsValue {
    match config {
        None => JsValue::NULL,
        Some(c) => to_js(&ConfigJs {
            bits: c.bits,
            group_size: c.group_size.map(|g| g as f64),
            desc_act: c.desc_act,
            sym: c.sym,
            checkpoint_format: c.checkpoint_format.name(),
        }),
    }
}

#[derive(Serialize)]
struct MlxPartsJs {
    weight: String,
    scales: String,
    biases: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MlxLayerJs<'a> {
    /// `<path>.weight`: the name it is listed and read under.
    name: String,
    path: &'a str,
    #[serde(rename = "type")]
    type_name: String,
    bits: u32,
    group_size: f64,
    /// Logical, outermost first (the stored weight's last dimension unpacked).
    shape: Vec<f64>,
    n_rows: f64,
    row_length: f64,
    n_elements: f64,
    scales_dtype: &'static str,
    parts: MlxPartsJs,
    /// Bytes of every part.
    n_bytes: f64,
}

/// The MLX layers of a checkpoint.
pub(super) fn mlx_layers_to_js(checkpoint: &Checkpoint) -> JsValue {
    let layers: Vec<MlxLayerJs<'_>> = checkpoint
        .mlx_layers()
        .iter()
        .map(|l| {
            let part = |p: &str| format!("{}.{p}", l.name);
            MlxLayerJs {
                name: part("weight"),
                path: &l.name,
                type_name: l.type_name(),
                bits: l.bits,
                group_size: l.group_size as f64,
                shape: l.shape.iter().map(|&d| d as f64).collect(),
                n_rows: l.n_rows() as f64,
                row_length: l.row_len() as f64,
                n_elements: l.n_rows() as f64 * l.row_len() as f64,
                scales_dtype: l.scales_dtype.name(),
                parts: MlxPartsJs {
                    weight: part("weight"),
                    scales: part("scales"),
                    biases: part("biases"),
                },
                n_bytes: checkpoint.mlx_layer_bytes(l) as f64,
            }
        })
        .collect();
    to_js(&layers)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MlxParamsJs {
    bits: u32,
    group_size: f64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MlxQuantizationJs {
    mode: &'static str,
    bits: u32,
    group_size: f64,
    /// Per-layer entries by path: parameters, or false (left unquantized).
    layers: serde_json::Map<String, serde_json::Value>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Fp8PartsJs {
    weight: String,
    weight_scale_inv: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Fp8LayerJs<'a> {
    /// `<path>.weight`: the name it is listed and read under.
    name: String,
    path: &'a str,
    #[serde(rename = "type")]
    type_name: String,
    /// `[out, in]`.
    shape: [f64; 2],
    block: [f64; 2],
    n_rows: f64,
    row_length: f64,
    n_elements: f64,
    scale_dtype: &'static str,
    parts: Fp8PartsJs,
    /// Bytes of both parts.
    n_bytes: f64,
}

/// The FP8 block-scaled layers of a checkpoint.
pub(super) fn fp8_layers_to_js(checkpoint: &Checkpoint) -> JsValue {
    let layers: Vec<Fp8LayerJs<'_>> = checkpoint
        .fp8_layers()
        .iter()
        .map(|l| {
            let part = |p: &str| format!("{}.{p}", l.name);
            Fp8LayerJs {
                name: part("weight"),
                path: &l.name,
                type_name: l.type_name(),
                shape: [l.out_features as f64, l.in_features as f64],
                block: [l.block[0] as f64, l.block[1] as f64],
                n_rows: l.out_features as f64,
                row_length: l.in_features as f64,
                n_elements: l.out_features as f64 * l.in_features as f64,
                scale_dtype: l.scale_dtype.name(),
                parts: Fp8PartsJs {
                    weight: part("weight"),
                    weight_scale_inv: part("weight_scale_inv"),
                },
                n_bytes: checkpoint.fp8_layer_bytes(l) as f64,
            }
        })
        .collect();
    to_js(&layers)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Fp8ConfigJs<'a> {
    fmt: &'static str,
    weight_block_size: [f64; 2],
    modules_to_not_convert: &'a [String],
    activation_scheme: Option<&'a str>,
}

/// config.json's FP8 `quantization_config`, or null.
pub(super) fn fp8_config_to_js(c: Option<&Fp8Config>) -> JsValue {
    match c {
        None => JsValue::NULL,
        Some(c) => to_js(&Fp8ConfigJs {
            fmt: "e4m3",
            weight_block_size: [c.block[0] as f64, c.block[1] as f64],
            modules_to_not_convert: &c.not_converted,
            activation_scheme: c.activation_scheme.as_deref(),
        }),
    }
}

/// config.json's MLX `quantization`, or null.
pub(super) fn mlx_quantization_to_js(q: Option<&MlxQuantization>) -> JsValue {
    let Some(q) = q else {
        return JsValue::NULL;
    };
    let layers = q
        .layers
        .iter()
        .map(|(path, config)| {
            let entry = config.map_or(serde_json::Value::Bool(false), |c| {
                serde_json::to_value(MlxParamsJs {
                    bits: c.bits,
                    group_size: c.group_size as f64,
                })
                .unwrap_or_default()
            });
            (path.clone(), entry)
        })
        .collect();
    to_js(&MlxQuantizationJs {
        mode: "affine",
        bits: q.default.bits,
        group_size: q.default.group_size as f64,
        layers,
    })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CtPartsJs {
    /// The stored weight: `<path>.weight_packed` (pack-quantized) or `<path>.weight`.
    weight: String,
    weight_scale: String,
    /// pack-quantized only.
    #[serde(skip_serializing_if = "Option::is_none")]
    weight_shape: Option<String>,
    /// Asymmetric only.
    #[serde(skip_serializing_if = "Option::is_none")]
    weight_zero_point: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CtLayerJs<'a> {
    /// `<path>.weight`: the name it is listed and read under.
    name: String,
    path: &'a str,
    #[serde(rename = "type")]
    type_name: String,
    format: &'static str,
    bits: u32,
    strategy: &'static str,
    group_size: Option<f64>,
    symmetric: bool,
    /// `[out, in]`.
    shape: [f64; 2],
    n_rows: f64,
    row_length: f64,
    n_elements: f64,
    scale_dtype: &'static str,
    parts: CtPartsJs,
    /// Bytes of every part.
    n_bytes: f64,
}

fn strategy_name(s: CtStrategy) -> (&'static str, Option<f64>) {
    match s {
        CtStrategy::Tensor => ("tensor", None),
        CtStrategy::Channel => ("channel", None),
        CtStrategy::Group(g) => ("group", Some(g as f64)),
    }
}

/// The compressed-tensors layers of a checkpoint.
pub(super) fn ct_layers_to_js(checkpoint: &Checkpoint) -> JsValue {
    let layers: Vec<CtLayerJs<'_>> = checkpoint
        .ct_layers()
        .iter()
        .map(|l| {
            let part = |p: &str| format!("{}.{p}", l.name);
            let (strategy, group_size) = strategy_name(l.scheme.strategy);
            let packed = l.scheme.format == CtFormat::Packed;
            CtLayerJs {
                name: part("weight"),
                path: &l.name,
                type_name: l.type_name(),
                format: l.scheme.format.name(),
                bits: l.scheme.bits,
                strategy,
                group_size,
                symmetric: l.scheme.symmetric,
                shape: [l.out_features as f64, l.in_features as f64],
                n_rows: l.out_features as f64,
                row_length: l.in_features as f64,
                n_elements: l.out_features as f64 * l.in_features as f64,
                scale_dtype: l.scale_dtype.name(),
                parts: CtPartsJs {
                    weight: part(l.weight_part()),
                    weight_scale: part("weight_scale"),
                    weight_shape: packed.then(|| part("weight_shape")),
                    weight_zero_point: (!l.scheme.symmetric).then(|| part("weight_zero_point")),
                },
                n_bytes: checkpoint.ct_layer_bytes(l) as f64,
            }
        })
        .collect();
    to_js(&layers)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CtConfigJs<'a> {
    format: &'static str,
    num_bits: u32,
    #[serde(rename = "type")]
    value_type: &'static str,
    strategy: &'static str,
    group_size: Option<f64>,
    symmetric: bool,
    input_activation_bits: u32,
    ignore: &'a [String],
    /// The layers' type label (`CT-W4A16-g128`).
    label: String,
}

/// config.json's compressed-tensors `quantization_config` (its one weight scheme), or null.
pub(super) fn ct_config_to_js(c: Option<&CtConfig>) -> JsValue {
    match c {
        None => JsValue::NULL,
        Some(c) => to_js(&ct_config_js(c)),
    }
}

fn ct_config_js(c: &CtConfig) -> CtConfigJs<'_> {
    let (strategy, group_size) = strategy_name(c.strategy);
    CtConfigJs {
        format: c.format.name(),
        num_bits: c.bits,
        value_type: if c.format == CtFormat::Float {
            "float"
        } else {
            "int"
        },
        strategy,
        group_size,
        symmetric: c.symmetric,
        input_activation_bits: c.activation_bits,
        ignore: &c.ignore,
        label: c.type_name(),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Mxfp4PartsJs {
    blocks: String,
    scales: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Mxfp4LayerJs<'a> {
    name: &'a str,
    path: &'a str,
    #[serde(rename = "type")]
    type_name: String,
    /// `[experts, groups * 32, rows]`.
    shape: Vec<f64>,
    experts: f64,
    rows_per_expert: f64,
    groups: f64,
    n_rows: f64,
    row_length: f64,
    n_elements: f64,
    parts: Mxfp4PartsJs,
    n_bytes: f64,
}

/// The MXFP4 tensors of a checkpoint.
pub(super) fn mxfp4_layers_to_js(checkpoint: &Checkpoint) -> JsValue {
    let layers: Vec<Mxfp4LayerJs<'_>> = checkpoint
        .mxfp4_layers()
        .iter()
        .map(|l| Mxfp4LayerJs {
            name: &l.name,
            path: &l.name,
            type_name: l.type_name(),
            shape: l.shape().iter().map(|&d| d as f64).collect(),
            experts: l.experts as f64,
            rows_per_expert: l.rows as f64,
            groups: l.groups as f64,
            n_rows: l.n_rows() as f64,
            row_length: l.row_len() as f64,
            n_elements: l.n_elements() as f64,
            parts: Mxfp4PartsJs {
                blocks: format!("{}_blocks", l.name),
                scales: format!("{}_scales", l.name),
            },
            n_bytes: checkpoint.mxfp4_layer_bytes(l) as f64,
        })
        .collect();
    to_js(&layers)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Mxfp4ConfigJs<'a> {
    modules_to_not_convert: &'a [String],
}

/// config.json's MXFP4 `quantization_config`, or null.
pub(super) fn mxfp4_config_to_js(c: Option<&Mxfp4Config>) -> JsValue {
    match c {
        None => JsValue::NULL,
        Some(c) => to_js(&Mxfp4ConfigJs {
            modules_to_not_convert: &c.not_converted,
        }),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BnbPartsJs {
    weight: String,
    absmax: String,
    quant_map: String,
    quant_state: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    nested_absmax: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nested_quant_map: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BnbLayerJs<'a> {
    /// `<path>.weight`: the name it is listed and read under.
    name: String,
    path: &'a str,
    #[serde(rename = "type")]
    type_name: String,
    quant_type: &'static str,
    blocksize: f64,
    dtype: &'static str,
    double_quant: bool,
    /// Logical, outermost first.
    shape: Vec<f64>,
    n_rows: f64,
    row_length: f64,
    n_elements: f64,
    parts: BnbPartsJs,
    /// Bytes of every part.
    n_bytes: f64,
}

/// The bitsandbytes 4-bit layers of a checkpoint.
pub(super) fn bnb_layers_to_js(checkpoint: &Checkpoint) -> JsValue {
    let layers: Vec<BnbLayerJs<'_>> = checkpoint
        .bnb_layers()
        .iter()
        .map(|l| {
            let part = |p: &str| format!("{}.weight{p}", l.name);
            let nested = l.nested.is_some();
            BnbLayerJs {
                name: part(""),
                path: &l.name,
                type_name: l.type_name(),
                quant_type: l.quant_type.name(),
                blocksize: l.blocksize as f64,
                dtype: l.dtype.name(),
                double_quant: nested,
                shape: l.shape.iter().map(|&d| d as f64).collect(),
                n_rows: l.n_rows() as f64,
                row_length: l.row_len() as f64,
                n_elements: l.n_elements() as f64,
                parts: BnbPartsJs {
                    weight: part(""),
                    absmax: part(".absmax"),
                    quant_map: part(".quant_map"),
                    quant_state: format!("{}{}", l.name, crate::bnb::state_suffix(l.quant_type)),
                    nested_absmax: nested.then(|| part(".nested_absmax")),
                    nested_quant_map: nested.then(|| part(".nested_quant_map")),
                },
                n_bytes: checkpoint.bnb_layer_bytes(l) as f64,
            }
        })
        .collect();
    to_js(&layers)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BnbConfigJs<'a> {
    quant_type: &'static str,
    double_quant: bool,
    modules_to_not_convert: &'a [String],
}

/// config.json's bitsandbytes `quantization_config` (4-bit), or null.
pub(super) fn bnb_config_to_js(c: Option<&BnbConfig>) -> JsValue {
    match c {
        None => JsValue::NULL,
        Some(c) => to_js(&BnbConfigJs {
            quant_type: c.quant_type.name(),
            double_quant: c.double_quant,
            modules_to_not_convert: &c.not_converted,
        }),
    }
}
