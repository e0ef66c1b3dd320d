//! compressed-tensors layers (llm-compressor's checkpoints; config.json's `quantization_config`
//! with `quant_method: compressed-tensors`), as the package's `decompress` reads them:
//! - `pack-quantized`: `<name>.weight_packed` int32 `[out, ceil(in * bits / 32)]`, each row a
//!   little-endian bit stream of `bits`-wide values stored as `q + 2^(bits-1)`;
//!   `<name>.weight_shape` (the logical `[out, in]`); `<name>.weight_scale` `[out, in / group]`
//!   (group), `[out, 1]` (channel) or `[1]` (tensor); for asymmetric weights
//!   `<name>.weight_zero_point` packed the same way down each column (`[ceil(out * bits / 32),
//!   groups]`).
//! - `int-quantized` / `float-quantized` (naive): `<name>.weight` int8 or float8_e4m3fn
//!   `[out, in]` and `<name>.weight_scale` as above.
//!
//! `w = (q - z) * s` in the scale's dtype (`q - z` exact there), so f32 of that product rounded
//! once to the scale dtype, as the package's `_dequantize` computes it.

use serde_json::Value as Json;

use crate::error::{Error, ErrorKind, Result};
use crate::safetensors::{to_f32, Dtype};

fn layout(layer: &str, message: impl Into<String>) -> Error {
    Error::new(ErrorKind::CtLayout {
        layer: layer.to_string(),
        message: message.into(),
    })
}

fn bad_config(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::BadJson {
        what: "config.json quantization_config".to_string(),
        message: message.into(),
    })
}

/// How a layer's weights are stored (config.json's `format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CtFormat {
    /// `pack-quantized`: ints packed into int32 words.
    Packed,
    /// `int-quantized`: one int8 per weight.
    Int,
    /// `float-quantized`: one float8_e4m3fn per weight.
    Float,
}

impl CtFormat {
    /// As config.json names it.
    pub fn name(self) -> &'static str {
        match self {
            CtFormat::Packed => "pack-quantized",
            CtFormat::Int => "int-quantized",
            CtFormat::Float => "float-quantized",
        }
    }
}

/// How many weights one scale covers (`strategy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CtStrategy {
    Tensor,
    Channel,
    Group(u64),
}

/// The weights' scheme: the one `config_groups` entry's `weights` (all groups must agree).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CtConfig {
    pub format: CtFormat,
    pub bits: u32,
    pub strategy: CtStrategy,
    pub symmetric: bool,
    /// Input activations' bits (16 when they stay unquantized), for the type label.
    pub activation_bits: u32,
    /// `ignore`: modules left unquantized, as the config lists them.
    pub ignore: Vec<String>,
}

impl CtConfig {
    /// From the bytes of a config.json: None without a `quantization_config` whose
    /// `quant_method` is `compressed-tensors`; an error for a scheme not read here.
    pub fn from_config_json(bytes: &[u8]) -> Result<Option<CtConfig>> {
        let Some(q) = crate::hf_config::quantization_config(bytes, "compressed-tensors")? else {
            return Ok(None);
        };
        let format = match q.get("format").and_then(Json::as_str) {
            Some("pack-quantized") => CtFormat::Packed,
            Some("int-quantized") => CtFormat::Int,
            Some("float-quantized") => CtFormat::Float,
            other => {
                return Err(bad_config(format!(
                    "compressed-tensors format {:?} is not supported (pack-quantized, int-quantized, float-quantized)",
                    other.unwrap_or("none")
                )))
            }
        };
        let groups = match q.get("config_groups") {
            Some(Json::Object(g)) if !g.is_empty() => g,
            _ => return Err(bad_config("no config_groups")),
        };
        let mut scheme: Option<CtConfig> = None;
        for (name, group) in groups {
            let g = one_group(name, group, format)?;
            match &scheme {
                Some(s) if *s != g => {
                    return Err(bad_config(format!(
                        "config_groups {name:?} differs from the others (one weight scheme per checkpoint is supported)"
                    )))
                }
                _ => scheme = Some(g),
            }
        }
        let mut scheme = scheme.ok_or_else(|| bad_config("no config_groups"))?;
        scheme.ignore = match q.get("ignore") {
            Some(Json::Array(names)) => names
                .iter()
                .filter_map(|n| n.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        };
        Ok(Some(scheme))
    }

    /// `CT-W<bits>A<act>-g<group>` / `-ch` / `-t` for ints (then `-asym` with zero points),
    /// `CT-FP8-E4M3-ch` / `-t` for FP8.
    pub fn type_name(&self) -> String {
        let by = match self.strategy {
            CtStrategy::Tensor => "t".to_string(),
            CtStrategy::Channel => "ch".to_string(),
            CtStrategy::Group(g) => format!("g{g}"),
        };
        let asym = if self.symmetric { "" } else { "-asym" };
        match self.format {
            CtFormat::Float => format!("CT-FP8-E4M3-{by}"),
            _ => format!("CT-W{}A{}-{by}{asym}", self.bits, self.activation_bits),
        }
    }
}

fn one_group(name: &str, group: &Json, format: CtFormat) -> Result<CtConfig> {
    let w = group
        .get("weights")
        .filter(|w| w.is_object())
        .ok_or_else(|| bad_config(format!("config_groups {name:?} has no weights")))?;
    let bits = w.get("num_bits").and_then(Json::as_u64).unwrap_or(0);
    let ty = w.get("type").and_then(Json::as_str).unwrap_or("int");
    let want = match format {
        CtFormat::Packed => (1..=8).contains(&bits) && ty == "int",
        CtFormat::Int => bits == 8 && ty == "int",
        CtFormat::Float => bits == 8 && ty == "float",
    };
    if !want {
        return Err(bad_config(format!(
            "config_groups {name:?}: {ty} {bits}-bit weights do not fit format {format:?}"
        )));
    }
    let strategy = match w.get("strategy").and_then(Json::as_str) {
        Some("tensor") => CtStrategy::Tensor,
        Some("channel") => CtStrategy::Channel,
        Some("group") => match w.get("group_size").and_then(Json::as_u64) {
            Some(g) if (1..=1 << 20).contains(&g) => CtStrategy::Group(g),
            _ => {
                return Err(bad_config(format!(
                    "config_groups {name:?}: group_size {} is not 1 to {}",
                    w.get("group_size").unwrap_or(&Json::Null),
                    1 << 20
                )))
            }
        },
        other => {
            return Err(bad_config(format!(
                "config_groups {name:?}: strategy {:?} is not supported (tensor, channel, group)",
                other.unwrap_or("none")
            )))
        }
    };
    if w.get("actorder").is_some_and(|a| !a.is_null()) {
        return Err(bad_config(format!(
            "config_groups {name:?}: actorder (weight_g_idx) is not supported"
        )));
    }
    let symmetric = w.get("symmetric").and_then(Json::as_bool).unwrap_or(true);
    if !symmetric && format == CtFormat::Float {
        return Err(bad_config(format!(
            "config_groups {name:?}: asymmetric FP8 is not supported"
        )));
    }
    let activation_bits = group
        .get("input_activations")
        .and_then(|a| a.get("num_bits"))
        .and_then(Json::as_u64)
        .unwrap_or(16) as u32;
    Ok(CtConfig {
        format,
        bits: bits as u32,
        strategy,
        symmetric,
        activation_bits,
        ignore: Vec::new(),
    })
}

/// A compressed-tensors layer whose parts fit together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CtLayer {
    /// The module path; the parts are `<name>.weight_packed` (or `.weight`), `.weight_scale`,
    /// `.weight_shape`, `.weight_zero_point`.
    pub name: String,
    pub out_features: u64,
    pub in_features: u64,
    pub scheme: CtConfig,
    pub scale_dtype: Dtype,
    /// Scale columns: groups per row (1 for channel and tensor).
    pub scale_cols: u64,
}

/// The parts of a layer as `lookup` finds them: (dtype, shape) of each.
pub struct CtParts<'a> {
    pub weight: (Dtype, &'a [u64]),
    pub scale: (Dtype, &'a [u64]),
    pub zero_point: Option<(Dtype, &'a [u64])>,
}

impl CtLayer {
    /// Checks the parts (dtype, shape) against the scheme.
    pub fn new(name: &str, parts: &CtParts, scheme: &CtConfig) -> Result<CtLayer> {
        let (wd, ws) = parts.weight;
        let (out, inputs) = match scheme.format {
            CtFormat::Packed => {
                // Headers only: the logical shape comes from the packed words and the scales;
                // `weight_shape`'s values are checked against it when the layer is read.
                let out = ws.first().copied().unwrap_or(0);
                let inputs = match (scheme.strategy, parts.scale.1) {
                    (CtStrategy::Group(g), [_, groups]) => groups.saturating_mul(g),
                    (CtStrategy::Group(_), ss) => {
                        return Err(layout(
                            name,
                            format!("weight_scale shape {ss:?} is not [out, groups]"),
                        ))
                    }
                    _ => ws.get(1).copied().unwrap_or(0).saturating_mul(32) / scheme.bits as u64,
                };
                let words = inputs.saturating_mul(scheme.bits as u64).div_ceil(32);
                if wd != Dtype::I32 || ws != [out, words] {
                    return Err(layout(
                        name,
                        format!(
                            "weight_packed is {} {ws:?}, expected I32 [{out}, {words}] ({inputs} {}-bit values a row)",
                            wd.name(),
                            scheme.bits
                        ),
                    ));
                }
                (out, inputs)
            }
            CtFormat::Int | CtFormat::Float => {
                let want = if scheme.format == CtFormat::Int {
                    Dtype::I8
                } else {
                    Dtype::F8E4M3
                };
                if wd != want || ws.len() != 2 {
                    return Err(layout(
                        name,
                        format!(
                            "weight is {} {ws:?}, expected {} [out, in]",
                            wd.name(),
                            want.name()
                        ),
                    ));
                }
                (ws[0], ws[1])
            }
        };
        let (sd, ss) = parts.scale;
        if !matches!(sd, Dtype::F32 | Dtype::BF16 | Dtype::F16) {
            return Err(layout(
                name,
                format!("weight_scale is {}, expected F32, BF16 or F16", sd.name()),
            ));
        }
        let scale_cols = match scheme.strategy {
            CtStrategy::Group(g) => {
                if inputs % g != 0 {
                    return Err(layout(
                        name,
                        format!("group size {g} does not divide {inputs} inputs"),
                    ));
                }
                inputs / g
            }
            _ => 1,
        };
        let scale_ok = match scheme.strategy {
            CtStrategy::Tensor => ss.iter().product::<u64>() == 1 && ss.len() <= 2,
            _ => ss == [out, scale_cols],
        };
        if !scale_ok {
            return Err(layout(
                name,
                format!(
                    "weight_scale shape {ss:?} is not {} for [{out}, {inputs}]",
                    match scheme.strategy {
                        CtStrategy::Tensor => "[1]".to_string(),
                        _ => format!("[{out}, {scale_cols}]"),
                    }
                ),
            ));
        }
        if !scheme.symmetric {
            let want = [
                out.saturating_mul(scheme.bits as u64).div_ceil(32),
                scale_cols,
            ];
            match parts.zero_point {
                Some((Dtype::I32, zs)) if zs == want => {}
                Some((zd, zs)) => {
                    return Err(layout(
                        name,
                        format!(
                            "weight_zero_point is {} {zs:?}, expected I32 {want:?}",
                            zd.name()
                        ),
                    ))
                }
                None => return Err(layout(name, "asymmetric, but no weight_zero_point")),
            }
            if scheme.format != CtFormat::Packed || scheme.strategy == CtStrategy::Tensor {
                return Err(layout(
                    name,
                    "asymmetric zero points are read for pack-quantized group or channel only",
                ));
            }
        }
        Ok(CtLayer {
            name: name.to_string(),
            out_features: out,
            in_features: inputs,
            scheme: scheme.clone(),
            scale_dtype: sd,
            scale_cols,
        })
    }

    pub fn type_name(&self) -> String {
        self.scheme.type_name()
    }

    /// The stored weight part (`weight_packed` or `weight`).
    pub fn weight_part(&self) -> &'static str {
        match self.scheme.format {
            CtFormat::Packed => "weight_packed",
            _ => "weight",
        }
    }

    /// The scale rows rows `rows` use (the one row of a tensor scale).
    pub fn scale_rows(&self, rows: std::ops::Range<u64>) -> std::ops::Range<u64> {
        match self.scheme.strategy {
            CtStrategy::Tensor => 0..1,
            _ => rows,
        }
    }

    /// The zero-point rows (packed words down each column) rows `rows` use.
    pub fn zero_rows(&self, rows: std::ops::Range<u64>) -> std::ops::Range<u64> {
        let bits = self.scheme.bits as u64;
        if rows.start >= rows.end {
            return 0..0;
        }
        rows.start * bits / 32..(rows.end * bits).div_ceil(32)
    }
}

/// A pack-quantized layer's `weight_shape` header: I64 (or I32) `[2]`.
pub fn check_weight_shape_header(layer: &CtLayer, dtype: Dtype, shape: &[u64]) -> Result<()> {
    if !matches!(dtype, Dtype::I64 | Dtype::I32) || shape != [2] {
        return Err(layout(
            &layer.name,
            format!(
                "weight_shape is {} {shape:?}, expected I64 [2]",
                dtype.name()
            ),
        ));
    }
    Ok(())
}

/// A pack-quantized layer's `weight_shape` values (`bytes`, the stored two I64 or I32) against
/// the logical shape its packed weight and scales give.
pub fn check_weight_shape(layer: &CtLayer, bytes: &[u8]) -> Result<()> {
    let value = |b: &[u8]| match b.len() {
        8 => i64::from_le_bytes(b.try_into().unwrap_or([0; 8])),
        4 => i32::from_le_bytes(b.try_into().unwrap_or([0; 4])) as i64,
        _ => -1,
    };
    if bytes.len() != 8 && bytes.len() != 16 {
        return Err(layout(
            &layer.name,
            format!(
                "weight_shape holds {} bytes, expected 16 (two I64) or 8 (two I32)",
                bytes.len()
            ),
        ));
    }
    let size = bytes.len() / 2;
    let got = [value(&bytes[..size]), value(&bytes[size..])];
    let want = [layer.out_features as i64, layer.in_features as i64];
    if got != want {
        return Err(layout(
            &layer.name,
            format!("weight_shape {got:?} does not match the packed weight and scales ({want:?})"),
        ));
    }
    Ok(())
}

/// The `bits`-wide field at bit `start` of a little-endian bit stream in int32 words, less
/// the storage offset `2^(bits-1)`.
fn unpack(words: &[u8], bits: u32, start: u64) -> i32 {
    let word = |k: u64| {
        let k = k as usize * 4;
        words
            .get(k..k + 4)
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64)
    };
    let pair = word(start / 32) | (word(start / 32 + 1) << 32);
    let v = (pair >> (start % 32)) & ((1u64 << bits) - 1);
    v as i32 - (1 << (bits - 1))
}

/// Dequantizes whole rows, starting at `first_row`, into `out` (`n * in_features` values):
/// `weight` the stored bytes of those rows, `scales` of their scale rows
/// ([`CtLayer::scale_rows`]), `zeros` of their zero-point rows ([`CtLayer::zero_rows`];
/// empty when symmetric). A NaN or infinite scale is an error naming its row and group.
pub fn dequantize_rows(
    layer: &CtLayer,
    first_row: u64,
    weight: &[u8],
    scales: &[u8],
    zeros: &[u8],
    out: &mut [f32],
) -> Result<()> {
    let cols = layer.in_features as usize;
    let n = out.len().checked_div(cols).unwrap_or(0);
    let bits = layer.scheme.bits;
    let row_bytes = match layer.scheme.format {
        CtFormat::Packed => (cols as u64 * bits as u64).div_ceil(32) as usize * 4,
        _ => cols,
    };
    let scale_rows = layer.scale_rows(first_row..first_row + n as u64);
    let n_scales = (scale_rows.end - scale_rows.start) as usize * layer.scale_cols as usize;
    let size = (layer.scale_dtype.bits() / 8) as usize;
    let zero_rows = layer.zero_rows(first_row..first_row + n as u64);
    let zero_bytes = match layer.scheme.symmetric {
        true => 0,
        false => (zero_rows.end - zero_rows.start) as usize * layer.scale_cols as usize * 4,
    };
    if out.len() != n * cols
        || weight.len() != n * row_bytes
        || scales.len() != n_scales * size
        || zeros.len() != zero_bytes
    {
        return Err(Error::new(ErrorKind::InvalidRequest {
            message: format!(
                "compressed-tensors layer {}: {} weight, {} scale, {} zero-point bytes for {n} rows",
                layer.name,
                weight.len(),
                scales.len(),
                zeros.len()
            ),
        }));
    }
    let mut s = vec![0f32; n_scales];
    to_f32(layer.scale_dtype, &layer.name, scales, &mut s)?;
    if let Some(i) = s.iter().position(|s| !s.is_finite()) {
        let g = layer.scale_cols as usize;
        return Err(layout(
            &layer.name,
            format!(
                "weight_scale {} of row {}, group {} is not finite",
                s[i],
                scale_rows.start as usize + i / g,
                i % g
            ),
        ));
    }
    // One rounding to the scale dtype, as torch's product in that dtype.
    let round: fn(f32) -> f32 = match layer.scale_dtype {
        Dtype::BF16 => |x| half::bf16::from_f32(x).to_f32(),
        Dtype::F16 => |x| half::f16::from_f32(x).to_f32(),
        _ => |x| x,
    };
    let group = cols / layer.scale_cols as usize;
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    let vector = crate::quant::simd128_chosen();
    match layer.scheme.format {
        CtFormat::Packed => {
            for (r, row) in out.chunks_mut(cols).enumerate() {
                let words = &weight[r * row_bytes..(r + 1) * row_bytes];
                #[allow(unused_mut)]
                let mut done = 0;
                #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
                if vector {
                    done = simd128::unpack(bits, words, row);
                }
                for (c, w) in row.iter_mut().enumerate().skip(done) {
                    *w = unpack(words, bits, c as u64 * bits as u64) as f32;
                }
            }
        }
        CtFormat::Int => {
            for (w, &q) in out.iter_mut().zip(weight) {
                *w = q as i8 as f32;
            }
        }
        CtFormat::Float => to_f32(Dtype::F8E4M3, &layer.name, weight, out)?,
    }
    // Zero points of these rows, row-major `[n, groups]`: column g's values run down a bit
    // stream whose word k is `zeros[k * groups + g]`, from the first word these rows use.
    let groups = layer.scale_cols as usize;
    let mut z = vec![
        0f32;
        if layer.scheme.symmetric {
            0
        } else {
            n * groups
        }
    ];
    if !layer.scheme.symmetric {
        let skip = zero_rows.start * 32;
        let mut column = vec![0u8; (zero_rows.end - zero_rows.start) as usize * 4];
        for g in 0..groups {
            for (k, word) in column.chunks_exact_mut(4).enumerate() {
                let at = (k * groups + g) * 4;
                word.copy_from_slice(&zeros[at..at + 4]);
            }
            for r in 0..n {
                z[r * groups + g] =
                    unpack(&column, bits, (first_row + r as u64) * bits as u64 - skip) as f32;
            }
        }
    }
    for (r, row) in out.chunks_mut(cols).enumerate() {
        let srow = match layer.scheme.strategy {
            CtStrategy::Tensor => 0,
            _ => r,
        };
        let scale = &s[srow * groups..(srow + 1) * groups];
        for (g, (chunk, &sc)) in row.chunks_mut(group).zip(scale).enumerate() {
            let zero = z.get(r * groups + g).copied().unwrap_or(0.0);
            #[allow(unused_mut)]
            let mut done = 0;
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            if vector && layer.scale_dtype != Dtype::F16 {
                done = simd128::scale(chunk, zero, sc, layer.scale_dtype == Dtype::BF16);
            }
            for w in &mut chunk[done..] {
                *w = round((*w - zero) * sc);
            }
        }
    }
    Ok(())
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128;

/// Every compressed-tensors layer among `names`: each `<path>.weight_scale` whose weight part
/// `lookup` finds, checked with the scheme. One result per candidate.
pub fn discover<'n, 'a>(
    names: impl IntoIterator<Item = &'n str>,
    lookup: impl Fn(&str) -> Option<(Dtype, &'a [u64])> + Copy,
    scheme: &CtConfig,
) -> Vec<Result<CtLayer>> {
    names
        .into_iter()
        .filter_map(|name| name.strip_suffix(".weight_scale"))
        .filter(|path| {
            // Activation or KV scales of an unquantized module are no weight layer.
            let weight = match scheme.format {
                CtFormat::Packed => "weight_packed",
                _ => "weight",
            };
            lookup(&format!("{path}.{weight}")).is_some() || scheme.format == CtFormat::Packed
        })
        .map(|path| {
            let part = |suffix: &str| {
                lookup(&format!("{path}.{suffix}"))
                    .ok_or_else(|| layout(path, format!("no {path}.{suffix} tensor")))
            };
            let weight = match scheme.format {
                CtFormat::Packed => part("weight_packed")?,
                _ => part("weight")?,
            };
            let parts = CtParts {
                weight,
                scale: part("weight_scale")?,
                zero_point: lookup(&format!("{path}.weight_zero_point")),
            };
            CtLayer::new(path, &parts, scheme)
        })
        .collect()
}
