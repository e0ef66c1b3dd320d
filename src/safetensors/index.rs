//! Sharded checkpoints: `model.safetensors.index.json` maps each tensor to the shard file that
//! holds it (`{"metadata": {...}, "weight_map": {"tensor name": "model-00001-of-00002.safetensors"}}`).

use serde_json::Value as Json;

use super::json_error_offset;
use crate::error::{Error, ErrorKind, Result};

/// A parsed shard index.
#[derive(Debug, Clone)]
pub struct ShardIndex {
    metadata: serde_json::Map<String, Json>,
    weight_map: Vec<(String, String)>,
}

fn bad(message: impl Into<String>, at: u64) -> Error {
    let kind = ErrorKind::BadJson {
        what: "safetensors index".to_string(),
        message: message.into(),
    };
    Error::at(kind, at)
}

impl ShardIndex {
    /// Parses the index file's bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<ShardIndex> {
        let doc: Json = serde_json::from_slice(bytes)
            .map_err(|e| bad(e.to_string(), json_error_offset(bytes, &e)))?;
        let metadata = match doc.get("metadata") {
            None | Some(Json::Null) => serde_json::Map::new(),
            Some(Json::Object(map)) => map.clone(),
            Some(_) => return Err(bad("\"metadata\" is not an object", 0)),
        };
        let Some(Json::Object(map)) = doc.get("weight_map") else {
            return Err(bad("no \"weight_map\" object", 0));
        };
        let weight_map = map
            .iter()
            .map(|(name, shard)| match shard.as_str() {
                Some(s) if is_plain_file_name(s) => Ok((name.clone(), s.to_string())),
                _ => Err(bad(format!("shard of {name:?} is not a file name"), 0)),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(ShardIndex {
            metadata,
            weight_map,
        })
    }

    /// The `metadata` object (e.g. `total_size`).
    pub fn metadata(&self) -> &serde_json::Map<String, Json> {
        &self.metadata
    }

    /// Every tensor with its shard, in file order.
    pub fn weight_map(&self) -> &[(String, String)] {
        &self.weight_map
    }

    /// The shard that holds `tensor`.
    pub fn shard_of(&self, tensor: &str) -> Option<&str> {
        self.weight_map
            .iter()
            .find(|(name, _)| name == tensor)
            .map(|(_, shard)| shard.as_str())
    }

    /// The distinct shard files, in order of first mention.
    pub fn shards(&self) -> Vec<&str> {
        let mut shards: Vec<&str> = Vec::new();
        for (_, shard) in &self.weight_map {
            if !shards.contains(&shard.as_str()) {
                shards.push(shard);
            }
        }
        shards
    }
}

/// A shard must sit beside the index: no directories, no `..`.
fn is_plain_file_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\'])
}
