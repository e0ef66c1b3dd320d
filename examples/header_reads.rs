//! How many reads, and how many bytes, the npm package's header reader (js/prefix.js) takes on
//! GGUF files: 64 KiB first, then up to max(at_least, 1.05 × estimate + 32 KiB) while the parser
//! says NeedMore. Files that end at their header (llama.cpp's vocabulary-only files) are read as
//! if a data section followed, so a read may run past the header as it would in a model.
//!
//!   cargo run --release --example header_reads -- FILE.gguf...
use gguf_lens::{parse, ParseStatus};

const FIRST_READ: usize = 64 * 1024;
const SLACK_FRACTION: f64 = 0.05;
const SLACK_BYTES: f64 = 32.0 * 1024.0;

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        eprintln!("usage: header_reads FILE.gguf...");
        std::process::exit(2);
    }
    println!(
        "| file | header bytes | reads | bytes read (× header) | within 1.1 × header + 64 KiB |"
    );
    println!("|---|---:|---:|---:|---|");
    for path in paths {
        let mut bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let header = match parse(&bytes, Some(bytes.len() as u64)) {
            Ok(ParseStatus::Complete(file)) => file.data_offset(),
            other => panic!("{path}: {other:?}"),
        };
        // A data section after the header, as a model has.
        bytes.resize(bytes.len() * 3, 0);
        let size = Some(bytes.len() as u64);
        let mut have = FIRST_READ.min(bytes.len());
        let mut reads = 1;
        while let ParseStatus::NeedMore { at_least, estimate } =
            parse(&bytes[..have], size).unwrap()
        {
            let next =
                (at_least as f64).max(estimate as f64 * (1.0 + SLACK_FRACTION) + SLACK_BYTES);
            have = (next.ceil() as usize).max(have + 1).min(bytes.len());
            reads += 1;
        }
        let within = have as f64 <= 1.1 * header as f64 + 65536.0;
        let name = path.rsplit('/').next().unwrap_or(&path);
        println!(
            "| {name} | {header} | {reads} | {have} ({:.2}×) | {} |",
            have as f64 / header as f64,
            if within { "yes" } else { "no" }
        );
    }
}
