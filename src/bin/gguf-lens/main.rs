//! The `gguf-lens` command. One module per subcommand, each with its clap `Args` (whose doc
//! comments are its `--help`) and a `run`; this file only parses, dispatches and maps results to
//! exit codes.

mod chat;
mod checkpoint;
mod dequant;
mod diff;
mod diff_cross;
mod diff_options;
mod escape;
mod hash;
mod inspect;
mod json;
mod lint;
mod llama_names;
mod memory;
mod model;
mod output;
mod quant_error;
mod quantize;
mod set;
mod st_dequant;
mod st_inspect;
mod stats;
mod text;
mod tokenize;

use std::fs::File;
use std::io::{Read, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use gguf_lens::Error;

/// Exit codes, shown under every `--help`.
const EXIT_CODES: &str = "\
Exit codes:
  0  success (diff: the files are identical)
  1  a bad file, tensor or request, with one `error:` line naming what and where
     (diff: the files differ, nothing on stderr; lint: it found an error)
  2  bad usage (unknown option, missing argument); stats, diff, set, quantize
     and quant-error: any error; lint: a file it cannot read
     (memory: a combination llama.cpp refuses exits 1)

GGUF_LENS_KERNEL=scalar|avx2|neon|simd128 forces the instruction set of every vector loop:
dequantization, the quantizers' searches and the statistics (scalar turns them all off).";

/// Read GGUF model files and safetensors checkpoints (plain or GPTQ): what is in them, their
/// values dequantized bit for bit as ggml does, statistics, and what changed between two.
///
/// FILE is a .gguf, a .safetensors or a model.safetensors.index.json (its shards beside it).
#[derive(Parser, Debug)]
#[command(name = "gguf-lens", version, after_help = EXIT_CODES, arg_required_else_help = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    #[command(after_help = EXIT_CODES)]
    Inspect(inspect::Args),
    #[command(after_help = EXIT_CODES)]
    Dequant(dequant::Args),
    #[command(after_help = EXIT_CODES)]
    Stats(stats::Args),
    #[command(after_help = EXIT_CODES)]
    Diff(diff::Args),
    #[command(after_help = EXIT_CODES)]
    Set(set::Args),
    #[command(after_help = EXIT_CODES)]
    Hash(hash::Args),
    #[command(after_help = EXIT_CODES)]
    Lint(lint::Args),
    #[command(after_help = EXIT_CODES)]
    Quantize(quantize::Args),
    #[command(after_help = EXIT_CODES)]
    QuantError(quant_error::Args),
    #[command(after_help = EXIT_CODES)]
    Memory(memory::Args),
    #[command(after_help = EXIT_CODES)]
    Tokenize(tokenize::Args),
    #[command(after_help = EXIT_CODES)]
    Detokenize(tokenize::DetokenizeArgs),
    #[command(after_help = EXIT_CODES)]
    Chat(chat::Args),
}

/// Values dequantized per step (per file): bounds memory for huge tensors (16 MiB of f32).
const CHUNK_ELEMENTS: u64 = 4 << 20;

enum Failure {
    Usage(String),
    File(Error),
    /// Any error of `stats` and `diff`, already naming its file: exit 2.
    Fatal(String),
    /// `diff` found differences: exit 1, nothing on stderr.
    Differ,
    /// `lint` found errors (already printed on stdout): exit 1, nothing on stderr.
    LintErrors,
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
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // --help and --version print to stdout and exit 0; usage errors exit 2.
        Err(err) => err.exit(),
    };
    if matches!(
        cli.command,
        Command::Dequant(_) | Command::Set(_) | Command::Quantize(_)
    ) {
        remove_temporaries_on_signal();
    }
    let result = match &cli.command {
        Command::Inspect(args) => inspect::run(args),
        Command::Dequant(args) => dequant::run(args),
        Command::Stats(args) => stats::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Set(args) => set::run(args),
        Command::Hash(args) => return finish(hash::run(args)),
        Command::Lint(args) => lint::run(args),
        Command::Quantize(args) => quantize::run(args),
        Command::QuantError(args) => quant_error::run(args),
        Command::Memory(args) => return finish(memory::run(args)),
        Command::Tokenize(args) => return finish(tokenize::run(args)),
        Command::Detokenize(args) => return finish(tokenize::run_detokenize(args)),
        Command::Chat(args) => return finish(chat::run(args)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(message)) => {
            eprintln!("error: {}", escape::shown(&message));
            ExitCode::from(2)
        }
        Err(Failure::File(err)) => {
            eprintln!("error: {}", escape::shown(&err.to_string()));
            ExitCode::from(1)
        }
        Err(Failure::Fatal(message)) => {
            eprintln!("error: {}", escape::shown(&message));
            ExitCode::from(2)
        }
        Err(Failure::Differ | Failure::LintErrors) => ExitCode::from(1),
    }
}

/// On Ctrl-C (SIGINT) or SIGTERM: the outputs being written are removed, exit 130 (a
/// model-sized temporary would otherwise stay behind).
fn remove_temporaries_on_signal() {
    #[cfg(any(unix, windows))]
    {
        // Failing to install (another handler is set) leaves the default: killed, temporaries
        // left, which is what it was before.
        let _ = ctrlc::set_handler(|| {
            gguf_lens::atomic_write::remove_temporaries();
            std::process::exit(130);
        });
    }
}

/// For subcommands whose `run` returns `Result<ExitCode, String>`: an `Err` is one `error:` line
/// and exit 1.
fn finish(result: Result<ExitCode, String>) -> ExitCode {
    result.unwrap_or_else(|message| {
        eprintln!("error: {}", escape::shown(&message));
        ExitCode::from(1)
    })
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

/// A JSON document as one line of output (control and bidi characters as `\uXXXX`).
fn json_line(doc: &serde_json::Value) -> String {
    let mut text = escape::json(&doc.to_string()).into_owned();
    text.push('\n');
    text
}

/// Writes text output: whatever came from a file and was not escaped where it was laid out is
/// escaped here (see `escape::lines`).
fn write_stdout(text: &[u8]) -> Result<(), Failure> {
    let text = String::from_utf8_lossy(text);
    let text = escape::lines(&text);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| Failure::File(Error::from(e)))
}

/// `--threads N`, or every core the system lets this process use.
fn threads(requested: Option<usize>) -> usize {
    if cfg!(target_os = "wasi") {
        return 1; // no threads there
    }
    requested
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// clap value parser for `--rows A:B`.
fn parse_rows(text: &str) -> Result<std::ops::Range<u64>, String> {
    let bad = || format!("--rows takes A:B (two row numbers), got {text:?}");
    let (a, b) = text.split_once(':').ok_or_else(bad)?;
    let start = a.parse().map_err(|_| bad())?;
    let end = b.parse().map_err(|_| bad())?;
    Ok(start..end)
}
