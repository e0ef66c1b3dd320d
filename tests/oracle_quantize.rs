//! Quantizers against ggml: fixtures/make_quantize.py ran ggml's `ggml_quantize_chunk` (no
//! importance matrix) over 102,400 generated rows of 256 values (tests/common/quant_rows.rs
//! regenerates them); here every type's output must hash the same, chunk by chunk, and the first
//! rows must equal ggml's committed bytes. Then a round trip through our dequantizer.

mod common;

use std::path::PathBuf;

use common::quant_rows::{self, N_PER_ROW};
use gguf_lens::quant::dequantize;
use gguf_lens::quantize::{quantize_row, quantized_size};
use gguf_lens::types::GgmlType;
use gguf_lens::{Error, ErrorKind};
use serde_json::Value;
use sha2::{Digest, Sha256};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/quantize")
}

fn manifest() -> Value {
    let text = std::fs::read_to_string(fixtures().join("manifest.json")).expect("manifest.json");
    serde_json::from_str(&text).expect("manifest.json parses")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Rows first..first+count of the oracle's input.
fn rows(first: u64, count: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; count * N_PER_ROW];
    for (i, chunk) in out.chunks_exact_mut(N_PER_ROW).enumerate() {
        let row: &mut [f32; N_PER_ROW] = chunk.try_into().unwrap();
        quant_rows::row(first + i as u64, row);
    }
    out
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Where our bytes first differ from ggml's, as a readable line.
fn first_difference(ty: GgmlType, ours: &[u8], theirs: &[u8], row_bytes: usize) -> String {
    let block_bytes = ty.type_size() as usize;
    let at = ours
        .iter()
        .zip(theirs)
        .position(|(a, b)| a != b)
        .unwrap_or(ours.len().min(theirs.len()));
    let block = at / block_bytes;
    let row = at / row_bytes;
    let range = block * block_bytes
        ..((block + 1) * block_bytes)
            .min(ours.len())
            .min(theirs.len());
    format!(
        "{ty}: first difference at byte {at} (row {row}, kind {}, block {block}):\n  ours   {}\n  ggml   {}",
        row as u64 % quant_rows::KINDS,
        hex(&ours[range.clone()]),
        hex(&theirs[range])
    )
}

/// Every type's bytes for `src`, the types split over two threads where there are threads (the
/// K and IQ4 searches take most of the time).
fn quantize_all(types: &[(GgmlType, Value)], src: &[f32]) -> Vec<Vec<u8>> {
    let one = |ty: GgmlType| {
        let mut dst = vec![0u8; quantized_size(ty, src.len()).unwrap()];
        quantize_row(ty, src, &mut dst).unwrap_or_else(|e| panic!("{ty}: {e}"));
        dst
    };
    if cfg!(target_os = "wasi") {
        return types.iter().map(|(ty, _)| one(*ty)).collect();
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|t| {
                s.spawn(move || {
                    types
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| i % 2 == t)
                        .map(|(i, (ty, _))| (i, one(*ty)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<(usize, Vec<u8>)> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        all.sort_by_key(|(i, _)| *i);
        all.into_iter().map(|(_, d)| d).collect()
    })
}

#[test]
fn quantizers_are_bit_exact_to_ggml() {
    let manifest = manifest();
    let all_rows = manifest["rows"].as_u64().unwrap() as usize;
    let chunk_rows = manifest["chunk_rows"].as_u64().unwrap() as usize;
    // Under WASI (Node, one thread) and under an emulator (qemu for aarch64: the runner sets
    // GGUF_LENS_TEST_RUNNER) the first two chunks: the whole run takes minutes there.
    let emulated = std::env::var_os("GGUF_LENS_TEST_RUNNER").is_some();
    let total_rows = if cfg!(target_os = "wasi") || emulated {
        all_rows.min(2 * chunk_rows)
    } else {
        all_rows
    };
    let raw_rows = manifest["raw_rows"].as_u64().unwrap() as usize;
    assert_eq!(manifest["n_per_row"].as_u64(), Some(N_PER_ROW as u64));
    assert_eq!(manifest["seed"].as_u64(), Some(quant_rows::SEED));
    let types: Vec<(GgmlType, Value)> = manifest["types"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, v)| (GgmlType::from_name(name).expect(name), v.clone()))
        .collect();
    assert_eq!(types.len(), gguf_lens::quantize::SUPPORTED.len());

    let mut failures = Vec::new();
    let mut total_hash: Vec<Sha256> = types.iter().map(|_| Sha256::new()).collect();
    for (c, first) in (0..total_rows).step_by(chunk_rows).enumerate() {
        let count = chunk_rows.min(total_rows - first);
        let src = rows(first as u64, count);
        let want = manifest["input_chunk_sha256"][c].as_str().unwrap();
        assert_eq!(
            hex(&Sha256::digest(f32_bytes(&src))),
            want,
            "the generated input rows {first}.. differ from the oracle's: tests/common/quant_rows.rs \
             and fixtures/make_quantize.py disagree"
        );
        let results = quantize_all(&types, &src);
        for (i, ((ty, spec), ours)) in types.iter().zip(&results).enumerate() {
            total_hash[i].update(ours);
            let row_bytes = spec["row_bytes"].as_u64().unwrap() as usize;
            if c == 0 {
                let raw = std::fs::read(fixtures().join(spec["raw"].as_str().unwrap())).unwrap();
                assert_eq!(raw.len(), raw_rows * row_bytes);
                if ours[..raw.len()] != raw[..] {
                    failures.push(first_difference(*ty, &ours[..raw.len()], &raw, row_bytes));
                }
            }
            let want = spec["chunk_sha256"][c].as_str().unwrap();
            let reported = failures.iter().any(|f| f.starts_with(&format!("{ty}: ")));
            if hex(&Sha256::digest(ours)) != want && !reported {
                failures.push(format!(
                    "{ty}: rows {first}..{} differ from ggml's",
                    first + count
                ));
            }
        }
    }
    for ((ty, spec), hash) in types.iter().zip(total_hash) {
        if total_rows == all_rows && hex(&hash.finalize()) != spec["sha256"].as_str().unwrap() {
            failures.push(format!(
                "{ty}: sha256 over all {total_rows} rows differs from ggml's"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Round trip through our own dequantizer: the error is bounded by the block's range (a sanity
/// check of layouts; the oracle above is what proves exactness).
#[test]
fn round_trip_error_is_small_on_normal_rows() {
    // Worst-case |error| / max|x| over a row of normal values, generous per type.
    let bounds = [
        (GgmlType::F16, 0.001),
        (GgmlType::BF16, 0.01),
        (GgmlType::Q8_0, 0.01),
        (GgmlType::Q5_0, 0.05),
        (GgmlType::Q5_1, 0.05),
        (GgmlType::Q4_0, 0.1),
        (GgmlType::Q4_1, 0.1),
        (GgmlType::Q6_K, 0.03),
        (GgmlType::Q5_K, 0.06),
        (GgmlType::Q4_K, 0.12),
        (GgmlType::Q3_K, 0.3),
        (GgmlType::Q2_K, 0.5),
        (GgmlType::IQ4_NL, 0.15),
        (GgmlType::IQ4_XS, 0.15),
        (GgmlType::MXFP4, 0.35),
        (GgmlType::TQ2_0, 0.6),
        (GgmlType::TQ1_0, 0.6),
    ];
    for row in (0..64u64).filter(|r| r % quant_rows::KINDS == 0) {
        let src = rows(row, 1);
        let amax = src.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        for (ty, bound) in bounds {
            let mut q = vec![0u8; quantized_size(ty, src.len()).unwrap()];
            quantize_row(ty, &src, &mut q).unwrap();
            let mut back = vec![0.0f32; src.len()];
            dequantize(ty, &q, &mut back).unwrap();
            let worst = src
                .iter()
                .zip(&back)
                .fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
            assert!(
                worst <= bound * amax,
                "{ty} row {row}: |err| {worst} > {bound}·{amax}"
            );
        }
    }
}

#[test]
fn a_scale_beyond_f16_is_refused() {
    let mut src = vec![0.0f32; 256];
    src[7] = 3.0e38;
    for ty in gguf_lens::quantize::SUPPORTED {
        let mut dst = vec![0u8; quantized_size(ty, src.len()).unwrap()];
        let result = quantize_row(ty, &src, &mut dst);
        match ty {
            // Element conversions keep ggml's behaviour (infinity for F16, rounding for BF16);
            // MXFP4's E8M0 exponent covers the whole f32 range.
            GgmlType::F16 | GgmlType::BF16 | GgmlType::MXFP4 => assert!(result.is_ok(), "{ty}"),
            _ => assert!(
                matches!(
                    result,
                    Err(Error {
                        kind: ErrorKind::ScaleOverflow { block: 0, .. },
                        ..
                    })
                ),
                "{ty}: {result:?}"
            ),
        }
    }
}

/// Quantizing block by block (and IQ4_NL in odd runs of 1, 3 and 5 blocks, which take its
/// remainder path) gives ggml's bytes too: rows are independent of how they are cut.
#[test]
fn pieces_give_ggmls_bytes() {
    let manifest = manifest();
    let raw_rows = manifest["raw_rows"].as_u64().unwrap() as usize;
    let src = rows(0, raw_rows);
    for (name, spec) in manifest["types"].as_object().unwrap() {
        let ty = GgmlType::from_name(name).unwrap();
        let raw = std::fs::read(fixtures().join(spec["raw"].as_str().unwrap())).unwrap();
        let block = ty.block_size() as usize;
        let block_bytes = ty.type_size() as usize;
        let pieces: Vec<usize> = if ty == GgmlType::IQ4_NL {
            vec![1, 3, 5, 8, 16, 7] // blocks per call, cycled
        } else {
            vec![1]
        };
        let mut ours = Vec::with_capacity(raw.len());
        let (mut at, mut k) = (0usize, 0usize);
        while at < src.len() {
            let n = (pieces[k % pieces.len()] * block).min(src.len() - at);
            let mut dst = vec![0u8; n / block * block_bytes];
            quantize_row(ty, &src[at..at + n], &mut dst).unwrap();
            ours.extend_from_slice(&dst);
            at += n;
            k += 1;
        }
        let row_bytes = spec["row_bytes"].as_u64().unwrap() as usize;
        assert!(
            ours == raw,
            "{}",
            first_difference(ty, &ours, &raw, row_bytes)
        );
    }
}

/// F16 and BF16 element conversions against ggml on every top-16-bit pattern (NaNs, infinities,
/// overflow, subnormals) with low halves at and beside the rounding ties.
#[test]
fn f16_and_bf16_match_ggml_on_special_values() {
    let manifest = manifest();
    let lows: Vec<u32> = manifest["elementwise_lows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as u32)
        .collect();
    let src: Vec<f32> = lows
        .iter()
        .flat_map(|&lo| (0u32..1 << 16).map(move |hi| f32::from_bits(hi << 16 | lo)))
        .collect();
    for name in ["F16", "BF16"] {
        let ty = GgmlType::from_name(name).unwrap();
        let mut dst = vec![0u8; src.len() * 2];
        quantize_row(ty, &src, &mut dst).unwrap();
        assert_eq!(
            hex(&Sha256::digest(&dst)),
            manifest["elementwise_sha256"][name].as_str().unwrap(),
            "{name}"
        );
    }
}
