//! The `gguf-lens` command: `inspect FILE [--json]`, `dequant FILE TENSOR -o OUT [--rows A:B]`,
//! `stats FILE TENSOR` and `diff A B`, for GGUF files and safetensors checkpoints (plain or
//! GPTQ; `diff` also one of each).
//! `inspect` and `dequant` exit 0 on success, 1 with one `error:` line on a bad file, 2 on bad
//! usage; `stats` exits 0 or 2 (any error), `diff` 0 when identical, 1 when the files differ,
//! 2 on any error, as `cmp` does.

mod checkpoint;
mod diff;
mod diff_cross;
mod json;
mod llama_names;
mod model;
mod st_dequant;
mod st_inspect;
mod stats;
mod text;

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::process::ExitCode;

use gguf_lens::gguf::{read_header, row_chunks, RowReader};
use gguf_lens::gptq::V1Zeros;
use gguf_lens::{Error, Kernel};

use checkpoint::Checkpoint;

const USAGE: &str = "usage:
  gguf-lens inspect FILE [--json]
  gguf-lens dequant FILE TENSOR_NAME -o OUT [--rows A:B] [--v1-zeros unmasked|wrapping]
  gguf-lens stats FILE TENSOR_NAME [--rows A:B] [--bins N] [--json]
  gguf-lens diff A B [--values] [--tensor NAME]... [--llama-names] [--json]

FILE, A, B: a .gguf, a .safetensors or a model.safetensors.index.json (shards beside it). For
safetensors, TENSOR_NAME is a tensor or a GPTQ layer (e.g. model.layers.0.self_attn.q_proj),
dequantized to f32 [out_features, in_features]; quantize_config.json or config.json beside the
file gives the GPTQ config. --v1-zeros: how a v1 stored zero of 2^bits-1 is read (unmasked:
2^bits, as llama.cpp; wrapping: 0, as GPTQModel); stats and diff read them unmasked.

stats: min, max, mean, std (population, of the finite values), NaN/+Inf/-Inf/zero counts and a
histogram of N bins (default 32) over [min, max] of the finite values (numpy's rule: bin i holds
edge_i <= x < edge_i+1, the last bin also max). Exit 0, or 2 on any error.

diff: summary fields, metadata keys (arrays compared in full), tensors (only in A/B, shape and
type changes) and quant mix of both. --values compares the values of every tensor with the same
name and shape (--tensor NAME: only those): RMSE, max and mean |a-b|, RMSE/RMS(a) and cosine
over the pairs where both are finite, NaN and Inf mismatches. Exit 0 when identical, 1 when
the files differ, 2 on any error.
With safetensors on either side: metadata is compared only between two checkpoints (their
__metadata__ strings; not GGUF vs safetensors), tensors by name with logical row-major shapes
(GGUF dims reversed), a GPTQ layer as <layer>.weight [out, in]; format, tensor count and
parameters are shown, not counted. --llama-names (one GGUF, one checkpoint): Hugging Face llama
names read as GGUF names (model.layers.N.self_attn.q_proj.weight -> blk.N.attn_q.weight);
attn_q/attn_k are skipped, not compared (llama.cpp permutes their rows).

GGUF_LENS_KERNEL=scalar|avx2|neon|simd128 forces a dequantization kernel.";

/// Values dequantized per step (per file): bounds memory for huge tensors (16 MiB of f32).
const CHUNK_ELEMENTS: u64 = 4 << 20;

enum Failure {
    Usage(String),
    File(Error),
    /// Any error of `stats` and `diff`, already naming its file: exit 2.
    Fatal(String),
    /// `diff` found differences: exit 1, nothing on stderr.
    Differ,
}

/// For `stats` and `diff`: an error of `path`, as one line naming the file.
fn fatal(path: &str) -> impl Fn(Error) -> Failure + '_ {
    move |err| Failure::Fatal(format!("{path}: {err}"))
}

/// For `stats` and `diff`: a file error becomes an exit-2 error naming `path`.
fn exit_2(path: &str) -> impl Fn(Failure) -> Failure + '_ {
    move |failure| match failure {
        Failure::File(err) => fatal(path)(err),
        other => other,
    }
}

impl From<Error> for Failure {
    fn from(err: Error) -> Failure {
        Failure::File(err)
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(message)) => {
            eprintln!("error: {message}\n{USAGE}");
            ExitCode::from(2)
        }
        Err(Failure::File(err)) => {
            eprintln!("error: {err}");
            ExitCode::from(1)
        }
        Err(Failure::Fatal(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
        Err(Failure::Differ) => ExitCode::from(1),
    }
}

fn run(args: &[String]) -> Result<(), Failure> {
    match args.first().map(String::as_str) {
        Some("inspect") => inspect(&args[1..]),
        Some("dequant") => dequant(&args[1..]),
        Some("stats") => stats::run(&args[1..]),
        Some("diff") => diff::run(&args[1..]),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(Failure::Usage(format!("unknown command {other:?}"))),
        None => Err(Failure::Usage("no command".to_string())),
    }
}

fn open(path: &str) -> Result<(File, u64), Failure> {
    let file = File::open(path).map_err(|e| Failure::File(Error::from(e)))?;
    let size = file
        .metadata()
        .map_err(|e| Failure::File(Error::from(e)))?
        .len();
    Ok((file, size))
}

/// Whether `path` is a safetensors checkpoint (see `checkpoint::is_safetensors`).
fn is_safetensors(path: &str) -> bool {
    let mut head = Vec::new();
    if let Ok(file) = File::open(path) {
        let _ = file.take(9).read_to_end(&mut head);
    }
    checkpoint::is_safetensors(path, &head)
}

/// A JSON document as one line of output.
fn json_line(doc: &serde_json::Value) -> String {
    let mut text = doc.to_string();
    text.push('\n');
    text
}

fn write_stdout(text: &[u8]) -> Result<(), Failure> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    out.write_all(text)
        .and_then(|()| out.flush())
        .map_err(|e| Failure::File(Error::from(e)))
}

fn inspect(args: &[String]) -> Result<(), Failure> {
    let mut path = None;
    let mut as_json = false;
    for arg in args {
        match arg.as_str() {
            "--json" => as_json = true,
            flag if flag.starts_with('-') => {
                return Err(Failure::Usage(format!("unknown option {flag:?}")))
            }
            _ if path.is_none() => path = Some(arg.as_str()),
            extra => return Err(Failure::Usage(format!("unexpected argument {extra:?}"))),
        }
    }
    let path = path.ok_or_else(|| Failure::Usage("inspect needs a FILE".to_string()))?;
    if is_safetensors(path) {
        let checkpoint = Checkpoint::open(path)?;
        let text = if as_json {
            json_line(&st_inspect::inspect_json(&checkpoint))
        } else {
            st_inspect::inspect_text(&checkpoint)
        };
        return write_stdout(text.as_bytes());
    }
    let (mut reader, size) = open(path)?;
    let file = read_header(&mut reader, size)?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let written = if as_json {
        let mut warnings = Vec::new();
        let doc = json::inspect_json(&file, size, &mut warnings);
        for warning in warnings {
            eprintln!("warning: {warning}");
        }
        serde_json::to_writer(&mut out, &doc)
            .map_err(std::io::Error::from)
            .and_then(|()| writeln!(out))
    } else {
        out.write_all(text::inspect_text(&file, size).as_bytes())
    };
    written
        .and_then(|()| out.flush())
        .map_err(|e| Failure::File(Error::from(e)))
}

/// Collects a positional argument; anything else that starts with `-` is an unknown option.
fn positional_arg<'a>(arg: &'a str, positional: &mut Vec<&'a str>) -> Result<(), Failure> {
    if arg.starts_with('-') && arg.len() > 1 {
        return Err(Failure::Usage(format!("unknown option {arg:?}")));
    }
    positional.push(arg);
    Ok(())
}

/// Exactly two positional arguments, or `message` as a usage error.
fn two_args<'a>(positional: &[&'a str], message: &str) -> Result<(&'a str, &'a str), Failure> {
    match positional {
        [a, b] => Ok((a, b)),
        _ => Err(Failure::Usage(message.to_string())),
    }
}

/// Parses `--rows`' value `A:B` into a row range.
fn parse_rows(text: Option<&String>) -> Result<std::ops::Range<u64>, Failure> {
    let text = text.ok_or_else(|| Failure::Usage("--rows needs A:B".into()))?;
    let bad = || Failure::Usage(format!("--rows takes A:B (two row numbers), got {text:?}"));
    let (a, b) = text.split_once(':').ok_or_else(bad)?;
    let start = a.parse().map_err(|_| bad())?;
    let end = b.parse().map_err(|_| bad())?;
    Ok(start..end)
}

fn dequant(args: &[String]) -> Result<(), Failure> {
    let mut positional = Vec::new();
    let mut output = None;
    let mut rows = None;
    let mut v1 = None;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "-o" | "--output" => output = iter.next().map(String::as_str),
            "--rows" => rows = Some(parse_rows(iter.next())?),
            "--v1-zeros" => {
                v1 = Some(match iter.next().map(String::as_str) {
                    Some("unmasked") => V1Zeros::Unmasked,
                    Some("wrapping") => V1Zeros::Wrapping,
                    _ => {
                        return Err(Failure::Usage(
                            "--v1-zeros takes unmasked or wrapping".into(),
                        ))
                    }
                });
            }
            _ => positional_arg(arg, &mut positional)?,
        }
    }
    let (path, name) = two_args(&positional, "dequant needs FILE and TENSOR_NAME")?;
    let output = output.ok_or_else(|| Failure::Usage("dequant needs -o OUT".to_string()))?;
    if is_safetensors(path) {
        let checkpoint = Checkpoint::open(path)?;
        st_dequant::dequant(&checkpoint, name, rows, v1.unwrap_or_default(), output)?;
        return Ok(());
    }
    if v1.is_some() {
        return Err(Failure::Usage(
            "--v1-zeros is for GPTQ safetensors checkpoints".to_string(),
        ));
    }
    let kernel = Kernel::auto()?;
    let (mut reader, size) = open(path)?;
    let file = read_header(&mut reader, size)?;
    let tensor = file.tensor(name)?;
    let rows = rows.unwrap_or(0..tensor.n_rows());
    // Validates the range before anything is written.
    file.rows_range(tensor, rows.clone())?;
    let out_file = File::create(output).map_err(|e| Failure::File(Error::from(e)))?;
    let mut out = BufWriter::new(out_file);
    let mut rows_reader = RowReader::new(&file, tensor, kernel);
    for chunk in row_chunks(rows, rows_reader.rows_per_chunk(CHUNK_ELEMENTS)) {
        for v in rows_reader.read(&mut reader, chunk)? {
            out.write_all(&v.to_le_bytes())
                .map_err(|e| Failure::File(Error::from(e)))?;
        }
    }
    out.flush().map_err(|e| Failure::File(Error::from(e)))
}
