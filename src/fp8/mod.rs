//! FP8 block-scaled layers (DeepSeek-V3, Qwen3-FP8; transformers' "fine-grained FP8"):
//! `<name>.weight` float8_e4m3fn `[out, in]` and `<name>.weight_scale_inv` `[ceil(out / bm),
//! ceil(in / bn)]` (f32 or bf16), one per `bm × bn` block (config.json's `quantization_config`:
//! `quant_method: fp8`, `weight_block_size: [bm, bn]`); blocks at the right and bottom edges
//! are partial. `w[o][i] = f32(q[o][i]) * scale_inv[o / bm][i / bn]` in f32, one rounding, as
//! transformers' `Fp8Dequantize` and DeepSeek-V3's `weight_dequant` compute it.

use serde_json::Value as Json;

use crate::error::{Error, ErrorKind, Result};
use crate::safetensors::{to_f32, Dtype};

fn layout(layer: &str, message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Fp8Layout {
        layer: layer.to_string(),
        message: message.into(),
    })
}

fn bad_config(message: String) -> Error {
    Error::new(ErrorKind::BadJson {
        what: "config.json quantization_config".to_string(),
        message,
    })
}

/// The largest block side taken (DeepSeek-V3 and Qwen3 use 128).
pub const MAX_BLOCK: u64 = 1 << 16;

/// config.json's `quantization_config` with `quant_method: fp8`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fp8Config {
    /// Rows x columns of one scale's block.
    pub block: [u64; 2],
    /// `modules_to_not_convert`: modules left unquantized, as the config lists them.
    pub not_converted: Vec<String>,
    /// `activation_scheme` (`dynamic` or `static`), if given: how inputs are quantized at run
    /// time, nothing a reader of the weights uses.
    pub activation_scheme: Option<String>,
}

impl Fp8Config {
    /// From the bytes of a config.json: None without a `quantization_config` whose
    /// `quant_method` is `fp8`; an error for a format other than e4m3 or a bad block size.
    pub fn from_config_json(bytes: &[u8]) -> Result<Option<Fp8Config>> {
        let Some(q) = crate::hf_config::quantization_config(bytes, "fp8")? else {
            return Ok(None);
        };
        let fmt = q.get("fmt").and_then(Json::as_str).unwrap_or("e4m3");
        if fmt != "e4m3" {
            return Err(bad_config(format!(
                "fmt {fmt:?} is not supported (e4m3 only)"
            )));
        }
        let block = match q.get("weight_block_size") {
            Some(Json::Array(sides)) if sides.len() == 2 => {
                let side = |v: &Json| v.as_u64().filter(|&s| (1..=MAX_BLOCK).contains(&s));
                match (side(&sides[0]), side(&sides[1])) {
                    (Some(r), Some(c)) => [r, c],
                    _ => {
                        return Err(bad_config(format!(
                            "weight_block_size {} is not two sides of 1 to {MAX_BLOCK}",
                            Json::Array(sides.clone())
                        )))
                    }
                }
            }
            // Per-tensor FP8 (one scale per weight) is another layout, not read here.
            None | Some(Json::Null) => {
                return Err(bad_config(
                    "no weight_block_size (per-tensor FP8 scales are not supported)".to_string(),
                ))
            }
            Some(other) => {
                return Err(bad_config(format!(
                    "weight_block_size {other} is not [rows, columns]"
                )))
            }
        };
        let not_converted = match q.get("modules_to_not_convert") {
            Some(Json::Array(names)) => names
                .iter()
                .filter_map(|n| n.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        };
        Ok(Some(Fp8Config {
            block,
            not_converted,
            activation_scheme: q
                .get("activation_scheme")
                .and_then(Json::as_str)
                .map(str::to_string),
        }))
    }
}

/// An FP8 block-scaled layer whose two parts fit together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fp8Layer {
    /// The prefix (`model.layers.0.mlp.up_proj`); the parts are `<name>.weight` and
    /// `<name>.weight_scale_inv`.
    pub name: String,
    pub out_features: u64,
    pub in_features: u64,
    pub block: [u64; 2],
    pub scale_dtype: Dtype,
}

impl Fp8Layer {
    /// Checks the layer's parts (dtype, shape) against the block size.
    pub fn new(
        name: &str,
        weight: (Dtype, &[u64]),
        scales: (Dtype, &[u64]),
        block: [u64; 2],
    ) -> Result<Fp8Layer> {
        if weight.0 != Dtype::F8E4M3 || weight.1.len() != 2 {
            return Err(layout(
                name,
                format!(
                    "weight is {} {:?}, expected F8_E4M3 [out, in]",
                    weight.0.name(),
                    weight.1
                ),
            ));
        }
        if !matches!(scales.0, Dtype::F32 | Dtype::BF16) {
            return Err(layout(
                name,
                format!(
                    "weight_scale_inv is {}, expected F32 or BF16",
                    scales.0.name()
                ),
            ));
        }
        let [bm, bn] = block;
        if bm == 0 || bn == 0 {
            return Err(layout(name, format!("block {bm} x {bn} is empty")));
        }
        let (out, inputs) = (weight.1[0], weight.1[1]);
        let want = [out.div_ceil(bm), inputs.div_ceil(bn)];
        if scales.1 != want {
            return Err(layout(
                name,
                format!(
                    "weight_scale_inv shape {:?} is not {want:?} (one per {bm} x {bn} block of [{out}, {inputs}])",
                    scales.1
                ),
            ));
        }
        Ok(Fp8Layer {
            name: name.to_string(),
            out_features: out,
            in_features: inputs,
            block,
            scale_dtype: scales.0,
        })
    }

    /// `FP8-E4M3-block<side>` (square blocks) or `FP8-E4M3-block<rows>x<columns>`.
    pub fn type_name(&self) -> String {
        match self.block {
            [r, c] if r == c => format!("FP8-E4M3-block{r}"),
            [r, c] => format!("FP8-E4M3-block{r}x{c}"),
        }
    }

    /// The scale rows rows `rows` use.
    pub fn scale_rows(&self, rows: std::ops::Range<u64>) -> std::ops::Range<u64> {
        if rows.start >= rows.end {
            return 0..0;
        }
        rows.start / self.block[0]..(rows.end - 1) / self.block[0] + 1
    }
}

/// Dequantizes whole rows, starting at `first_row`, into `out` (`n * in_features` values):
/// `weight` the fp8 bytes of those rows, `scales` the bytes of the scale rows they use
/// ([`Fp8Layer::scale_rows`]), as stored. A NaN or infinite scale is an error naming its block;
/// an fp8 NaN stays NaN.
pub fn dequantize_rows(
    layer: &Fp8Layer,
    first_row: u64,
    weight: &[u8],
    scales: &[u8],
    out: &mut [f32],
) -> Result<()> {
    let cols = layer.in_features as usize;
    let n = out.len().checked_div(cols).unwrap_or(0);
    let [bm, bn] = [layer.block[0] as usize, layer.block[1] as usize];
    let scale_cols = cols.div_ceil(bn);
    let size = (layer.scale_dtype.bits() / 8) as usize;
    let first_scale_row = first_row as usize / bm;
    let scale_rows = layer.scale_rows(first_row..first_row + n as u64);
    let n_scale_rows = (scale_rows.end - scale_rows.start) as usize;
    if out.len() != n * cols
        || weight.len() != n * cols
        || scales.len() != n_scale_rows * scale_cols * size
    {
        return Err(Error::new(ErrorKind::InvalidRequest {
            message: format!(
                "FP8 layer {}: {} weight, {} scale bytes for {n} rows",
                layer.name,
                weight.len(),
                scales.len()
            ),
        }));
    }
    let mut s = vec![0f32; n_scale_rows * scale_cols];
    to_f32(layer.scale_dtype, &layer.name, scales, &mut s)?;
    if let Some(i) = s.iter().position(|s| !s.is_finite()) {
        return Err(layout(
            &layer.name,
            format!(
                "weight_scale_inv {} of block [{}, {}] is not finite",
                s[i],
                first_scale_row + i / scale_cols,
                i % scale_cols
            ),
        ));
    }
    to_f32(Dtype::F8E4M3, &layer.name, weight, out)?;
    for r in 0..n {
        let block_row = (first_row as usize + r) / bm - first_scale_row;
        let scale = &s[block_row * scale_cols..(block_row + 1) * scale_cols];
        let row = &mut out[r * cols..(r + 1) * cols];
        for (chunk, &sc) in row.chunks_mut(bn).zip(scale) {
            for w in chunk {
                *w *= sc;
            }
        }
    }
    Ok(())
}

/// Every FP8 layer among `names`: each `<path>.weight_scale_inv` whose `<path>.weight`
/// `lookup` finds (dtype and shape), checked with the config's block size. One result per
/// candidate, so callers choose to refuse (the CLI) or to list the misfits (wasm).
pub fn discover<'n, 'a>(
    names: impl IntoIterator<Item = &'n str>,
    lookup: impl Fn(&str) -> Option<(Dtype, &'a [u64])> + Copy,
    config: &Fp8Config,
) -> Vec<Result<Fp8Layer>> {
    names
        .into_iter()
        .filter_map(|name| name.strip_suffix(".weight_scale_inv"))
        .map(|path| {
            let part = |suffix: &str| {
                lookup(&format!("{path}.{suffix}"))
                    .ok_or_else(|| layout(path, format!("no {path}.{suffix} tensor")))
            };
            Fp8Layer::new(
                path,
                part("weight")?,
                part("weight_scale_inv")?,
                config.block,
            )
        })
        .collect()
}

/// The block sides `b` with `ceil(dim / b) == n`, as an inclusive range within 1 to
/// [`MAX_BLOCK`].
fn sides_for(dim: u64, n: u64) -> Option<(u64, u64)> {
    if dim == 0 || n == 0 {
        return (dim == n).then_some((1, MAX_BLOCK));
    }
    let lo = dim.div_ceil(n);
    let hi = match n {
        1 => MAX_BLOCK,
        _ => ((dim - 1) / (n - 1)).min(MAX_BLOCK),
    };
    (lo <= hi).then_some((lo, hi))
}

/// Without a config: the one square block side every `<path>.weight` F8_E4M3 `[out, in]` /
/// `<path>.weight_scale_inv` pair among `names` fits (its scale grid is `[ceil(out / b),
/// ceil(in / b)]`); a pair that fits no side by itself is left out (it stays plain). None
/// when no side fits all the others (they stay plain); an error when several sides fit, since
/// each gives other values and only the config can tell.
pub fn infer_block<'n, 'a>(
    names: impl IntoIterator<Item = &'n str>,
    lookup: impl Fn(&str) -> Option<(Dtype, &'a [u64])>,
) -> Option<Result<[u64; 2]>> {
    let mut common: Option<(u64, u64)> = None;
    let mut first = None;
    for path in names
        .into_iter()
        .filter_map(|n| n.strip_suffix(".weight_scale_inv"))
    {
        let (Some(weight), Some(scales)) = (
            lookup(&format!("{path}.weight")),
            lookup(&format!("{path}.weight_scale_inv")),
        ) else {
            continue;
        };
        if weight.0 != Dtype::F8E4M3
            || !matches!(scales.0, Dtype::F32 | Dtype::BF16)
            || weight.1.len() != 2
            || scales.1.len() != 2
        {
            continue;
        }
        let (Some(rows), Some(cols)) = (
            sides_for(weight.1[0], scales.1[0]),
            sides_for(weight.1[1], scales.1[1]),
        ) else {
            continue;
        };
        let own = (rows.0.max(cols.0), rows.1.min(cols.1));
        if own.0 > own.1 {
            continue;
        }
        let (lo, hi) = common.unwrap_or((1, MAX_BLOCK));
        common = Some((lo.max(own.0), hi.min(own.1)));
        first.get_or_insert_with(|| path.to_string());
    }
    match common? {
        (lo, hi) if lo == hi => Some(Ok([lo, lo])),
        (lo, hi) if lo < hi => Some(Err(layout(
            &first.unwrap_or_default(),
            format!(
                "FP8 block sides {lo} to {hi} all fit the weight_scale_inv shapes; \
                 without config.json's weight_block_size the block is ambiguous"
            ),
        ))),
        _ => None,
    }
}
