//! `gguf-lens inspect` / `dequant` / `stats` / `diff` on compressed-tensors checkpoints
//! (fixtures/ct, made by fixtures/make_ct.py with the package's own compressors): the scheme
//! and layers from config.json's `quantization_config`, values against the package's
//! `decompress` (expected.safetensors), whole and by rows, and errors.
// Spawns the gguf-lens binary, which WASI cannot do.
#![cfg(not(target_os = "wasi"))]

mod common;

use common::cli_fixture::{self, f32_bits as f32s, ok, run};

use std::path::{Path, PathBuf};

use serde_json::Value;

const LAYER: &str = "model.layers.0.mlp.up_proj";
const CASES: [&str; 6] = [
    "w4a16-g32",
    "w4a16-g32-asym",
    "w3a16-g16-asym",
    "w8a16-ch",
    "fp8-ch",
    "fp8-t",
];

fn fixture(case: &str, name: &str) -> PathBuf {
    cli_fixture::fixture(&format!("ct/{case}"), name)
}

/// The layer's f32 values (as bits) in the case's expected.safetensors.
fn expected(case: &str) -> Vec<u32> {
    let path = fixture(case, "expected.safetensors");
    f32s(&cli_fixture::stored_bytes(
        &path,
        &format!("{LAYER}.weight"),
    ))
}

#[test]
fn inspect_names_the_scheme_and_the_layers() {
    let file = fixture("w4a16-g32-asym", "model.safetensors");
    let text = ok(&run(&["inspect", file.to_str().unwrap()]));
    assert!(
        text.contains("quantization (compressed-tensors pack-quantized, config.json): int 4-bit weights, group_size 32, asymmetric; ignore: lm_head"),
        "{text}"
    );
    let line = text
        .lines()
        .find(|l| l.contains(&format!("{LAYER}.weight ")))
        .unwrap();
    assert!(line.contains("CT-W4A16-g32-asym [40, 64]"), "{line}");
    let doc: Value =
        serde_json::from_str(&ok(&run(&["inspect", file.to_str().unwrap(), "--json"]))).unwrap();
    let q = &doc["ct_quantization"];
    assert_eq!(q["format"], "pack-quantized");
    assert_eq!(
        (q["num_bits"].as_u64(), q["group_size"].as_u64()),
        (Some(4), Some(32))
    );
    assert_eq!(q["symmetric"], false);
    let l = &doc["ct_layers"][0];
    assert_eq!(l["type"], "CT-W4A16-g32-asym");
    assert_eq!(l["shape"], serde_json::json!([40, 64]));
    // weight_packed 40 x 8 words, scales 40 x 2 bf16, zero points 5 x 2 words, weight_shape 2 i64.
    assert_eq!(l["n_bytes"], 40 * 8 * 4 + 40 * 2 * 2 + 5 * 2 * 4 + 16);
}

#[test]
fn dequant_matches_decompress_whole_and_by_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o.f32");
    let out = out.to_str().unwrap();
    for case in CASES {
        let file = fixture(case, "model.safetensors");
        let file = file.to_str().unwrap();
        let want = expected(case);
        let name = format!("{LAYER}.weight");
        ok(&run(&["dequant", file, &name, "-o", out]));
        assert_eq!(f32s(&std::fs::read(out).unwrap()), want, "{case}");
        // Rows 3..11 (cut mid zero-point word at 4 bits), by the layer's path.
        ok(&run(&["dequant", file, LAYER, "-o", out, "--rows", "3:11"]));
        let got = f32s(&std::fs::read(out).unwrap());
        let row = got.len() / 8;
        assert_eq!(got, want[3 * row..11 * row], "{case} rows 3:11");
    }
}

#[test]
fn stats_read_the_dequantized_values() {
    let file = fixture("w8a16-ch", "model.safetensors");
    let name = format!("{LAYER}.weight");
    let text = ok(&run(&["stats", file.to_str().unwrap(), &name, "--json"]));
    let doc: Value = serde_json::from_str(&text).unwrap();
    let want: Vec<f32> = expected("w8a16-ch")
        .into_iter()
        .map(f32::from_bits)
        .collect();
    assert_eq!(doc["type"], "CT-W8A16-ch");
    assert_eq!(doc["shape"], serde_json::json!([32, 96]));
    assert_eq!(doc["elements"], want.len());
    let min = want.iter().copied().fold(f32::MAX, f32::min);
    let max = want.iter().copied().fold(f32::MIN, f32::max);
    assert_eq!(doc["min"].as_f64().unwrap() as f32, min, "{doc}");
    assert_eq!(doc["max"].as_f64().unwrap() as f32, max, "{doc}");
}

#[test]
fn errors_exit_1_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("model.safetensors");
    std::fs::copy(fixture("w4a16-g32", "model.safetensors"), &file).unwrap();
    let out = tmp.path().join("o.f32");
    let (f, out) = (file.to_str().unwrap(), out.to_str().unwrap());
    let name = format!("{LAYER}.weight");
    // Without config.json there is no such tensor (the parts are stored, not the weight).
    let output = run(&["dequant", f, &name, "-o", out]);
    assert_eq!(output.status.code(), Some(1));
    let config = std::fs::read_to_string(fixture("w4a16-g32", "config.json")).unwrap();
    std::fs::write(
        tmp.path().join("config.json"),
        config.replace("\"group_size\": 32", "\"group_size\": 16"),
    )
    .unwrap();
    let output = run(&["inspect", f]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("weight_packed is I32 [48, 16], expected I32 [48, 8]"),
        "{stderr}"
    );
    assert!(!Path::new(out).exists());
}

/// `diff --values` of each checkpoint against the package's own f32 values: the layer pairs
/// with its expected tensor (same name, logical shape) and reads equal, bit for bit.
#[test]
fn diff_against_the_expected_values_finds_them_identical() {
    for case in CASES {
        let a = fixture(case, "model.safetensors");
        let b = fixture(case, "expected.safetensors");
        let output = run(&[
            "diff",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--values",
            "--json",
        ]);
        let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
        let values = doc["values"].as_array().unwrap();
        assert_eq!(values.len(), 1, "{doc}");
        assert!(
            values[0]["type_a"].as_str().unwrap().starts_with("CT-"),
            "{doc}"
        );
        assert_eq!(values[0]["identical"], true, "{doc}");
    }
}
