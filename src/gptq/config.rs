//! The quantization config: `quantize_config.json` (AutoGPTQ / GPTQModel) or the
//! `quantization_config` object of a transformers `config.json`.

use serde_json::Value as Json;

use crate::error::{Error, ErrorKind, Result};

/// How stored zero points relate to the real ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckpointFormat {
    /// `gptq` (v1, the default when the config names none): stored = real − 1.
    V1,
    /// `gptq_v2`: stored as is.
    V2,
}

impl CheckpointFormat {
    /// `"gptq"` or `"gptq_v2"`.
    pub fn name(self) -> &'static str {
        match self {
            CheckpointFormat::V1 => "gptq",
            CheckpointFormat::V2 => "gptq_v2",
        }
    }
}

/// How a v1 reader adds the 1 back. The readers disagree only on a stored zero of 2^bits − 1
/// (a real zero of 0 stored as −1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum V1Zeros {
    /// stored + 1, unmasked (2^bits − 1 → 2^bits): llama.cpp's convert_hf_to_gguf.py and
    /// AutoGPTQ's original kernels. The default.
    #[default]
    Unmasked,
    /// (stored + 1) mod 2^bits (2^bits − 1 → 0): GPTQModel's safetensors dequantizer.
    Wrapping,
}

/// The parts of a GPTQ quantization config that dequantization uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuantConfig {
    pub bits: Option<u32>,
    /// −1 for one group over all inputs.
    pub group_size: Option<i64>,
    pub desc_act: Option<bool>,
    pub sym: Option<bool>,
    pub checkpoint_format: CheckpointFormat,
}

fn bad(what: &str, message: impl Into<String>) -> Error {
    Error::new(ErrorKind::BadJson {
        what: what.to_string(),
        message: message.into(),
    })
}

impl QuantConfig {
    /// From the bytes of a `quantize_config.json`.
    pub fn from_quantize_config(bytes: &[u8]) -> Result<QuantConfig> {
        let what = "quantize_config.json";
        let doc: Json = serde_json::from_slice(bytes).map_err(|e| bad(what, e.to_string()))?;
        QuantConfig::from_json(&doc, what)
    }

    /// From the bytes of a transformers `config.json`: None when it has no
    /// `quantization_config` or one whose `quant_method` is not `gptq`.
    pub fn from_config_json(bytes: &[u8]) -> Result<Option<QuantConfig>> {
        crate::hf_config::quantization_config(bytes, "gptq")?
            .map(|q| QuantConfig::from_json(&q, "config.json quantization_config"))
            .transpose()
    }

    /// From a parsed config object; `what` names it in errors.
    pub fn from_json(doc: &Json, what: &str) -> Result<QuantConfig> {
        if !doc.is_object() {
            return Err(bad(what, "not a JSON object"));
        }
        if let Some(method) = doc.get("quant_method").and_then(Json::as_str) {
            if method != "gptq" {
                return Err(bad(what, format!("quant_method {method:?} is not gptq")));
            }
        }
        let field = |key: &str| doc.get(key).filter(|v| !v.is_null());
        let bits = match field("bits") {
            None => None,
            Some(v) => match v.as_u64() {
                Some(b @ (2 | 3 | 4 | 8)) => Some(b as u32),
                _ => return Err(bad(what, format!("bits {v} is not 2, 3, 4 or 8"))),
            },
        };
        let group_size = match field("group_size") {
            None => None,
            Some(v) => match v.as_i64() {
                Some(g) if g == -1 || g > 0 => Some(g),
                _ => return Err(bad(what, format!("group_size {v} is not -1 or positive"))),
            },
        };
        let flag = |key: &str| -> Result<Option<bool>> {
            match field(key) {
                None => Ok(None),
                Some(Json::Bool(b)) => Ok(Some(*b)),
                Some(v) => Err(bad(what, format!("{key} {v} is not true or false"))),
            }
        };
        let format = field("checkpoint_format").or_else(|| field("format"));
        let checkpoint_format = match format.map(|v| v.as_str()) {
            None | Some(Some("gptq")) => CheckpointFormat::V1,
            Some(Some("gptq_v2")) => CheckpointFormat::V2,
            Some(_) => {
                let shown = format.map(Json::to_string).unwrap_or_default();
                return Err(bad(
                    what,
                    format!("checkpoint_format {shown} is not supported (gptq, gptq_v2)"),
                ));
            }
        };
        Ok(QuantConfig {
            bits,
            group_size,
            desc_act: flag("desc_act")?,
            sym: flag("sym")?,
            checkpoint_format,
        })
    }
}
