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
