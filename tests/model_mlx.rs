//! MLX checkpoints through the one `model::Model` (fixtures/mlx, made by fixtures/make_mlx.py):
//! every layer's rows against `mx.dequantize` (expected.safetensors), by any row range, from
//! files and from memory; the listed tensors, the summary, and what config.json's
//! `quantization` (defaults, per-layer entries) makes of the stored parts.

mod common;

use std::path::{Path, PathBuf};

use common::model_rows::{checkpoint, expected_f32, read_all};
use gguf_lens::gptq::V1Zeros;
use gguf_lens::mlx::MlxQuantization;
use gguf_lens::model::{open, Checkpoint, Layout, Model, TensorType};
use gguf_lens::quant::Kernel;
use gguf_lens::safetensors::SafetensorsFile;
use serde_json::Value;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/mlx")
}

fn manifest() -> Vec<(String, u32, u64, Vec<u64>)> {
    let doc: Value =
        serde_json::from_slice(&std::fs::read(dir().join("manifest.json")).unwrap()).unwrap();
    doc["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["name"].as_str().unwrap().to_string(),
                l["bits"].as_u64().unwrap() as u32,
                l["group_size"].as_u64().unwrap(),
                serde_json::from_value(l["shape"].clone()).unwrap(),
            )
        })
        .collect()
}

fn assert_close(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    let max_abs = want.iter().fold(0f32, |m, x| m.max(x.abs()));
    let worst = got
        .iter()
        .zip(want)
        .map(|(g, w)| (g - w).abs())
        .fold(0f32, f32::max);
    assert!(
        worst <= 1e-6 * max_abs,
        "{what}: worst {worst}, max|w| {max_abs}"
    );
}

/// `name`'s f32 values in expected.safetensors.
fn expected(name: &str) -> Vec<f32> {
    expected_f32(&dir().join("expected.safetensors"), name)
}

#[test]
fn every_layer_reads_as_mx_dequantize_by_any_rows() {
    let opened = open(dir().join("model.safetensors").to_str().unwrap()).unwrap();
    assert_eq!(opened.files.config_source.as_deref(), Some("config.json"));
    let memory = vec![std::fs::read(dir().join("model.safetensors")).unwrap()];
    let layers = manifest();
    assert_eq!(layers.len(), 20);
    let kernel = Kernel::auto().unwrap();
    for (name, bits, group, shape) in &layers {
        let want = expected(name);
        let path = name.strip_suffix(".weight").unwrap();
        for read_as in [name.as_str(), path] {
            let rows = (opened.model)
                .rows(read_as, &opened.files, kernel, V1Zeros::default())
                .unwrap();
            assert_eq!(rows.type_name(), format!("MLX-{bits}bit-g{group}"));
            assert_eq!(&rows.shape(), shape, "{name}");
            assert_eq!(rows.row_len(), 256);
            assert!(rows.check_rows(0..rows.n_rows() + 1).is_err());
            for step in [1, 3, 64] {
                let got = read_all(&opened.model, &opened.files, read_as, step);
                assert_close(&got, &want, &format!("{read_as} in steps of {step}"));
            }
        }
        let got = read_all(&opened.model, &memory, name, 2);
        assert_close(&got, &want, &format!("{name} from memory"));
    }
    // A plain tensor beside them reads as stored (f16 ones).
    let norm = read_all(&opened.model, &opened.files, "model.norm.weight", 1);
    assert_eq!(norm, vec![1.0; 256]);
}

#[test]
fn a_layer_is_listed_once_under_its_weight_and_counted_as_the_hub_counts() {
    let file = dir().join("model.safetensors");
    let opened = open(file.to_str().unwrap()).unwrap();
    let layers = manifest();
    let listed = opened.model.tensors(Layout::Logical);
    // 20 layers and the norm: no packed words, scales or biases.
    assert_eq!(listed.len(), 21, "{listed:?}");
    assert!(!listed
        .iter()
        .any(|t| t.name.ends_with(".scales") || t.name.ends_with(".biases")));
    for (name, bits, group, shape) in &layers {
        let t = listed.iter().find(|t| &t.name == name).unwrap();
        assert_eq!(t.ty, TensorType::Named(format!("MLX-{bits}bit-g{group}")));
        assert_eq!(&t.shape, shape);
    }
    let c = checkpoint(&opened);
    let s = c.summary();
    let logical: u64 = layers.iter().map(|l| l.3.iter().product::<u64>()).sum();
    assert_eq!(s.parameter_count, logical + 256);
    // Every stored byte: the file's data section.
    let bytes = std::fs::read(&file).unwrap();
    let header = u64::from_le_bytes(bytes[..8].try_into().unwrap());
    assert_eq!(s.tensor_bytes, bytes.len() as u64 - 8 - header);
    let bpw = s.tensor_bytes as f64 * 8.0 / s.parameter_count as f64;
    assert_eq!(s.bits_per_weight, bpw);
    let four = s
        .type_mix
        .iter()
        .find(|m| m.ty.name() == "MLX-4bit-g64")
        .unwrap();
    let of_four: Vec<_> = layers.iter().filter(|l| (l.1, l.2) == (4, 64)).collect();
    assert_eq!(four.tensors, of_four.len() as u64);
    let elements: u64 = of_four.iter().map(|l| l.3.iter().product::<u64>()).sum();
    assert_eq!(four.elements, elements);
    let detail = s.checkpoint().unwrap();
    let mlx = detail.mlx.clone().unwrap();
    assert_eq!((mlx.layers, mlx.bits, mlx.group_size), (20, 4, 64));
    assert_eq!(mlx.overrides, (layers.len() - of_four.len()) as u64);
    assert!(detail.gptq.is_none());
}

/// A copy of model.safetensors in a new directory, with `config` as its config.json.
fn with_config(config: Option<&str>) -> (tempfile::TempDir, String) {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let file = tmp.path().join("model.safetensors");
    std::fs::copy(dir().join("model.safetensors"), &file).unwrap();
    if let Some(config) = config {
        std::fs::write(tmp.path().join("config.json"), config).unwrap();
    }
    let path = file.to_str().unwrap().to_string();
    (tmp, path)
}

#[test]
fn without_the_config_an_ambiguous_layer_is_one_error() {
    // The fixture's first layer, 2-bit g128 (16 words in 2 groups), fits 4-bit g64 and
    // 8-bit g32 as well; a config.json without `quantization` (nor a GPTQ one) tells nothing.
    for config in [None, Some(r#"{"model_type": "llama"}"#)] {
        let (_tmp, path) = with_config(config);
        let err = open(&path).expect_err("ambiguous without the config");
        assert!(
            matches!(&err.kind, gguf_lens::ErrorKind::InFile { error, .. }
                if matches!(&error.kind, gguf_lens::ErrorKind::MlxLayout { layer, .. }
                    if layer == "model.layers.b2_g128_f32")),
            "{err}"
        );
    }
}

#[test]
fn a_false_entry_leaves_that_layer_stored_as_is() {
    let config = r#"{"quantization": {"group_size": 64, "bits": 4,
        "model.layers.b2_g32_f32": {"group_size": 32, "bits": 2},
        "model.layers.b2_g64_f32": {"group_size": 64, "bits": 2},
        "model.layers.b2_g128_f32": {"group_size": 128, "bits": 2},
        "model.layers.b3_g32_f32": {"group_size": 32, "bits": 3},
        "model.layers.b3_g64_f32": {"group_size": 64, "bits": 3},
        "model.layers.b3_g128_f32": {"group_size": 128, "bits": 3},
        "model.layers.b4_g32_f32": {"group_size": 32, "bits": 4},
        "model.layers.b4_g128_f32": {"group_size": 128, "bits": 4},
        "model.layers.b5_g32_f32": {"group_size": 32, "bits": 5},
        "model.layers.b5_g64_f32": {"group_size": 64, "bits": 5},
        "model.layers.b5_g128_f32": {"group_size": 128, "bits": 5},
        "model.layers.b6_g32_f32": {"group_size": 32, "bits": 6},
        "model.layers.b6_g64_f32": {"group_size": 64, "bits": 6},
        "model.layers.b6_g128_f32": {"group_size": 128, "bits": 6},
        "model.layers.b8_g32_f32": {"group_size": 32, "bits": 8},
        "model.layers.b8_g64_f32": {"group_size": 64, "bits": 8},
        "model.layers.b8_g128_f32": {"group_size": 128, "bits": 8},
        "model.layers.b4_g64_f16": false}}"#;
    let (_tmp, path) = with_config(Some(config));
    let opened = open(&path).unwrap();
    assert_eq!(checkpoint(&opened).mlx_layers().len(), 19);
    let listed = opened.model.tensors(Layout::Logical);
    let names: Vec<&str> = listed.iter().map(|t| t.name.as_str()).collect();
    assert!(
        names.contains(&"model.layers.b4_g64_f16.scales"),
        "{names:?}"
    );
    let kernel = Kernel::auto().unwrap();
    let rows = (opened.model)
        .rows(
            "model.layers.b4_g64_f16.weight",
            &opened.files,
            kernel,
            V1Zeros::default(),
        )
        .unwrap();
    assert_eq!(rows.type_name(), "U32");
}

#[test]
fn a_config_that_does_not_fit_the_parts_is_one_error() {
    for (config, expect) in [
        // Every layer read as 8-bit: the first in header order, 4 x 16 words of 2-bit, is 64
        // inputs, one group of 64, not the 2 stored.
        (
            r#"{"quantization": {"group_size": 64, "bits": 8}}"#,
            "MLX layer model.layers.b2_g128_f32: scales shape [4, 2] is not [4, 1]",
        ),
        (
            r#"{"quantization": {"group_size": 32, "bits": 4, "mode": "mxfp4"}}"#,
            "mode \"mxfp4\" is not supported",
        ),
        (r#"{"quantization": "#, "config.json"),
    ] {
        let (_tmp, path) = with_config(Some(config));
        let e = open(&path).unwrap_err().to_string();
        assert!(e.starts_with(&path), "{e}");
        assert!(e.contains(expect), "{expect}: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}

#[test]
fn a_checkpoint_in_memory_reads_as_the_files() {
    let bytes = std::fs::read(dir().join("model.safetensors")).unwrap();
    let file = SafetensorsFile::from_bytes(&bytes).unwrap();
    let mut c = Checkpoint::new(vec![file], None);
    let config = std::fs::read(dir().join("config.json")).unwrap();
    c.set_mlx(MlxQuantization::from_config_json(&config).unwrap());
    assert!(c.layer_errors().is_empty());
    let model = Model::Safetensors(Box::new(c));
    let memory = vec![bytes];
    for (name, ..) in manifest() {
        let got = read_all(&model, &memory, &name, 4);
        assert_close(&got, &expected(&name), &name);
    }
}

/// `dir/model.safetensors` holding the fixture's tensors whose names start with one of
/// `prefixes`, with their stored bytes (and no config.json beside it).
fn subset(dir: &Path, prefixes: &[&str]) -> String {
    let bytes = std::fs::read(self::dir().join("model.safetensors")).unwrap();
    let file = SafetensorsFile::from_bytes(&bytes).unwrap();
    let (mut header, mut data) = (serde_json::Map::new(), Vec::new());
    for t in file.tensors() {
        if !prefixes.iter().any(|p| t.name().starts_with(p)) {
            continue;
        }
        let range = file.data_range(t);
        let start = data.len();
        data.extend_from_slice(&bytes[range.start as usize..range.end as usize]);
        header.insert(
            t.name().to_string(),
            serde_json::json!({"dtype": t.dtype().name(), "shape": t.shape(),
                "data_offsets": [start, data.len()]}),
        );
    }
    let json = serde_json::to_vec(&header).unwrap();
    let mut out = (json.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&json);
    out.extend_from_slice(&data);
    let path = dir.join("model.safetensors");
    std::fs::write(&path, out).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn without_a_config_only_shapes_that_fix_bits_and_group_are_layers() {
    // 5-bit layers: 40 words of 5-bit values split into 8, 4 or 2 groups fit only group 32, 64
    // or 128; 3-bit g32 (24 words, 8 groups) fits no other pair either.
    let unique = [
        "model.layers.b5_g32_f32",
        "model.layers.b5_g64_f32",
        "model.layers.b5_g128_f32",
        "model.layers.b3_g32_f32",
    ];
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = subset(tmp.path(), &unique);
    let opened = open(&path).unwrap();
    let Model::Safetensors(c) = &opened.model else {
        panic!("a checkpoint");
    };
    assert!(c.mlx().is_none());
    assert_eq!(c.mlx_layers().len(), unique.len());
    for (name, bits, group, _) in manifest() {
        let Some(layer) = c.mlx_layer(&name) else {
            continue;
        };
        assert_eq!((layer.bits, layer.group_size), (bits, group), "{name}");
        let want = expected_f32(&dir().join("expected.safetensors"), &name);
        let got = read_all(&opened.model, &opened.files, &name, 3);
        assert_eq!(got.len(), want.len());
        assert!(
            got.iter()
                .zip(&want)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "{name}"
        );
    }

    // 4-bit g64 (32 words in 4 groups) fits 2-bit g128 and 8-bit g32 as well: one error
    // naming the layer and the three.
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = subset(tmp.path(), &["model.layers.b4_g64_f32"]);
    let err = open(&path).expect_err("ambiguous");
    let text = err.to_string();
    assert!(
        text.contains("MLX layer model.layers.b4_g64_f32: "),
        "{text}"
    );
    for pair in ["2-bit g128", "4-bit g64", "8-bit g32"] {
        assert!(text.contains(pair), "{text}");
    }
    assert!(!text.contains('\n'), "{text}");

    // Without biases the set is no MLX layer: plain tensors, no error.
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = subset(
        tmp.path(),
        &[
            "model.layers.b4_g64_f32.weight",
            "model.layers.b4_g64_f32.scales",
        ],
    );
    let opened = open(&path).unwrap();
    let listed = opened.model.tensors(Layout::Logical);
    let weight = listed
        .iter()
        .find(|t| t.name == "model.layers.b4_g64_f32.weight")
        .unwrap();
    assert_eq!(weight.ty, TensorType::Named("U32".to_string()));
}
