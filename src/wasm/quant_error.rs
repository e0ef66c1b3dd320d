//! Quantization error in wasm: the core's `QuantError` per type, fed a tensor's rows (quantized
//! bytes dequantized here, or f32 values), for `model.quantError` in the npm package.

use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::{js_error, GgufHeader};
use crate::quantize::{QuantError, QuantizeError, SUPPORTED};
use crate::types::GgmlType;

/// The error of quantizing one tensor to several types: feed every row once (`addRows` /
/// `add`), then `result()`.
#[wasm_bindgen]
pub struct QuantErrorJob {
    types: Vec<GgmlType>,
    accs: Vec<Option<QuantError>>,
    /// Why a type is skipped (its block does not divide the row, or a scale overflowed).
    skipped: Vec<Option<String>>,
    row_len: u64,
    values: Vec<f32>,
}

/// One type's entry in a worker's state.
enum Part {
    Sums(Box<QuantError>),
    Skipped(String),
    /// The type's block does not divide the row (skipped from the start, on both sides).
    Absent,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultJs {
    #[serde(rename = "type")]
    ty: String,
    bits_per_weight: f64,
    n_values: f64,
    rmse: f64,
    max_abs_error: f64,
    relative_rmse: f64,
    cosine: f64,
}

#[derive(Serialize)]
struct SkippedJs {
    #[serde(rename = "type")]
    ty: String,
    reason: String,
}

#[derive(Serialize)]
struct ReportJs {
    results: Vec<ResultJs>,
    skipped: Vec<SkippedJs>,
}

#[wasm_bindgen]
impl QuantErrorJob {
    /// Types by ggml name (empty: every type gguf-lens quantizes to), for rows of `row_len`
    /// values.
    #[wasm_bindgen(constructor)]
    pub fn new(types: Vec<String>, row_len: f64) -> Result<QuantErrorJob, JsError> {
        let types: Vec<GgmlType> = if types.is_empty() {
            SUPPORTED.to_vec()
        } else {
            types
                .iter()
                .map(|name| {
                    GgmlType::from_name(name)
                        .filter(|t| SUPPORTED.contains(t) || *t == GgmlType::F32)
                        .ok_or_else(|| JsError::new(&format!("cannot quantize to {name:?}")))
                })
                .collect::<Result<_, _>>()?
        };
        let row_len = row_len as u64;
        let mut accs = Vec::new();
        let mut skipped = Vec::new();
        for &ty in &types {
            let block = u64::from(ty.block_size());
            if row_len % block == 0 {
                accs.push(Some(QuantError::for_rows(ty, row_len)));
                skipped.push(None);
            } else {
                accs.push(None);
                skipped.push(Some(format!(
                    "row length {row_len} is not a multiple of its block of {block}"
                )));
            }
        }
        Ok(QuantErrorJob {
            types,
            accs,
            skipped,
            row_len,
            values: Vec::new(),
        })
    }

    /// Dequantizes `bytes`, whole rows of tensor `name` of `header`, and adds them.
    #[wasm_bindgen(js_name = addRows)]
    pub fn add_rows(
        &mut self,
        header: &GgufHeader,
        name: &str,
        bytes: &[u8],
    ) -> Result<(), JsError> {
        let tensor = header.file.tensor(name).map_err(js_error)?;
        let rows = super::whole_rows(name, tensor.row_bytes(), bytes.len())?;
        let mut values = std::mem::take(&mut self.values);
        header.dequantize_slice(tensor, bytes, 0..rows, &mut values)?;
        self.add(&values);
        self.values = values;
        Ok(())
    }

    /// Adds f32 values: whole rows.
    pub fn add(&mut self, values: &[f32]) {
        for ((acc, skipped), ty) in self.accs.iter_mut().zip(&mut self.skipped).zip(&self.types) {
            let Some(a) = acc else { continue };
            if skipped.is_some() {
                continue;
            }
            if let Err(e) = a.add(values) {
                *skipped = Some(match e {
                    QuantizeError::ScaleOverflow { scale, .. } => {
                        format!("a block scale of {scale:e} overflows f16 ({ty})")
                    }
                    other => other.to_string(),
                });
            }
        }
    }

    /// This job's sums and skipped types as bytes, for the page that split the rows across
    /// workers (`absorbState` there).
    #[wasm_bindgen(js_name = toState)]
    pub fn to_state(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (acc, skipped) in self.accs.iter().zip(&self.skipped) {
            match (acc, skipped) {
                (_, Some(reason)) => {
                    out.push(1);
                    out.extend_from_slice(&(reason.len() as u32).to_le_bytes());
                    out.extend_from_slice(reason.as_bytes());
                }
                (Some(acc), None) => {
                    out.push(0);
                    out.extend_from_slice(&acc.state());
                }
                (None, None) => out.push(2),
            }
        }
        out
    }

    /// Adds another part's `toState` (a job of the same types and row length). Parts of whole
    /// rows give the same bits in any split; a type skipped in a part is skipped here with the
    /// first reason absorbed (absorb parts in row order for the one a single pass gives).
    #[wasm_bindgen(js_name = absorbState)]
    pub fn absorb_state(&mut self, state: &[u8]) -> Result<(), JsError> {
        let bad = || JsError::new("quantization error: a worker's part is not this job's");
        let mut at = 0;
        let mut take = |n: usize| -> Result<&[u8], JsError> {
            let end = at + n;
            let bytes = state.get(at..end).ok_or_else(bad)?;
            at = end;
            Ok(bytes)
        };
        let mut parts = Vec::with_capacity(self.types.len());
        for &ty in &self.types {
            match take(1)?[0] {
                0 => {
                    let acc = QuantError::from_state(ty, take(QuantError::STATE_LEN)?);
                    parts.push(Part::Sums(Box::new(acc.ok_or_else(bad)?)));
                }
                1 => {
                    let len = u32::from_le_bytes(take(4)?.try_into().map_err(|_| bad())?);
                    let reason = std::str::from_utf8(take(len as usize)?).map_err(|_| bad())?;
                    parts.push(Part::Skipped(reason.to_string()));
                }
                2 => parts.push(Part::Absent),
                _ => return Err(bad()),
            }
        }
        if at != state.len() {
            return Err(bad());
        }
        // Checked whole before any of it is added.
        for ((part, acc), skipped) in parts.into_iter().zip(&mut self.accs).zip(&mut self.skipped) {
            match (part, acc) {
                (Part::Sums(part), Some(acc)) => acc.merge(&part),
                (Part::Skipped(reason), _) => {
                    skipped.get_or_insert(reason);
                }
                (Part::Absent, None) => {}
                _ => return Err(bad()),
            }
        }
        Ok(())
    }

    /// Values per row.
    #[wasm_bindgen(getter, js_name = rowLength)]
    pub fn row_length(&self) -> f64 {
        self.row_len as f64
    }

    /// `{ results: [{ type, bitsPerWeight, nValues, rmse, maxAbsError, relativeRmse, cosine }],
    /// skipped: [{ type, reason }] }`, in the order the types were given.
    pub fn result(&self) -> JsValue {
        let mut report = ReportJs {
            results: Vec::new(),
            skipped: Vec::new(),
        };
        for ((acc, skipped), ty) in self.accs.iter().zip(&self.skipped).zip(&self.types) {
            match (acc, skipped) {
                (_, Some(reason)) => report.skipped.push(SkippedJs {
                    ty: ty.name().to_string(),
                    reason: reason.clone(),
                }),
                (Some(acc), None) => {
                    let r = acc.report();
                    report.results.push(ResultJs {
                        ty: ty.name().to_string(),
                        bits_per_weight: r.bits_per_weight,
                        n_values: r.n_values as f64,
                        rmse: r.rmse,
                        max_abs_error: r.max_abs_err,
                        relative_rmse: r.relative_rmse,
                        cosine: r.cosine,
                    })
                }
                (None, None) => {}
            }
        }
        super::to_js(&report)
    }
}
