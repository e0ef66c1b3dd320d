//! Single-thread dequantization speed, scalar vs this CPU's SIMD kernel.
//!
//! `cargo run --release --example bench_dequant -- [--size 1M|64M] [--types Q4_0,Q6_K] [--no-fill]
//! [--kernels scalar,avx2] [--fill-only] [--list-types]`
//!
//! Prints, per size and type, Gelem/s (f32 outputs per second, median of several runs into a
//! reused output buffer) for the scalar kernel and for the best SIMD kernel (or the kernels
//! named by `--kernels`; `-` where a SIMD kernel has no own kernel for the type), then the f32
//! store bandwidth ceiling (plain and non-temporal fill of 1 GiB; `--fill-only`: nothing else).
//! At 16M+ elements a row also has `nt_fill`, a non-temporal fill of the same buffer timed
//! between the best kernel's runs. `--list-types` prints the default types. It also runs as wasm32-wasip1
//! under Node (benches/run.sh does that, with `--no-fill`). Input blocks are random bytes with
//! every scale field set to a finite value near 1 (see `finite_scales`, mirrored by
//! benches/bench_ggml.py), so NaN handling does not skew the timing.

use std::time::Instant;

use gguf_lens::{dequantize_with, GgmlType, Kernel};

/// xorshift64*.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// The types with an AVX2 kernel, in the order of the table.
const DEFAULT_TYPES: &str = "F16,BF16,Q8_0,Q8_1,Q8_K,Q4_0,Q4_1,Q5_0,Q5_1,Q6_K,Q4_K,Q5_K,Q3_K,\
Q2_K,IQ4_NL,IQ4_XS,IQ2_XXS,IQ2_XS,IQ2_S,IQ3_XXS,IQ3_S,IQ1_S,IQ1_M,MXFP4,NVFP4,TQ2_0,TQ1_0,\
Q1_0,Q2_0";

/// Where the scales of one block are: (byte offset, kind). Kind "f16" fields become a random
/// f16 in [0.5, 1), "f32" ones a random f32 in [0.5, 1), "e8m0" bytes become 127 or 128;
/// "iq1m" is IQ1_M's f16 spread over the top nibbles of four u16 from that offset. UE4M3
/// scales (NVFP4) are never NaN and stay random. Mirrored in benches/bench_ggml.py.
fn scale_fields(ty: GgmlType) -> &'static [(usize, &'static str)] {
    match ty {
        GgmlType::Q4_0 | GgmlType::Q5_0 | GgmlType::Q8_0 | GgmlType::IQ4_NL => &[(0, "f16")],
        GgmlType::Q1_0 | GgmlType::Q2_0 | GgmlType::IQ4_XS => &[(0, "f16")],
        GgmlType::IQ2_XXS | GgmlType::IQ2_XS | GgmlType::IQ2_S => &[(0, "f16")],
        GgmlType::IQ3_XXS | GgmlType::IQ3_S | GgmlType::IQ1_S => &[(0, "f16")],
        GgmlType::IQ1_M => &[(48, "iq1m")],
        GgmlType::Q8_K => &[(0, "f32")],
        GgmlType::Q4_1 | GgmlType::Q5_1 | GgmlType::Q4_K | GgmlType::Q5_K | GgmlType::Q8_1 => {
            &[(0, "f16"), (2, "f16")]
        }
        GgmlType::Q2_K => &[(80, "f16"), (82, "f16")],
        GgmlType::Q3_K => &[(108, "f16")],
        GgmlType::Q6_K => &[(208, "f16")],
        GgmlType::TQ1_0 => &[(52, "f16")],
        GgmlType::TQ2_0 => &[(64, "f16")],
        GgmlType::MXFP4 => &[(0, "e8m0")],
        _ => &[],
    }
}

/// Random blocks of `ty` for `n` elements, scales finite.
fn random_blocks(ty: GgmlType, n: usize, rng: &mut Rng) -> Vec<u8> {
    let size = ty.type_size() as usize;
    let count = n / ty.block_size() as usize;
    let mut bytes = vec![0u8; count * size];
    for chunk in bytes.chunks_mut(8) {
        let r = rng.next().to_le_bytes();
        chunk.copy_from_slice(&r[..chunk.len()]);
    }
    match ty {
        GgmlType::F16 => fix_halves(&mut bytes, 0x83FF, 0x3800),
        GgmlType::BF16 => fix_halves(&mut bytes, 0x807F, 0x3F00),
        _ => {
            for block in bytes.chunks_exact_mut(size) {
                for &(at, kind) in scale_fields(ty) {
                    let r = rng.next() as u16;
                    let h = 0x3800 | (r & 0x03FF);
                    match kind {
                        "f16" => block[at..at + 2].copy_from_slice(&h.to_le_bytes()),
                        "f32" => {
                            let f = f32::from_bits(0x3F00_0000 | (rng.next() as u32 & 0x7F_FFFF));
                            block[at..at + 4].copy_from_slice(&f.to_le_bytes());
                        }
                        "iq1m" => {
                            for i in 0..4 {
                                let nibble = ((h >> (4 * i)) & 0xF) as u8;
                                let top = at + 2 * i + 1;
                                block[top] = (block[top] & 0x0F) | nibble << 4;
                            }
                        }
                        _ => block[at] = 127 + (r & 1) as u8,
                    }
                }
            }
        }
    }
    bytes
}

/// Every 16-bit element `(x & keep) | set`: finite, near 1.
fn fix_halves(bytes: &mut [u8], keep: u16, set: u16) {
    for pair in bytes.chunks_exact_mut(2) {
        let h = (u16::from_le_bytes([pair[0], pair[1]]) & keep) | set;
        pair.copy_from_slice(&h.to_le_bytes());
    }
}

/// Median seconds of `runs` calls of `f`.
fn median_secs(runs: usize, mut f: impl FnMut()) -> f64 {
    f(); // warm up (and fault in the output pages)
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn parse_size(s: &str) -> usize {
    let (num, mult) = match s.as_bytes().last() {
        Some(b'M' | b'm') => (&s[..s.len() - 1], 1 << 20),
        Some(b'K' | b'k') => (&s[..s.len() - 1], 1 << 10),
        _ => (s, 1),
    };
    num.parse::<usize>().expect("--size: a number with K or M") * mult
}

fn fill_ceiling() {
    let n = 1usize << 28; // 1 GiB of f32
    let mut buf = vec![0f32; n];
    let plain = median_secs(5, || {
        buf.fill(std::hint::black_box(1.5));
        std::hint::black_box(&mut buf);
    });
    println!("fill_plain\t{:.3}", n as f64 / plain / 1e9);
    #[cfg(target_arch = "x86_64")]
    if is_x86_feature_detected!("avx") {
        let nt = median_secs(5, || {
            // SAFETY: AVX was detected just above.
            unsafe { stream_fill(&mut buf, 1.5) }
        });
        println!("fill_nt\t{:.3}", n as f64 / nt / 1e9);
    }
}

/// Big outputs only (16M+ elements): the NT fill rate of an `n`-f32 buffer, timed alternately
/// with `step(false)` (the kernel) by `step(true)` (the fill); `None` where there is no NT fill.
fn nt_fill_beside(runs: usize, n: usize, mut step: impl FnMut(bool)) -> Option<f64> {
    if n < 16 << 20 || !has_stream_fill() {
        return None;
    }
    step(true);
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            step(false);
            let t = Instant::now();
            step(true);
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    Some(n as f64 / times[times.len() / 2] / 1e9)
}

fn has_stream_fill() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        is_x86_feature_detected!("avx")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `stream_fill` where AVX exists (callers check `has_stream_fill`), else a plain fill.
fn stream_fill_any(buf: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if is_x86_feature_detected!("avx") {
        // SAFETY: AVX was detected just above.
        unsafe { stream_fill(buf, 1.5) };
        return;
    }
    buf.fill(std::hint::black_box(1.5));
}

/// Fills `buf` with non-temporal stores (an unaligned head and tail with plain ones).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn stream_fill(buf: &mut [f32], x: f32) {
    use std::arch::x86_64::*;
    // SAFETY: align_to_mut gives a 32-byte-aligned middle of whole __m256 values.
    let (head, mid, tail) = buf.align_to_mut::<__m256>();
    head.fill(x);
    tail.fill(x);
    let v = _mm256_set1_ps(x);
    for m in mid.iter_mut() {
        // SAFETY: m is an aligned, valid __m256 slot inside buf.
        _mm256_stream_ps((m as *mut __m256).cast(), v);
    }
    _mm_sfence();
}

fn main() {
    let mut sizes = vec!["1M".to_string(), "64M".to_string()];
    let mut types = DEFAULT_TYPES.to_string();
    let mut fill = true;
    let mut chosen: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--size" => {
                sizes = args
                    .next()
                    .expect("--size value")
                    .split(',')
                    .map(String::from)
                    .collect()
            }
            "--types" => types = args.next().expect("--types value"),
            "--no-fill" => fill = false,
            "--fill-only" => types.clear(),
            "--list-types" => {
                println!("{DEFAULT_TYPES}");
                return;
            }
            "--kernels" => chosen = Some(args.next().expect("--kernels value")),
            "--bench" => {} // passed by `cargo bench`-style runners
            other => panic!("unknown argument {other}"),
        }
    }
    // Scalar, then the best SIMD kernel of this build and CPU (if any), unless named.
    let kernels: Vec<Kernel> = match &chosen {
        Some(list) => list
            .split(',')
            .map(|name| Kernel::from_name(name.trim()).expect("--kernels: an available kernel"))
            .collect(),
        None if Kernel::best() != Kernel::Scalar => vec![Kernel::Scalar, Kernel::best()],
        None => vec![Kernel::Scalar],
    };
    let names: Vec<&str> = kernels.iter().map(|k| k.name()).collect();
    println!("# single thread, Gelem/s (f32 outputs per second), median");
    println!("size\ttype\t{}\tnt_fill", names.join("\t"));
    let mut rng = Rng(0x5EED_1234_ABCD_0001);
    for size in &sizes {
        let n = parse_size(size);
        let runs = if n > 8 << 20 { 7 } else { 15 };
        if fill {
            // The plain-store ceiling at this size (an output buffer of n f32, reused).
            let mut buf = vec![0f32; n];
            let t = median_secs(runs, || {
                buf.fill(std::hint::black_box(1.5));
                std::hint::black_box(&mut buf);
            });
            println!("fill_plain@{size}\t{:.3}", n as f64 / t / 1e9);
        }
        for name in types.split(',').filter(|t| !t.is_empty()) {
            let ty = GgmlType::from_name(name.trim()).expect("a ggml type name");
            let n = n / ty.block_size() as usize * ty.block_size() as usize;
            let blocks = random_blocks(ty, n, &mut rng);
            let mut out = vec![0f32; n];
            let mut rate = |k: Kernel| {
                let t = median_secs(runs, || {
                    dequantize_with(k, ty, std::hint::black_box(&blocks), &mut out).unwrap();
                    std::hint::black_box(&mut out);
                });
                n as f64 / t / 1e9
            };
            let mut rates: Vec<String> = kernels
                .iter()
                .map(|&k| {
                    if k == Kernel::Scalar || k.own_kernel(ty).is_some() {
                        format!("{:.3}", rate(k))
                    } else {
                        "-".to_string()
                    }
                })
                .collect();
            // The non-temporal fill of this same output buffer, timed alternately with the
            // best kernel, so both see the same contention on a shared machine.
            let best = *kernels.last().expect("a kernel");
            rates.push(
                match nt_fill_beside(runs, n, |fill_it| {
                    if fill_it {
                        stream_fill_any(&mut out);
                    } else {
                        dequantize_with(best, ty, std::hint::black_box(&blocks), &mut out).unwrap();
                    }
                    std::hint::black_box(&mut out);
                }) {
                    Some(rate) => format!("{rate:.3}"),
                    None => "-".to_string(),
                },
            );
            println!("{size}\t{name}\t{}", rates.join("\t"));
        }
    }
    if fill {
        fill_ceiling();
    }
}
