//! How many reads, and how many bytes, the npm package's header reader (js/prefix.js) takes on
//! GGUF files, for both of its policies: 64 KiB first, then, while the parser says NeedMore,
//! range requests up to max(at_least, 1.05 × estimate + 32 KiB) (a File, a Range server after
//! the first request), or one stream parsed again at max(at_least, halfway to the estimate,
//! 128 KiB more) (a URL).
//! Each step goes at most as far past what was read as js/prefix.js trusts a guess. Files that
//! end at their header (llama.cpp's vocabulary-only files) are read as if a data section
//! followed, so a read may run past the header as it would in a model.
//!
//!   cargo run --release --example header_reads -- FILE.gguf...
use gguf_lens::{parse, ParseStatus};

const FIRST_READ: usize = 64 * 1024;
const SLACK_FRACTION: f64 = 0.05;
const SLACK_BYTES: f64 = 32.0 * 1024.0;
const STREAM_MIN_STEP: f64 = 128.0 * 1024.0;
/// (fraction of what was read, bytes): a step goes at most max(fraction × read, bytes) further.
const REQUEST_TRUST: (f64, f64) = (15.0, 16.0 * 1024.0 * 1024.0);
const STREAM_TRUST: (f64, f64) = (0.5, 4.0 * 1024.0 * 1024.0);

/// Reads and bytes read until the header parses, with requests or one stream.
fn reads(bytes: &[u8], streaming: bool) -> (usize, usize) {
    let size = Some(bytes.len() as u64);
    let mut have = FIRST_READ.min(bytes.len());
    let mut reads = 1;
    while let ParseStatus::NeedMore { at_least, estimate } = parse(&bytes[..have], size).unwrap() {
        let (fraction, step) = if streaming {
            STREAM_TRUST
        } else {
            REQUEST_TRUST
        };
        let read = have as f64;
        let trusted = read + (read * fraction).max(step);
        let (guess, least) = if streaming {
            (
                read + (estimate as f64 - read).max(0.0) / 2.0,
                read + STREAM_MIN_STEP,
            )
        } else {
            (
                estimate as f64 * (1.0 + SLACK_FRACTION) + SLACK_BYTES,
                read + 1.0,
            )
        };
        let next = (at_least as f64).max(guess.min(trusted)).max(least);
        have = (next.ceil() as usize).min(bytes.len());
        reads += 1;
    }
    (reads, have)
}

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        eprintln!("usage: header_reads FILE.gguf...");
        std::process::exit(2);
    }
    println!("| file | header bytes | requests: reads, bytes (× header) | stream: reads, bytes (× header) | within 1.1 × header + 64 KiB |");
    println!("|---|---:|---:|---:|---|");
    for path in paths {
        let mut bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let header = match parse(&bytes, Some(bytes.len() as u64)) {
            Ok(ParseStatus::Complete(file)) => file.data_offset() as f64,
            other => panic!("{path}: {other:?}"),
        };
        // A data section after the header, as a model has.
        bytes.resize(bytes.len() * 3, 0);
        let (request_reads, request_bytes) = reads(&bytes, false);
        let (stream_reads, stream_bytes) = reads(&bytes, true);
        let within = |have: usize| have as f64 <= 1.1 * header + 65536.0;
        let name = path.rsplit('/').next().unwrap_or(&path);
        println!(
            "| {name} | {header} | {request_reads}, {request_bytes} ({:.2}×) | {stream_reads}, {stream_bytes} ({:.2}×) | {} |",
            request_bytes as f64 / header,
            stream_bytes as f64 / header,
            if within(request_bytes) && within(stream_bytes) { "yes" } else { "no" }
        );
    }
}
