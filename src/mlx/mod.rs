//! MLX affine-quantized layers (mlx-lm checkpoints): `<name>.weight` uint32 `[.., out, in *
//! bits / 32]`, `<name>.scales` and `<name>.biases` `[.., out, in / group_size]` (f16, bf16 or
//! f32), bits and group size from config.json's `quantization` object.
//!
//! Each row of the weight is a little-endian bit stream of its `in` quants, `bits` each, low
//! bits first (3, 5 and 6-bit values cross word boundaries); `w[o][i] = scale[o][g] * q[o][i] +
//! bias[o][g]` with `g = i / group_size`, as `mx.dequantize` (mode `affine`) computes it.

use serde_json::Value as Json;

use crate::error::{Error, ErrorKind, Result};
use crate::safetensors::{to_f32, Dtype};

/// The bit widths and group sizes mlx quantizes to.
pub const BITS: [u32; 6] = [2, 3, 4, 5, 6, 8];
pub const GROUP_SIZES: [u64; 3] = [32, 64, 128];

fn layout(layer: &str, message: impl Into<String>) -> Error {
    Error::new(ErrorKind::MlxLayout {
        layer: layer.to_string(),
        message: message.into(),
    })
}

fn bad_config(message: String) -> Error {
    Error::new(ErrorKind::BadJson {
        what: "config.json quantization".to_string(),
        message,
    })
}

/// One layer's (or the default) quantization, mode affine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MlxConfig {
    pub bits: u32,
    pub group_size: u64,
}

impl MlxConfig {
    /// From a parsed config.json: the `quantization` object's defaults (see
    /// [`MlxQuantization::from_config`]), None without one.
    pub fn from_config(config: &Json) -> Result<Option<MlxConfig>> {
        Ok(MlxQuantization::from_config(config)?.map(|q| q.default))
    }

    /// From one parameters object; `fallback` fills what it leaves out (a per-layer entry is
    /// passed to mlx's `to_quantized`, whose defaults are 4-bit, group 64, affine).
    fn from_params(q: &Json, fallback: Option<MlxConfig>, what: &str) -> Result<MlxConfig> {
        let mode = q.get("mode").and_then(Json::as_str).unwrap_or("affine");
        if mode != "affine" {
            return Err(bad_config(format!(
                "{what}mode {mode:?} is not supported (affine only)"
            )));
        }
        let number = |key: &str, fallback: Option<u64>| match q.get(key) {
            None | Some(Json::Null) => fallback.unwrap_or(0),
            Some(v) => v.as_u64().unwrap_or(0),
        };
        let bits = number("bits", fallback.map(|c| u64::from(c.bits)));
        let group_size = number("group_size", fallback.map(|c| c.group_size));
        if bits > 8 || !BITS.contains(&(bits as u32)) {
            return Err(bad_config(format!(
                "{what}bits {bits} is not one of {BITS:?}"
            )));
        }
        if !GROUP_SIZES.contains(&group_size) {
            return Err(bad_config(format!(
                "{what}group_size {group_size} is not one of {GROUP_SIZES:?}"
            )));
        }
        Ok(MlxConfig {
            bits: bits as u32,
            group_size,
        })
    }
}

/// config.json's `quantization` object as mlx-lm writes it: the defaults (`group_size`,
/// `bits`, `mode`), then one entry per layer quantized otherwise, keyed by the layer's path
/// (`"model.layers.0.mlp.down_proj": {"group_size": 64, "bits": 6}`), or `false` for one left
/// unquantized. mlx-lm quantizes a layer when its `<path>.scales` is stored, with its entry's
/// parameters if it has one, else the defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MlxQuantization {
    pub default: MlxConfig,
    /// Per-layer entries in the object's order: None for `false`.
    pub layers: Vec<(String, Option<MlxConfig>)>,
}

/// The keys of the defaults, not layer paths.
const DEFAULT_KEYS: [&str; 4] = ["group_size", "bits", "mode", "quantize_input"];

impl MlxQuantization {
    /// From the bytes of a config.json: None without a `quantization` object.
    pub fn from_config_json(bytes: &[u8]) -> Result<Option<MlxQuantization>> {
        MlxQuantization::from_config(&crate::hf_config::parse(bytes)?)
    }

    /// From a parsed config.json: None without a `quantization` object; an error for a mode
    /// other than `affine`, or bits / group size mlx does not make, in the defaults or any
    /// layer's entry.
    pub fn from_config(config: &Json) -> Result<Option<MlxQuantization>> {
        let Some(q) = config.get("quantization") else {
            return Ok(None);
        };
        let Some(object) = q.as_object() else {
            return Err(bad_config("not a JSON object".to_string()));
        };
        let default = MlxConfig::from_params(q, None, "")?;
        let mut layers = Vec::new();
        for (key, value) in object {
            if DEFAULT_KEYS.contains(&key.as_str()) {
                continue;
            }
            let what = format!("layer {key:?}: ");
            let config = match value {
                Json::Bool(false) => None,
                Json::Bool(true) => Some(default),
                Json::Object(_) => Some(MlxConfig::from_params(value, Some(DEFAULTS), &what)?),
                other => {
                    return Err(bad_config(format!(
                        "{what}{other} is not a parameters object or a boolean"
                    )))
                }
            };
            layers.push((key.clone(), config));
        }
        Ok(Some(MlxQuantization { default, layers }))
    }

    /// How the layer `name` (its path) is quantized: its entry, else the defaults; None for a
    /// layer whose entry is `false`.
    pub fn for_layer(&self, name: &str) -> Option<MlxConfig> {
        match self.layers.iter().find(|(path, _)| path == name) {
            Some((_, config)) => *config,
            None => Some(self.default),
        }
    }
}

/// mlx's `to_quantized` defaults for mode affine, for what a layer's entry leaves out.
const DEFAULTS: MlxConfig = MlxConfig {
    bits: 4,
    group_size: 64,
};

/// An MLX quantized layer whose parts fit together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MlxLayer {
    /// The prefix (`model.layers.0.mlp.up_proj`); the weight is `<name>.weight`.
    pub name: String,
    pub bits: u32,
    pub group_size: u64,
    /// Logical shape, outermost first (the stored one with the last dimension unpacked).
    pub shape: Vec<u64>,
    pub scales_dtype: Dtype,
}

impl MlxLayer {
    /// Checks the layer's three parts (dtype, shape) against `config`.
    pub fn new(
        name: &str,
        weight: (Dtype, &[u64]),
        scales: (Dtype, &[u64]),
        biases: (Dtype, &[u64]),
        config: MlxConfig,
    ) -> Result<MlxLayer> {
        let MlxConfig { bits, group_size } = config;
        if !BITS.contains(&bits) || !GROUP_SIZES.contains(&group_size) {
            return Err(layout(
                name,
                format!("{bits}-bit, group {group_size} is not a width x group mlx makes"),
            ));
        }
        if weight.0 != Dtype::U32 || weight.1.len() < 2 {
            return Err(layout(
                name,
                format!(
                    "weight is {} {:?}, expected U32 with 2 or more dimensions",
                    weight.0.name(),
                    weight.1
                ),
            ));
        }
        let (lead, words) = weight.1.split_at(weight.1.len() - 1);
        let bits_in_row = words[0].saturating_mul(32);
        if bits_in_row % u64::from(bits) != 0 {
            return Err(layout(
                name,
                format!(
                    "a row of {} words is not a whole number of {bits}-bit values",
                    words[0]
                ),
            ));
        }
        let inputs = bits_in_row / u64::from(bits);
        if inputs % group_size != 0 {
            return Err(layout(
                name,
                format!("{inputs} inputs do not divide into groups of {group_size}"),
            ));
        }
        let mut want = lead.to_vec();
        want.push(inputs / group_size);
        for (part, (dtype, shape)) in [("scales", scales), ("biases", biases)] {
            if !matches!(dtype, Dtype::F16 | Dtype::BF16 | Dtype::F32) || dtype != scales.0 {
                return Err(layout(
                    name,
                    format!(
                        "{part} is {}, expected F16, BF16 or F32 (as scales)",
                        dtype.name()
                    ),
                ));
            }
            if shape != want.as_slice() {
                return Err(layout(
                    name,
                    format!(
                        "{part} shape {shape:?} is not {want:?} (one per group of {group_size})"
                    ),
                ));
            }
        }
        let mut shape = lead.to_vec();
        shape.push(inputs);
        Ok(MlxLayer {
            name: name.to_string(),
            bits,
            group_size,
            shape,
            scales_dtype: scales.0,
        })
    }

    /// `MLX-<bits>bit-g<group>`, one word like the dtype names beside it.
    pub fn type_name(&self) -> String {
        format!("MLX-{}bit-g{}", self.bits, self.group_size)
    }

    /// Inputs per row (the last logical dimension).
    pub fn row_len(&self) -> u64 {
        self.shape.last().copied().unwrap_or(0)
    }

    /// Rows: every logical dimension but the last.
    pub fn n_rows(&self) -> u64 {
        let lead = &self.shape[..self.shape.len() - 1];
        lead.iter().fold(1u64, |a, &d| a.saturating_mul(d))
    }

    /// Bytes of one packed row.
    pub fn row_bytes(&self) -> u64 {
        self.row_len() * u64::from(self.bits) / 8
    }

    /// Scales (or biases) per row.
    pub fn groups_per_row(&self) -> u64 {
        self.row_len() / self.group_size
    }
}

/// Dequantizes whole rows, starting at `first_row`, into `out` (`n * row_len` values):
/// `weight` the packed bytes of those rows, `scales` / `biases` their groups' bytes as stored.
/// A NaN or infinite scale or bias is an error naming its row and group.
pub fn dequantize_rows(
    layer: &MlxLayer,
    first_row: u64,
    weight: &[u8],
    scales: &[u8],
    biases: &[u8],
    out: &mut [f32],
) -> Result<()> {
    let row_len = layer.row_len() as usize;
    let groups = layer.groups_per_row() as usize;
    let row_bytes = layer.row_bytes() as usize;
    let n = out.len().checked_div(row_len).unwrap_or(0);
    let size = (layer.scales_dtype.bits() / 8) as usize;
    if out.len() != n * row_len
        || weight.len() != n * row_bytes
        || scales.len() != n * groups * size
        || biases.len() != n * groups * size
    {
        return Err(Error::new(ErrorKind::InvalidRequest {
            message: format!(
                "MLX layer {}: {} weight, {} scale, {} bias bytes for {n} rows",
                layer.name,
                weight.len(),
                scales.len(),
                biases.len()
            ),
        }));
    }
    let mut s = vec![0f32; n * groups];
    let mut b = vec![0f32; n * groups];
    to_f32(layer.scales_dtype, &layer.name, scales, &mut s)?;
    to_f32(layer.scales_dtype, &layer.name, biases, &mut b)?;
    if let Some(i) = s
        .iter()
        .zip(&b)
        .position(|(s, b)| !s.is_finite() || !b.is_finite())
    {
        return Err(layout(
            &layer.name,
            format!(
                "scale {} / bias {} of row {}, group {} is not finite",
                s[i],
                b[i],
                first_row + (i / groups) as u64,
                i % groups
            ),
        ));
    }
    let bits = layer.bits as usize;
    let group = layer.group_size as usize;
    // 4 and 8 bits in groups of whole 16-byte runs go by bytes (every row is whole groups and
    // `row_len · bits / 8` bytes, checked above).
    #[cfg_attr(
        not(any(
            target_arch = "x86_64",
            all(target_arch = "wasm32", target_feature = "simd128")
        )),
        allow(unused_variables)
    )]
    let by_bytes = (bits == 4 || bits == 8) && group % 32 == 0;
    for r in 0..n {
        let packed = &weight[r * row_bytes..(r + 1) * row_bytes];
        let row = &mut out[r * row_len..(r + 1) * row_len];
        let (s, b) = (&s[r * groups..][..groups], &b[r * groups..][..groups]);
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        if by_bytes && crate::quant::simd128_chosen() {
            simd128::row(bits, group, packed, s, b, row);
            continue;
        }
        #[cfg(target_arch = "x86_64")]
        if by_bytes && crate::quant::avx2_chosen() {
            #[target_feature(enable = "avx2")]
            unsafe fn avx2(
                bits: usize,
                group: usize,
                p: &[u8],
                s: &[f32],
                b: &[f32],
                r: &mut [f32],
            ) {
                byte_row(bits, group, p, s, b, r)
            }
            // SAFETY: `avx2_chosen` is true only on a CPU with AVX2, all `avx2` needs.
            unsafe { avx2(bits, group, packed, s, b, row) };
            continue;
        }
        scalar_row(bits, group, packed, s, b, row);
    }
    Ok(())
}

/// One row's values `scale · q + bias` from its bit stream (the reference the vector rows equal
/// bit for bit).
fn scalar_row(bits: usize, group: usize, packed: &[u8], s: &[f32], b: &[f32], row: &mut [f32]) {
    let mask = (1u32 << bits) - 1;
    for (i, w) in row.iter_mut().enumerate() {
        let bit = i * bits;
        let (byte, shift) = (bit / 8, bit % 8);
        // Two bytes hold any value of 8 bits or fewer from any bit offset.
        let lo = u32::from(packed[byte]);
        let hi = packed.get(byte + 1).map_or(0, |&x| u32::from(x));
        let q = ((lo | (hi << 8)) >> shift) & mask;
        let g = i / group;
        *w = s[g] * q as f32 + b[g];
    }
}

/// [`scalar_row`] for 4 or 8 bits in groups of a multiple of 32 values, written so that the
/// compiler keeps it in vectors (it is compiled for AVX2 where that was chosen). The same
/// operations, so the same bits.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
fn byte_row(bits: usize, group: usize, packed: &[u8], s: &[f32], b: &[f32], row: &mut [f32]) {
    let group_bytes = group * bits / 8;
    let groups = packed
        .chunks_exact(group_bytes)
        .zip(row.chunks_exact_mut(group))
        .zip(s.iter().zip(b));
    for ((bytes, out), (&s, &b)) in groups {
        if bits == 4 {
            for (x, out) in bytes.chunks_exact(16).zip(out.chunks_exact_mut(32)) {
                let lo: [f32; 16] = std::array::from_fn(|j| s * f32::from(x[j] & 15) + b);
                let hi: [f32; 16] = std::array::from_fn(|j| s * f32::from(x[j] >> 4) + b);
                for (j, pair) in out.chunks_exact_mut(2).enumerate() {
                    pair[0] = lo[j];
                    pair[1] = hi[j];
                }
            }
        } else {
            for (o, &x) in out.iter_mut().zip(bytes) {
                *o = s * f32::from(x) + b;
            }
        }
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128;

/// The one place MLX layers are found, as mlx-lm's loader finds them: every `<path>.scales`
/// among `names` (in their order) whose layer `quantization` quantizes is checked as a layer
/// whose `<path>.weight` and `<path>.biases` `lookup` finds (dtype and shape), possibly in
/// other shards. A GPTQ layer's `.scales` (beside a `.qweight`) is not one. One result per
/// candidate, so callers choose to refuse (the CLI) or to list the misfits (wasm).
pub fn discover<'n, 'a>(
    names: impl IntoIterator<Item = &'n str>,
    lookup: impl Fn(&str) -> Option<(Dtype, &'a [u64])> + Copy,
    quantization: &MlxQuantization,
) -> Vec<Result<MlxLayer>> {
    names
        .into_iter()
        .filter_map(|name| name.strip_suffix(".scales"))
        .filter(|path| lookup(&format!("{path}.qweight")).is_none())
        .filter_map(|path| Some((path, quantization.for_layer(path)?)))
        .map(|(path, config)| {
            let part = |suffix: &str| {
                lookup(&format!("{path}.{suffix}"))
                    .ok_or_else(|| layout(path, format!("no {path}.{suffix} tensor")))
            };
            MlxLayer::new(
                path,
                part("weight")?,
                part("scales")?,
                part("biases")?,
                config,
            )
        })
        .collect()
}

/// Without a config: each `<path>.scales` with a U32 `<path>.weight` and `<path>.biases` (and
/// no GPTQ `.qweight`) is a layer when exactly one (bits, group size) mlx makes fits its
/// shapes. The shapes fix only bits x group size, so when several fit (4-bit g64 and 8-bit
/// g32 alike) the result is an error naming the candidates; a set none fits is left out (it
/// stays plain tensors).
pub fn infer<'n, 'a>(
    names: impl IntoIterator<Item = &'n str>,
    lookup: impl Fn(&str) -> Option<(Dtype, &'a [u64])> + Copy,
) -> Vec<Result<MlxLayer>> {
    names
        .into_iter()
        .filter_map(|name| name.strip_suffix(".scales"))
        .filter(|path| lookup(&format!("{path}.qweight")).is_none())
        .filter_map(|path| {
            let part = |suffix: &str| lookup(&format!("{path}.{suffix}"));
            let (weight, scales, biases) = (part("weight")?, part("scales")?, part("biases")?);
            let fits: Vec<MlxLayer> = BITS
                .iter()
                .flat_map(|&bits| GROUP_SIZES.iter().map(move |&g| (bits, g)))
                .filter_map(|(bits, group_size)| {
                    let config = MlxConfig { bits, group_size };
                    MlxLayer::new(path, weight, scales, biases, config).ok()
                })
                .collect();
            match fits.len() {
                0 => None,
                1 => fits.into_iter().next().map(Ok),
                _ => {
                    let names: Vec<String> = fits
                        .iter()
                        .map(|l| format!("{}-bit g{}", l.bits, l.group_size))
                        .collect();
                    Some(Err(layout(
                        path,
                        format!(
                            "without config.json's quantization the shapes fit {}",
                            names.join(", ")
                        ),
                    )))
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row function: bits, group, packed bytes, scales, biases, the row.
    type Row = fn(usize, usize, &[u8], &[f32], &[f32], &mut [f32]);

    /// `fast` (a byte row) equals the scalar row bit for bit for 4 and 8 bits and every group
    /// size, on random codes with scales and biases of either sign, subnormals and zeros among
    /// them.
    fn rows_equal_the_scalar_rows(fast: Row) {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for (bits, group) in [4, 8]
            .into_iter()
            .flat_map(|b| GROUP_SIZES.map(|g| (b, g as usize)))
        {
            let row_len = group * 5;
            let packed: Vec<u8> = (0..row_len * bits / 8).map(|_| next() as u8).collect();
            let factor = |k: u64| match k % 7 {
                0 => 0.0,
                1 => -0.0,
                2 => f32::from_bits(1 + (k as u32 & 0xff)),
                _ => (k % 2001) as f32 * 1e-4 - 0.1,
            };
            let s: Vec<f32> = (0..5).map(|_| factor(next())).collect();
            let b: Vec<f32> = (0..5).map(|_| factor(next())).collect();
            let (mut want, mut got) = (vec![0f32; row_len], vec![0f32; row_len]);
            scalar_row(bits, group, &packed, &s, &b, &mut want);
            fast(bits, group, &packed, &s, &b, &mut got);
            let bits_of = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits_of(&got), bits_of(&want), "{bits} bits, group {group}");
        }
    }

    #[test]
    fn byte_rows_are_the_scalar_rows() {
        rows_equal_the_scalar_rows(byte_row);
    }

    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    #[test]
    fn simd128_rows_are_the_scalar_rows() {
        rows_equal_the_scalar_rows(simd128::row);
    }
}
