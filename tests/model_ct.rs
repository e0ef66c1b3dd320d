//! compressed-tensors checkpoints through the one `model::Model` (fixtures/ct, made by
//! fixtures/make_ct.py with the package's own compressors): each layer's rows against the
//! package's `decompress` (expected.safetensors), bit for bit, by any row range, from files and
//! from memory; the listed tensors, the summary; and one error for each part that does not fit.

mod common;

use std::path::{Path, PathBuf};

use common::model_rows::{bits, checkpoint, expected_f32, read_all};
use gguf_lens::gptq::V1Zeros;
use gguf_lens::model::{open, Layout, TensorType};
use gguf_lens::quant::Kernel;
use gguf_lens::safetensors::SafetensorsFile;

const LAYER: &str = "model.layers.0.mlp.up_proj";

/// (case, type label, logical shape).
const CASES: [(&str, &str, [u64; 2]); 6] = [
    ("w4a16-g32", "CT-W4A16-g32", [48, 128]),
    ("w4a16-g32-asym", "CT-W4A16-g32-asym", [40, 64]),
    ("w3a16-g16-asym", "CT-W3A16-g16-asym", [40, 64]),
    ("w8a16-ch", "CT-W8A16-ch", [32, 96]),
    ("fp8-ch", "CT-FP8-E4M3-ch", [32, 64]),
    ("fp8-t", "CT-FP8-E4M3-t", [16, 64]),
];

fn dir(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/ct")
        .join(case)
}

/// The layer's f32 values in expected.safetensors.
fn expected(case: &str) -> Vec<f32> {
    expected_f32(
        &dir(case).join("expected.safetensors"),
        &format!("{LAYER}.weight"),
    )
}

#[test]
fn every_layer_reads_as_decompress_bit_for_bit_by_any_rows() {
    let kernel = Kernel::auto().unwrap();
    for (case, label, shape) in CASES {
        let file = dir(case).join("model.safetensors");
        let opened = open(file.to_str().unwrap()).unwrap();
        assert_eq!(opened.files.config_source.as_deref(), Some("config.json"));
        let want = expected(case);
        assert!(want.iter().any(|&w| w != 0.0), "{case}");
        let name = format!("{LAYER}.weight");
        for read_as in [name.as_str(), LAYER] {
            let rows = (opened.model)
                .rows(read_as, &opened.files, kernel, V1Zeros::default())
                .unwrap();
            assert_eq!(rows.type_name(), label);
            assert_eq!(rows.shape(), shape.to_vec(), "{case}");
            assert!(rows.check_rows(0..shape[0] + 1).is_err());
            // Steps that cut the packed zero points' words (8 rows a word at 4 bits) mid-word.
            for step in [1, 3, 7, 64] {
                let got = read_all(&opened.model, &opened.files, read_as, step);
                assert_eq!(
                    bits(&got),
                    bits(&want),
                    "{case} {read_as} in steps of {step}"
                );
            }
        }
        let memory = vec![std::fs::read(&file).unwrap()];
        let got = read_all(&opened.model, &memory, &name, 5);
        assert_eq!(bits(&got), bits(&want), "{case} from memory");
    }
}

#[test]
fn a_layer_is_listed_once_under_its_weight_and_counted_as_the_hub_counts() {
    for (case, label, shape) in CASES {
        let opened = open(dir(case).join("model.safetensors").to_str().unwrap()).unwrap();
        let tensors = opened.model.tensors(Layout::Logical);
        let names: Vec<&str> = tensors.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            ["lm_head.weight", &format!("{LAYER}.weight")],
            "{case}"
        );
        assert_eq!(tensors[1].ty, TensorType::Named(label.to_string()));
        assert_eq!(tensors[1].shape, shape.to_vec());
        let c = checkpoint(&opened);
        let s = c.summary();
        // Packed ints unpacked, scales, shapes and zero points not parameters.
        assert_eq!(
            s.parameter_count,
            shape[0] * shape[1] + 8 * shape[1],
            "{case}"
        );
        let ct = s.checkpoint().unwrap().ct.clone().unwrap();
        assert_eq!(ct.layers, 1);
        assert_eq!(ct.scheme.ignore, ["lm_head"]);
        let mix: Vec<&str> = s.type_mix.iter().map(|m| m.ty.name()).collect();
        assert!(
            mix.contains(&label) && mix.contains(&"BF16"),
            "{case}: {mix:?}"
        );
        assert_eq!(s.type_mix.len(), 2, "{case}");
    }
}

/// A copy of fixture `case` in a temporary directory, its config.json's `quantization_config`
/// changed by `config` and its model bytes by `bytes`.
fn broken(
    case: &str,
    config: impl Fn(&mut serde_json::Value),
    bytes: impl Fn(&SafetensorsFile, &mut Vec<u8>),
) -> (tempfile::TempDir, String) {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir(case).join("config.json")).unwrap()).unwrap();
    config(&mut doc["quantization_config"]);
    std::fs::write(tmp.path().join("config.json"), doc.to_string()).unwrap();
    let mut model = std::fs::read(dir(case).join("model.safetensors")).unwrap();
    let file = SafetensorsFile::from_bytes(&model).unwrap();
    bytes(&file, &mut model);
    let path = tmp.path().join("model.safetensors");
    std::fs::write(&path, model).unwrap();
    (tmp, path.to_str().unwrap().to_string())
}

fn weights(q: &mut serde_json::Value) -> &mut serde_json::Value {
    &mut q["config_groups"]["group_0"]["weights"]
}

fn open_error(path: &str) -> String {
    open(path).unwrap_err().to_string()
}

fn read_error(path: &str) -> String {
    let opened = open(path).unwrap();
    let kernel = Kernel::auto().unwrap();
    let name = format!("{LAYER}.weight");
    let message = match opened
        .model
        .rows(&name, &opened.files, kernel, V1Zeros::default())
    {
        Err(e) => e.to_string(),
        Ok(mut rows) => {
            let n = rows.n_rows();
            rows.read(0..n).unwrap_err().to_string()
        }
    };
    message
}

/// Overwrites the stored bytes of tensor `name` (its first bytes) with `with`.
fn patch(file: &SafetensorsFile, model: &mut [u8], name: &str, with: &[u8]) {
    let r = file.data_range(file.get(&format!("{LAYER}.{name}")).unwrap());
    model[r.start as usize..r.start as usize + with.len()].copy_from_slice(with);
}

#[test]
fn each_part_that_does_not_fit_is_one_error() {
    let keep = |_: &SafetensorsFile, _: &mut Vec<u8>| {};
    // Packed words that are not the logical shape's (group 64 would need 32 words a row).
    let (_t, path) = broken("w4a16-g32", |q| weights(q)["group_size"] = 64.into(), keep);
    let e = open_error(&path);
    assert!(
        e.contains(&format!("compressed-tensors layer {LAYER}"))
            && e.contains("weight_packed is I32 [48, 16], expected I32 [48, 32]"),
        "{e}"
    );
    // weight_shape's values against the packed weight and scales.
    let (_t, path) = broken(
        "w4a16-g32",
        |_| {},
        |f, m| patch(f, m, "weight_shape", &47i64.to_le_bytes()),
    );
    let e = read_error(&path);
    assert!(e.contains("weight_shape [47, 128] does not match"), "{e}");
    // A group size that does not divide the inputs.
    let group = |g: u64| {
        move |q: &mut serde_json::Value| {
            weights(q)["strategy"] = "group".into();
            weights(q)["group_size"] = g.into();
        }
    };
    let (_t, path) = broken("fp8-ch", group(48), keep);
    let e = open_error(&path);
    assert!(e.contains("group size 48 does not divide 64 inputs"), "{e}");
    // Scales of the wrong shape.
    let (_t, path) = broken("fp8-ch", group(32), keep);
    let e = open_error(&path);
    assert!(
        e.contains("weight_scale shape [32, 1] is not [32, 2]"),
        "{e}"
    );
    // Asymmetric without zero points.
    let (_t, path) = broken(
        "w4a16-g32",
        |q| weights(q)["symmetric"] = false.into(),
        keep,
    );
    let e = open_error(&path);
    assert!(e.contains("asymmetric, but no weight_zero_point"), "{e}");
    // NaN and infinite scales, named by row and group.
    for (bad, shown) in [(f32::NAN, "NaN"), (f32::INFINITY, "inf")] {
        let (_t, path) = broken(
            "fp8-t",
            |_| {},
            |f, m| patch(f, m, "weight_scale", &bad.to_le_bytes()),
        );
        let e = read_error(&path);
        assert!(
            e.contains(&format!(
                "weight_scale {shown} of row 0, group 0 is not finite"
            )),
            "{e}"
        );
    }
    // An unknown format or strategy: one config error.
    let (_t, path) = broken("w4a16-g32", |q| q["format"] = "marlin-24".into(), keep);
    let e = open_error(&path);
    assert!(
        e.contains("compressed-tensors format \"marlin-24\" is not supported"),
        "{e}"
    );
    let (_t, path) = broken(
        "w4a16-g32",
        |q| weights(q)["strategy"] = "block".into(),
        keep,
    );
    let e = open_error(&path);
    assert!(e.contains("strategy \"block\" is not supported"), "{e}");
}
