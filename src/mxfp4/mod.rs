//! gpt-oss MXFP4 expert weights (config.json's `quantization_config`: `quant_method: mxfp4`,
//! `modules_to_not_convert`): `<name>_blocks` uint8 `[experts, rows, groups, 16]`, two FP4
//! (E2M1) codes a byte, low nibble first, and `<name>_scales` uint8 `[experts, rows, groups]`,
//! one e8m0 exponent (`2^(s − 127)`) per 32 values. The logical tensor `<name>` is what
//! transformers' `convert_moe_packed_tensors` returns: `[experts, groups · 32, rows]` (the
//! stored rows become the last dimension), `w[e][k][r] = fp4(code of value k of stored row r)
//! · 2^(scale[e][r][k / 32] − 127)`, exact in f32 (and in bf16: an FP4 value has two significant
//! bits). Scale 255 is e8m0's NaN: refused.

use crate::error::{Error, ErrorKind, Result};
use crate::safetensors::Dtype;

/// Bytes of one block: 32 FP4 values under one scale.
pub const BLOCK_BYTES: u64 = 16;
/// Values under one scale.
pub const BLOCK_VALUES: u64 = 2 * BLOCK_BYTES;

/// The E2M1 values of the 16 codes, as transformers' `FP4_VALUES`.
const FP4: [f32; 16] = [
    0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0,
];

fn layout(layer: &str, message: impl Into<String>) -> Error {
    Error::new(ErrorKind::Mxfp4Layout {
        layer: layer.to_string(),
        message: message.into(),
    })
}

/// config.json's `quantization_config` with `quant_method: mxfp4`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mxfp4Config {
    /// `modules_to_not_convert`: modules left unquantized, as the config lists them.
    pub not_converted: Vec<String>,
}

impl Mxfp4Config {
    /// From the bytes of a config.json: None without a `quantization_config` whose
    /// `quant_method` is `mxfp4`.
    pub fn from_config_json(bytes: &[u8]) -> Result<Option<Mxfp4Config>> {
        let Some(q) = crate::hf_config::quantization_config(bytes, "mxfp4")? else {
            return Ok(None);
        };
        let not_converted = crate::hf_config::name_list(&q, "modules_to_not_convert")?;
        Ok(Some(Mxfp4Config { not_converted }))
    }
}

/// An MXFP4 tensor whose two parts fit together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mxfp4Layer {
    /// The logical name (`model.layers.0.mlp.experts.gate_up_proj`); the parts are
    /// `<name>_blocks` and `<name>_scales`.
    pub name: String,
    pub experts: u64,
    /// Stored rows per expert: the logical last dimension.
    pub rows: u64,
    /// Blocks of 32 values per stored row.
    pub groups: u64,
}

impl Mxfp4Layer {
    /// Checks the parts' dtypes and shapes.
    pub fn new(name: &str, blocks: (Dtype, &[u64]), scales: (Dtype, &[u64])) -> Result<Mxfp4Layer> {
        let &[experts, rows, groups, width] = blocks.1 else {
            return Err(layout(
                name,
                format!(
                    "_blocks shape {:?} is not [experts, rows, groups, 16]",
                    blocks.1
                ),
            ));
        };
        if blocks.0 != Dtype::U8 || width != BLOCK_BYTES {
            return Err(layout(
                name,
                format!(
                    "_blocks is {} {:?}, expected U8 [experts, rows, groups, {BLOCK_BYTES}] (32 FP4 values a block)",
                    blocks.0.name(),
                    blocks.1
                ),
            ));
        }
        if scales.0 != Dtype::U8 || scales.1 != [experts, rows, groups] {
            return Err(layout(
                name,
                format!(
                    "_scales is {} {:?}, expected U8 (e8m0) [{experts}, {rows}, {groups}], one per block",
                    scales.0.name(),
                    scales.1
                ),
            ));
        }
        Ok(Mxfp4Layer {
            name: name.to_string(),
            experts,
            rows,
            groups,
        })
    }

    /// `MXFP4`.
    pub fn type_name(&self) -> String {
        "MXFP4".to_string()
    }

    /// Values per expert along the logical middle dimension (`groups · 32`).
    pub fn k(&self) -> u64 {
        self.groups.saturating_mul(BLOCK_VALUES)
    }

    /// `[experts, groups · 32, rows]`, as transformers loads it.
    pub fn shape(&self) -> Vec<u64> {
        vec![self.experts, self.k(), self.rows]
    }

    /// Logical rows (`experts · groups · 32`).
    pub fn n_rows(&self) -> u64 {
        self.experts.saturating_mul(self.k())
    }

    /// Values per logical row: the stored rows of an expert.
    pub fn row_len(&self) -> u64 {
        self.rows
    }

    /// Logical elements.
    pub fn n_elements(&self) -> u64 {
        self.n_rows().saturating_mul(self.rows)
    }

    /// The experts logical rows `rows` lie in: a logical row's values come from every stored
    /// row of its expert, so whole experts are read.
    pub fn experts_of(&self, rows: std::ops::Range<u64>) -> std::ops::Range<u64> {
        let k = self.k().max(1);
        if rows.start >= rows.end {
            return 0..0;
        }
        rows.start / k..(rows.end - 1) / k + 1
    }

    /// The stored rows (of 16 bytes) of `_blocks` that experts `experts` span.
    pub fn block_rows(&self, experts: std::ops::Range<u64>) -> std::ops::Range<u64> {
        let per = self.rows.saturating_mul(self.groups);
        experts.start.saturating_mul(per)..experts.end.saturating_mul(per)
    }

    /// The stored rows (of `groups` bytes) of `_scales` that experts `experts` span.
    pub fn scale_rows(&self, experts: std::ops::Range<u64>) -> std::ops::Range<u64> {
        experts.start.saturating_mul(self.rows)..experts.end.saturating_mul(self.rows)
    }
}

/// `2^(s − 127)` in f32 (s 0 is the subnormal 2^-127); None for 255, e8m0's NaN.
fn e8m0(s: u8) -> Option<f32> {
    match s {
        255 => None,
        0 => Some(f32::from_bits(1 << 22)),
        s => Some(f32::from_bits(u32::from(s) << 23)),
    }
}

/// Dequantizes whole logical rows, starting at `first_row`, into `out` (`n · rows` values):
/// `blocks` and `scales` the stored bytes of the experts those rows lie in
/// ([`Mxfp4Layer::experts_of`], [`Mxfp4Layer::block_rows`], [`Mxfp4Layer::scale_rows`]). A NaN
/// scale (255) used by the rows is an error naming it.
pub fn dequantize_rows(
    layer: &Mxfp4Layer,
    first_row: u64,
    blocks: &[u8],
    scales: &[u8],
    out: &mut [f32],
) -> Result<()> {
    let rows = layer.rows as usize;
    let n = out.len().checked_div(rows).unwrap_or(0);
    let experts = layer.experts_of(first_row..first_row + n as u64);
    let n_experts = (experts.end - experts.start) as usize;
    let (groups, k) = (layer.groups as usize, layer.k() as usize);
    let end_row = first_row + n as u64;
    let want_scales = (n_experts as u64)
        .saturating_mul(layer.rows)
        .saturating_mul(layer.groups);
    if out.len() != n * rows
        || end_row > layer.n_rows()
        || blocks.len() as u64 != want_scales.saturating_mul(BLOCK_BYTES)
        || scales.len() as u64 != want_scales
    {
        return Err(Error::new(ErrorKind::InvalidRequest {
            message: format!(
                "MXFP4 tensor {}: {} block, {} scale bytes for {n} rows from row {first_row}",
                layer.name,
                blocks.len(),
                scales.len()
            ),
        }));
    }
    let e0 = experts.start as usize;
    for i in 0..n {
        let row = first_row as usize + i;
        let (e, kk) = (row / k - e0, row % k);
        let (g, j) = (kk / BLOCK_VALUES as usize, kk % BLOCK_VALUES as usize);
        let dst = &mut out[i * rows..(i + 1) * rows];
        for (r, w) in dst.iter_mut().enumerate() {
            let at = (e * rows + r) * groups + g;
            let Some(scale) = e8m0(scales[at]) else {
                return Err(layout(
                    &layer.name,
                    format!(
                        "_scales 255 (e8m0 NaN) of expert {}, row {r}, block {g} (byte {}) is not a scale",
                        e0 + e,
                        (e0 * rows * groups) + at
                    ),
                ));
            };
            let byte = blocks[at * BLOCK_BYTES as usize + j / 2];
            let code = if j % 2 == 0 { byte & 0x0f } else { byte >> 4 };
            *w = FP4[code as usize] * scale;
        }
    }
    Ok(())
}

/// Every MXFP4 tensor among `names`: each `<name>_blocks` with its `<name>_scales` (`lookup`
/// finds dtype and shape). One result per candidate, so callers choose to refuse (the CLI) or
/// to list the misfits (wasm).
pub fn discover<'n, 'a>(
    names: impl IntoIterator<Item = &'n str>,
    lookup: impl Fn(&str) -> Option<(Dtype, &'a [u64])> + Copy,
) -> Vec<Result<Mxfp4Layer>> {
    names
        .into_iter()
        .filter_map(|name| name.strip_suffix("_blocks"))
        .map(|path| {
            let part = |suffix: &str| {
                lookup(&format!("{path}{suffix}"))
                    .ok_or_else(|| layout(path, format!("no {path}{suffix} tensor")))
            };
            Mxfp4Layer::new(path, part("_blocks")?, part("_scales")?)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e8m0_is_an_exact_power_of_two_and_255_is_nan() {
        assert_eq!(e8m0(127), Some(1.0));
        assert_eq!(e8m0(0), Some(2f32.powi(-127)));
        assert_eq!(e8m0(1), Some(2f32.powi(-126)));
        assert_eq!(e8m0(254), Some(2f32.powi(127)));
        assert_eq!(e8m0(255), None);
    }

    #[test]
    fn parts_that_do_not_fit_are_refused() {
        let ok = Mxfp4Layer::new("x", (Dtype::U8, &[2, 4, 3, 16]), (Dtype::U8, &[2, 4, 3]));
        assert_eq!(ok.unwrap().shape(), vec![2, 96, 4]);
        let wide = Mxfp4Layer::new("x", (Dtype::U8, &[2, 4, 3, 8]), (Dtype::U8, &[2, 4, 3]));
        assert!(wide
            .unwrap_err()
            .to_string()
            .contains("expected U8 [experts, rows, groups, 16]"));
        let scales = Mxfp4Layer::new("x", (Dtype::U8, &[2, 4, 3, 16]), (Dtype::BF16, &[2, 4, 3]));
        assert!(scales
            .unwrap_err()
            .to_string()
            .contains("_scales is BF16 [2, 4, 3], expected U8"));
        let rank = Mxfp4Layer::new("x", (Dtype::U8, &[4, 3, 16]), (Dtype::U8, &[4, 3]));
        assert!(rank
            .unwrap_err()
            .to_string()
            .contains("is not [experts, rows, groups, 16]"));
    }
}
