//! The quantization error of one tensor of a [`Model`], whatever its storage, for several types
//! at once: one [`QuantErrorSet`] per thread, each fed every chunk of the values.

use std::ops::Range;

use super::set::{block_mismatch, QuantErrorSet};
use super::QuantErrorReport;
use crate::error::{ErrorKind, Result};
use crate::gguf::row_chunks;
use crate::gptq::V1Zeros;
use crate::model::{Model, Shards};
use crate::quant::Kernel;
use crate::types::GgmlType;

/// Values per step: bounds memory (16 MiB of f32, plus each type's round trip).
const CHUNK_ELEMENTS: u64 = 4 << 20;

/// One type's result.
#[derive(Debug, Clone)]
pub enum Outcome {
    Done(QuantErrorReport),
    /// Not measured, and why (a block that does not divide the row, a value or a scale the type
    /// cannot hold, naming the row).
    Skipped(GgmlType, String),
}

/// What [`tensor_quant_error`] measured, with what it read.
#[derive(Debug, Clone)]
pub struct TensorQuantError {
    /// The tensor's type name (ggml's, a safetensors dtype's or `GPTQ-<bits>bit`).
    pub type_name: String,
    /// Logical (row-major) shape.
    pub shape: Vec<u64>,
    pub row_len: u64,
    /// The rows read.
    pub rows: Range<u64>,
    /// The measured types in the order asked, then the skipped ones (those whose block does
    /// not divide the row last).
    pub outcomes: Vec<Outcome>,
}

/// Quantizes rows `rows` (all when None) of tensor `name` (a GPTQ layer too) to each of `types`
/// and back, bit-exact to ggml without an importance matrix, on up to `threads` threads (the
/// result does not depend on it).
pub fn tensor_quant_error(
    model: &Model,
    shards: &dyn Shards,
    name: &str,
    rows: Option<Range<u64>>,
    types: &[GgmlType],
    threads: usize,
    kernel: Kernel,
) -> Result<TensorQuantError> {
    let mut reader = model.rows(name, shards, kernel, V1Zeros::default())?;
    let (type_name, shape, row_len) = (reader.type_name(), reader.shape(), reader.row_len());
    let mut skipped: Vec<(GgmlType, String)> = Vec::new();
    let mut present: Vec<usize> = Vec::new();
    for (i, &ty) in types.iter().enumerate() {
        match block_mismatch(ty, row_len) {
            None => present.push(i),
            Some(why) => skipped.push((ty, why)),
        }
    }
    // One set of types per thread, each fed every chunk; IQ4_XS joins IQ4_NL's set (they
    // share a scale search there).
    let n_threads = threads.clamp(1, present.len().max(1));
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); n_threads];
    let nl = present
        .iter()
        .find(|&&i| types[i] == GgmlType::IQ4_NL)
        .copied();
    let mut k = 0;
    for &i in &present {
        if types[i] == GgmlType::IQ4_XS && nl.is_some() {
            continue;
        }
        members[k % n_threads].push(i);
        if Some(i) == nl {
            if let Some(&xs) = present.iter().find(|&&j| types[j] == GgmlType::IQ4_XS) {
                members[k % n_threads].push(xs);
            }
        }
        k += 1;
    }
    members.retain(|m| !m.is_empty());
    let mut sets: Vec<QuantErrorSet> = members
        .iter()
        .map(|m| {
            let tys: Vec<GgmlType> = m.iter().map(|&i| types[i]).collect();
            QuantErrorSet::new(&tys, row_len)
        })
        .collect();
    let rows = rows.unwrap_or(0..reader.n_rows());
    reader.check_rows(rows.clone())?;
    let step = reader.rows_per_chunk(CHUNK_ELEMENTS);
    let mut failed: Vec<Option<String>> = vec![None; types.len()];
    for chunk in row_chunks(rows.clone(), step) {
        let first_row = chunk.start;
        let values = reader.read(chunk)?;
        let run = |set: &mut QuantErrorSet| set.add(values);
        let added: Vec<Result<()>> = if sets.len() == 1 {
            sets.iter_mut().map(run).collect()
        } else {
            crate::threads::run_each(sets.iter_mut().collect(), run, || ()).0
        };
        for r in added {
            r?;
        }
        for (set, m) in sets.iter().zip(&members) {
            for (j, &i) in m.iter().enumerate() {
                let Some(e) = set.failure(j) else { continue };
                if failed[i].is_some() {
                    continue;
                }
                let per_row = (row_len / u64::from(types[i].block_size())).max(1);
                failed[i] = Some(match e.kind {
                    ErrorKind::ScaleOverflow {
                        block, scale_bits, ..
                    } => format!(
                        "row {}: a block scale of {:e} overflows f16",
                        first_row + block as u64 / per_row,
                        f32::from_bits(scale_bits)
                    ),
                    ErrorKind::NotFinite {
                        index, value_bits, ..
                    } => format!(
                        "row {}: holds {}",
                        first_row + index as u64 / row_len.max(1),
                        f32::from_bits(value_bits)
                    ),
                    _ => e.to_string(),
                });
            }
        }
    }
    let mut reports: Vec<Option<QuantErrorReport>> = vec![None; types.len()];
    for (set, m) in sets.iter().zip(&members) {
        for (j, &i) in m.iter().enumerate() {
            reports[i] = set.report(j);
        }
    }
    let mut outcomes = Vec::new();
    for &i in &present {
        match (&failed[i], reports[i]) {
            (Some(why), _) => outcomes.push(Outcome::Skipped(types[i], why.clone())),
            (None, Some(r)) => outcomes.push(Outcome::Done(r)),
            (None, None) => {}
        }
    }
    for (ty, why) in skipped {
        outcomes.push(Outcome::Skipped(ty, why));
    }
    Ok(TensorQuantError {
        type_name,
        shape,
        row_len,
        rows,
        outcomes,
    })
}
