//! Sharded checkpoints: `model.safetensors.index.json` maps each tensor to the shard file that
//! holds it (`{"metadata": {...}, "weight_map": {"tensor name": "model-00001-of-00002.safetensors"}}`).

use std::collections::HashSet;

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
                Some(s) => match not_plain_file_name(s) {
                    None => Ok((name.clone(), s.to_string())),
                    Some(why) => Err(bad(
                        format!("shard {s:?} of {name:?} is not a plain file name ({why})"),
                        0,
                    )),
                },
                None => Err(bad(format!("shard of {name:?} is not a string"), 0)),
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
        let mut seen = HashSet::new();
        self.weight_map
            .iter()
            .map(|(_, shard)| shard.as_str())
            .filter(|shard| seen.insert(*shard))
            .collect()
    }
}

/// Whether `name` (read from a file: a shard in an index, a split model's shard) is a plain
/// file name, to be looked up only in the directory (or URL folder) of the file that named it.
pub fn is_plain_file_name(name: &str) -> bool {
    not_plain_file_name(name).is_none()
}

/// Why `name` is not a plain file name, or None when it is. Refused: the empty name, `.`, `..`
/// (any name of dots only), a separator (`/`, `\`), a colon (a URL scheme as in
/// `https:host:port` or `file:`, a drive as in `C:x`, an NTFS stream), `?` and `#` (a URL's
/// query and fragment), a percent escape (`%2F`, `%2e`, …: a URL would decode it), and control
/// characters.
pub fn not_plain_file_name(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("empty");
    }
    if name.chars().all(|c| c == '.') {
        return Some("a directory name");
    }
    for c in name.chars() {
        let why = match c {
            '/' | '\\' => "a path separator",
            ':' => "a URL scheme or drive",
            '?' | '#' => "a URL query or fragment",
            '%' => "a percent escape",
            c if c.is_control() => "a control character",
            _ => continue,
        };
        return Some(why);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_file_names_pass() {
        for ok in [
            "model-00001-of-00002.safetensors",
            ".hidden",
            "a..b",
            "m é.safetensors",
        ] {
            assert!(is_plain_file_name(ok), "{ok}");
        }
        for bad in [
            "",
            ".",
            "..",
            "...",
            "https:evil.example:8080",
            "file:shard.safetensors",
            "C:x.safetensors",
            "a/b",
            "..\\b",
            "%2e%2e",
            "a%2Fb",
            "a%5cb",
            "a?b",
            "a#b",
            "a\u{1b}b",
            "a\u{0}b",
            "a\u{85}b",
        ] {
            assert!(!is_plain_file_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn a_url_shaped_shard_is_refused_naming_it() {
        let doc = br#"{"weight_map": {"a": "ok.safetensors", "b": "https:other-host:9999"}}"#;
        let err = ShardIndex::from_bytes(doc).unwrap_err().to_string();
        assert!(err.contains("https:other-host:9999"), "{err}");
        assert!(err.contains("not a plain file name"), "{err}");
    }

    #[test]
    fn shards_keep_first_mention_order() {
        let doc =
            br#"{"weight_map": {"a": "2.st", "b": "1.st", "c": "2.st", "d": "3.st", "e": "1.st"}}"#;
        let index = ShardIndex::from_bytes(doc).unwrap();
        assert_eq!(index.shards(), ["2.st", "1.st", "3.st"]);
    }
}
