//! Dequantization throughput per type, scalar against each SIMD kernel this build can run.
//!
//! Meant for WebAssembly under Node (scripts/bench-wasm.sh builds it with and without simd128),
//! but it runs anywhere:
//!
//! ```text
//! cargo run --release --example bench_dequant_wasm [-- ELEMENTS [TYPE...]]
//! ```
//!
//! Prints Gelem/s (10^9 output values per second), the best of a few runs over about
//! `ELEMENTS` values (default 2^20) of random blocks.

use std::time::{Duration, Instant};

use gguf_lens::{dequantize_with, GgmlType, Kernel};

fn random_bytes(n: usize, mut state: u64) -> Vec<u8> {
    (0..n)
        .map(|_| {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8
        })
        .collect()
}

/// Best time of `runs` calls.
fn best_of(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let elements: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1 << 20);
    let only: Vec<String> = args.collect();
    let kernels = Kernel::available();
    print!("{:<8}", "type");
    for k in &kernels {
        print!(" {:>10}", k.name());
    }
    println!("   (Gelem/s, {elements} values)");
    for ty in GgmlType::ALL {
        if !only.is_empty() && !only.iter().any(|o| o.eq_ignore_ascii_case(ty.name())) {
            continue;
        }
        let block_size = ty.block_size() as usize;
        let blocks = elements.div_ceil(block_size);
        let bytes = random_bytes(blocks * ty.type_size() as usize, 0x9E37_79B9_7F4A_7C15);
        let mut out = vec![0f32; blocks * block_size];
        print!("{:<8}", ty.name());
        for &k in &kernels {
            if k != Kernel::Scalar && k.own_kernel(ty).is_none() {
                print!(" {:>10}", "-");
                continue;
            }
            let time = best_of(5, || {
                dequantize_with(k, ty, &bytes, &mut out).expect("whole blocks");
            });
            let rate = out.len() as f64 / time.as_secs_f64().max(1e-9) / 1e9;
            print!(" {rate:>10.2}");
        }
        println!();
    }
}
