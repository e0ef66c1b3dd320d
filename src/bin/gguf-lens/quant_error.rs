//! `gguf-lens quant-error`: how much each quantization type loses on one tensor.

use gguf_lens::quant::Kernel;
use gguf_lens::quantize::{QuantErrorReport, QuantErrorSet, SUPPORTED};
use gguf_lens::types::GgmlType;
use gguf_lens::ErrorKind;
use serde_json::json;

use gguf_lens::gptq::V1Zeros;
use gguf_lens::model::{open, Opened};

use crate::{json_line, named, write_stdout, Failure};

/// Quantize one tensor's values (dequantized first if it is quantized) to each TYPE, bit-exact
/// to ggml without an importance matrix, and report per type: bits per weight, RMSE, max |err|,
/// relative RMSE (RMSE / RMS of the values) and the cosine similarity of the values and their
/// round trip. Types whose block does not divide the row length are listed as skipped.
///
/// Example: gguf-lens quant-error model.gguf blk.0.attn_q.weight --types Q4_K,Q5_K,Q6_K
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A .gguf (or one shard of a split model), a .safetensors or a model.safetensors.index.json.
    file: String,
    /// Tensor name (for safetensors also a GPTQ layer).
    tensor: String,
    /// Only rows A..B (A inclusive, B exclusive): a sample of a huge tensor.
    #[arg(long, value_name = "A:B", value_parser = crate::parse_rows)]
    rows: Option<std::ops::Range<u64>>,
    /// Comma-separated types (default: every type gguf-lens can quantize to).
    #[arg(long, value_delimiter = ',', value_name = "T1,T2,...")]
    types: Vec<String>,
    /// One JSON document on stdout.
    #[arg(long)]
    json: bool,
    /// Threads (default: every core; the result is the same).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
}

/// Values per step: bounds memory (16 MiB of f32, plus each type's round trip).
const CHUNK_ELEMENTS: u64 = 4 << 20;

enum Outcome {
    Done(QuantErrorReport),
    Skipped(GgmlType, String),
}

fn types(args: &Args) -> Result<Vec<GgmlType>, Failure> {
    if args.types.is_empty() {
        return Ok(SUPPORTED.to_vec());
    }
    args.types
        .iter()
        .map(|name| {
            let ty = GgmlType::from_name(name.trim())
                .ok_or_else(|| Failure::Usage(format!("--types: unknown type {name:?}")))?;
            if SUPPORTED.contains(&ty) || ty == GgmlType::F32 {
                Ok(ty)
            } else {
                Err(Failure::Usage(format!(
                    "--types: cannot quantize to {ty} (the IQ1/IQ2/IQ3 types need an importance \
                     matrix)"
                )))
            }
        })
        .collect()
}

pub fn run(args: &Args) -> Result<(), Failure> {
    let path = args.file.as_str();
    let types = types(args)?;
    let kernel = Kernel::auto().map_err(|e| Failure::Error(e.to_string()))?;
    let threads = crate::threads(args.threads);
    let Opened { model, files } = open(path)?;
    let mut rows = model
        .rows(&args.tensor, &files, kernel, V1Zeros::default())
        .map_err(named(path))?;
    let (source_type, shape, row_len, n_rows) = (
        rows.type_name(),
        rows.shape(),
        rows.row_len(),
        rows.n_rows(),
    );
    let mut skipped: Vec<(GgmlType, String)> = Vec::new();
    let mut present: Vec<usize> = Vec::new();
    for (i, &ty) in types.iter().enumerate() {
        if row_len % u64::from(ty.block_size()) == 0 {
            present.push(i);
        } else {
            skipped.push((
                ty,
                format!(
                    "row length {row_len} is not a multiple of its block of {}",
                    ty.block_size()
                ),
            ));
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
    let range = args.rows.clone().unwrap_or(0..n_rows);
    rows.check_rows(range.clone()).map_err(named(path))?;
    let step = rows.rows_per_chunk(CHUNK_ELEMENTS);
    let mut failed: Vec<Option<String>> = vec![None; types.len()];
    for chunk in gguf_lens::gguf::row_chunks(range.clone(), step) {
        let first_row = chunk.start;
        let values = rows.read(chunk).map_err(named(path))?;
        let run = |set: &mut QuantErrorSet| set.add(values);
        // One set runs here (WASI has no threads).
        let added: Vec<Result<(), gguf_lens::Error>> = if sets.len() == 1 {
            sets.iter_mut().map(run).collect()
        } else {
            std::thread::scope(|s| {
                let handles: Vec<_> = sets
                    .iter_mut()
                    .map(|set| s.spawn(move || run(set)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or(Ok(())))
                    .collect()
            })
        };
        for r in added {
            r.map_err(|e| Failure::Error(format!("{path}: {e}")))?;
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
    let mut results = Vec::new();
    for &i in &present {
        match (&failed[i], reports[i]) {
            (Some(why), _) => results.push(Outcome::Skipped(types[i], why.clone())),
            (None, Some(r)) => results.push(Outcome::Done(r)),
            (None, None) => {}
        }
    }
    for (ty, why) in skipped {
        results.push(Outcome::Skipped(ty, why));
    }
    let text = if args.json {
        json_line(&json!({
            "file": path,
            "tensor": args.tensor,
            "type": source_type,
            "shape": shape,
            "rows": [range.start, range.end],
            "results": results.iter().filter_map(|o| match o {
                Outcome::Done(r) => Some(json!({
                    "type": r.ty.name(),
                    "bits_per_weight": r.bits_per_weight,
                    "rmse": r.rmse,
                    "max_abs_error": r.max_abs_err,
                    "relative_rmse": r.relative_rmse,
                    "cosine": r.cosine,
                })),
                Outcome::Skipped(..) => None,
            }).collect::<Vec<_>>(),
            "skipped": results.iter().filter_map(|o| match o {
                Outcome::Skipped(ty, why) => Some(json!({"type": ty.name(), "reason": why})),
                Outcome::Done(_) => None,
            }).collect::<Vec<_>>(),
        }))
    } else {
        let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
        let mut text = format!(
            "{} {} [{}] (rows {}..{}: {} values)\n{:<8} {:>7} {:>12} {:>12} {:>10} {:>12}\n",
            args.tensor,
            source_type,
            dims.join(", "),
            range.start,
            range.end,
            row_len.saturating_mul(range.end.saturating_sub(range.start)),
            "type",
            "bits/w",
            "rmse",
            "max|err|",
            "rel.rmse",
            "cosine"
        );
        for o in &results {
            match o {
                Outcome::Done(r) => text.push_str(&format!(
                    "{:<8} {:>7.4} {:>12.6e} {:>12.6e} {:>10.6} {:>12.9}\n",
                    r.ty.name(),
                    r.bits_per_weight,
                    r.rmse,
                    r.max_abs_err,
                    r.relative_rmse,
                    r.cosine
                )),
                Outcome::Skipped(ty, why) => {
                    text.push_str(&format!("{:<8} skipped: {why}\n", ty.name()))
                }
            }
        }
        text
    };
    write_stdout(text.as_bytes())
}
