//! `gguf-lens lint FILE [--json]`: what is wrong with a GGUF file, as llama.cpp would find it.

use std::io::Write;

use gguf_lens::gguf::read_header;
use gguf_lens::lint::{finding_of_error, lint_model, Finding, Report};
use gguf_lens::model::{split_paths, GgufModel};
use gguf_lens::{Error, ErrorKind};

use crate::{json_line, write_stdout, Failure};

/// What is wrong with a GGUF file: errors llama.cpp trips on or labels that lie, and warnings.
///
/// Errors make llama.cpp fail or misbehave, or are labels that lie; warnings are harmless
/// untidiness. Checked (header only): tensor data out of the file, overlapping,
/// misaligned or with gaps; tensor names of 64+ bytes; duplicate keys; general.file_type
/// against the tensor types; special-token ids outside the vocabulary; vocabulary arrays of
/// different lengths; merges naming missing tokens; block_count against the blk.N tensors;
/// tensors llama.cpp requires (llama, mistral3, qwen2, qwen3, phi3, gemma, gemma2, gemma3)
/// missing or mis-shaped; chat templates that do not parse.
///
/// One line per finding, `SEVERITY[CODE] WHERE: MESSAGE`, then a summary line.
/// Exit 0 without errors (warnings allowed), 1 with any error or when the file cannot be read
/// (one `error:` line), 2 on bad usage.
///
///   gguf-lens lint model.gguf
///   gguf-lens lint model.gguf --json | jq '.findings[] | select(.severity == "error")'
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// A .gguf file; any shard's name of a split model (NAME-00002-of-00003.gguf) lints every
    /// shard as one model
    pub file: String,
    /// The report as one JSON document: {findings: [{code, severity, message, offset, key,
    /// tensor}], errors, warnings, infos}
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &Args) -> Result<(), Failure> {
    let path = args.file.as_str();
    let report = report_of(path)?;
    let text = if args.json {
        let doc =
            serde_json::to_value(&report).map_err(|e| Failure::Error(format!("{path}: {e}")))?;
        json_line(&doc)
    } else {
        render(&report)
    };
    write_stdout(text.as_bytes())?;
    if report.has_errors() {
        return Err(Failure::Findings(1));
    }
    Ok(())
}

/// The report of the file or split model at `path`: a header that does not parse (in any shard)
/// or shards that do not fit together are findings; a file that cannot be read is an error
/// (exit 1 with one `error:` line, as every subcommand).
fn report_of(path: &str) -> Result<Report, Failure> {
    let paths = split_paths(path)
        .map_err(|err| Failure::Error(format!("{path}: {err}")))?
        .unwrap_or_else(|| vec![path.to_string()]);
    let split = paths.len() > 1;
    let mut shards = Vec::with_capacity(paths.len());
    let mut refused: Vec<Finding> = Vec::new();
    for (i, shard) in paths.iter().enumerate() {
        let named = |e: std::io::Error| Failure::Error(format!("{shard}: {e}"));
        let mut file = std::fs::File::open(shard).map_err(named)?;
        let size = file.metadata().map_err(named)?.len();
        match read_header(&mut file, size) {
            Ok(header) => shards.push(header),
            Err(err) if matches!(err.kind, ErrorKind::Io { .. }) => {
                return Err(Failure::Error(format!("{shard}: {err}")))
            }
            Err(err) => {
                let mut finding = finding_of_error(&err);
                if split {
                    finding.shard = u32::try_from(i + 1).ok();
                }
                refused.push(finding);
            }
        }
    }
    if !refused.is_empty() {
        return Ok(Report::new(refused));
    }
    Ok(match GgufModel::from_shards(shards) {
        Ok(model) => Report::new(lint_model(&model)),
        Err(err) => Report::new(vec![finding_of_error(&Error::new(err.kind))]),
    })
}

/// `error[CODE] WHERE: MESSAGE` lines, then the counts.
pub fn render(report: &Report) -> String {
    let mut out = Vec::new();
    for f in &report.findings {
        let _ = writeln!(
            out,
            "{}[{}] {}: {}",
            f.severity.name(),
            f.code,
            crate::escape::shown(&f.place()),
            crate::escape::shown(&f.message)
        );
    }
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let _ = writeln!(
        out,
        "{}, {}, {}",
        plural(report.errors, "error"),
        plural(report.warnings, "warning"),
        plural(report.infos, "note")
    );
    String::from_utf8_lossy(&out).into_owned()
}
