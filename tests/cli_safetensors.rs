//! `gguf-lens inspect` / `dequant` on safetensors checkpoints (fixtures/gptq/): GPTQ layers and
//! plain tensors, whole and by rows, single files and shard indexes, and errors.
// Spawns the gguf-lens binary, which WASI cannot do.
#![cfg(not(target_os = "wasi"))]

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

const LAYER: &str = "model.layers.0.self_attn.q_proj";

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/gptq")
        .join(path)
}

fn run(args: &[&str]) -> Output {
    common::gguf_lens_command().args(args).output().unwrap()
}

/// `dequant FILE NAME -o tmp EXTRA...`: the output bytes.
fn dequant(file: &Path, name: &str, extra: &[&str]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.f32");
    let mut args = vec![
        "dequant",
        file.to_str().unwrap(),
        name,
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let output = run(&args);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    std::fs::read(out).unwrap()
}

fn inspect_json(file: &Path) -> Value {
    let output = run(&["inspect", file.to_str().unwrap(), "--json"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn inspect_shows_tensors_config_and_layers() {
    let file = fixture("b4_actorder_v1/model.safetensors");
    let output = run(&["inspect", file.to_str().unwrap()]);
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.contains(
            "quantization (GPTQ, quantize_config.json): bits 4, group_size 16, desc_act true"
        ),
        "{text}"
    );
    assert!(text.contains(&format!("{LAYER}.qweight")), "{text}");
    assert!(
        text.contains("4-bit [32, 128], 8 groups by g_idx"),
        "{text}"
    );

    let doc = inspect_json(&file);
    assert_eq!(doc["format"], "safetensors");
    assert_eq!(doc["metadata"]["format"], "pt");
    let size = std::fs::metadata(&file).unwrap().len();
    assert_eq!(doc["file_size"], size);
    assert_eq!(doc["data_offset"], doc["header_len"].as_u64().unwrap() + 8);
    let tensors = doc["tensors"].as_array().unwrap();
    assert_eq!(tensors.len(), 4);
    let total: u64 = tensors.iter().map(|t| t["n_bytes"].as_u64().unwrap()).sum();
    assert_eq!(total + doc["data_offset"].as_u64().unwrap(), size);
    assert_eq!(doc["quantization_config"]["checkpoint_format"], "gptq");
    assert_eq!(doc["quantization_config"]["desc_act"], true);
    let layer = &doc["gptq_layers"][0];
    assert_eq!(layer["name"], LAYER);
    assert_eq!(layer["shape"], serde_json::json!([32, 128]));
    assert_eq!(layer["group_size"], Value::Null);

    let doc = inspect_json(&fixture("b4_nogidx_v1/model.safetensors"));
    assert_eq!(doc["gptq_layers"][0]["group_size"], 32);
    assert_eq!(doc["gptq_layers"][0]["g_idx"], false);
    let doc = inspect_json(&fixture("b4_v2/model.safetensors"));
    assert_eq!(doc["quantization_config"]["source"], "config.json");
    assert_eq!(doc["quantization_config"]["checkpoint_format"], "gptq_v2");
}

#[test]
fn dequant_matches_the_oracles() {
    for case in [
        "b3_actorder_v2",
        "b4_g32_v1",
        "b8_v2_special_scales",
        "b2_nogroup_v2",
    ] {
        let dir = fixture(case);
        let expected = std::fs::read(dir.join("expected.f32"))
            .or_else(|_| std::fs::read(dir.join("expected.gptqmodel.f32")))
            .unwrap();
        let file = dir.join("model.safetensors");
        assert_eq!(dequant(&file, LAYER, &[]), expected, "{case}");
        let weight = format!("{LAYER}.weight");
        assert_eq!(dequant(&file, &weight, &[]), expected, "{case} .weight");
        let n_in = inspect_json(&file)["gptq_layers"][0]["in_features"]
            .as_u64()
            .unwrap() as usize;
        let rows = dequant(&file, LAYER, &["--rows", "3:5"]);
        assert!(rows == expected[3 * n_in * 4..5 * n_in * 4], "{case} rows");
    }
}

#[test]
fn v1_zero_edge_follows_either_reader() {
    let dir = fixture("b4_v1_zero_edge");
    let file = dir.join("model.safetensors");
    let llama = std::fs::read(dir.join("expected.llama_cpp.f32")).unwrap();
    let gptqmodel = std::fs::read(dir.join("expected.gptqmodel.f32")).unwrap();
    assert_ne!(llama, gptqmodel);
    assert_eq!(dequant(&file, LAYER, &[]), llama);
    assert_eq!(dequant(&file, LAYER, &["--v1-zeros", "unmasked"]), llama);
    assert_eq!(
        dequant(&file, LAYER, &["--v1-zeros", "wrapping"]),
        gptqmodel
    );
}

#[test]
fn plain_tensors_and_shards() {
    let dir = fixture("b4_g32_v1");
    let file = dir.join("model.safetensors");
    let index = fixture("sharded/model.safetensors.index.json");
    for name in [
        "model.embed_tokens.weight",
        "model.norm.weight",
        "lm_head.bias",
        "model.layers.0.mlp.counts",
    ] {
        let expected = std::fs::read(dir.join(format!("{name}.f32"))).unwrap();
        assert_eq!(dequant(&file, name, &[]), expected, "{name}");
        assert_eq!(dequant(&index, name, &[]), expected, "{name} via the index");
    }
    let embed = std::fs::read(dir.join("model.embed_tokens.weight.f32")).unwrap();
    assert_eq!(
        dequant(&file, "model.embed_tokens.weight", &["--rows", "7:8"]),
        embed[7 * 64..]
    );
    let expected = std::fs::read(dir.join("expected.f32")).unwrap();
    assert_eq!(dequant(&index, LAYER, &[]), expected);

    let doc = inspect_json(&index);
    assert_eq!(doc["format"], "safetensors-index");
    assert_eq!(doc["shards"].as_array().unwrap().len(), 2);
    assert_eq!(doc["tensors"].as_array().unwrap().len(), 8);
    assert_eq!(
        doc["tensors"][0]["shard"],
        "model-00001-of-00002.safetensors"
    );
    assert_eq!(doc["gptq_layers"][0]["bits"], 4);
    assert!(doc["index_metadata"]["total_size"].is_u64());
}

#[test]
fn errors_exit_1_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.safetensors");
    let mut bytes = 20u64.to_le_bytes().to_vec();
    bytes.extend_from_slice(b"{\"a\": nope}");
    std::fs::write(&bad, &bytes).unwrap();
    let file = fixture("b4_g32_v1/model.safetensors");
    let out = dir.path().join("o.f32");
    let out = out.to_str().unwrap();
    for (args, expect) in [
        (vec!["inspect", bad.to_str().unwrap()], "at byte 8"),
        (
            vec!["dequant", file.to_str().unwrap(), "nope", "-o", out],
            "no tensor named \"nope\"",
        ),
        (
            vec![
                "dequant",
                file.to_str().unwrap(),
                LAYER,
                "-o",
                out,
                "--rows",
                "30:33",
            ],
            "rows 30..33",
        ),
    ] {
        let output = run(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(expect),
            "{expect}: {stderr}"
        );
    }
    assert!(
        !Path::new(out).exists(),
        "no output file for a failed request"
    );
    let output = run(&[
        "dequant",
        file.to_str().unwrap(),
        LAYER,
        "-o",
        out,
        "--v1-zeros",
        "x",
    ]);
    assert_eq!(output.status.code(), Some(2));
}

/// `dequant` and `stats` of a `[2^62, 0]` tensor end at once (they walked 2^62 empty rows).
#[test]
fn zero_width_tensors_end_at_once() {
    let json = r#"{"z":{"dtype":"F32","shape":[4611686018427387904,0],"data_offsets":[0,0]}}"#;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("z.safetensors");
    let mut bytes = (json.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(json.as_bytes());
    std::fs::write(&path, bytes).unwrap();
    let out = dir.path().join("z.f32");
    let (p, o) = (path.to_str().unwrap(), out.to_str().unwrap());
    for args in [vec!["dequant", p, "z", "-o", o], vec!["stats", p, "z"]] {
        let mut child = common::gguf_lens_command()
            .args(&args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if start.elapsed() > std::time::Duration::from_secs(20) {
                child.kill().unwrap();
                panic!("{args:?} still running after 20 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        assert!(status.success(), "{args:?}: {status}");
    }
    assert_eq!(std::fs::metadata(&out).unwrap().len(), 0);
}
