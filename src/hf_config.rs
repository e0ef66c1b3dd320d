//! A transformers `config.json` as the quantized-checkpoint readers (GPTQ, FP8, MLX,
//! compressed-tensors, MXFP4) take it.

use serde_json::Value as Json;

use crate::error::{Error, ErrorKind, Result};

/// The parsed bytes of a config.json; an error naming the file when they are not JSON.
pub(crate) fn parse(bytes: &[u8]) -> Result<Json> {
    serde_json::from_slice(bytes).map_err(|e| {
        Error::new(ErrorKind::BadJson {
            what: "config.json".to_string(),
            message: e.to_string(),
        })
    })
}

/// Its `quantization_config` when that names `quant_method` `method`, else None.
pub(crate) fn quantization_config(bytes: &[u8], method: &str) -> Result<Option<Json>> {
    let mut doc = parse(bytes)?;
    let q = doc.get_mut("quantization_config").map(Json::take);
    Ok(q.filter(|q| q.get("quant_method").and_then(Json::as_str) == Some(method)))
}

/// A `quantization_config` list of module names (`modules_to_not_convert`,
/// `llm_int8_skip_modules`): empty when absent or null, an error naming `key` when it is not
/// a list.
pub(crate) fn name_list(q: &Json, key: &str) -> Result<Vec<String>> {
    match q.get(key) {
        Some(Json::Array(names)) => Ok(names
            .iter()
            .filter_map(|n| n.as_str().map(str::to_string))
            .collect()),
        None | Some(Json::Null) => Ok(Vec::new()),
        Some(other) => Err(Error::new(ErrorKind::BadJson {
            what: "config.json quantization_config".to_string(),
            message: format!("{key} {other} is not a list of names"),
        })),
    }
}
