//! `diff A B [--values] [--tensor NAME]... [--format text|json|markdown]`: two models of any
//! format compared by the library's `diff_report` (which renders it too) and `compare_rows`.
//! Exit 0 when identical, 1 when the files differ or a file is bad (one `error:` line), 2 on
//! bad usage.
//!
//! What is compared:
//! - summary: every field of two GGUF models; with a safetensors checkpoint, format, tensor
//!   count and parameters (elements of the listed tensors) of both, shown but not counted as
//!   differences (the tensors below are);
//! - metadata: two GGUF models' key-values (arrays in full);
//!   when both are safetensors: the `__metadata__` strings (shards in order, a
//!   key's first value), by key, strings by bytes. GGUF key-values and safetensors
//!   `__metadata__` have nothing in common, so the core's `HeaderDiff::between` does not
//!   compare metadata across formats and a GGUF vs safetensors diff has no metadata part;
//! - tensors: by exact name, with logical row-major shapes (GGUF dims reversed, see
//!   `gguf_lens::model`), a GPTQ layer as `<layer>.weight` `[out, in]`; a type change compares type
//!   names across formats (ggml's F32/F16/BF16/F64/I8..I64 are spelled as the safetensors
//!   dtypes), ggml types between two GGUF models;
//! - `--values`: the tensors with the same name and logical shape, row chunk by row chunk, both
//!   dequantized to f32, with the core's `ValueDiff`;
//! - `--llama-names` (one GGUF file, one checkpoint): the checkpoint's Hugging Face llama names
//!   are read as their GGUF names (`llama_names.rs`) before matching; `attn_q` / `attn_k` are
//!   listed as skipped instead of compared (llama.cpp permutes their rows);
//! - skipped too: tensors of a safetensors dtype without an f32 conversion (F4, F6, F8_E8M0,
//!   C64). Skipped tensors are listed with the reason and do not count as differences.

use std::collections::HashMap;

use gguf_lens::compare::{compare_rows, Side};
use gguf_lens::diff_report::{DiffReport, Format, Input, ValueRow};
use gguf_lens::gptq::V1Zeros;
use gguf_lens::llama_names::{gguf_name, rows_permuted};
use gguf_lens::model::{open, Format as FileFormat, Layout, Model, Opened};
use gguf_lens::safetensors::Dtype;
use gguf_lens::Kernel;

use crate::{named, write_stdout, Failure, CHUNK_ELEMENTS};

/// What changed between two models (with --values, in their values too).
///
/// Summary, metadata (arrays in full), tensors and quant mix; with --values, the values of
/// every tensor both have (RMSE, max and mean |a-b|, RMSE/RMS(a), cosine, NaN/Inf mismatches).
///
/// Exit 0 when identical, 1 when the files differ (as cmp does) or a file is bad (one `error:`
/// line), 2 on bad usage.
///
///   gguf-lens diff model-Q4_K_M.gguf model-Q8_0.gguf --values --tensor blk.0.attn_q.weight
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// First model: a .gguf (a split model by its first shard), a .safetensors or a
    /// model.safetensors.index.json
    pub a: String,
    /// Second model, as A
    pub b: String,
    /// Also compare the values of every tensor with the same name and shape, in row chunks
    #[arg(long)]
    pub values: bool,
    /// With --values: only this tensor (repeatable)
    #[arg(long = "tensor", value_name = "NAME")]
    pub tensors: Vec<String>,
    /// Output: text (for a terminal), json (one document) or markdown
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = ["text", "json", "markdown"])]
    pub format: String,
    /// Same as --format json
    #[arg(long)]
    pub json: bool,
    /// One GGUF and one checkpoint: read Hugging Face llama names as GGUF names
    /// (model.layers.N.self_attn.q_proj.weight -> blk.N.attn_q.weight; attn_q/attn_k skipped)
    #[arg(long)]
    pub llama_names: bool,
}

fn options(args: &Args) -> Options<'_> {
    let format = if args.json {
        Format::Json
    } else {
        // clap accepts only the names `Format` reads.
        Format::from_name(&args.format).unwrap_or(Format::Text)
    };
    Options {
        a: &args.a,
        b: &args.b,
        values: args.values,
        tensors: args.tensors.iter().map(String::as_str).collect(),
        format,
        llama_names: args.llama_names,
    }
}

/// A tensor as listed for matching: its name as compared, its type, and its name in the file
/// when that is another (`--llama-names`).
struct Entry {
    name: String,
    type_name: String,
    file_name: Option<String>,
}

/// The model's tensors as listed for matching.
fn entries(model: &Model) -> Vec<Entry> {
    model
        .tensors(Layout::Logical)
        .into_iter()
        .map(|t| Entry {
            type_name: t.ty.name().to_string(),
            name: t.name,
            file_name: None,
        })
        .collect()
}

/// The name of `name` in the file (another with `--llama-names`).
fn file_name<'e>(entries: &'e [Entry], name: &'e str) -> &'e str {
    entries
        .iter()
        .find(|e| e.name == name)
        .and_then(|e| e.file_name.as_deref())
        .unwrap_or(name)
}

fn llama_names_usage() -> Failure {
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
    (a, ta): (&Opened, &[Entry]),
    (b, tb): (&Opened, &[Entry]),
    name: &str,
    kernel: Kernel,
) -> Result<ValueRow, Failure> {
    let v1 = V1Zeros::default();
    let mut ra = (a.model)
        .rows(file_name(ta, name), &a.files, kernel, v1)
        .map_err(named(opts.a))?;
    let mut rb = (b.model)
        .rows(file_name(tb, name), &b.files, kernel, v1)
        .map_err(named(opts.b))?;
    let metrics =
        compare_rows(name, &mut ra, &mut rb, CHUNK_ELEMENTS).map_err(|e| match Side::of(&e) {
            Some((Side::A, error)) => named(opts.a)(error.clone()),
            Some((Side::B, error)) => named(opts.b)(error.clone()),
            None => Failure::Error(format!(
                "{} vs {}: {e} (logical row-major shapes)",
                opts.a, opts.b
            )),
        })?;
    Ok(ValueRow {
        name: name.to_string(),
        type_a: ra.type_name(),
        type_b: rb.type_name(),
        shape: ra.shape(),
        metrics,
    })
}

/// A model as the report reads it, with the names it was read under.
fn input<'a>(path: &'a str, model: &'a Model, entries: &[Entry]) -> Input<'a> {
    Input {
        path,
        model,
        renames: entries
            .iter()
            .filter_map(|e| Some((e.file_name.clone()?, e.name.clone())))
            .collect::<HashMap<_, _>>(),
    }
}

pub fn run(args: &Args) -> Result<(), Failure> {
    let opts = &options(args);
    let a = open(opts.a)?;
    let b = open(opts.b)?;
    let (mut ta, mut tb) = (entries(&a.model), entries(&b.model));
    if opts.llama_names {
        match (a.model.format(), b.model.format()) {
            (FileFormat::Gguf, FileFormat::Safetensors) => rename_llama(&mut tb),
            (FileFormat::Safetensors, FileFormat::Gguf) => rename_llama(&mut ta),
            _ => return Err(llama_names_usage()),
        }
    }
    let report = DiffReport::build(
        &input(opts.a, &a.model, &ta),
        &input(opts.b, &b.model, &tb),
        Default::default(),
    );
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
            compared.push(compare_values(opts, (&a, &ta), (&b, &tb), name, kernel)?);
        }
    }
    let report = report.with_values(compared, opts.values, skipped);
    finish(&report, opts.format)
}

/// The options as `run` reads them.
struct Options<'a> {
    a: &'a str,
    b: &'a str,
    values: bool,
    tensors: Vec<&'a str>,
    format: Format,
    /// Hugging Face llama names of the safetensors side read as GGUF names.
    llama_names: bool,
}

/// Prints `report` (warnings to stderr); exit 0 when identical, else 1 ("files differ").
fn finish(report: &DiffReport, format: Format) -> Result<(), Failure> {
    if format == Format::Json {
        for warning in &report.warnings {
            eprintln!("warning: {}", crate::escape::shown(warning));
        }
    }
    let text = report.render(format);
    // JSON keeps its own escapes (\uXXXX); text is escaped in write_stdout.
    let text = match format {
        Format::Json => crate::escape::json(&text).into_owned(),
        _ => text,
    };
    write_stdout(text.as_bytes())?;
    if report.identical {
        Ok(())
    } else {
        Err(Failure::Findings(1))
    }
}
