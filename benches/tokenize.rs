//! Native tokenizer throughput: for each GGUF, the median MB/s of `tokenize(text, true, false)`
//! over several runs (after one warm-up run that builds the lazy indexes), plus the token count
//! and an FNV hash of the ids so the same run can be checked against llama.cpp's.
//!     cargo bench --bench tokenize -- TEXT_FILE RUNS GGUF...
//! Prints one JSON object per line: {"file", "mb_s", "tokens", "hash", "first_ms"}.

use std::time::Instant;

use gguf_lens::gguf::read_header;
use gguf_lens::tokenizer::Tokenizer;

fn fnv(ids: &[i32]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &id in ids {
        for b in id.to_le_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    h
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let [text_path, runs, files @ ..] = args.as_slice() else {
        eprintln!("usage: tokenize TEXT_FILE RUNS GGUF...");
        std::process::exit(2);
    };
    let text = std::fs::read(text_path).expect("text file");
    let runs: usize = runs.parse().expect("runs");
    for path in files {
        let mut f = std::fs::File::open(path).expect("gguf");
        let size = f.metadata().expect("metadata").len();
        let t0 = Instant::now();
        let header = read_header(&mut f, size).expect("header");
        let tok = Tokenizer::from_gguf(&header).expect("tokenizer");
        let first = tok.tokenize(b"Hello", true, false);
        let first_ms = t0.elapsed().as_secs_f64() * 1e3;
        std::hint::black_box(first);
        let ids = tok.tokenize(&text, true, false);
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            let t = Instant::now();
            let again = tok.tokenize(&text, true, false);
            times.push(t.elapsed().as_secs_f64());
            assert_eq!(again.len(), ids.len());
        }
        times.sort_by(|a, b| a.total_cmp(b));
        let median = times[times.len() / 2];
        println!(
            "{{\"file\":{:?},\"mb_s\":{:.2},\"tokens\":{},\"hash\":\"{:016x}\",\"first_ms\":{:.1}}}",
            path,
            text.len() as f64 / 1e6 / median,
            ids.len(),
            fnv(&ids),
            first_ms
        );
    }
}
