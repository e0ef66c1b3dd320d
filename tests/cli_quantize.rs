//! `gguf-lens quantize` against llama.cpp: fixtures/make_quantize_file.py ran
//! `llama_model_quantize` with `pure = true` on fixtures/quantize_file/input.gguf for every type
//! we write; our output must be the same file, byte for byte.
#![cfg(not(target_os = "wasi"))]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/quantize_file")
}

/// The binary, through `GGUF_LENS_TEST_RUNNER` (qemu for the aarch64 build) when set.
fn gguf_lens() -> Command {
    common::gguf_lens_command()
}

fn sha256(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn quantized_files_equal_llama_cpp_pure_output() {
    same_as_llama_cpp("manifest.json", &[]);
}

/// Rows of 384 and 48 values: llama.cpp falls back to another type (Q4_K to Q5_0, ..., F16 where
/// not even 32 fits) even when pure; `--fallback` does the same.
#[test]
fn fallback_types_equal_llama_cpp_pure_output() {
    same_as_llama_cpp("fallback.json", &["--fallback"]);
}

#[test]
fn without_fallback_rows_that_do_not_fit_are_kept_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("q4_k.gguf");
    let result = gguf_lens()
        .args(["quantize", "--type", "Q4_K"])
        .arg(fixtures().join("fallback.gguf"))
        .arg(&out)
        .output()
        .unwrap();
    assert!(result.status.success());
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(
        stderr.contains("2 of 7 tensors quantized to Q4_K"),
        "{stderr}"
    );
    assert!(
        stderr.contains("kept blk.0.attn_q.weight (F32): its rows are not whole blocks"),
        "{stderr}"
    );
    let result = gguf_lens()
        .args(["quantize", "--type", "Q4_K", "--fallback"])
        .arg(fixtures().join("fallback.gguf"))
        .arg(&out)
        .output()
        .unwrap();
    assert!(result.status.success());
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(stderr.contains("(5 more to a fallback type)"), "{stderr}");
    assert!(
        stderr.contains("blk.0.attn_q.weight to Q5_0: its rows of 384"),
        "{stderr}"
    );
    assert!(stderr.contains("blk.0.ffn_up.weight to F16"), "{stderr}");
}

/// Quantizes the manifest's input to each of its types (with `extra` arguments) and compares
/// the sha256 of the whole file with llama.cpp's.
fn same_as_llama_cpp(manifest: &str, extra: &[&str]) {
    let text = std::fs::read_to_string(fixtures().join(manifest)).unwrap();
    let manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
    let input = fixtures().join(manifest["input"].as_str().unwrap());
    assert_eq!(sha256(&input), manifest["input_sha256"].as_str().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let types = manifest["types"].as_object().unwrap();
    assert_eq!(types.len(), gguf_lens::quantize::SUPPORTED.len());
    let mut failures = Vec::new();
    for (name, spec) in types {
        let out = dir.path().join(format!("{name}.gguf"));
        let result = gguf_lens()
            .args(["quantize", "--type", name, "--threads", "2"])
            .args(extra)
            .arg(&input)
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            result.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&result.stderr)
        );
        if sha256(&out) != spec["sha256"].as_str().unwrap() {
            failures.push(format!(
                "{name}: differs from llama.cpp's ({} bytes, llama.cpp {})",
                std::fs::metadata(&out).unwrap().len(),
                spec["size"]
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A GGUF v3 with one F32 tensor `w.weight` of shape [rows, 32] holding `values`.
fn one_tensor_file(path: &Path, values: &[f32]) {
    let mut b = b"GGUF".to_vec();
    b.extend_from_slice(&3u32.to_le_bytes());
    b.extend_from_slice(&1u64.to_le_bytes()); // tensors
    b.extend_from_slice(&0u64.to_le_bytes()); // keys
    let name = b"w.weight";
    b.extend_from_slice(&(name.len() as u64).to_le_bytes());
    b.extend_from_slice(name);
    b.extend_from_slice(&2u32.to_le_bytes());
    b.extend_from_slice(&32u64.to_le_bytes());
    b.extend_from_slice(&(values.len() as u64 / 32).to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes()); // F32
    b.extend_from_slice(&0u64.to_le_bytes());
    b.resize(b.len().div_ceil(32) * 32, 0);
    for v in values {
        b.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::write(path, b).unwrap();
}

#[test]
fn an_overflowing_scale_is_an_error_naming_the_row() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.gguf");
    let mut values = vec![0.5f32; 96];
    values[70] = 1.0e7; // row 2: Q8_0's scale 1e7/127 overflows f16
    one_tensor_file(&input, &values);
    let out = dir.path().join("out.gguf");
    let result = gguf_lens()
        .args(["quantize", "--type", "Q8_0"])
        .arg(&input)
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("w.weight") && stderr.contains("row 2"),
        "{stderr}"
    );
    assert!(!out.exists());
    // MXFP4's E8M0 exponent spans all of f32: the same values quantize.
    let ok = gguf_lens()
        .args(["quantize", "--type", "MXFP4"])
        .arg(&input)
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
}

#[test]
fn types_needing_an_importance_matrix_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let result = gguf_lens()
        .args(["quantize", "--type", "IQ2_XXS"])
        .arg(fixtures().join("input.gguf"))
        .arg(dir.path().join("out.gguf"))
        .output()
        .unwrap();
    assert_eq!(result.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&result.stderr).contains("importance matrix"));
}

#[test]
fn input_and_output_may_not_be_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.gguf");
    std::fs::copy(fixtures().join("input.gguf"), &input).unwrap();
    let result = gguf_lens()
        .args(["quantize", "--type", "Q8_0"])
        .arg(&input)
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(result.status.code(), Some(1));
    assert_eq!(sha256(&input), sha256(&fixtures().join("input.gguf")));
}

/// The values of tensor `name` of the GGUF at `path`, dequantized.
fn tensor_values(path: &Path, name: &str) -> Vec<f32> {
    let bytes = std::fs::read(path).unwrap();
    let file = gguf_lens::gguf::GgufFile::from_bytes(&bytes).unwrap();
    let tensor = file.tensor(name).unwrap();
    let data = file.tensor_data(&bytes, tensor).unwrap();
    let mut out = vec![0.0f32; tensor.n_elements() as usize];
    gguf_lens::quant::dequantize(tensor.ggml_type(), data, &mut out).unwrap();
    out
}

/// quant-error's metrics, recomputed here from a file `quantize` wrote (which the test above
/// holds byte-identical to llama.cpp's) and the input's values.
#[test]
fn quant_error_matches_the_quantized_file() {
    let dir = tempfile::tempdir().unwrap();
    let input = fixtures().join("input.gguf");
    let name = "blk.0.attn_q.weight";
    // Every type: the chart's values come straight from the quantizers for most of them
    // (src/quantize/round_trip.rs), checked here against the bytes llama.cpp writes.
    let types = [
        "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K",
        "Q6_K", "IQ4_NL", "IQ4_XS", "TQ1_0", "TQ2_0", "MXFP4",
    ];
    for ty in types {
        let out = dir.path().join(format!("{ty}.gguf"));
        let status = gguf_lens()
            .args(["quantize", "--type", ty])
            .arg(&input)
            .arg(&out)
            .output()
            .unwrap()
            .status;
        assert!(status.success());
        let x = tensor_values(&input, name);
        let y = tensor_values(&out, name);
        let (mut e2, mut x2, mut y2, mut xy, mut max) = (0.0f64, 0.0f64, 0.0f64, 0.0f64, 0.0f64);
        for (&a, &b) in x.iter().zip(&y) {
            let (a, b) = (f64::from(a), f64::from(b));
            e2 += (a - b) * (a - b);
            x2 += a * a;
            y2 += b * b;
            xy += a * b;
            max = max.max((a - b).abs());
        }
        let n = x.len() as f64;
        let result = gguf_lens()
            .args(["quant-error", "--json", "--types", ty])
            .arg(&input)
            .arg(name)
            .output()
            .unwrap();
        assert!(result.status.success());
        let doc: serde_json::Value = serde_json::from_slice(&result.stdout).unwrap();
        let r = &doc["results"][0];
        assert_eq!(r["type"], ty);
        // The error sums run in f32 over 32-value runs (src/quantize/error/lanes.rs): within
        // 10·2⁻²⁴ ≈ 6e-7 relative of the exact ones, so 1e-6 here.
        let close = |key: &str, want: f64| {
            let got = r[key].as_f64().unwrap();
            assert!(
                (got - want).abs() <= 1e-6 * want.abs().max(1e-30),
                "{ty} {key}: {got} vs {want}"
            );
        };
        close("rmse", (e2 / n).sqrt());
        close("max_abs_error", max);
        close("relative_rmse", (e2 / x2).sqrt());
        close("cosine", xy / (x2.sqrt() * y2.sqrt()));
    }
}

#[test]
fn quant_error_lists_types_whose_block_does_not_fit() {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/diff/arrays-a.safetensors");
    let result = gguf_lens()
        .args(["quant-error", "--types", "Q8_0,Q4_K"])
        .arg(&file)
        .arg("h")
        .output()
        .unwrap();
    assert!(result.status.success());
    let text = String::from_utf8_lossy(&result.stdout);
    assert!(text.contains("Q8_0      8.5000"), "{text}");
    assert!(
        text.contains("Q4_K     skipped: row length 32 is not a multiple of its block of 256"),
        "{text}"
    );
    let bad = gguf_lens()
        .args(["quant-error", "--types", "IQ1_S"])
        .arg(&file)
        .arg("h")
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn quant_error_takes_a_row_range() {
    let input = fixtures().join("input.gguf");
    let run = |rows: &str| {
        let out = gguf_lens()
            .args(["quant-error", "--json", "--types", "Q4_K", "--rows", rows])
            .arg(&input)
            .arg("blk.0.attn_q.weight")
            .output()
            .unwrap();
        (out.status.code(), out.stdout)
    };
    let (code, stdout) = run("0:16");
    assert_eq!(code, Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
    assert_eq!(doc["rows"], serde_json::json!([0, 16]));
    // Rows 0..16 alone: the same numbers as a file holding only those rows would give.
    let x = &tensor_values(&input, "blk.0.attn_q.weight")[..16 * 256];
    let x2: f64 = x.iter().map(|&v| f64::from(v) * f64::from(v)).sum();
    let rmse = doc["results"][0]["rmse"].as_f64().unwrap();
    let rel = doc["results"][0]["relative_rmse"].as_f64().unwrap();
    let implied = rmse * (x.len() as f64).sqrt() / x2.sqrt();
    // Σx² is summed in f32 runs (within 6e-7 relative, src/quantize/error/lanes.rs).
    assert!((implied - rel).abs() <= 1e-6 * rel, "{implied} vs {rel}");
    assert_eq!(run("0:999").0, Some(1));
}

#[test]
fn a_nan_is_an_error_naming_the_row() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.gguf");
    let mut values = vec![0.25f32; 32 * 64];
    values[32 * 41 + 5] = f32::NAN; // row 41
    one_tensor_file(&input, &values);
    let out = dir.path().join("out.gguf");
    let result = gguf_lens()
        .args(["quantize", "--type", "Q4_0", "--threads", "3"])
        .arg(&input)
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("w.weight: row 41: cannot quantize NaN to Q4_0"),
        "{stderr}"
    );
    assert!(!out.exists());
    let report = gguf_lens()
        .args(["quant-error", "--json", "--types", "Q8_0,F16"])
        .arg(&input)
        .arg("w.weight")
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    assert_eq!(doc["skipped"][0]["reason"], "row 41: holds NaN");
}
