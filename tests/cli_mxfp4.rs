//! `gguf-lens inspect` / `dequant` / `stats` / `diff` on a gpt-oss MXFP4 checkpoint
//! (fixtures/mxfp4, made by fixtures/make_mxfp4.py with transformers' own
//! `convert_moe_packed_tensors`): the tensors from config.json's `quantization_config`, values
//! against expected.safetensors, whole and by rows, and errors.
// Spawns the gguf-lens binary, which WASI cannot do.
#![cfg(not(target_os = "wasi"))]

mod common;

use common::cli_fixture::{self, f32_bits as f32s, ok, run};

use std::path::PathBuf;

use serde_json::Value;

const NAME: &str = "model.layers.0.mlp.experts.down_proj";

fn fixture(name: &str) -> PathBuf {
    cli_fixture::fixture("mxfp4", name)
}

/// `name`'s f32 values (as bits) in expected.safetensors.
fn expected(name: &str) -> Vec<u32> {
    f32s(&cli_fixture::stored_bytes(
        &fixture("expected.safetensors"),
        name,
    ))
}

#[test]
fn inspect_names_the_config_and_the_tensors() {
    let file = fixture("model.safetensors");
    let text = ok(&run(&["inspect", file.to_str().unwrap()]));
    assert!(
        text.contains("quantization (MXFP4, config.json): blocks of 32 FP4 values with e8m0 scales, not converted: model.layers.*.self_attn"),
        "{text}"
    );
    let line = text
        .lines()
        .find(|l| l.contains(&format!("{NAME} ")))
        .unwrap();
    assert!(line.contains("MXFP4 [3, 96, 16]"), "{line}");
    let doc: Value =
        serde_json::from_str(&ok(&run(&["inspect", file.to_str().unwrap(), "--json"]))).unwrap();
    assert_eq!(
        doc["mxfp4_quantization"]["modules_to_not_convert"][3],
        "lm_head"
    );
    let l = doc["mxfp4_layers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == NAME)
        .unwrap();
    assert_eq!(l["type"], "MXFP4");
    assert_eq!(l["shape"], serde_json::json!([3, 96, 16]));
    // Blocks 3 x 16 x 3 x 16 bytes, scales 3 x 16 x 3.
    assert_eq!(l["n_bytes"], 3 * 16 * 3 * 16 + 3 * 16 * 3);
}

#[test]
fn dequant_matches_transformers_whole_and_by_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o.f32");
    let out = out.to_str().unwrap();
    let file = fixture("model.safetensors");
    let file = file.to_str().unwrap();
    for name in [NAME, "model.layers.0.mlp.experts.gate_up_proj"] {
        let want = expected(name);
        ok(&run(&["dequant", file, name, "-o", out]));
        assert_eq!(f32s(&std::fs::read(out).unwrap()), want, "{name}");
        // Rows 60..70: across the first expert's end (64 rows of gate_up_proj).
        ok(&run(&["dequant", file, name, "-o", out, "--rows", "60:70"]));
        let got = f32s(&std::fs::read(out).unwrap());
        let row = got.len() / 10;
        assert_eq!(got, want[60 * row..70 * row], "{name} rows 60:70");
    }
}

#[test]
fn stats_read_the_dequantized_values() {
    let file = fixture("model.safetensors");
    let text = ok(&run(&["stats", file.to_str().unwrap(), NAME, "--json"]));
    let doc: Value = serde_json::from_str(&text).unwrap();
    let want: Vec<f32> = expected(NAME).into_iter().map(f32::from_bits).collect();
    assert_eq!(doc["type"], "MXFP4");
    assert_eq!(doc["shape"], serde_json::json!([3, 96, 16]));
    assert_eq!(doc["elements"], want.len());
    let min = want.iter().copied().fold(f32::MAX, f32::min);
    let max = want.iter().copied().fold(f32::MIN, f32::max);
    assert_eq!(doc["min"].as_f64().unwrap() as f32, min, "{doc}");
    assert_eq!(doc["max"].as_f64().unwrap() as f32, max, "{doc}");
}

#[test]
fn a_nan_scale_exits_1_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("model.safetensors");
    let mut bytes = std::fs::read(fixture("model.safetensors")).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: Value = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    let at = header[format!("{NAME}_scales")]["data_offsets"][0]
        .as_u64()
        .unwrap() as usize;
    bytes[8 + n + at] = 255;
    std::fs::write(&file, bytes).unwrap();
    std::fs::copy(fixture("config.json"), tmp.path().join("config.json")).unwrap();
    let out = tmp.path().join("o.f32");
    let output = run(&[
        "dequant",
        file.to_str().unwrap(),
        NAME,
        "-o",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "MXFP4 tensor {NAME}: _scales 255 (e8m0 NaN) of expert 0, row 0, block 0 (byte 0)"
        )),
        "{stderr}"
    );
    assert!(!out.exists());
}

/// `diff --values` against transformers' own f32 values: each tensor pairs with its expected
/// tensor (same name, logical shape) and reads equal, bit for bit.
#[test]
fn diff_against_the_expected_values_finds_them_identical() {
    let a = fixture("model.safetensors");
    let b = fixture("expected.safetensors");
    let output = run(&[
        "diff",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--values",
        "--json",
    ]);
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    let values = doc["values"].as_array().unwrap();
    assert_eq!(values.len(), 2, "{doc}");
    for v in values {
        assert_eq!(v["type_a"], "MXFP4", "{doc}");
        assert_eq!(v["identical"], true, "{doc}");
    }
}
