//! FP8 block-scaled checkpoints (DeepSeek-V3 style) through the one `model::Model`
//! (fixtures/fp8, made by fixtures/make_fp8.py): each layer's rows against numpy + ml_dtypes'
//! replay of transformers' `Fp8Dequantize` (expected.safetensors), by any row range (partial
//! blocks at the edges), from files and from memory; the listed tensors, the summary, the CLI,
//! and what does not fit.

mod common;

use std::path::{Path, PathBuf};

use common::model_rows::{bits, expected_f32, read_all};
use gguf_lens::fp8::{dequantize_rows, Fp8Config, Fp8Layer};
use gguf_lens::gptq::V1Zeros;
use gguf_lens::model::{open, Checkpoint, Layout, Model, TensorType};
use gguf_lens::quant::Kernel;
use gguf_lens::safetensors::{Dtype, SafetensorsFile};
use serde_json::Value;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fp8")
}

fn manifest() -> Vec<(String, Vec<u64>)> {
    let doc: Value =
        serde_json::from_slice(&std::fs::read(dir().join("manifest.json")).unwrap()).unwrap();
    doc["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let shape = serde_json::from_value(l["shape"].clone()).unwrap();
            (l["name"].as_str().unwrap().to_string(), shape)
        })
        .collect()
}

/// `name`'s f32 values in expected.safetensors.
fn expected(name: &str) -> Vec<f32> {
    expected_f32(&dir().join("expected.safetensors"), name)
}

#[test]
fn every_layer_reads_as_transformers_dequantizes_bit_for_bit() {
    let opened = open(dir().join("model.safetensors").to_str().unwrap()).unwrap();
    let memory = vec![std::fs::read(dir().join("model.safetensors")).unwrap()];
    let layers = manifest();
    assert_eq!(layers.len(), 3);
    let kernel = Kernel::auto().unwrap();
    for (name, shape) in &layers {
        let want = expected(name);
        let path = name.strip_suffix(".weight").unwrap();
        for read_as in [name.as_str(), path] {
            let rows = (opened.model)
                .rows(read_as, &opened.files, kernel, V1Zeros::default())
                .unwrap();
            assert_eq!(rows.type_name(), "FP8-E4M3-block128");
            assert_eq!(&rows.shape(), shape);
            assert!(rows.check_rows(0..shape[0] + 1).is_err());
            // Steps that start and end inside blocks, and cross them.
            for step in [1, 7, 128, 1000] {
                let got = read_all(&opened.model, &opened.files, read_as, step);
                assert_eq!(bits(&got), bits(&want), "{read_as} in steps of {step}");
            }
        }
        let got = read_all(&opened.model, &memory, name, 50);
        assert_eq!(bits(&got), bits(&want), "{name} from memory");
    }
}

#[test]
fn a_layer_is_listed_once_and_counted_as_the_hub_counts() {
    let file = dir().join("model.safetensors");
    let opened = open(file.to_str().unwrap()).unwrap();
    let listed = opened.model.tensors(Layout::Logical);
    assert!(!listed.iter().any(|t| t.name.ends_with("_scale_inv")));
    for (name, shape) in manifest() {
        let t = listed.iter().find(|t| t.name == name).unwrap();
        assert_eq!(t.ty, TensorType::Named("FP8-E4M3-block128".to_string()));
        assert_eq!(t.shape, shape);
    }
    let head = listed.iter().find(|t| t.name == "lm_head.weight").unwrap();
    assert_eq!(head.ty, TensorType::Named("BF16".to_string()));
    let Model::Safetensors(c) = &opened.model else {
        panic!("a checkpoint");
    };
    let s = c.summary();
    let logical: u64 = manifest().iter().map(|l| l.1.iter().product::<u64>()).sum();
    assert_eq!(s.parameter_count, logical + 32 * 256 + 256);
    let fp8 = s.checkpoint().unwrap().fp8.clone().unwrap();
    assert_eq!((fp8.layers, fp8.block), (3, [128, 128]));
    assert_eq!(fp8.not_converted, ["lm_head"]);
    let share = s
        .type_mix
        .iter()
        .find(|m| m.ty.name() == "FP8-E4M3-block128")
        .unwrap();
    assert_eq!((share.tensors, share.elements), (3, logical));
}

#[test]
fn in_memory_with_a_config_reads_as_the_files() {
    let bytes = std::fs::read(dir().join("model.safetensors")).unwrap();
    let mut c = Checkpoint::new(vec![SafetensorsFile::from_bytes(&bytes).unwrap()], None);
    let config = std::fs::read(dir().join("config.json")).unwrap();
    c.set_fp8(Fp8Config::from_config_json(&config).unwrap());
    assert!(c.layer_errors().is_empty());
    let model = Model::Safetensors(Box::new(c));
    let memory = vec![bytes];
    for (name, _) in manifest() {
        assert_eq!(
            bits(&read_all(&model, &memory, &name, 9)),
            bits(&expected(&name))
        );
    }
}

#[test]
fn bad_configs_layouts_and_scales_are_one_error_each() {
    let config = |q: &str| Fp8Config::from_config_json(q.as_bytes());
    let e = |q: &str| config(q).unwrap_err().to_string();
    assert!(e(r#"{"quantization_config": {"quant_method": "fp8", "fmt": "e5m2", "weight_block_size": [128, 128]}}"#)
        .contains("fmt \"e5m2\" is not supported"));
    assert!(e(
        r#"{"quantization_config": {"quant_method": "fp8", "weight_block_size": [0, 128]}}"#
    )
    .contains("weight_block_size [0,128]"));
    assert!(e(r#"{"quantization_config": {"quant_method": "fp8"}}"#).contains("per-tensor"));
    assert_eq!(
        config(r#"{"quantization_config": {"quant_method": "gptq"}}"#).unwrap(),
        None
    );
    let f8 = Dtype::F8E4M3;
    let msg = |r: gguf_lens::error::Result<Fp8Layer>| r.unwrap_err().to_string();
    let e = msg(Fp8Layer::new(
        "l",
        (f8, &[200, 300]),
        (Dtype::F32, &[2, 2]),
        [128, 128],
    ));
    assert!(e.contains("shape [2, 2] is not [2, 3]"), "{e}");
    let e = msg(Fp8Layer::new(
        "l",
        (Dtype::BF16, &[2, 2]),
        (Dtype::F32, &[1, 1]),
        [128, 128],
    ));
    assert!(e.contains("expected F8_E4M3"), "{e}");
    // 0x38 is 1.0 in E4M3: each value is its block's scale. Rows 0 and 1 share scale row 0;
    // row 2 alone reads scale row 1 only.
    let layer = Fp8Layer::new("l", (f8, &[3, 4]), (Dtype::F32, &[2, 2]), [2, 2]).unwrap();
    let le = |v: &[f32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let scales = le(&[1.0, 2.0, 0.5, 4.0]);
    let mut out = vec![0f32; 12];
    dequantize_rows(&layer, 0, &[0x38; 12], &scales, &mut out).unwrap();
    assert_eq!(
        out,
        [1.0, 1.0, 2.0, 2.0, 1.0, 1.0, 2.0, 2.0, 0.5, 0.5, 4.0, 4.0]
    );
    dequantize_rows(&layer, 2, &[0x38; 4], &scales[8..], &mut out[..4]).unwrap();
    assert_eq!(out[..4], [0.5, 0.5, 4.0, 4.0]);
    // An infinite scale is refused, naming its block.
    let e = dequantize_rows(
        &layer,
        0,
        &[0x38; 12],
        &le(&[1.0, 2.0, 0.5, f32::INFINITY]),
        &mut out,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("block [1, 1] is not finite"), "{e}");
}

#[test]
fn a_config_that_does_not_fit_is_one_error_at_open() {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = tmp.path().join("model.safetensors");
    std::fs::copy(dir().join("model.safetensors"), &file).unwrap();
    std::fs::write(
        tmp.path().join("config.json"),
        r#"{"quantization_config": {"quant_method": "fp8", "weight_block_size": [64, 64]}}"#,
    )
    .unwrap();
    let e = open(file.to_str().unwrap()).unwrap_err().to_string();
    assert!(
        e.contains(
            "FP8 layer model.layers.0.mlp.up_proj: weight_scale_inv shape [1, 2] is not [2, 4]"
        ),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1);
}

/// A copy of the fixture's model.safetensors in a directory without config.json.
fn without_config() -> (tempfile::TempDir, String) {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = tmp.path().join("model.safetensors");
    std::fs::copy(dir().join("model.safetensors"), &path).unwrap();
    (tmp, path.to_str().unwrap().to_string())
}

#[test]
fn without_a_config_the_one_block_side_all_pairs_fit_is_found() {
    // [128, 256] in [1, 2], [136, 200] in [2, 2] and [96, 129] in [1, 2] blocks all fit
    // side 128 and no other.
    let (_tmp, path) = without_config();
    let opened = open(&path).unwrap();
    let Model::Safetensors(c) = &opened.model else {
        panic!("a checkpoint");
    };
    assert!(c.fp8().is_none());
    assert_eq!(c.fp8_layers().len(), 3);
    let fp8 = c.summary().checkpoint().unwrap().fp8.clone().unwrap();
    assert_eq!(fp8.block, [128, 128]);
    for (name, _) in manifest() {
        let got = read_all(&opened.model, &opened.files, &name, 7);
        assert_eq!(bits(&got), bits(&expected(&name)), "{name}");
    }
}

#[test]
fn without_a_config_an_ambiguous_block_is_one_error_and_misfits_stay_plain() {
    let bytes = std::fs::read(dir().join("model.safetensors")).unwrap();
    let file = SafetensorsFile::from_bytes(&bytes).unwrap();
    let up = "model.layers.0.mlp.up_proj";
    let names = [format!("{up}.weight"), format!("{up}.weight_scale_inv")];
    // Only up_proj ([128, 256] in [1, 2]): sides 128 to 255 all fit.
    let lookup = |n: &str| {
        names
            .iter()
            .any(|k| k == n)
            .then(|| file.get(n).map(|t| (t.dtype(), t.shape())))
            .flatten()
    };
    let err = gguf_lens::fp8::infer_block(names.iter().map(String::as_str), lookup)
        .unwrap()
        .unwrap_err();
    assert!(err.to_string().contains("128 to 255"), "{err}");
    // down_proj's scales as [9, 9]: 200 columns fit no side in 9 blocks, so that pair is left
    // out, the others fix side 128, and down_proj does not fit it (it stays plain).
    let misfit: &[u64] = &[9, 9];
    let lookup = |n: &str| match n {
        "model.layers.0.mlp.down_proj.weight_scale_inv" => Some((Dtype::F32, misfit)),
        _ => file.get(n).map(|t| (t.dtype(), t.shape())),
    };
    let all: Vec<&str> = file.tensors().iter().map(|t| t.name()).collect();
    let block = gguf_lens::fp8::infer_block(all.iter().copied(), lookup)
        .unwrap()
        .unwrap();
    assert_eq!(block, [128, 128]);
    let config = Fp8Config {
        block,
        not_converted: Vec::new(),
        activation_scheme: None,
    };
    let found = gguf_lens::fp8::discover(all.iter().copied(), lookup, &config);
    let fits: Vec<bool> = found.iter().map(Result::is_ok).collect();
    assert_eq!(fits.iter().filter(|&&f| f).count(), 2, "{found:?}");
    // No pair at all: nothing to infer.
    assert!(gguf_lens::fp8::infer_block(["lm_head.weight"], lookup).is_none());
}
