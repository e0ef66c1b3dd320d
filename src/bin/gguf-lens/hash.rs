//! `gguf-lens hash`: the tensor-data hashes of `llama-gguf-hash`, line for line, on every core.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::time::Instant;

use gguf_lens::gguf::read_header;
use gguf_lens::hash::{threads::hash_file, Algorithm, Algorithms, HashReport};

use crate::escape;

/// Hash a GGUF's tensor data as llama.cpp's `llama-gguf-hash` does (same digests, same lines):
/// each tensor's bytes in tensor-info order, per tensor and over them all. Two files with the
/// same weights and different metadata hash the same.
///
/// With no algorithm flag: xxh64 (as llama-gguf-hash). `--uuid` is the UUIDv5 model id
/// (namespace ef001206-dadc-5f6d-a15f-3359e577d4e5, sha1 over the tensor data).
///
/// `--check MANIFEST` verifies against a manifest (the lines a previous run printed): each line
/// ends `-  Ok`, `-  Mismatch` or `-  Not Found`. With no algorithm flag it picks the strongest
/// in the manifest (sha256, sha1, xxh64, uuid). Exit codes then are llama-gguf-hash's: 0 verified,
/// 1 a mismatch, 3 nothing of this file in the manifest, 4 no known hash type in it, 5 it cannot
/// be read.
///
/// Example: gguf-lens hash --sha256 --no-layer model.gguf
#[derive(clap::Args, Debug)]
pub struct Args {
    /// GGUF file.
    file: String,
    /// xxh64 (seed 0).
    #[arg(long)]
    xxh64: bool,
    /// sha1.
    #[arg(long)]
    sha1: bool,
    /// sha256.
    #[arg(long)]
    sha256: bool,
    /// The UUIDv5 model id.
    #[arg(long)]
    uuid: bool,
    /// xxh64, sha1 and sha256 (as llama-gguf-hash: not uuid).
    #[arg(long)]
    all: bool,
    /// Only the whole-model lines, no per-tensor ones.
    #[arg(long)]
    no_layer: bool,
    /// Verify against this manifest.
    #[arg(long, short = 'c', value_name = "MANIFEST")]
    check: Option<String>,
    /// Print one JSON object ({"tensors":[{"name","xxh64",…}],"model":{…}}) instead of lines.
    #[arg(long, conflicts_with = "check")]
    json: bool,
    /// Threads (default: every core); each digest runs on one.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
}

/// Runs `hash`; errors are one line, exit 1 (the manifest's own codes with `--check`).
pub fn run(args: &Args) -> Result<(), crate::Failure> {
    let mut algorithms = Algorithms {
        xxh64: args.xxh64 || args.all,
        sha1: args.sha1 || args.all,
        sha256: args.sha256 || args.all,
        uuid: args.uuid,
    };
    let mut manifest = None;
    if let Some(path) = &args.check {
        let Ok(text) = std::fs::read_to_string(path) else {
            println!("ERROR cannot open manifest {}", escape::shown(path));
            return Err(crate::Failure::Findings(5));
        };
        let entries = Manifest::parse(&text);
        let kinds: Vec<&str> = ["sha256", "sha1", "xxh64", "uuid"]
            .into_iter()
            .filter(|k| entries.kinds.contains(*k))
            .collect();
        if kinds.is_empty() {
            println!(
                "ERROR manifest does not have any known hash format in {}",
                escape::shown(path)
            );
            return Err(crate::Failure::Findings(4));
        }
        println!("manifest  {}  {}", escape::shown(path), kinds.join("  "));
        if algorithms == Algorithms::default() {
            match kinds[0] {
                "sha256" => algorithms.sha256 = true,
                "sha1" => algorithms.sha1 = true,
                "xxh64" => algorithms.xxh64 = true,
                _ => algorithms.uuid = true,
            }
        }
        manifest = Some(entries);
    }
    let algorithms = algorithms.or_default();

    let shown = |e: &dyn std::fmt::Display| format!("{}: {e}", args.file);
    let mut file = std::fs::File::open(&args.file).map_err(|e| shown(&e))?;
    let size = file.metadata().map_err(|e| shown(&e))?.len();
    let header = read_header(&mut file, size).map_err(|e| shown(&e))?;
    let threads = crate::threads(args.threads);
    let mut bar = ProgressBar::new();
    let report = hash_file(
        &mut file,
        &header,
        algorithms,
        !args.no_layer,
        threads,
        &mut |done, total| bar.show(done, total),
    )
    .map_err(|e| shown(&e))?;
    bar.clear();

    if args.json {
        let text = serde_json::to_string(&report).map_err(|e| e.to_string())?;
        println!("{}", escape::json(&text));
        return Ok(());
    }
    match manifest {
        None => {
            print!("{}", escape::lines(&report.to_lines(&args.file)));
            Ok(())
        }
        Some(manifest) => {
            let code = verify(&report, &args.file, &manifest);
            let label = match code {
                0 => "Success",
                3 => "Manifest Missing Entry",
                _ => "Failure",
            };
            println!(
                "\nVerification results for {} - {label}",
                escape::shown(args.check.as_deref().unwrap_or_default())
            );
            match code {
                0 => Ok(()),
                _ => Err(crate::Failure::Findings(code)),
            }
        }
    }
}

/// A manifest: (type, name) → hash, from lines `TYPE  HASH  NAME`.
struct Manifest {
    kinds: std::collections::HashSet<String>,
    entries: HashMap<(String, String), String>,
}

impl Manifest {
    fn parse(text: &str) -> Manifest {
        let mut kinds = std::collections::HashSet::new();
        let mut entries = HashMap::new();
        for line in text.lines() {
            let mut words = line.split_whitespace();
            let Some(kind) = words.next() else { continue };
            if Algorithm::ALL.iter().any(|a| a.name() == kind) {
                kinds.insert(kind.to_string());
            }
            if let (Some(hash), Some(name)) = (words.next(), words.next()) {
                // The first entry for a (type, name) counts, as llama-gguf-hash reads them.
                entries
                    .entry((kind.to_string(), name.to_string()))
                    .or_insert_with(|| hash.to_string());
            }
        }
        Manifest { kinds, entries }
    }

    fn verify(&self, kind: &str, name: &str, hash: &str) -> &'static str {
        match self.entries.get(&(kind.to_string(), name.to_string())) {
            None => "Not Found",
            Some(expected) if expected == hash => "Ok",
            Some(_) => "Mismatch",
        }
    }
}

/// Prints each line with its verdict and returns llama-gguf-hash's exit code. (llama-gguf-hash
/// looks uuid lines up under "sha256", so it never finds them; we look them up as "uuid".)
fn verify(report: &HashReport, file_name: &str, manifest: &Manifest) -> u8 {
    let (mut layer_found, mut layer_bad, mut model_found, mut model_bad) =
        (false, false, false, false);
    for line in report.to_lines(file_name).lines() {
        let mut words = line.split("  ").filter(|w| !w.is_empty());
        let (Some(kind), Some(hash)) = (words.next(), words.next()) else {
            continue;
        };
        let name = &line[line.find(hash).unwrap_or(0) + hash.len() + 2..];
        let verdict = manifest.verify(kind.trim(), name, hash);
        let is_model = name == file_name;
        let (found, bad) = if is_model {
            (&mut model_found, &mut model_bad)
        } else {
            (&mut layer_found, &mut layer_bad)
        };
        *found |= verdict != "Not Found";
        *bad |= verdict == "Mismatch";
        println!("{}  -  {verdict}", escape::shown(line));
    }
    if !model_found {
        if !layer_found {
            3
        } else if layer_bad {
            1
        } else {
            0
        }
    } else if layer_bad || model_bad {
        1
    } else {
        0
    }
}

/// `hashing  42%  1.9 GB/s` on stderr, only when it is a terminal.
struct ProgressBar {
    on: bool,
    start: Instant,
    shown: Option<Instant>,
}

impl ProgressBar {
    fn new() -> ProgressBar {
        ProgressBar {
            on: std::io::stderr().is_terminal(),
            start: Instant::now(),
            shown: None,
        }
    }

    fn show(&mut self, done: u64, total: u64) {
        if !self.on || self.shown.is_some_and(|t| t.elapsed().as_millis() < 100) {
            return;
        }
        self.shown = Some(Instant::now());
        let seconds = self.start.elapsed().as_secs_f64().max(1e-9);
        let percent = (done * 100).checked_div(total).unwrap_or(100);
        eprint!(
            "\rhashing {percent:>3}%  {:.2} GB/s ",
            done as f64 / seconds / 1e9
        );
    }

    fn clear(&self) {
        if self.on && self.shown.is_some() {
            eprint!("\r{:40}\r", "");
        }
    }
}
