//! `inspect --json`: the header as one JSON document, metadata in file order, arrays whole.
//!
//! The document is streamed to the writer, never built in memory: a 2 GiB header of small
//! array items would otherwise become a JSON tree many times its size. Strings carry the
//! characters serde leaves raw (DEL, C1, bidi controls) as `\uXXXX` (see `escape`).

use std::cell::RefCell;
use std::io::{self, Write};

use gguf_lens::ct::{CtFormat, CtStrategy};
use gguf_lens::gguf::{ArrayView, Value};
use gguf_lens::gptq::GptqLayer;
use gguf_lens::model::{Checkpoint, Files, GgufModel};
use gguf_lens::safetensors::SafetensorsFile;
use gguf_lens::value_show::{float_json, value_json};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{json, Map, Value as Json};

/// Writes the whole document and a newline. For a split model: the first shard's header fields
/// and metadata, every shard's tensors (each with its `shard`, counted from 0) and a `shards`
/// list. A string that is not UTF-8 adds a warning and is written lossily.
pub fn write_inspect_json(
    out: &mut impl Write,
    model: &GgufModel,
    file_sizes: &[u64],
    warnings: &mut Vec<String>,
) -> io::Result<()> {
    let collected = RefCell::new(Vec::new());
    let doc = Doc {
        model,
        file_sizes,
        warnings: &collected,
    };
    let mut ser = serde_json::Serializer::with_formatter(&mut *out, EscapingFormatter);
    doc.serialize(&mut ser).map_err(io::Error::from)?;
    warnings.extend(collected.into_inner());
    writeln!(out)
}

struct Doc<'m> {
    model: &'m GgufModel,
    file_sizes: &'m [u64],
    warnings: &'m RefCell<Vec<String>>,
}

impl Serialize for Doc<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let model = self.model;
        let file = model.first();
        let split = model.shards().len() > 1;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("version", &file.version())?;
        map.serialize_entry("endian", file.endian().name())?;
        map.serialize_entry("alignment", &file.alignment())?;
        map.serialize_entry("data_offset", &file.data_offset())?;
        map.serialize_entry("file_size", &self.file_sizes.iter().sum::<u64>())?;
        map.serialize_entry(
            "metadata",
            &Metadata {
                model,
                warnings: self.warnings,
            },
        )?;
        map.serialize_entry("tensors", &Tensors { model, split })?;
        if split {
            let shards: Vec<_> = model
                .shards()
                .iter()
                .zip(self.file_sizes)
                .map(|(s, size)| {
                    json!({
                        "file_size": size,
                        "data_offset": s.data_offset(),
                        "tensor_count": s.tensors().len(),
                    })
                })
                .collect();
            map.serialize_entry("shards", &shards)?;
        }
        map.end()
    }
}

struct Metadata<'m> {
    model: &'m GgufModel,
    warnings: &'m RefCell<Vec<String>>,
}

impl Serialize for Metadata<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let file = self.model.first();
        let mut seq = s.serialize_seq(Some(file.metadata_len()))?;
        for (key, value) in file.metadata() {
            seq.serialize_element(&Entry {
                key,
                value: &value,
                warnings: self.warnings,
            })?;
        }
        seq.end()
    }
}

struct Entry<'v, 'a> {
    key: &'v str,
    value: &'v Value<'a>,
    warnings: &'v RefCell<Vec<String>>,
}

impl Serialize for Entry<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("key", self.key)?;
        map.serialize_entry("type", self.value.value_type().name())?;
        if let Value::Array(array) = self.value {
            map.serialize_entry("item_type", array.item_type().name())?;
            map.serialize_entry("len", &array.len())?;
        }
        map.serialize_entry(
            "value",
            &Lazy {
                value: self.value,
                warnings: self.warnings,
            },
        )?;
        map.end()
    }
}

/// A value as `value_show::value_json` gives it, serialized item by item.
struct Lazy<'v, 'a> {
    value: &'v Value<'a>,
    warnings: &'v RefCell<Vec<String>>,
}

impl Serialize for Lazy<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.value {
            Value::Array(array) => LazyArray {
                array,
                warnings: self.warnings,
            }
            .serialize(s),
            Value::F32(v) => float_json(f64::from(*v)).serialize(s),
            Value::F64(v) => float_json(*v).serialize(s),
            scalar => value_json(scalar, &mut self.warnings.borrow_mut()).serialize(s),
        }
    }
}

struct LazyArray<'v, 'a> {
    array: &'v ArrayView<'a>,
    warnings: &'v RefCell<Vec<String>>,
}

impl Serialize for LazyArray<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.array.len()))?;
        for item in self.array.iter() {
            match &item {
                Value::Array(inner) => seq.serialize_element(&Nested {
                    array: inner,
                    warnings: self.warnings,
                })?,
                other => seq.serialize_element(&Lazy {
                    value: other,
                    warnings: self.warnings,
                })?,
            }
        }
        seq.end()
    }
}

/// A nested array: its item type, length and items.
struct Nested<'v, 'a> {
    array: &'v ArrayView<'a>,
    warnings: &'v RefCell<Vec<String>>,
}

impl Serialize for Nested<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(3))?;
        map.serialize_entry("item_type", self.array.item_type().name())?;
        map.serialize_entry("len", &self.array.len())?;
        map.serialize_entry(
            "value",
            &LazyArray {
                array: self.array,
                warnings: self.warnings,
            },
        )?;
        map.end()
    }
}

struct Tensors<'m> {
    model: &'m GgufModel,
    split: bool,
}

impl Serialize for Tensors<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        for (shard, t) in self.model.tensors() {
            let mut entry = json!({
                "name": t.name(),
                "type": t.ggml_type().name(),
                "type_id": t.ggml_type().id(),
                "shape": t.shape(),
                "ne": t.dims(),
                "offset": t.offset(),
                "n_elements": t.n_elements(),
                "n_bytes": t.n_bytes(),
            });
            if self.split {
                entry["shard"] = serde_json::Value::from(shard);
            }
            seq.serialize_element(&entry)?;
        }
        seq.end()
    }
}

/// serde_json's compact output, with the characters `escape::json` escapes written as
/// `\uXXXX` inside strings.
struct EscapingFormatter;

impl serde_json::ser::Formatter for EscapingFormatter {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        writer.write_all(crate::escape::json(fragment).as_bytes())
    }
}

fn shard_json(name: String, size: u64, file: &SafetensorsFile) -> Json {
    let metadata: Map<String, Json> = file
        .metadata()
        .iter()
        .map(|(k, v)| (k.clone(), Json::from(v.as_str())))
        .collect();
    json!({
        "file": name,
        "file_size": size,
        "header_len": file.header_len(),
        "data_offset": file.data_offset(),
        "metadata": metadata,
    })
}

fn layer_json(l: &GptqLayer) -> Json {
    json!({
        "name": l.name,
        "bits": l.bits,
        "in_features": l.in_features,
        "out_features": l.out_features,
        "n_groups": l.n_groups,
        "group_size": if l.has_g_idx { Json::Null } else { Json::from(l.group_size) },
        "g_idx": l.has_g_idx,
        "scales_dtype": l.scales_dtype.name(),
        "shape": [l.out_features, l.in_features],
    })
}

/// The document: for one file `{"format": "safetensors", "file", "file_size", "header_len",
/// "data_offset", "metadata", ...}`; for an index `{"format": "safetensors-index",
/// "index_metadata", "shards": [...], ...}`; then `"tensors"`, `"quantization_config"`,
/// `"gptq_layers"`, `"mlx_quantization"` (config.json's MLX defaults and layer entries, or
/// null), `"mlx_layers"`, `"fp8_quantization"` (block size and modules not converted, or null)
/// `"fp8_layers"`, `"ct_quantization"` (config.json's compressed-tensors scheme, or null) and
/// `"ct_layers"`, `"mxfp4_quantization"` (modules not converted, or null), `"mxfp4_layers"`,
/// `"bnb_quantization"` (config.json's bitsandbytes settings, or null) and `"bnb_layers"` in both.
pub fn checkpoint_json(c: &Checkpoint, files: &Files) -> Json {
    let shard = |i: usize| shard_json(files.shard_name(i), files.sizes[i], &c.shards()[i]);
    let mut doc = Map::new();
    match c.shard_index() {
        None => {
            doc.insert("format".into(), "safetensors".into());
            if let Json::Object(shard) = shard(0) {
                doc.extend(shard);
            }
        }
        Some(index) => {
            doc.insert("format".into(), "safetensors-index".into());
            doc.insert(
                "index_metadata".into(),
                Json::Object(index.metadata().clone()),
            );
            doc.insert(
                "shards".into(),
                (0..c.shards().len()).map(shard).collect::<Vec<_>>().into(),
            );
        }
    }
    let tensors: Vec<Json> = c
        .tensors()
        .map(|(i, t)| {
            let mut entry = json!({
                "name": t.name(),
                "dtype": t.dtype().name(),
                "shape": t.shape(),
                "offset": t.offset(),
                "n_elements": t.n_elements(),
                "n_bytes": t.n_bytes(),
            });
            if c.shard_index().is_some() {
                entry["shard"] = Json::from(files.shard_name(i));
            }
            entry
        })
        .collect();
    doc.insert("tensors".into(), tensors.into());
    let config = c.config().map_or(Json::Null, |q| {
        let source = files.config_source.as_deref().unwrap_or_default();
        json!({
            "source": source,
            "bits": q.bits,
            "group_size": q.group_size,
            "desc_act": q.desc_act,
            "sym": q.sym,
            "checkpoint_format": q.checkpoint_format.name(),
        })
    });
    doc.insert("quantization_config".into(), config);
    doc.insert(
        "gptq_layers".into(),
        c.layers().iter().map(layer_json).collect(),
    );
    let mlx = c.mlx().map_or(Json::Null, |q| {
        let layers: Map<String, Json> = q
            .layers
            .iter()
            .map(|(path, config)| {
                let entry = config.map_or(
                    Json::Bool(false),
                    |c| json!({"bits": c.bits, "group_size": c.group_size}),
                );
                (path.clone(), entry)
            })
            .collect();
        json!({
            "source": files.config_source.as_deref().unwrap_or_default(),
            "mode": "affine",
            "bits": q.default.bits,
            "group_size": q.default.group_size,
            "layers": layers,
        })
    });
    doc.insert("mlx_quantization".into(), mlx);
    let mlx_layers: Vec<Json> = c
        .mlx_layers()
        .iter()
        .map(|l| {
            json!({
                "name": format!("{}.weight", l.name),
                "type": l.type_name(),
                "bits": l.bits,
                "group_size": l.group_size,
                "shape": l.shape,
                "scales_dtype": l.scales_dtype.name(),
                "n_bytes": c.mlx_layer_bytes(l),
            })
        })
        .collect();
    doc.insert("mlx_layers".into(), mlx_layers.into());
    let fp8 = c.fp8().map_or(Json::Null, |q| {
        json!({
            "source": files.config_source.as_deref().unwrap_or_default(),
            "fmt": "e4m3",
            "weight_block_size": q.block,
            "modules_to_not_convert": q.not_converted,
            "activation_scheme": q.activation_scheme,
        })
    });
    doc.insert("fp8_quantization".into(), fp8);
    let fp8_layers: Vec<Json> = c
        .fp8_layers()
        .iter()
        .map(|l| {
            json!({
                "name": format!("{}.weight", l.name),
                "type": l.type_name(),
                "shape": [l.out_features, l.in_features],
                "block": l.block,
                "scale_dtype": l.scale_dtype.name(),
                "n_bytes": c.fp8_layer_bytes(l),
            })
        })
        .collect();
    doc.insert("fp8_layers".into(), fp8_layers.into());
    let ct = c.ct().map_or(Json::Null, |q| {
        json!({
            "source": files.config_source.as_deref().unwrap_or_default(),
            "format": q.format.name(),
            "num_bits": q.bits,
            "type": if q.format == CtFormat::Float { "float" } else { "int" },
            "strategy": match q.strategy {
                CtStrategy::Tensor => "tensor",
                CtStrategy::Channel => "channel",
                CtStrategy::Group(_) => "group",
            },
            "group_size": match q.strategy {
                CtStrategy::Group(g) => Some(g),
                _ => None,
            },
            "symmetric": q.symmetric,
            "ignore": q.ignore,
        })
    });
    doc.insert("ct_quantization".into(), ct);
    let ct_layers: Vec<Json> = c
        .ct_layers()
        .iter()
        .map(|l| {
            json!({
                "name": format!("{}.weight", l.name),
                "type": l.type_name(),
                "shape": [l.out_features, l.in_features],
                "scale_dtype": l.scale_dtype.name(),
                "n_bytes": c.ct_layer_bytes(l),
            })
        })
        .collect();
    doc.insert("ct_layers".into(), ct_layers.into());
    let mxfp4 = c.mxfp4().map_or(Json::Null, |q| {
        json!({
            "source": files.config_source.as_deref().unwrap_or_default(),
            "modules_to_not_convert": q.not_converted,
        })
    });
    doc.insert("mxfp4_quantization".into(), mxfp4);
    let mxfp4_layers: Vec<Json> = c
        .mxfp4_layers()
        .iter()
        .map(|l| {
            json!({
                "name": l.name,
                "type": l.type_name(),
                "shape": l.shape(),
                "blocks": format!("{}_blocks", l.name),
                "scales": format!("{}_scales", l.name),
                "n_bytes": c.mxfp4_layer_bytes(l),
            })
        })
        .collect();
    doc.insert("mxfp4_layers".into(), mxfp4_layers.into());
    let bnb = c.bnb().map_or(Json::Null, |q| {
        json!({
            "source": files.config_source.as_deref().unwrap_or_default(),
            "quant_type": q.quant_type.name(),
            "double_quant": q.double_quant,
            "modules_to_not_convert": q.not_converted,
        })
    });
    doc.insert("bnb_quantization".into(), bnb);
    let bnb_layers: Vec<Json> = c
        .bnb_layers()
        .iter()
        .map(|l| {
            json!({
                "name": format!("{}.weight", l.name),
                "type": l.type_name(),
                "shape": l.shape,
                "quant_type": l.quant_type.name(),
                "blocksize": l.blocksize,
                "dtype": l.dtype.name(),
                "double_quant": l.nested.is_some(),
                "n_bytes": c.bnb_layer_bytes(l),
            })
        })
        .collect();
    doc.insert("bnb_layers".into(), bnb_layers.into());
    Json::Object(doc)
}
