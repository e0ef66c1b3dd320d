//! bitsandbytes 4-bit weights (`Linear4bit` / `Params4bit`, transformers' `save_pretrained` of a
//! model loaded with `load_in_4bit`): `<path>.weight` uint8 `[⌈n/2⌉, 1]`, two 4-bit codes a
//! byte, the first value in the high nibble; `<path>.weight.absmax` one scale per `blocksize`
//! values (f32, or uint8 with double quantization, then `.nested_absmax` f32 one per
//! `nested_blocksize` scales, `.nested_quant_map` f32 `[256]` and an f32 `nested_offset`);
//! `<path>.weight.quant_map` (the 16 code values); and
//! `<path>.weight.quant_state.bitsandbytes__nf4|fp4`, a uint8 tensor holding the JSON of the
//! rest (`quant_type`, `blocksize`, `dtype`, `shape`, the nested block size and offset).
//!
//! `w = dtype(code[q] · absmax[i / blocksize])` with the code value and the product in f32, as
//! `bitsandbytes.functional.dequantize_4bit` computes it on the CPU; a nested scale is
//! `nested_quant_map[a] · nested_absmax[j / nested_blocksize] + nested_offset` in f32, as its
//! `dequantize_blockwise` then `+= offset`. The code book is the quant type's own (bnb's
//! kernels ignore the stored `quant_map`), so a `quant_map` that is not it is refused.

use serde_json::Value as Json;

use crate::error::{Error, ErrorKind, Result};
use crate::safetensors::Dtype;

/// The largest quant-state JSON read (transformers writes ~200 bytes).
pub const MAX_STATE_BYTES: u64 = 64 * 1024;

/// A quant-state tensor of `n_bytes` may be read (at most [`MAX_STATE_BYTES`]).
pub fn check_state_size(name: &str, n_bytes: u64) -> Result<()> {
    if n_bytes > MAX_STATE_BYTES {
        return Err(Error::new(ErrorKind::StringTooLong {
            what: format!("bitsandbytes quant state {name}"),
            len: n_bytes,
            limit: MAX_STATE_BYTES,
        }));
    }
    Ok(())
}

/// The block sizes `dequantize_4bit` accepts.
pub const BLOCKSIZES: [u64; 8] = [32, 64, 128, 256, 512, 1024, 2048, 4096];

/// bitsandbytes' NF4 code book (`get_4bit_type("nf4")`), in f32.
pub const NF4: [f32; 16] = [
    -1.0,
    -0.696_192_8,
    -0.525_073_05,
    -0.394_917_5,
    -0.284_441_38,
    -0.184_773_43,
    -0.091_050_036,
    0.0,
    0.079_580_3,
    0.160_930_2,
    0.246_112_3,
    0.337_915_24,
    0.440_709_83,
    0.562_617,
    0.722_956_84,
    1.0,
];

/// bitsandbytes' FP4 code book (`get_4bit_type("fp4")`: E2M1 without NaN/inf, max 1.0), in f32.
pub const FP4: [f32; 16] = [
    0.0,
    0.005_208_333_3,
    0.666_666_7,
    1.0,
    0.333_333_34,
    0.5,
    0.166_666_67,
    0.25,
    0.0,
    -0.005_208_333_3,
    -0.666_666_7,
    -1.0,
    -0.333_333_34,
    -0.5,
    -0.166_666_67,
    -0.25,
];

fn layout(layer: &str, message: impl Into<String>) -> Error {
    Error::new(ErrorKind::BnbLayout {
        layer: layer.to_string(),
        message: message.into(),
    })
}

/// The 4-bit code book.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BnbQuantType {
    Nf4,
    Fp4,
}

impl BnbQuantType {
    /// As bitsandbytes names it (`nf4`, `fp4`).
    pub fn name(self) -> &'static str {
        match self {
            BnbQuantType::Nf4 => "nf4",
            BnbQuantType::Fp4 => "fp4",
        }
    }

    fn parse(s: &str) -> Option<BnbQuantType> {
        match s {
            "nf4" => Some(BnbQuantType::Nf4),
            "fp4" => Some(BnbQuantType::Fp4),
            _ => None,
        }
    }

    /// The 16 code values.
    pub fn code(self) -> &'static [f32; 16] {
        match self {
            BnbQuantType::Nf4 => &NF4,
            BnbQuantType::Fp4 => &FP4,
        }
    }
}

/// The dtype `dequantize_4bit` returns (the quant state's `dtype`): values are rounded to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BnbDtype {
    F32,
    F16,
    BF16,
}

impl BnbDtype {
    /// As the quant state names it (`float32`, `float16`, `bfloat16`).
    pub fn name(self) -> &'static str {
        match self {
            BnbDtype::F32 => "float32",
            BnbDtype::F16 => "float16",
            BnbDtype::BF16 => "bfloat16",
        }
    }

    fn parse(s: &str) -> Option<BnbDtype> {
        match s {
            "float32" => Some(BnbDtype::F32),
            "float16" => Some(BnbDtype::F16),
            "bfloat16" => Some(BnbDtype::BF16),
            _ => None,
        }
    }

    /// `x` rounded to this dtype (to nearest, ties to even), back in f32.
    fn round(self, x: f32) -> f32 {
        match self {
            BnbDtype::F32 => x,
            BnbDtype::F16 => half::f16::from_f32(x).to_f32(),
            BnbDtype::BF16 => half::bf16::from_f32(x).to_f32(),
        }
    }
}

/// config.json's `quantization_config` with `quant_method: bitsandbytes` (4-bit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BnbConfig {
    /// `bnb_4bit_quant_type`.
    pub quant_type: BnbQuantType,
    /// `bnb_4bit_use_double_quant`.
    pub double_quant: bool,
    /// `llm_int8_skip_modules`: modules left unquantized, as the config lists them.
    pub not_converted: Vec<String>,
}

fn bad_config(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::BadJson {
        what: "config.json quantization_config".to_string(),
        message: message.into(),
    })
}

impl BnbConfig {
    /// From the bytes of a config.json: None without a `quantization_config` whose
    /// `quant_method` is `bitsandbytes`; an error for 8-bit (LLM.int8) or an unknown quant type.
    pub fn from_config_json(bytes: &[u8]) -> Result<Option<BnbConfig>> {
        let Some(q) = crate::hf_config::quantization_config(bytes, "bitsandbytes")? else {
            return Ok(None);
        };
        let flag = |key: &str| q.get(key).and_then(Json::as_bool).unwrap_or(false);
        if flag("load_in_8bit") || !flag("load_in_4bit") {
            return Err(bad_config(
                "bitsandbytes without load_in_4bit (8-bit LLM.int8 weights) is not read",
            ));
        }
        let quant_type = match q.get("bnb_4bit_quant_type") {
            None | Some(Json::Null) => BnbQuantType::Fp4,
            Some(Json::String(s)) => BnbQuantType::parse(s).ok_or_else(|| {
                bad_config(format!("bnb_4bit_quant_type {s:?} is not nf4 or fp4"))
            })?,
            Some(other) => {
                return Err(bad_config(format!(
                    "bnb_4bit_quant_type {other} is not nf4 or fp4"
                )))
            }
        };
        let not_converted = crate::hf_config::name_list(&q, "llm_int8_skip_modules")?;
        Ok(Some(BnbConfig {
            quant_type,
            double_quant: flag("bnb_4bit_use_double_quant"),
            not_converted,
        }))
    }
}

/// Double quantization of the scales.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BnbNested {
    pub blocksize: u64,
    pub offset: f32,
    /// Entries of `.nested_absmax`.
    pub n_absmax: u64,
}

/// A bitsandbytes 4-bit layer whose parts fit its quant state.
#[derive(Debug, Clone, PartialEq)]
pub struct BnbLayer {
    /// The module path (`model.layers.0.self_attn.q_proj`); the parts are `<name>.weight…`.
    pub name: String,
    pub quant_type: BnbQuantType,
    pub blocksize: u64,
    pub dtype: BnbDtype,
    /// The logical shape, outermost first (`[out, in]` for a linear layer).
    pub shape: Vec<u64>,
    pub nested: Option<BnbNested>,
}

/// The quant-state tensor's name suffix for a layer path.
pub fn state_suffix(quant_type: BnbQuantType) -> String {
    format!(".weight.quant_state.bitsandbytes__{}", quant_type.name())
}

/// The layer path and quant type a stored tensor name is the quant state of.
pub fn state_of(name: &str) -> Option<(&str, Option<BnbQuantType>)> {
    let (path, kind) = name.split_once(".weight.quant_state.bitsandbytes__")?;
    Some((path, BnbQuantType::parse(kind)))
}

fn positive_int(state: &Json, key: &str, layer: &str) -> Result<u64> {
    match state.get(key).and_then(Json::as_u64) {
        Some(v) if v > 0 => Ok(v),
        _ => Err(layout(
            layer,
            format!(
                "quant state {key} {} is not a positive integer",
                state
                    .get(key)
                    .map_or("missing".to_string(), Json::to_string)
            ),
        )),
    }
}

impl BnbLayer {
    /// The layer `path` from its quant-state JSON `state` (the tensor named with
    /// `kind`) and its parts' dtypes and shapes (`lookup`).
    pub fn new<'a>(
        path: &str,
        kind: Option<BnbQuantType>,
        state: &[u8],
        lookup: impl Fn(&str) -> Option<(Dtype, &'a [u64])>,
    ) -> Result<BnbLayer> {
        let Some(kind) = kind else {
            return Err(layout(
                path,
                "quant state is not bitsandbytes__nf4 or bitsandbytes__fp4",
            ));
        };
        let json: Json = serde_json::from_slice(state).map_err(|e| {
            layout(
                path,
                format!("quant state is not JSON ({} bytes): {e}", state.len()),
            )
        })?;
        let quant_type = match json.get("quant_type").and_then(Json::as_str) {
            Some(s) => BnbQuantType::parse(s).ok_or_else(|| {
                layout(
                    path,
                    format!("quant state quant_type {s:?} is not nf4 or fp4"),
                )
            })?,
            None => return Err(layout(path, "quant state has no quant_type")),
        };
        if quant_type != kind {
            return Err(layout(
                path,
                format!(
                    "quant state quant_type {} but the tensor is named bitsandbytes__{}",
                    quant_type.name(),
                    kind.name()
                ),
            ));
        }
        let blocksize = positive_int(&json, "blocksize", path)?;
        if !BLOCKSIZES.contains(&blocksize) {
            return Err(layout(
                path,
                format!(
                    "quant state blocksize {blocksize} is not one of bitsandbytes' {BLOCKSIZES:?}"
                ),
            ));
        }
        let dtype = match json.get("dtype").and_then(Json::as_str) {
            Some(s) => BnbDtype::parse(s).ok_or_else(|| {
                layout(
                    path,
                    format!("quant state dtype {s:?} is not float32, float16 or bfloat16"),
                )
            })?,
            None => return Err(layout(path, "quant state has no dtype")),
        };
        let shape: Vec<u64> = match json.get("shape").and_then(Json::as_array) {
            Some(dims) if !dims.is_empty() => dims
                .iter()
                .map(|d| d.as_u64())
                .collect::<Option<Vec<u64>>>()
                .ok_or_else(|| {
                    layout(path, format!("quant state shape {dims:?} is not a shape"))
                })?,
            _ => return Err(layout(path, "quant state has no shape")),
        };
        let n = shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .ok_or_else(|| layout(path, format!("quant state shape {shape:?} overflows")))?;
        let part = |suffix: &str| {
            let name = format!("{path}.weight{suffix}");
            lookup(&name).ok_or_else(|| layout(path, format!("no {name} tensor")))
        };
        let (wd, ws) = part("")?;
        let bytes = n.div_ceil(2);
        if wd != Dtype::U8 || ws.iter().product::<u64>() != bytes || !matches!(ws.len(), 1 | 2) {
            return Err(layout(
                path,
                format!(
                    ".weight is {} {ws:?}, expected U8 [{bytes}, 1] (two 4-bit codes a byte for shape {shape:?})",
                    wd.name()
                ),
            ));
        }
        let n_blocks = n.div_ceil(blocksize);
        let nested = match json.get("nested_blocksize") {
            None | Some(Json::Null) => None,
            Some(_) => {
                let nb = positive_int(&json, "nested_blocksize", path)?;
                let offset = json
                    .get("nested_offset")
                    .and_then(Json::as_f64)
                    .ok_or_else(|| layout(path, "quant state has no nested_offset number"))?
                    as f32;
                if !offset.is_finite() {
                    return Err(layout(
                        path,
                        format!("quant state nested_offset {offset} is not finite"),
                    ));
                }
                Some(BnbNested {
                    blocksize: nb,
                    offset,
                    n_absmax: n_blocks.div_ceil(nb),
                })
            }
        };
        let (ad, as_) = part(".absmax")?;
        let want = if nested.is_some() {
            Dtype::U8
        } else {
            Dtype::F32
        };
        if ad != want || as_ != [n_blocks] {
            return Err(layout(
                path,
                format!(
                    ".weight.absmax is {} {as_:?}, expected {} [{n_blocks}] (one per block of {blocksize} of {n} values{})",
                    ad.name(),
                    want.name(),
                    if nested.is_some() { ", double-quantized" } else { "" }
                ),
            ));
        }
        let (qd, qs) = part(".quant_map")?;
        if qd != Dtype::F32 || qs != [16] {
            return Err(layout(
                path,
                format!(
                    ".weight.quant_map is {} {qs:?}, expected F32 [16]",
                    qd.name()
                ),
            ));
        }
        if let Some(nested) = nested {
            let (d, s) = part(".nested_absmax")?;
            if d != Dtype::F32 || s != [nested.n_absmax] {
                return Err(layout(
                    path,
                    format!(
                        ".weight.nested_absmax is {} {s:?}, expected F32 [{}] (one per {} scales)",
                        d.name(),
                        nested.n_absmax,
                        nested.blocksize
                    ),
                ));
            }
            let (d, s) = part(".nested_quant_map")?;
            if d != Dtype::F32 || s != [256] {
                return Err(layout(
                    path,
                    format!(
                        ".weight.nested_quant_map is {} {s:?}, expected F32 [256]",
                        d.name()
                    ),
                ));
            }
        }
        Ok(BnbLayer {
            name: path.to_string(),
            quant_type,
            blocksize,
            dtype,
            shape,
            nested,
        })
    }

    /// `NF4-b64` / `FP4-b64`, `-dq` with double-quantized scales.
    pub fn type_name(&self) -> String {
        let base = match self.quant_type {
            BnbQuantType::Nf4 => "NF4",
            BnbQuantType::Fp4 => "FP4",
        };
        let dq = if self.nested.is_some() { "-dq" } else { "" };
        format!("{base}-b{}{dq}", self.blocksize)
    }

    /// Logical elements.
    pub fn n_elements(&self) -> u64 {
        self.shape.iter().fold(1, |a, &d| a.saturating_mul(d))
    }

    /// Values per row: the last dimension.
    pub fn row_len(&self) -> u64 {
        self.shape.last().copied().unwrap_or(1)
    }

    /// Rows: all dimensions but the last.
    pub fn n_rows(&self) -> u64 {
        self.n_elements().checked_div(self.row_len()).unwrap_or(0)
    }

    /// Blocks (scales) of the whole tensor.
    pub fn n_blocks(&self) -> u64 {
        self.n_elements().div_ceil(self.blocksize)
    }

    /// Logical elements rows `rows` span.
    fn elements(&self, rows: &std::ops::Range<u64>) -> std::ops::Range<u64> {
        rows.start.saturating_mul(self.row_len())..rows.end.saturating_mul(self.row_len())
    }

    /// The bytes of `.weight` rows `rows` lie in.
    pub fn weight_bytes(&self, rows: std::ops::Range<u64>) -> std::ops::Range<u64> {
        let e = self.elements(&rows);
        if e.start >= e.end {
            return 0..0;
        }
        e.start / 2..e.end.div_ceil(2)
    }

    /// The blocks (entries of `.absmax`) rows `rows` lie in.
    pub fn blocks(&self, rows: std::ops::Range<u64>) -> std::ops::Range<u64> {
        let e = self.elements(&rows);
        if e.start >= e.end {
            return 0..0;
        }
        e.start / self.blocksize..(e.end - 1) / self.blocksize + 1
    }

    /// The entries of `.nested_absmax` blocks `blocks` lie in.
    pub fn nested_blocks(&self, blocks: std::ops::Range<u64>) -> std::ops::Range<u64> {
        match self.nested {
            Some(n) if blocks.start < blocks.end => {
                blocks.start / n.blocksize..(blocks.end - 1) / n.blocksize + 1
            }
            _ => 0..0,
        }
    }
}

fn f32s(bytes: &[u8]) -> impl Iterator<Item = f32> + '_ {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// The stored bytes a read of some rows takes: `weight` the bytes of
/// [`BnbLayer::weight_bytes`], `absmax` the entries of [`BnbLayer::blocks`] (f32 or, nested,
/// u8), and when nested `nested_absmax` the f32 entries of [`BnbLayer::nested_blocks`] and the
/// whole `nested_quant_map`.
pub struct BnbParts<'a> {
    pub weight: &'a [u8],
    pub absmax: &'a [u8],
    pub nested_absmax: &'a [u8],
    pub nested_quant_map: &'a [u8],
}

/// Checks a stored `quant_map` is the quant type's code book (bnb's kernels use theirs).
pub fn check_quant_map(layer: &BnbLayer, bytes: &[u8]) -> Result<()> {
    let code = layer.quant_type.code();
    if bytes.len() != 64
        || f32s(bytes)
            .zip(code)
            .any(|(a, b)| a.to_bits() != b.to_bits())
    {
        let stored: Vec<f32> = f32s(bytes).collect();
        return Err(layout(
            &layer.name,
            format!(
                ".weight.quant_map {stored:?} is not bitsandbytes' {} code book",
                layer.quant_type.name()
            ),
        ));
    }
    Ok(())
}

/// Dequantizes whole rows, starting at `first_row`, into `out` (`n · row_len` values). A
/// scale that is not finite is an error naming its block.
pub fn dequantize_rows(
    layer: &BnbLayer,
    first_row: u64,
    parts: &BnbParts<'_>,
    out: &mut [f32],
) -> Result<()> {
    let row_len = layer.row_len();
    let n = (out.len() as u64).checked_div(row_len).unwrap_or(0);
    let rows = first_row..first_row.saturating_add(n);
    let bytes = layer.weight_bytes(rows.clone());
    let blocks = layer.blocks(rows.clone());
    let nested = layer.nested_blocks(blocks.clone());
    let scale_size = if layer.nested.is_some() { 1 } else { 4 };
    let bad = out.len() as u64 != n.saturating_mul(row_len)
        || rows.end > layer.n_rows()
        || parts.weight.len() as u64 != bytes.end - bytes.start
        || parts.absmax.len() as u64 != (blocks.end - blocks.start) * scale_size
        || (layer.nested.is_some()
            && (parts.nested_absmax.len() as u64 != (nested.end - nested.start) * 4
                || parts.nested_quant_map.len() != 256 * 4));
    if bad {
        return Err(Error::new(ErrorKind::InvalidRequest {
            message: format!(
                "bitsandbytes layer {}: {} weight, {} absmax bytes for {n} rows from row {first_row}",
                layer.name,
                parts.weight.len(),
                parts.absmax.len()
            ),
        }));
    }
    // The scales of the blocks these rows lie in, in f32.
    let scales: Vec<f32> = match layer.nested {
        None => f32s(parts.absmax).collect(),
        Some(nb) => {
            let map: Vec<f32> = f32s(parts.nested_quant_map).collect();
            let outer: Vec<f32> = f32s(parts.nested_absmax).collect();
            parts
                .absmax
                .iter()
                .enumerate()
                .map(|(i, &q)| {
                    let j = (blocks.start + i as u64) / nb.blocksize - nested.start;
                    map[q as usize] * outer[j as usize] + nb.offset
                })
                .collect()
        }
    };
    if let Some(i) = scales.iter().position(|s| !s.is_finite()) {
        return Err(layout(
            &layer.name,
            format!(
                "absmax {} of block {} is not finite",
                scales[i],
                blocks.start + i as u64
            ),
        ));
    }
    let code = layer.quant_type.code();
    let e0 = rows.start * row_len;
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    let vector = (crate::quant::simd128_chosen() && layer.dtype != BnbDtype::F16)
        .then(|| simd128::Book::new(code, layer.dtype == BnbDtype::BF16));
    #[cfg(target_arch = "x86_64")]
    let avx2 = crate::quant::avx2_chosen();
    let mut k = 0;
    while k < out.len() {
        let e = e0 + k as u64;
        let s = scales[(e / layer.blocksize - blocks.start) as usize];
        let at = (e / 2 - bytes.start) as usize;
        // Runs of 32 values from a multiple of 32 lie in one block (block sizes are multiples
        // of 32) and in 16 whole bytes.
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        if let (Some(book), 0, true) = (&vector, e % 32, out.len() - k >= 32) {
            book.thirty_two(&parts.weight[at..at + 16], s, &mut out[k..k + 32]);
            k += 32;
            continue;
        }
        #[cfg(target_arch = "x86_64")]
        if let (true, 0, true) = (avx2, e % 32, out.len() - k >= 32) {
            #[target_feature(enable = "avx2")]
            unsafe fn avx2(
                code: &[f32; 16],
                bytes: &[u8],
                s: f32,
                dtype: BnbDtype,
                out: &mut [f32],
            ) {
                thirty_two(code, bytes, s, dtype, out)
            }
            // SAFETY: `avx2_chosen` is true only on a CPU with AVX2, all `avx2` needs.
            unsafe {
                avx2(
                    code,
                    &parts.weight[at..at + 16],
                    s,
                    layer.dtype,
                    &mut out[k..k + 32],
                )
            };
            k += 32;
            continue;
        }
        let byte = parts.weight[at];
        let q = if e % 2 == 0 { byte >> 4 } else { byte & 0x0f };
        out[k] = layer.dtype.round(code[q as usize] * s);
        k += 1;
    }
    Ok(())
}

/// The scalar loop's values for 32 codes at once (16 bytes, a block's scale `s`): no index
/// arithmetic per value, one loop per dtype (compiled for AVX2 where that was chosen).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
fn thirty_two(code: &[f32; 16], bytes: &[u8], s: f32, dtype: BnbDtype, out: &mut [f32]) {
    let each = |round: fn(f32) -> f32, out: &mut [f32]| {
        for (pair, &x) in out.chunks_exact_mut(2).zip(bytes) {
            pair[0] = round(code[usize::from(x >> 4)] * s);
            pair[1] = round(code[usize::from(x & 15)] * s);
        }
    };
    match dtype {
        BnbDtype::F32 => each(|x| x, out),
        BnbDtype::F16 => each(|x| BnbDtype::F16.round(x), out),
        // Round to nearest even on the bits, as `half::bf16::from_f32` for a finite value (a
        // code times a finite scale; past bf16's range it rounds to infinity either way).
        BnbDtype::BF16 => each(
            |x| {
                let b = x.to_bits();
                f32::from_bits(b.wrapping_add(0x7fff + ((b >> 16) & 1)) & 0xffff_0000)
            },
            out,
        ),
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128;

#[cfg(test)]
mod run_tests {
    use super::*;

    /// Writes 32 values from 16 bytes of codes with a code book, dtype and scale.
    pub(super) type Run<'a> = &'a dyn Fn(&[f32; 16], BnbDtype, &[u8], f32, &mut [f32]);

    /// `run` gives the per-value loop's bits for 32 values at once: both code books, each of
    /// `dtypes`, random codes and scales of either sign, subnormal, huge (rounding to infinity
    /// in bf16 and f16) and zero.
    pub(super) fn runs_equal_the_per_value_loop(run: Run<'_>, dtypes: &[BnbDtype]) {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for code in [&NF4, &FP4] {
            for &dtype in dtypes {
                for i in 0..300 {
                    let bytes: Vec<u8> = (0..16).map(|_| next() as u8).collect();
                    let s = match i % 5 {
                        0 => f32::from_bits(next() as u32 & 0x807f_ffff),
                        1 => f32::MAX * if i % 2 == 0 { 1.0 } else { -1.0 },
                        2 => 0.0,
                        _ => f32::from_bits((next() as u32 & 0x3fff_ffff) | 0x2000_0000),
                    };
                    let want: Vec<u32> = (0..32)
                        .map(|k| {
                            let b = bytes[k / 2];
                            let q = if k % 2 == 0 { b >> 4 } else { b & 15 };
                            dtype.round(code[q as usize] * s).to_bits()
                        })
                        .collect();
                    let mut got = [0f32; 32];
                    run(code, dtype, &bytes, s, &mut got);
                    assert_eq!(got.map(f32::to_bits).to_vec(), want, "{dtype:?} scale {s}");
                }
            }
        }
    }

    #[test]
    fn runs_of_32_are_the_per_value_loop() {
        let dtypes = [BnbDtype::F32, BnbDtype::F16, BnbDtype::BF16];
        runs_equal_the_per_value_loop(
            &|code, dtype, bytes, s, out| thirty_two(code, bytes, s, dtype, out),
            &dtypes,
        );
    }
}

/// Every bitsandbytes 4-bit layer among `names`: each `<path>.weight.quant_state.bitsandbytes__*`
/// tensor, its JSON from `state` (None when its bytes are not at hand: the layer is skipped),
/// its parts checked with `lookup`. One result per candidate.
pub fn discover<'n, 'a, 's>(
    names: impl IntoIterator<Item = &'n str>,
    lookup: impl Fn(&str) -> Option<(Dtype, &'a [u64])> + Copy,
    state: impl Fn(&str) -> Option<&'s [u8]>,
) -> Vec<Result<BnbLayer>> {
    names
        .into_iter()
        .filter_map(|name| {
            let (path, kind) = state_of(name)?;
            let bytes = state(name)?;
            Some(BnbLayer::new(path, kind, bytes, lookup))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_map_to_bytes_and_blocks() {
        let l = BnbLayer {
            name: "x".into(),
            quant_type: BnbQuantType::Nf4,
            blocksize: 64,
            dtype: BnbDtype::BF16,
            shape: vec![3, 33],
            nested: Some(BnbNested {
                blocksize: 1,
                offset: 0.0,
                n_absmax: 2,
            }),
        };
        assert_eq!(l.weight_bytes(1..2), 16..33);
        assert_eq!(l.blocks(1..3), 0..2);
        assert_eq!(l.blocks(2..3), 1..2);
        assert_eq!(l.nested_blocks(1..2), 1..2);
        assert_eq!(l.type_name(), "NF4-b64-dq");
        assert_eq!(
            state_of("a.weight.quant_state.bitsandbytes__fp4"),
            Some(("a", Some(BnbQuantType::Fp4)))
        );
    }
}
