//! `inspect` for safetensors checkpoints: text and `--json`.

use std::fmt::Write;

use gguf_lens::gptq::GptqLayer;
use gguf_lens::safetensors::SafetensorsFile;
use serde_json::{json, Map, Value as Json};

use crate::checkpoint::{Checkpoint, Shard};
use crate::escape::shown;

fn shard_json(s: &Shard, file: &SafetensorsFile) -> Json {
    let metadata: Map<String, Json> = file
        .metadata()
        .iter()
        .map(|(k, v)| (k.clone(), Json::from(v.as_str())))
        .collect();
    json!({
        "file": s.name,
        "file_size": s.size,
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
/// `"gptq_layers"` in both.
pub fn inspect_json(c: &Checkpoint) -> Json {
    let mut doc = Map::new();
    match &c.index {
        None => {
            doc.insert("format".into(), "safetensors".into());
            if let Json::Object(shard) = shard_json(&c.shards[0], c.file(0)) {
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
                c.shards
                    .iter()
                    .enumerate()
                    .map(|(i, s)| shard_json(s, c.file(i)))
                    .collect::<Vec<_>>()
                    .into(),
            );
        }
    }
    let tensors: Vec<Json> = c
        .model
        .tensors()
        .map(|(i, t)| {
            let s = &c.shards[i];
            let mut entry = json!({
                "name": t.name(),
                "dtype": t.dtype().name(),
                "shape": t.shape(),
                "offset": t.offset(),
                "n_elements": t.n_elements(),
                "n_bytes": t.n_bytes(),
            });
            if c.index.is_some() {
                entry["shard"] = Json::from(s.name.as_str());
            }
            entry
        })
        .collect();
    doc.insert("tensors".into(), tensors.into());
    let config = c.model.config().map_or(Json::Null, |q| {
        let source = c.config_source.as_deref().unwrap_or_default();
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
    Json::Object(doc)
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

pub fn inspect_text(c: &Checkpoint) -> String {
    let mut out = String::new();
    if let Some(index) = &c.index {
        let _ = writeln!(
            out,
            "safetensors index: {} tensors in {} shards",
            index.weight_map().len(),
            c.shards.len()
        );
    }
    for (i, s) in c.shards.iter().enumerate() {
        let file = c.file(i);
        let _ = writeln!(
            out,
            "safetensors {}: {} bytes, header {} bytes, data at byte {}",
            shown(&s.name),
            s.size,
            file.header_len(),
            file.data_offset()
        );
        for (k, v) in file.metadata() {
            let _ = writeln!(out, "  metadata {} = {}", shown(k), shown(&v.to_string()));
        }
    }
    match c.model.config() {
        Some(q) => {
            let source = c.config_source.as_deref().unwrap_or_default();
            let _ = writeln!(
                out,
                "\nquantization (GPTQ, {source}): bits {}, group_size {}, desc_act {}, sym {}, checkpoint_format {}",
                opt(q.bits),
                opt(q.group_size),
                opt(q.desc_act),
                opt(q.sym),
                q.checkpoint_format.name()
            );
        }
        None => {
            let _ = writeln!(
                out,
                "\nquantization: no quantize_config.json or GPTQ config.json beside the file"
            );
        }
    }
    let n = c.model.tensors().count();
    let _ = writeln!(out, "\ntensors ({n}):");
    for (i, s) in c.shards.iter().enumerate() {
        for t in c.file(i).tensors() {
            let shape: Vec<String> = t.shape().iter().map(u64::to_string).collect();
            let shard = if c.index.is_some() {
                format!("  ({})", shown(&s.name))
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "  {:<48} {:<7} [{}] {} bytes{shard}",
                shown(t.name()),
                t.dtype().name(),
                shape.join(", "),
                t.n_bytes()
            );
        }
    }
    if !c.layers().is_empty() {
        let _ = writeln!(
            out,
            "\nGPTQ layers ({}), dequantized to f32 [out, in]:",
            c.layers().len()
        );
        for l in c.layers() {
            let groups = if l.has_g_idx {
                format!("{} groups by g_idx", l.n_groups)
            } else {
                format!("{} groups of {}", l.n_groups, l.group_size)
            };
            let _ = writeln!(
                out,
                "  {:<48} {}-bit [{}, {}], {groups}, scales {}",
                shown(&l.name),
                l.bits,
                l.out_features,
                l.in_features,
                l.scales_dtype.name()
            );
        }
    }
    out
}
