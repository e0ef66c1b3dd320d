//! `diff` when one file or both are safetensors checkpoints (GGUF vs GGUF is `diff.rs`'s).
//!
//! What is compared:
//! - summary: format, tensor count and parameters (elements of the listed tensors) of both,
//!   shown but not counted as differences (the tensors below are);
//! - metadata: only when both are safetensors: the `__metadata__` strings (shards in order, a
//!   key's first value), by key, strings by bytes. GGUF key-values and safetensors
//!   `__metadata__` have nothing in common, so the core's `HeaderDiff::between` does not
//!   compare metadata across formats and a GGUF vs safetensors diff has no metadata part;
//! - tensors: by exact name, with logical row-major shapes (GGUF dims reversed, see
//!   `model.rs`), a GPTQ layer as `<layer>.weight` `[out, in]`; a type change compares type
//!   names (ggml's F32/F16/BF16/F64/I8..I64 are spelled as the safetensors dtypes);
//! - `--values`: the tensors with the same name and logical shape, row chunk by row chunk, both
//!   dequantized to f32, with the core's `ValueDiff` (the metrics of GGUF vs GGUF);
//! - `--llama-names` (one GGUF file, one checkpoint): the checkpoint's Hugging Face llama names
//!   are read as their GGUF names (`llama_names.rs`) before matching; `attn_q` / `attn_k` are
//!   listed as skipped instead of compared (llama.cpp permutes their rows);
//! - skipped too: tensors of a safetensors dtype without an f32 conversion (F4, F6, F8_E8M0,
//!   C64). Skipped tensors are listed with the reason and do not count as differences.

use std::collections::HashMap;

use gguf_lens::compare::ValueDiff;
use gguf_lens::diff_report::{DiffReport, Input, Source, ValueRow};
use gguf_lens::gguf::row_chunks;
use gguf_lens::safetensors::Dtype;
use gguf_lens::{Error, ErrorKind, Kernel};

use crate::diff_options::{finish, Options};
use crate::model::{Entry, Model};
use crate::{named, Failure, CHUNK_ELEMENTS};
use gguf_lens::llama_names::{gguf_name, rows_permuted};

/// The name of `name` in the file (another with `--llama-names`).
fn file_name<'e>(entries: &'e [Entry], name: &'e str) -> &'e str {
    entries
        .iter()
        .find(|e| e.name == name)
        .and_then(|e| e.file_name.as_deref())
        .unwrap_or(name)
}

pub fn llama_names_usage() -> Failure {
    Failure::Usage("--llama-names needs one GGUF file and one safetensors checkpoint".into())
}

/// Renames Hugging Face llama names to GGUF names, keeping the file's name.
fn rename_llama(entries: &mut [Entry]) {
    for e in entries {
        if let Some(name) = gguf_name(&e.name) {
            e.file_name = Some(std::mem::replace(&mut e.name, name));
        }
    }
}

/// Why the values of `name` are not compared, when they are not: rows permuted by llama.cpp
/// (`--llama-names`' attn_q / attn_k), or a safetensors dtype without an f32 conversion.
fn skip_reason(opts: &Options, name: &str, lists: [&[Entry]; 2]) -> Option<String> {
    if opts.llama_names && rows_permuted(name) {
        return Some(
            "llama.cpp permutes its rows per head, values not comparable elementwise".to_string(),
        );
    }
    lists
        .iter()
        .flat_map(|list| list.iter().find(|e| e.name == name))
        .find(|e| Dtype::from_name(&e.type_name).is_some_and(|d| !d.is_plain()))
        .map(|e| format!("dtype {} has no f32 conversion", e.type_name))
}

/// Compares the values of `name` in both, row chunk by row chunk.
fn compare_values(
    opts: &Options,
    (ma, ta): (&mut Model, &[Entry]),
    (mb, tb): (&mut Model, &[Entry]),
    name: &str,
    kernel: Kernel,
) -> Result<ValueRow, Failure> {
    let mut ra = ma
        .rows(file_name(ta, name), kernel)
        .map_err(named(opts.a))?;
    let mut rb = mb
        .rows(file_name(tb, name), kernel)
        .map_err(named(opts.b))?;
    let shape = ra.shape();
    if shape != rb.shape() {
        let error = Error::new(ErrorKind::ShapesDiffer {
            name: name.to_string(),
            a: shape,
            b: rb.shape(),
        });
        return Err(Failure::Error(format!(
            "{} vs {}: {error} (logical row-major shapes)",
            opts.a, opts.b
        )));
    }
    let mut diff = ValueDiff::new();
    for chunk in row_chunks(0..ra.n_rows(), ra.rows_per_chunk(CHUNK_ELEMENTS)) {
        let va = ra.read(chunk.clone()).map_err(named(opts.a))?;
        let vb = rb.read(chunk).map_err(named(opts.b))?;
        diff.add(va, vb).map_err(named(opts.b))?;
    }
    Ok(ValueRow {
        name: name.to_string(),
        type_a: ra.type_name(),
        type_b: rb.type_name(),
        shape,
        metrics: diff.metrics(),
    })
}

/// A model as the report reads it, with the names it was read under.
fn input<'a>(path: &'a str, model: &'a Model, entries: &[Entry]) -> Input<'a> {
    Input {
        path,
        source: match model {
            Model::Gguf { model, .. } => Source::Gguf(model.shards().iter().collect()),
            Model::Safetensors(c) => Source::Checkpoint(&c.model),
        },
        renames: entries
            .iter()
            .filter_map(|e| Some((e.file_name.clone()?, e.name.clone())))
            .collect::<HashMap<_, _>>(),
    }
}

pub fn run(opts: &Options, mut ma: Model, mut mb: Model) -> Result<(), Failure> {
    let (mut ta, mut tb) = (ma.tensors(), mb.tensors());
    if opts.llama_names {
        match (ma.format(), mb.format()) {
            ("gguf", "safetensors") => rename_llama(&mut tb),
            ("safetensors", "gguf") => rename_llama(&mut ta),
            _ => return Err(llama_names_usage()),
        }
    }
    let report = {
        DiffReport::build(
            &input(opts.a, &ma, &ta),
            &input(opts.b, &mb, &tb),
            Default::default(),
        )
    };
    let names: Vec<&str> = if !opts.tensors.is_empty() {
        opts.tensors.clone()
    } else if opts.values {
        report.tensors.matching.iter().map(String::as_str).collect()
    } else {
        Vec::new()
    };
    let mut skipped = Vec::new();
    let names: Vec<&str> = names
        .into_iter()
        .filter(|&name| match skip_reason(opts, name, [&ta, &tb]) {
            Some(reason) => {
                skipped.push((name.to_string(), reason));
                false
            }
            None => true,
        })
        .collect();
    let mut compared = Vec::new();
    if !names.is_empty() {
        let kernel = Kernel::auto().map_err(|e| Failure::Error(e.to_string()))?;
        for name in names {
            let a = (&mut ma, &ta[..]);
            let b = (&mut mb, &tb[..]);
            compared.push(compare_values(opts, a, b, name, kernel)?);
        }
    }
    let report = report.with_values(compared, opts.values, skipped);
    finish(&report, opts.format)
}
