//! Single-thread quantizer throughput: `cargo run --release --example quantize_bench -- FILE.f32
//! [TYPES...]` reads raw little-endian f32 (a multiple of 256 values) and prints, per type, the
//! best of 3 runs as `TYPE seconds Gelem/s`. benches/bench_quantize.py runs it beside ggml.

use std::time::Instant;

use gguf_lens::quantize::{quantize_row, quantized_size, SUPPORTED};
use gguf_lens::types::GgmlType;

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
    for ty in types {
        let mut dst = vec![0u8; quantized_size(ty, values.len()).expect("size")];
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let start = Instant::now();
            quantize_row(ty, &values, &mut dst).expect("quantize");
            best = best.min(start.elapsed().as_secs_f64());
        }
        println!(
            "{} {:.4} {:.3}",
            ty.name(),
            best,
            values.len() as f64 / best / 1e9
        );
    }
}
