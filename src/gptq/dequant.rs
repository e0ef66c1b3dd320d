//! Unpacking and dequantizing a GPTQ layer's rows (output features) to f32.

use std::ops::Range;

use crate::error::{Error, ErrorKind, Result};
use crate::safetensors::to_f32;

use super::config::{CheckpointFormat, V1Zeros};
use super::layer::{GptqLayer, LayerParts};

fn layout(layer: &GptqLayer, message: impl Into<String>) -> Error {
    Error::new(ErrorKind::GptqLayout {
        layer: layer.name.clone(),
        message: message.into(),
    })
}

/// Little-endian 32-bit word `index` of `bytes` (0 past the end; lengths are checked first).
fn word(bytes: &[u8], index: usize) -> u32 {
    let at = index.saturating_mul(4);
    bytes
        .get(at..at.saturating_add(4))
        .and_then(|b| b.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

/// The `bits`-wide field at bit `bit` of a stream of words, word `w` of which is at
/// `first + w * stride` in `bytes`. A field may straddle two words (3-bit packing).
fn field(bytes: &[u8], first: usize, stride: usize, bit: usize, bits: u32) -> u32 {
    let (w, shift) = (bit / 32, (bit % 32) as u32);
    let mut value = word(bytes, first + w * stride) >> shift;
    if shift + bits > 32 {
        value |= word(bytes, first + (w + 1) * stride) << (32 - shift);
    }
    value & ((1u32 << bits) - 1)
}

fn check_len(layer: &GptqLayer, what: &str, bytes: &[u8], elements: u64, size: u64) -> Result<()> {
    let expected = elements.saturating_mul(size);
    if bytes.len() as u64 != expected {
        return Err(Error::new(ErrorKind::BadLength {
            what: format!("{} data", layer.part(what)),
            len: bytes.len() as u64,
            expected,
        }));
    }
    Ok(())
}

fn to_usize(value: u64) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

/// Dequantizes output features `rows` of `layer` into `out` (`rows.len() * in_features` f32,
/// row-major: `out[(o - rows.start) * in + i] = w[o][i]`). `parts` holds the whole tensors;
/// `v1` says how v1 zeros are read (ignored for v2).
pub fn dequantize_rows(
    layer: &GptqLayer,
    parts: &LayerParts<'_>,
    format: CheckpointFormat,
    v1: V1Zeros,
    rows: Range<u64>,
    out: &mut [f32],
) -> Result<()> {
    let (n_in, n_out, n_groups) = (layer.in_features, layer.out_features, layer.n_groups);
    let bits = layer.bits;
    if rows.start > rows.end || rows.end > n_out {
        return Err(Error::new(ErrorKind::BadRowRange {
            name: layer.name.clone(),
            start: rows.start,
            end: rows.end,
            rows: n_out,
        }));
    }
    let word_rows = n_in.saturating_mul(u64::from(bits)).div_ceil(32);
    let zero_cols = n_out.saturating_mul(u64::from(bits)).div_ceil(32);
    check_len(
        layer,
        "qweight",
        parts.qweight,
        word_rows.saturating_mul(n_out),
        4,
    )?;
    check_len(
        layer,
        "qzeros",
        parts.qzeros,
        n_groups.saturating_mul(zero_cols),
        4,
    )?;
    let scale_size = u64::from(layer.scales_dtype.bits() / 8);
    check_len(
        layer,
        "scales",
        parts.scales,
        n_groups.saturating_mul(n_out),
        scale_size,
    )?;
    let expected = (rows.end - rows.start).saturating_mul(n_in);
    if out.len() as u64 != expected {
        return Err(Error::new(ErrorKind::BadLength {
            what: "output buffer".to_string(),
            len: out.len() as u64,
            expected,
        }));
    }
    if rows.is_empty() {
        // Nothing to write; also keeps a layer with no outputs (whose qweight has no bytes to
        // bound its input count) from costing anything.
        return Ok(());
    }
    let groups = groups_of_inputs(layer, parts.g_idx)?;
    let mut scales = vec![0f32; to_usize(n_groups * n_out)];
    to_f32(
        layer.scales_dtype,
        &layer.part("scales"),
        parts.scales,
        &mut scales,
    )?;

    let (n_in, n_out, n_groups) = (to_usize(n_in), to_usize(n_out), to_usize(n_groups));
    let zero_cols = to_usize(zero_cols);
    let b = bits as usize;
    let mut zeros = vec![0i32; n_groups];
    let mut group_scales = vec![0f32; n_groups];
    for (o, row) in
        (to_usize(rows.start)..to_usize(rows.end)).zip(out.chunks_exact_mut(n_in.max(1)))
    {
        for g in 0..n_groups {
            let stored = field(parts.qzeros, g * zero_cols, 1, o * b, bits);
            zeros[g] = match (format, v1) {
                (CheckpointFormat::V2, _) => stored as i32,
                (CheckpointFormat::V1, V1Zeros::Unmasked) => stored as i32 + 1,
                (CheckpointFormat::V1, V1Zeros::Wrapping) => {
                    ((stored + 1) & ((1 << bits) - 1)) as i32
                }
            };
            group_scales[g] = scales[g * n_out + o];
        }
        for (i, value) in row.iter_mut().enumerate() {
            let q = field(parts.qweight, o, n_out, i * b, bits) as i32;
            let g = groups[i] as usize;
            *value = group_scales[g] * (q - zeros[g]) as f32;
        }
    }
    Ok(())
}

/// The group of every input: `g_idx` when given (checked against the group count), else
/// `i / group_size`.
fn groups_of_inputs(layer: &GptqLayer, g_idx: Option<&[u8]>) -> Result<Vec<u32>> {
    let n_in = layer.in_features;
    match (layer.has_g_idx, g_idx) {
        (true, Some(bytes)) => {
            check_len(layer, "g_idx", bytes, n_in, 4)?;
            bytes
                .chunks_exact(4)
                .enumerate()
                .map(|(i, b)| {
                    let g = i32::from_le_bytes(b.try_into().unwrap_or([0; 4]));
                    u32::try_from(g)
                        .ok()
                        .filter(|&g| u64::from(g) < layer.n_groups)
                        .ok_or_else(|| {
                            layout(
                                layer,
                                format!("g_idx[{i}] = {g} is not a group (0..{})", layer.n_groups),
                            )
                        })
                })
                .collect()
        }
        (true, None) => Err(layout(layer, "g_idx data is missing")),
        (false, _) => Ok((0..n_in)
            .map(|i| (i / layer.group_size.max(1)) as u32)
            .collect()),
    }
}
