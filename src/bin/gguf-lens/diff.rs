//! `diff A B [--values] [--tensor NAME]... [--format text|json|markdown]`: two GGUF models
//! compared here (any pairing with safetensors in `diff_cross.rs`), rendered by the library's
//! `diff_report`. Exit 0 when identical, 1 when the files differ, 2 on any error.

use gguf_lens::compare::{compare_tensor, Side, TensorSource};
use gguf_lens::diff_report::{DiffReport, Format, Input, Source, ValueRow};
use gguf_lens::model::GgufModel;
use gguf_lens::Kernel;

use crate::diff_options::{finish, Options};
use crate::model::Model;
use crate::{diff_cross, named, Failure, CHUNK_ELEMENTS};
/// What changed between two models (with --values, in their values too).
///
/// Summary, metadata (arrays in full), tensors and quant mix; with --values, the values of
/// every tensor both have (RMSE, max and mean |a-b|, RMSE/RMS(a), cosine, NaN/Inf mismatches).
///
/// Exit 0 when identical, 1 when the files differ, 2 on any error (as cmp does).
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

pub fn run(args: &Args) -> Result<(), Failure> {
    let opts = options(args);
    let model_a = Model::open(opts.a)?;
    let model_b = Model::open(opts.b)?;
    let (mut ra, ma, mut rb, mb) = match (model_a, model_b) {
        (
            Model::Gguf {
                readers: ra,
                model: ma,
                ..
            },
            Model::Gguf {
                readers: rb,
                model: mb,
                ..
            },
        ) => (ra, ma, rb, mb),
        (model_a, model_b) => return diff_cross::run(&opts, model_a, model_b),
    };
    if opts.llama_names {
        return Err(diff_cross::llama_names_usage());
    }
    let report = DiffReport::build(&input(opts.a, &ma), &input(opts.b, &mb), Default::default());
    let names: Vec<&str> = if !opts.tensors.is_empty() {
        opts.tensors.clone()
    } else if opts.values {
        report.tensors.matching.iter().map(String::as_str).collect()
    } else {
        Vec::new()
    };
    let mut compared = Vec::new();
    if !names.is_empty() {
        let kernel = Kernel::auto().map_err(|e| Failure::Error(e.to_string()))?;
        for name in names {
            let (sa, ta) = ma.tensor(name).map_err(named(opts.a))?;
            let (sb, tb) = mb.tensor(name).map_err(named(opts.b))?;
            let metrics = compare_tensor(
                TensorSource {
                    reader: &mut ra[sa],
                    file: &ma.shards()[sa],
                    tensor: ta,
                },
                TensorSource {
                    reader: &mut rb[sb],
                    file: &mb.shards()[sb],
                    tensor: tb,
                },
                kernel,
                CHUNK_ELEMENTS,
            )
            .map_err(|e| match Side::of(&e) {
                Some((Side::A, error)) => named(opts.a)(error.clone()),
                Some((Side::B, error)) => named(opts.b)(error.clone()),
                None => Failure::Error(format!("{} vs {}: {e}", opts.a, opts.b)),
            })?;
            compared.push(ValueRow {
                name: name.to_string(),
                type_a: ta.ggml_type().name().to_string(),
                type_b: tb.ggml_type().name().to_string(),
                shape: ta.shape(),
                metrics,
            });
        }
    }
    let report = report.with_values(compared, opts.values, Vec::new());
    finish(&report, opts.format)
}

/// A GGUF model as the report reads it.
fn input<'a>(path: &'a str, model: &'a GgufModel) -> Input<'a> {
    Input {
        path,
        source: Source::Gguf(model.shards().iter().collect()),
        renames: Default::default(),
    }
}
