//! The `gguf-lens` command. One module per subcommand, each with its clap `Args` (whose doc
//! comments are its `--help`) and a `run`; this file only parses, dispatches and maps results to
//! exit codes.

mod chat;
mod dequant;
mod diff;
mod escape;
mod fit;
mod hash;
mod inspect;
mod json;
mod lint;
mod memory;
mod output;
mod quant_error;
mod quantize;
mod set;
mod stats;
mod text;
mod tokenize;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use gguf_lens::Error;

/// Exit codes, shown under every `--help`.
const EXIT_CODES: &str = "\
Exit codes:
  0    success (diff: the files are identical)
  1    a bad file, tensor or request, with one `error:` line naming what and where;
       diff: the files differ, lint: it found an error (nothing on stderr)
  2    bad usage (unknown option, missing argument, options that conflict)
  130  interrupted while writing (the temporaries are removed)
  hash --check: llama-gguf-hash's verdict codes

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
    Fit(fit::Args),
    #[command(after_help = EXIT_CODES)]
    Tokenize(tokenize::Args),
    #[command(after_help = EXIT_CODES)]
    Detokenize(tokenize::DetokenizeArgs),
    #[command(after_help = EXIT_CODES)]
    Chat(chat::Args),
}

/// Values dequantized per step (per file): bounds memory for huge tensors (16 MiB of f32).
const CHUNK_ELEMENTS: u64 = 4 << 20;

/// How a subcommand ends when it does not succeed: every `run` returns `Result<(), Failure>`,
/// and `main` maps it to the one exit-code convention (`EXIT_CODES`).
enum Failure {
    /// Bad usage caught after parsing (options that conflict, an option whose syntax is wrong):
    /// one `error:` line, exit 2, as clap's own usage errors.
    Usage(String),
    /// A bad file, tensor or request: one `error:` line, exit 1.
    Error(String),
    /// A documented findings code with nothing more on stderr: `diff` found differences (1),
    /// `lint` found errors (1), `hash --check`'s verdicts.
    Findings(u8),
}

/// An error of the file `path`, as one line naming it.
fn named(path: &str) -> impl Fn(Error) -> Failure + '_ {
    move |err| Failure::Error(format!("{path}: {err}"))
}

/// A message already naming what and where: a bad file, tensor or request (exit 1).
impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure::Error(message)
    }
}

impl From<Error> for Failure {
    fn from(err: Error) -> Failure {
        Failure::Error(err.to_string())
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
        Command::Hash(args) => hash::run(args),
        Command::Lint(args) => lint::run(args),
        Command::Quantize(args) => quantize::run(args),
        Command::QuantError(args) => quant_error::run(args),
        Command::Memory(args) => memory::run(args),
        Command::Fit(args) => fit::run(args),
        Command::Tokenize(args) => tokenize::run(args),
        Command::Detokenize(args) => tokenize::run_detokenize(args),
        Command::Chat(args) => chat::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(message)) => {
            eprintln!("error: {}", escape::shown(&message));
            ExitCode::from(2)
        }
        Err(Failure::Error(message)) => {
            eprintln!("error: {}", escape::shown(&message));
            ExitCode::from(1)
        }
        Err(Failure::Findings(code)) => ExitCode::from(code),
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
        .map_err(stdout_failed)
}

/// A write to standard output that failed (a full disk, a closed pipe).
fn stdout_failed(err: std::io::Error) -> Failure {
    Failure::Error(format!("standard output: write failed: {err}"))
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
