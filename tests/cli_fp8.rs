//! `gguf-lens inspect` / `dequant` on an FP8 block-scaled checkpoint (fixtures/fp8, made by
//! fixtures/make_fp8.py): layers found from config.json's `quantization_config`, values against
//! numpy + ml_dtypes' replay of transformers' `Fp8Dequantize` (expected.safetensors), bit for bit.
// Spawns the gguf-lens binary, which WASI cannot do.
#![cfg(not(target_os = "wasi"))]

mod common;

use common::cli_fixture::{self, ok_bytes as ok, run};

use std::path::PathBuf;

use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    cli_fixture::fixture("fp8", name)
}

/// `name`'s stored bytes in expected.safetensors.
fn expected(name: &str) -> Vec<u8> {
    cli_fixture::stored_bytes(&fixture("expected.safetensors"), name)
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

#[test]
fn without_config_json_inspect_says_the_block_was_inferred_and_dequant_reads_it() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("model.safetensors");
    std::fs::copy(fixture("model.safetensors"), &file).unwrap();
    let file = file.to_str().unwrap();
    let text = String::from_utf8(ok(&run(&["inspect", file]))).unwrap();
    assert!(
        text.contains(
            "quantization (FP8): inferred from the tensor shapes (block 128x128; no config.json)"
        ),
        "{text}"
    );
    assert!(!text.contains("no quantize_config.json or"), "{text}");
    let out = tmp.path().join("o.f32");
    let out = out.to_str().unwrap();
    let name = "model.layers.0.self_attn.o_proj.weight";
    ok(&run(&["dequant", file, name, "-o", out]));
    assert_eq!(std::fs::read(out).unwrap(), expected(name));
}
