//! `gguf-lens quant-error`: how much each quantization type loses on one tensor.

use gguf_lens::model::{open, Opened};
use gguf_lens::quant::Kernel;
use gguf_lens::quantize::{tensor_quant_error, Outcome, TensorQuantError, SUPPORTED};
use gguf_lens::types::GgmlType;
use serde_json::json;

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
    let measured = tensor_quant_error(
        &model,
        &files,
        &args.tensor,
        args.rows.clone(),
        &types,
        threads,
        kernel,
    )
    .map_err(named(path))?;
    let TensorQuantError {
        type_name: source_type,
        shape,
        row_len,
        rows: range,
        outcomes: results,
    } = measured;
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
