//! Finding GPTQ linear layers among a checkpoint's tensors and checking that their parts fit.

use crate::error::{Error, ErrorKind, Result};
use crate::safetensors::{Dtype, SafetensorsFile};

use super::config::QuantConfig;

/// What a layer check needs to know of one tensor.
#[derive(Debug, Clone, Copy)]
pub struct TensorShape<'a> {
    pub dtype: Dtype,
    pub shape: &'a [u64],
}

/// The data of a layer's tensors, little-endian as stored.
#[derive(Debug, Clone, Copy)]
pub struct LayerParts<'a> {
    pub qweight: &'a [u8],
    pub qzeros: &'a [u8],
    pub scales: &'a [u8],
    pub g_idx: Option<&'a [u8]>,
}

/// A GPTQ linear layer whose tensors fit together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GptqLayer {
    /// The prefix, e.g. `model.layers.0.self_attn.q_proj`.
    pub name: String,
    pub bits: u32,
    pub in_features: u64,
    pub out_features: u64,
    pub n_groups: u64,
    /// Inputs per group when there is no `g_idx` (group of input i = i / group_size).
    pub group_size: u64,
    /// Whether a `g_idx` tensor gives the groups (act-order checkpoints permute it).
    pub has_g_idx: bool,
    pub scales_dtype: Dtype,
}

fn layout(layer: &str, message: impl Into<String>) -> Error {
    Error::new(ErrorKind::GptqLayout {
        layer: layer.to_string(),
        message: message.into(),
    })
}

impl GptqLayer {
    /// Checks the layer `name` from its tensors' dtypes and shapes (`lookup` finds
    /// `name.qweight` etc.); `config` supplies bits and group size, otherwise they are inferred.
    pub fn new<'a>(
        name: &str,
        lookup: impl Fn(&str) -> Option<TensorShape<'a>>,
        config: Option<&QuantConfig>,
    ) -> Result<GptqLayer> {
        let part = |suffix: &str| lookup(&format!("{name}.{suffix}"));
        let missing = |suffix: &str| layout(name, format!("no {name}.{suffix} tensor"));
        let qweight = part("qweight").ok_or_else(|| missing("qweight"))?;
        let qzeros = part("qzeros").ok_or_else(|| missing("qzeros"))?;
        let scales = part("scales").ok_or_else(|| missing("scales"))?;
        let g_idx = part("g_idx");
        let want = |t: &TensorShape<'_>, suffix: &str, dtypes: &[Dtype], dims: usize| {
            if !dtypes.contains(&t.dtype) || t.shape.len() != dims {
                let names: Vec<&str> = dtypes.iter().map(|d| d.name()).collect();
                return Err(layout(
                    name,
                    format!(
                        "{suffix} is {} {:?}, expected {} with {dims} dimensions",
                        t.dtype.name(),
                        t.shape,
                        names.join(" or ")
                    ),
                ));
            }
            Ok(())
        };
        want(&qweight, "qweight", &[Dtype::I32], 2)?;
        want(&qzeros, "qzeros", &[Dtype::I32], 2)?;
        want(&scales, "scales", &[Dtype::F16, Dtype::BF16, Dtype::F32], 2)?;
        if let Some(g) = &g_idx {
            want(g, "g_idx", &[Dtype::I32], 1)?;
        }
        let (word_rows, out) = (qweight.shape[0], qweight.shape[1]);
        let (n_groups, zero_cols) = (qzeros.shape[0], qzeros.shape[1]);
        if scales.shape != [n_groups, out] || n_groups == 0 {
            return Err(layout(
                name,
                format!(
                    "scales shape {:?} is not [{n_groups}, {out}] (qzeros groups, qweight outputs)",
                    scales.shape
                ),
            ));
        }
        let words_for = |count: u64, bits: u32| count.saturating_mul(u64::from(bits)).div_ceil(32);
        let bits =
            match config.and_then(|c| c.bits) {
                Some(bits) => bits,
                None => {
                    let fits: Vec<u32> = [2, 3, 4, 8]
                        .into_iter()
                        .filter(|&b| words_for(out, b) == zero_cols)
                        .filter(|&b| g_idx.map_or(true, |g| words_for(g.shape[0], b) == word_rows))
                        .collect();
                    match fits[..] {
                        [bits] => bits,
                        _ => return Err(layout(
                            name,
                            "cannot tell the bit width from the shapes (no quantize_config.json)",
                        )),
                    }
                }
            };
        if words_for(out, bits) != zero_cols {
            return Err(layout(
                name,
                format!(
                    "qzeros has {zero_cols} columns, {out} {bits}-bit zeros need {}",
                    words_for(out, bits)
                ),
            ));
        }
        let in_features = match &g_idx {
            Some(g) => g.shape[0],
            None if word_rows.saturating_mul(32) % u64::from(bits) == 0 => {
                word_rows.saturating_mul(32) / u64::from(bits)
            }
            None => {
                return Err(layout(
                    name,
                    format!(
                        "qweight's {word_rows} rows are not a whole number of {bits}-bit values"
                    ),
                ))
            }
        };
        if words_for(in_features, bits) != word_rows {
            return Err(layout(
                name,
                format!(
                    "qweight has {word_rows} rows, {in_features} {bits}-bit inputs need {}",
                    words_for(in_features, bits)
                ),
            ));
        }
        let group_size = match config.and_then(|c| c.group_size) {
            Some(-1) => in_features,
            Some(g) => g as u64,
            None if in_features % n_groups == 0 => in_features / n_groups,
            None if g_idx.is_some() => in_features.div_ceil(n_groups),
            None => {
                return Err(layout(
                    name,
                    format!("{in_features} inputs do not split into {n_groups} groups"),
                ))
            }
        };
        if g_idx.is_none() && in_features.div_ceil(group_size.max(1)) != n_groups {
            return Err(layout(
                name,
                format!(
                    "{n_groups} groups, but {in_features} inputs in groups of {group_size} make {}",
                    in_features.div_ceil(group_size.max(1))
                ),
            ));
        }
        Ok(GptqLayer {
            name: name.to_string(),
            bits,
            in_features,
            out_features: out,
            n_groups,
            group_size,
            has_g_idx: g_idx.is_some(),
            scales_dtype: scales.dtype,
        })
    }

    /// The layer's type label wherever a type is named (tensor lists, dtype mixes, diffs,
    /// stats): `GPTQ-<bits>bit`, one word like the dtype names beside it.
    pub fn type_name(&self) -> String {
        format!("GPTQ-{}bit", self.bits)
    }

    /// The full name of one part: `"qweight"` → `<name>.qweight`.
    pub fn part(&self, suffix: &str) -> String {
        format!("{}.{suffix}", self.name)
    }

    /// Bytes of f32 output per row (one output feature).
    pub fn row_len(&self) -> u64 {
        self.in_features
    }
}

/// Every GPTQ layer of a file (a `.qweight` tensor names one), in tensor order; the first
/// layer whose parts do not fit is an error.
pub fn find_layers(file: &SafetensorsFile, config: Option<&QuantConfig>) -> Result<Vec<GptqLayer>> {
    let lookup = |name: &str| {
        file.get(name).map(|t| TensorShape {
            dtype: t.dtype(),
            shape: t.shape(),
        })
    };
    discover(file.tensors().iter().map(|t| t.name()), lookup, config)
        .into_iter()
        .collect()
}

/// The one place GPTQ layers are found: every `<prefix>.qweight` among `names` (in their
/// order) checked as a layer whose parts `lookup` finds, possibly in other shards. One result
/// per candidate, so callers choose to refuse (the CLI) or to list the misfits (wasm).
pub fn discover<'n, 'a>(
    names: impl IntoIterator<Item = &'n str>,
    lookup: impl Fn(&str) -> Option<TensorShape<'a>> + Copy,
    config: Option<&QuantConfig>,
) -> Vec<Result<GptqLayer>> {
    names
        .into_iter()
        .filter_map(|name| name.strip_suffix(".qweight"))
        .map(|prefix| GptqLayer::new(prefix, lookup, config))
        .collect()
}
