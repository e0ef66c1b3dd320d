//! `gguf-lens inspect` / `dequant` on an FP8 block-scaled checkpoint (fixtures/fp8, made by
//! fixtures/make_fp8.py): layers found from config.json's `quantization_config`, values against
//! numpy + ml_dtypes' replay of transformers' `Fp8Dequantize` (expected.safetensors), bit for bit.
// Spawns the gguf-lens binary, which WASI cannot do.
#![cfg(not(target_os = "wasi"))]

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/fp8")
        .join(name)
}

fn run(args: &[&str]) -> Output {
    common::gguf_lens_command().args(args).output().unwrap()
}

fn ok(output: &Output) -> Vec<u8> {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout.clone()
}

/// `name`'s stored bytes in expected.safetensors (the header parsed here, not by gguf-lens).
fn expected(name: &str) -> Vec<u8> {
    let bytes = std::fs::read(fixture("expected.safetensors")).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: Value = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    let offsets = header[name]["data_offsets"].as_array().unwrap();
    let (a, b) = (
        offsets[0].as_u64().unwrap() as usize,
        offsets[1].as_u64().unwrap() as usize,
    );
    bytes[8 + n + a..8 + n + b].to_vec()
}

#[test]
fn inspect_and_dequant_read_the_layers() {
    let file = fixture("model.safetensors");
    let file = file.to_str().unwrap();
    let text = String::from_utf8(ok(&run(&["inspect", file]))).unwrap();
    assert!(
        text.contains(
            "quantization (FP8 E4M3, config.json): blocks of 128 x 128, not converted: lm_head"
        ),
        "{text}"
    );
    assert!(text.contains("FP8 layers (3)"), "{text}");
    let doc: Value = serde_json::from_slice(&ok(&run(&["inspect", file, "--json"]))).unwrap();
    assert_eq!(
        doc["fp8_quantization"]["weight_block_size"],
        serde_json::json!([128, 128])
    );
    let layer = &doc["fp8_layers"][1];
    assert_eq!(layer["name"], "model.layers.0.mlp.down_proj.weight");
    assert_eq!(layer["type"], "FP8-E4M3-block128");
    assert_eq!(layer["shape"], serde_json::json!([136, 200]));
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o.f32");
    let out = out.to_str().unwrap();
    let name = "model.layers.0.mlp.down_proj.weight";
    ok(&run(&["dequant", file, name, "-o", out]));
    assert_eq!(std::fs::read(out).unwrap(), expected(name));
    // Rows 100..136: the second block row, partial.
    ok(&run(&[
        "dequant", file, name, "-o", out, "--rows", "100:136",
    ]));
    assert_eq!(std::fs::read(out).unwrap(), expected(name)[100 * 200 * 4..]);
}
