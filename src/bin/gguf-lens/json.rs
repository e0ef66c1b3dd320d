//! `inspect --json`: the header as one JSON document, metadata in file order, arrays whole.

use gguf_lens::gguf::Value;
use gguf_lens::model::GgufModel;
use gguf_lens::value_show::value_json;
use serde_json::{json, Map, Value as Json};

/// The whole document. For a split model: the first shard's header fields and metadata, every
/// shard's tensors (each with its `shard`, counted from 0) and a `shards` list.
pub fn inspect_json(model: &GgufModel, file_sizes: &[u64], warnings: &mut Vec<String>) -> Json {
    let file = model.first();
    let split = model.shards().len() > 1;
    let metadata: Vec<Json> = file
        .metadata()
        .map(|(key, value)| {
            let mut entry = Map::new();
            entry.insert("key".into(), Json::from(key));
            entry.insert("type".into(), Json::from(value.value_type().name()));
            if let Value::Array(array) = &value {
                entry.insert("item_type".into(), Json::from(array.item_type().name()));
                entry.insert("len".into(), Json::from(array.len()));
            }
            entry.insert("value".into(), value_json(&value, warnings));
            Json::Object(entry)
        })
        .collect();
    let tensors: Vec<Json> = model
        .tensors()
        .map(|(shard, t)| {
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
            if split {
                entry["shard"] = Json::from(shard);
            }
            entry
        })
        .collect();
    let mut doc = json!({
        "version": file.version(),
        "endian": file.endian().name(),
        "alignment": file.alignment(),
        "data_offset": file.data_offset(),
        "file_size": file_sizes.iter().sum::<u64>(),
        "metadata": metadata,
        "tensors": tensors,
    });
    if split {
        doc["shards"] = model
            .shards()
            .iter()
            .zip(file_sizes)
            .map(|(s, size)| {
                json!({
                    "file_size": size,
                    "data_offset": s.data_offset(),
                    "tensor_count": s.tensors().len(),
                })
            })
            .collect();
    }
    doc
}
