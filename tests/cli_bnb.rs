//! `gguf-lens inspect` / `dequant` / `stats` / `diff` on bitsandbytes 4-bit checkpoints
//! (fixtures/bnb, made by fixtures/make_bnb.py with bitsandbytes' own writer and reference
//! `dequantize_4bit`): the layers and config.json's settings, values against
//! expected.safetensors, whole and by rows, and errors.
// Spawns the gguf-lens binary, which WASI cannot do.
#![cfg(not(target_os = "wasi"))]

mod common;

use common::cli_fixture::{self, f32_bits as f32s, ok, run};

use std::path::PathBuf;

use serde_json::Value;

const NAME: &str = "model.layers.0.self_attn.q_proj.weight";

fn fixture(which: &str, name: &str) -> PathBuf {
    cli_fixture::fixture(&format!("bnb/{which}"), name)
}

/// `name`'s f32 values (as bits) in expected.safetensors.
fn expected(which: &str, name: &str) -> Vec<u32> {
    f32s(&cli_fixture::stored_bytes(
        &fixture(which, "expected.safetensors"),
        name,
    ))
}

#[test]
fn inspect_names_the_config_and_the_layers() {
    let file = fixture("nf4", "model.safetensors");
    let text = ok(&run(&["inspect", file.to_str().unwrap()]));
    assert!(
        text.contains("quantization (bitsandbytes 4-bit, config.json): nf4, double-quantized scales, not converted: lm_head"),
        "{text}"
    );
    let line = text
        .lines()
        .find(|l| l.contains(&format!("{NAME} ")) && l.contains("NF4"))
        .unwrap();
    assert!(line.contains("NF4-b64-dq [32, 96] bfloat16"), "{line}");
    let doc: Value =
        serde_json::from_str(&ok(&run(&["inspect", file.to_str().unwrap(), "--json"]))).unwrap();
    assert_eq!(doc["bnb_quantization"]["quant_type"], "nf4");
    assert_eq!(doc["bnb_quantization"]["double_quant"], true);
    let l = doc["bnb_layers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == NAME)
        .unwrap();
    assert_eq!(l["type"], "NF4-b64-dq");
    assert_eq!(l["shape"], serde_json::json!([32, 96]));
    assert_eq!(l["blocksize"], 64);
    // Codes 1536, absmax 48, nested absmax 4, nested map 1024, map 64, state 167 bytes.
    assert_eq!(l["n_bytes"], 1536 + 48 + 4 + 1024 + 64 + 167);
    // Without config.json: the same layers, the format said to be inferred.
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("model.safetensors");
    std::fs::copy(&file, &copy).unwrap();
    let text = ok(&run(&["inspect", copy.to_str().unwrap()]));
    assert!(
        text.contains("quantization (bitsandbytes 4-bit): inferred from the layers' quant-state tensors (no config.json)"),
        "{text}"
    );
    assert!(text.contains("NF4-b64-dq [32, 96]"), "{text}");
}

#[test]
fn dequant_matches_bitsandbytes_whole_and_by_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o.f32");
    let out = out.to_str().unwrap();
    for (which, name, row) in [
        ("nf4", NAME, 96),
        ("nf4", "model.layers.0.mlp.down_proj.weight", 33),
        ("fp4", "model.layers.0.self_attn.v_proj.weight", 100),
    ] {
        let file = fixture(which, "model.safetensors");
        let file = file.to_str().unwrap();
        let want = expected(which, name);
        ok(&run(&["dequant", file, name, "-o", out]));
        assert_eq!(f32s(&std::fs::read(out).unwrap()), want, "{name}");
        ok(&run(&["dequant", file, name, "-o", out, "--rows", "3:9"]));
        let got = f32s(&std::fs::read(out).unwrap());
        assert_eq!(got, want[3 * row..9 * row], "{name} rows 3:9");
    }
}

#[test]
fn stats_read_the_dequantized_values() {
    let file = fixture("nf4", "model.safetensors");
    let text = ok(&run(&["stats", file.to_str().unwrap(), NAME, "--json"]));
    let doc: Value = serde_json::from_str(&text).unwrap();
    let want: Vec<f32> = expected("nf4", NAME)
        .into_iter()
        .map(f32::from_bits)
        .collect();
    assert_eq!(doc["type"], "NF4-b64-dq");
    assert_eq!(doc["shape"], serde_json::json!([32, 96]));
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
    let mut bytes = std::fs::read(fixture("nf4", "model.safetensors")).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: Value = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    let name = "model.layers.0.mlp.up_proj";
    let at = header[format!("{name}.weight.absmax")]["data_offsets"][0]
        .as_u64()
        .unwrap() as usize;
    bytes[8 + n + at..8 + n + at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    std::fs::write(&file, bytes).unwrap();
    let out = tmp.path().join("o.f32");
    let output = run(&[
        "dequant",
        file.to_str().unwrap(),
        &format!("{name}.weight"),
        "-o",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "bitsandbytes layer {name}: absmax NaN of block 0 is not finite"
        )),
        "{stderr}"
    );
    assert!(!out.exists());
}

/// `diff --values` against bitsandbytes' own f32 values: each layer pairs with its expected
/// tensor (same name, logical shape) and reads equal, bit for bit.
#[test]
fn diff_against_the_expected_values_finds_them_identical() {
    for (which, types) in [
        ("nf4", ["NF4-b32-dq", "NF4-b64", "NF4-b64-dq"]),
        ("fp4", ["FP4-b128", "FP4-b32-dq", "FP4-b64"]),
    ] {
        let a = fixture(which, "model.safetensors");
        let b = fixture(which, "expected.safetensors");
        let output = run(&[
            "diff",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--values",
            "--json",
        ]);
        let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
        let values = doc["values"].as_array().unwrap();
        assert_eq!(values.len(), 3, "{doc}");
        let mut seen: Vec<&str> = values
            .iter()
            .map(|v| v["type_a"].as_str().unwrap())
            .collect();
        seen.sort();
        assert_eq!(seen, types, "{doc}");
        for v in values {
            assert_eq!(v["identical"], true, "{doc}");
        }
    }
}
