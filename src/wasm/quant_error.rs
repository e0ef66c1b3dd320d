//! Quantization error in wasm: the core's `QuantErrorMeter` per type, fed a tensor's rows (quantized
//! bytes dequantized here, or f32 values), for `model.quantError` in the npm package.

use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::{js_error, ModelHeader};
use crate::error::ErrorKind;
use crate::quantize::{block_mismatch_message, QuantErrorSet, SUPPORTED};
use crate::types::GgmlType;

/// Rows dequantized at a time: about the values the set measures per slice, so the input's
/// values are still in cache when every type reads them.
const BATCH_VALUES: u64 = 16384;

/// The error of quantizing one tensor to several types: feed every row once (`addRows` /
/// `add`), then `result()`.
#[wasm_bindgen]
pub struct QuantErrorJob {
    set: QuantErrorSet,
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
        let set = QuantErrorSet::new(&types, row_len);
        let skipped = types
            .iter()
            .enumerate()
            .map(|(i, &ty)| (!set.is_present(i)).then(|| block_mismatch_message(ty, row_len)))
            .collect();
        Ok(QuantErrorJob {
            set,
            skipped,
            row_len,
            values: Vec::new(),
        })
    }

    /// Dequantizes `bytes`, whole rows of tensor `name` of `header`, and adds them.
    #[wasm_bindgen(js_name = addRows)]
    pub fn add_rows(
        &mut self,
        header: &ModelHeader,
        name: &str,
        bytes: &[u8],
    ) -> Result<(), JsError> {
        let tensor = header.gguf()?.tensor(name).map_err(js_error)?;
        let rows = super::whole_rows(name, tensor.row_bytes(), bytes.len())?;
        let batch = (BATCH_VALUES / self.row_len.max(1)).max(1);
        let mut values = std::mem::take(&mut self.values);
        let mut first = 0;
        while first < rows {
            let last = rows.min(first + batch);
            header.dequantize_slice(tensor, bytes, first..last, &mut values)?;
            self.add(&values);
            first = last;
        }
        self.values = values;
        Ok(())
    }

    /// Adds f32 values: whole rows.
    pub fn add(&mut self, values: &[f32]) {
        if let Err(e) = self.set.add(values) {
            // Not whole rows: every type is wrong from here.
            for (i, skipped) in self.skipped.iter_mut().enumerate() {
                if skipped.is_none() {
                    *skipped = Some(e.to_string());
                    self.set.drop_type(i);
                }
            }
            return;
        }
        for (i, (skipped, ty)) in self.skipped.iter_mut().zip(self.set.types()).enumerate() {
            if skipped.is_some() {
                continue;
            }
            if let Some(e) = self.set.failure(i) {
                *skipped = Some(match e.kind {
                    ErrorKind::ScaleOverflow { scale_bits, .. } => format!(
                        "a block scale of {:e} overflows f16 ({ty})",
                        f32::from_bits(scale_bits)
                    ),
                    _ => e.to_string(),
                });
            }
        }
    }

    /// This job's sums and skipped types as bytes, for the page that split the rows across
    /// workers (`absorbState` there).
    #[wasm_bindgen(js_name = toState)]
    pub fn to_state(&self) -> Vec<u8> {
        let mut out = self.set.state();
        for skipped in &self.skipped {
            match skipped {
                Some(reason) => {
                    out.push(1);
                    out.extend_from_slice(&(reason.len() as u32).to_le_bytes());
                    out.extend_from_slice(reason.as_bytes());
                }
                None => out.push(0),
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
        let (part, rest) =
            QuantErrorSet::from_state(self.set.types(), self.row_len, state).ok_or_else(bad)?;
        let mut at = 0;
        let mut take = |n: usize| -> Result<&[u8], JsError> {
            let end = at + n;
            let bytes = rest.get(at..end).ok_or_else(bad)?;
            at = end;
            Ok(bytes)
        };
        let mut reasons = Vec::with_capacity(self.skipped.len());
        for _ in 0..self.skipped.len() {
            reasons.push(match take(1)?[0] {
                0 => None,
                1 => {
                    let len = u32::from_le_bytes(take(4)?.try_into().map_err(|_| bad())?);
                    let reason = std::str::from_utf8(take(len as usize)?).map_err(|_| bad())?;
                    Some(reason.to_string())
                }
                _ => return Err(bad()),
            });
        }
        if at != rest.len() {
            return Err(bad());
        }
        // Checked whole before any of it is added.
        self.set.merge(&part);
        for (i, (mine, theirs)) in self.skipped.iter_mut().zip(reasons).enumerate() {
            if let (None, Some(reason)) = (&*mine, theirs) {
                *mine = Some(reason);
                self.set.drop_type(i);
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
        for (i, (skipped, ty)) in self.skipped.iter().zip(self.set.types()).enumerate() {
            if let Some(reason) = skipped {
                report.skipped.push(SkippedJs {
                    ty: ty.name().to_string(),
                    reason: reason.clone(),
                });
            } else if let Some(r) = self.set.report(i) {
                report.results.push(ResultJs {
                    ty: ty.name().to_string(),
                    bits_per_weight: r.bits_per_weight,
                    n_values: r.n_values as f64,
                    rmse: r.rmse,
                    max_abs_error: r.max_abs_err,
                    relative_rmse: r.relative_rmse,
                    cosine: r.cosine,
                });
            }
        }
        super::to_js(&report)
    }
}
