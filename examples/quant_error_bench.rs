//! CPU time of the quantization-error path, one thread, in ns per value:
//! `cargo run --release --example quant_error_bench -- [ROWS] [ROW_LEN]` (default 160 × 24576,
//! N(0, 0.02)-like values stored as Q4_K, as the viewer's 100M-value benchmark tensor). Prints per
//! type `quantize` (the quantizer alone) and `add` (one type's `QuantErrorMeter` fed the whole buffer),
//! then `job`: the chart's work for every value — dequantize the Q4_K rows and measure all 17
//! types (`QuantErrorSet`, as the wasm job runs it). Best of `GGUF_LENS_BENCH_REPS` (3) runs,
//! thread CPU time (Linux; under WASI the process's). `GGUF_LENS_BENCH_Q4K=FILE` takes the Q4_K
//! rows from FILE's first bytes instead (a tensor's data cut out of a model);
//! `GGUF_LENS_BENCH_ONLY=Q4_K` prints that type's line alone, without the job (for a profile);
//! `GGUF_LENS_BENCH_JOB=1` the job alone. As wasm32-wasip1 simd128: docs/benchmarks.md.

use std::time::Instant;

use gguf_lens::quantize::{
    quantize_row, quantized_size, QuantErrorMeter, QuantErrorSet, SUPPORTED,
};
use gguf_lens::types::GgmlType;
#[path = "common/cpu_clock.rs"]
mod cpu_clock;
use cpu_clock::thread_cpu;

fn main() {
    let mut args = std::env::args().skip(1);
    let rows: usize = args.next().map_or(160, |a| a.parse().expect("ROWS"));
    let row_len: usize = args.next().map_or(24576, |a| a.parse().expect("ROW_LEN"));
    let reps: usize = std::env::var("GGUF_LENS_BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let n = rows * row_len;
    // Normal-ish values (sum of 4 uniforms), the scale of real weights.
    let mut s = 0x2545f4914f6cdd1du64;
    let mut uniform = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    let raw: Vec<f32> = (0..n)
        .map(|_| (uniform() + uniform() + uniform() + uniform()) * 0.035)
        .collect();
    let mut q4k = vec![0u8; quantized_size(GgmlType::Q4_K, n).unwrap()];
    quantize_row(GgmlType::Q4_K, &raw, &mut q4k).unwrap();
    // GGUF_LENS_BENCH_Q4K=FILE: raw Q4_K rows instead (e.g. the start of a tensor's data).
    if let Ok(path) = std::env::var("GGUF_LENS_BENCH_Q4K") {
        let bytes = std::fs::read(&path).expect("read GGUF_LENS_BENCH_Q4K");
        let len = q4k.len();
        q4k.copy_from_slice(&bytes[..len]);
    }
    let mut values = vec![0f32; n];
    gguf_lens::quant::dequantize(GgmlType::Q4_K, &q4k, &mut values).unwrap();

    let ns = |secs: f64| secs * 1e9 / n as f64;
    // GGUF_LENS_BENCH_JOB=1: the job alone.
    let job_only = std::env::var("GGUF_LENS_BENCH_JOB").is_ok_and(|v| v == "1");
    let mut sum_q = 0.0;
    let mut sum_add = 0.0;
    let only = std::env::var("GGUF_LENS_BENCH_ONLY").ok();
    for ty in SUPPORTED
        .into_iter()
        .filter(|_| !job_only)
        .filter(|t| only.as_deref().map_or(true, |o| o == t.name()))
    {
        let mut dst = vec![0u8; quantized_size(ty, n).unwrap()];
        let q = best(reps, || quantize_row(ty, &values, &mut dst).unwrap());
        let add = best(reps, || {
            let mut acc = QuantErrorMeter::for_rows(ty, row_len as u64);
            acc.add(&values).unwrap();
            std::hint::black_box(acc.report());
        });
        sum_q += ns(q);
        sum_add += ns(add);
        println!(
            "{:<7} quantize {:6.2}  add {:6.2}  rest {:5.2} ns/value",
            ty.name(),
            ns(q),
            ns(add),
            ns(add) - ns(q)
        );
    }
    if !job_only {
        println!(
            "sum     quantize {sum_q:6.2}  add {sum_add:6.2}  rest {:5.2} ns/value",
            sum_add - sum_q
        );
    }
    if only.is_some() {
        return;
    }
    let row_bytes = q4k.len() / rows;
    let job = best(reps, || {
        let mut set = QuantErrorSet::new(&SUPPORTED, row_len as u64);
        // As the wasm job: a few rows dequantized at a time, each batch fed to every type.
        let batch = (16384 / row_len).max(1);
        let mut buf = vec![0f32; batch * row_len];
        for bytes in q4k.chunks(batch * row_bytes) {
            let out = &mut buf[..bytes.len() / row_bytes * row_len];
            gguf_lens::quant::dequantize(GgmlType::Q4_K, bytes, out).unwrap();
            set.add(out).unwrap();
        }
        std::hint::black_box(set.reports());
    });
    println!("job (Q4_K rows → 17 types) {:6.2} ns/value", ns(job));
}

fn best(reps: usize, mut f: impl FnMut()) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let (start, c0) = (Instant::now(), thread_cpu());
        f();
        let secs = match (thread_cpu(), c0) {
            (Some(c1), Some(c0)) => c1 - c0,
            _ => start.elapsed().as_secs_f64(),
        };
        best = best.min(secs);
    }
    best
}
