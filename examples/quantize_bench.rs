//! Single-thread quantizer throughput: `cargo run --release --example quantize_bench -- FILE.f32
//! [TYPES...]` reads raw little-endian f32 (a multiple of 256 values) and prints, per type, the
//! best of 3 runs as `TYPE seconds Gelem/s`. benches/bench_quantize.py runs it beside ggml.
//! `GGUF_LENS_BENCH_CPU=1` times with the thread's CPU clock (Linux; WASI: the process's) instead of the wall clock,
//! to compare builds on a busy machine; `GGUF_LENS_BENCH_REPS=N` runs N times instead of 3.

use std::time::Instant;

use gguf_lens::quantize::{quantize_row, quantized_size, SUPPORTED};
use gguf_lens::types::GgmlType;
#[path = "common/cpu_clock.rs"]
mod cpu_clock;
use cpu_clock::thread_cpu;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: quantize_bench FILE.f32 [TYPES...]");
    let bytes = std::fs::read(&path).expect("read input");
    let values: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let types: Vec<GgmlType> = {
        let named: Vec<GgmlType> = args
            .map(|n| GgmlType::from_name(&n).expect("type name"))
            .collect();
        if named.is_empty() {
            SUPPORTED.to_vec()
        } else {
            named
        }
    };
    let cpu = std::env::var("GGUF_LENS_BENCH_CPU").is_ok_and(|v| v == "1");
    let reps: usize = std::env::var("GGUF_LENS_BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    for ty in types {
        let mut dst = vec![0u8; quantized_size(ty, values.len()).expect("size")];
        let mut best = f64::INFINITY;
        for _ in 0..reps {
            let (start, c0) = (Instant::now(), thread_cpu());
            quantize_row(ty, &values, &mut dst).expect("quantize");
            let secs = match (cpu, thread_cpu(), c0) {
                (true, Some(c1), Some(c0)) => c1 - c0,
                _ => start.elapsed().as_secs_f64(),
            };
            best = best.min(secs);
        }
        println!(
            "{} {:.6} {:.4}",
            ty.name(),
            best,
            values.len() as f64 / best / 1e9
        );
    }
}
