//! `gguf-lens inspect` / `dequant` / `stats` on an MLX checkpoint (fixtures/mlx, made by
//! fixtures/make_mlx.py with mlx's own writer): layers found from config.json's `quantization`,
//! values against `mx.dequantize` (expected.safetensors), whole and by rows, and errors.
// Spawns the gguf-lens binary, which WASI cannot do.
#![cfg(not(target_os = "wasi"))]

mod common;

use common::cli_fixture::{self, f32_values as f32s, ok, run};

use std::path::{Path, PathBuf};

use serde_json::Value;

fn assert_close(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    let max_abs = want.iter().fold(0f32, |m, x| m.max(x.abs()));
    let worst = (got.iter().zip(want))
        .map(|(g, w)| (g - w).abs())
        .fold(0f32, f32::max);
    assert!(worst <= 1e-6 * max_abs, "{what}: worst {worst}");
}

fn fixture(name: &str) -> PathBuf {
    cli_fixture::fixture("mlx", name)
}

/// `name`'s f32 values in expected.safetensors.
fn expected(name: &str) -> Vec<f32> {
    f32s(&cli_fixture::stored_bytes(
        &fixture("expected.safetensors"),
        name,
    ))
}

#[test]
fn inspect_names_the_layers_in_their_logical_shape() {
    let file = fixture("model.safetensors");
    let text = ok(&run(&["inspect", file.to_str().unwrap()]));
    assert!(
        text.contains("quantization (MLX, config.json): bits 4, group_size 64, mode affine"),
        "{text}"
    );
    assert!(
        text.contains("MLX layers (20), dequantized to f32:"),
        "{text}"
    );
    let line = text
        .lines()
        .find(|l| l.contains("model.layers.b4_g64_experts.weight") && l.contains("MLX"))
        .unwrap();
    assert!(line.contains("MLX-4bit-g64 [2, 4, 256]"), "{line}");

    let doc: Value =
        serde_json::from_str(&ok(&run(&["inspect", file.to_str().unwrap(), "--json"]))).unwrap();
    let q = &doc["mlx_quantization"];
    assert_eq!(
        (q["bits"].as_u64(), q["group_size"].as_u64()),
        (Some(4), Some(64))
    );
    assert_eq!(q["source"], "config.json");
    assert_eq!(
        q["layers"]["model.layers.b5_g32_f32"],
        serde_json::json!({"bits": 5, "group_size": 32})
    );
    let layers = doc["mlx_layers"].as_array().unwrap();
    assert_eq!(layers.len(), 20);
    let l = layers
        .iter()
        .find(|l| l["name"] == "model.layers.b6_g128_f32.weight")
        .unwrap();
    assert_eq!(l["type"], "MLX-6bit-g128");
    assert_eq!(l["shape"], serde_json::json!([4, 256]));
    assert_eq!(l["scales_dtype"], "F32");
    // weight 4 x 48 words, scales and biases 4 x 2 f32.
    assert_eq!(l["n_bytes"], 4 * 48 * 4 + 2 * 4 * 2 * 4);
    assert_eq!(doc["gptq_layers"], serde_json::json!([]));
}

#[test]
fn dequant_matches_mx_dequantize_whole_and_by_rows() {
    let file = fixture("model.safetensors");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o.f32");
    let (file, out) = (file.to_str().unwrap(), out.to_str().unwrap());
    for (name, rows) in [
        ("model.layers.b3_g32_f32.weight", None),
        ("model.layers.b5_g128_f32", None),
        ("model.layers.b6_g64_f32.weight", Some((1, 3))),
        ("model.layers.b4_g64_f16.weight", None),
        ("model.layers.b4_g64_experts.weight", Some((3, 8))),
    ] {
        let mut args = vec!["dequant", file, name, "-o", out];
        let range;
        if let Some((a, b)) = rows {
            range = format!("{a}:{b}");
            args.extend(["--rows", range.as_str()]);
        }
        ok(&run(&args));
        let full = name.strip_suffix(".weight").unwrap_or(name);
        let mut want = expected(&format!("{full}.weight"));
        if let Some((a, b)) = rows {
            want = want[a * 256..b * 256].to_vec();
        }
        assert_close(&f32s(&std::fs::read(out).unwrap()), &want, name);
    }
}

#[test]
fn stats_read_the_dequantized_values() {
    let file = fixture("model.safetensors");
    let name = "model.layers.b8_g32_f32.weight";
    let text = ok(&run(&["stats", file.to_str().unwrap(), name, "--json"]));
    let doc: Value = serde_json::from_str(&text).unwrap();
    let want = expected(name);
    assert_eq!(doc["type"], "MLX-8bit-g32");
    assert_eq!(doc["shape"], serde_json::json!([4, 256]));
    assert_eq!(doc["elements"], want.len());
    let min = want.iter().copied().fold(f32::MAX, f32::min);
    let max = want.iter().copied().fold(f32::MIN, f32::max);
    assert_eq!(doc["min"].as_f64().unwrap() as f32, min, "{doc}");
    assert_eq!(doc["max"].as_f64().unwrap() as f32, max, "{doc}");
    assert_eq!(doc["zeros"], want.iter().filter(|&&x| x == 0.0).count());
}

#[test]
fn errors_exit_1_with_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("model.safetensors");
    std::fs::copy(fixture("model.safetensors"), &file).unwrap();
    let out = tmp.path().join("o.f32");
    let (f, out) = (file.to_str().unwrap(), out.to_str().unwrap());
    let name = "model.layers.b4_g64_f32.weight";
    let output = run(&["dequant", f, name, "-o", out, "--rows", "3:5"]);
    // Without config.json the packed words are a U32 tensor, which is not read as f32 values.
    assert_eq!(output.status.code(), Some(1));
    std::fs::copy(fixture("config.json"), tmp.path().join("config.json")).unwrap();
    let output = run(&["dequant", f, name, "-o", out, "--rows", "3:5"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("rows 3..5"), "{stderr}");
    std::fs::write(
        tmp.path().join("config.json"),
        r#"{"quantization": {"group_size": 16, "bits": 4}}"#,
    )
    .unwrap();
    let output = run(&["inspect", f]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("group_size 16 is not one of [32, 64, 128]"),
        "{stderr}"
    );
    assert!(!Path::new(out).exists());
}

/// `diff --values` of the checkpoint against mlx's own f32 values: every layer pairs with its
/// expected tensor (same name, logical shape) and reads equal, bit for bit.
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
    assert_eq!(values.len(), 20, "{doc}");
    for v in values {
        assert!(v["type_a"].as_str().unwrap().starts_with("MLX-"), "{v}");
        assert_eq!(v["identical"], true, "{v}");
    }
}
