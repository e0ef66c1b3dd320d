//! gpt-oss MXFP4 expert tensors through the one `model::Model` (fixtures/mxfp4, made by
//! fixtures/make_mxfp4.py with transformers' own `convert_moe_packed_tensors`): each tensor's
//! rows against expected.safetensors, bit for bit, by any row range (within and across
//! experts), from files and from memory; the listed tensors, the summary; and one error for
//! each part that does not fit.

mod common;

use std::path::{Path, PathBuf};

use common::model_rows::{bits, checkpoint, expected_f32, read_all};
use gguf_lens::gptq::V1Zeros;
use gguf_lens::model::{open, Layout, TensorType};
use gguf_lens::quant::Kernel;
use gguf_lens::safetensors::SafetensorsFile;

const PREFIX: &str = "model.layers.0.mlp.experts";
/// (projection, logical shape [experts, in, out]).
const LAYERS: [(&str, [u64; 3]); 2] = [("gate_up_proj", [2, 64, 24]), ("down_proj", [3, 96, 16])];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/mxfp4")
}

/// Tensor `name`'s f32 values in expected.safetensors.
fn expected(name: &str) -> Vec<f32> {
    expected_f32(&dir().join("expected.safetensors"), name)
}

#[test]
fn every_tensor_reads_as_transformers_bit_for_bit_by_any_rows() {
    let kernel = Kernel::auto().unwrap();
    let file = dir().join("model.safetensors");
    let opened = open(file.to_str().unwrap()).unwrap();
    assert_eq!(opened.files.config_source.as_deref(), Some("config.json"));
    for (proj, shape) in LAYERS {
        let name = format!("{PREFIX}.{proj}");
        let want = expected(&name);
        assert_eq!(want.len() as u64, shape.iter().product::<u64>());
        // Exponents from 2^-127 up: subnormals and signed zeros among the values.
        assert!(
            want.iter()
                .any(|w| *w != 0.0 && w.abs() < f32::MIN_POSITIVE),
            "{proj}"
        );
        assert!(want.iter().any(|w| w.to_bits() == 0x8000_0000), "{proj}");
        let rows = (opened.model)
            .rows(&name, &opened.files, kernel, V1Zeros::default())
            .unwrap();
        assert_eq!(rows.type_name(), "MXFP4");
        assert_eq!(rows.shape(), shape.to_vec());
        assert_eq!(rows.n_rows(), shape[0] * shape[1]);
        assert_eq!(rows.row_len(), shape[2]);
        assert!(rows.check_rows(0..rows.n_rows() + 1).is_err());
        // Steps within a block of 32, across blocks and across experts.
        for step in [1, 5, 32, 33, 100, 1000] {
            let got = read_all(&opened.model, &opened.files, &name, step);
            assert_eq!(bits(&got), bits(&want), "{proj} in steps of {step}");
        }
        let memory = vec![std::fs::read(&file).unwrap()];
        let got = read_all(&opened.model, &memory, &name, 7);
        assert_eq!(bits(&got), bits(&want), "{proj} from memory");
        // One range across an expert boundary.
        let mut rows = rows;
        let (k, r) = (shape[1], shape[2] as usize);
        let got = rows.read(k - 3..k + 2).unwrap().to_vec();
        assert_eq!(
            bits(&got),
            bits(&want[(k as usize - 3) * r..(k as usize + 2) * r])
        );
    }
}

#[test]
fn a_tensor_is_listed_once_and_counted_as_the_hub_counts() {
    let opened = open(dir().join("model.safetensors").to_str().unwrap()).unwrap();
    let tensors = opened.model.tensors(Layout::Logical);
    let names: Vec<&str> = tensors.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "lm_head.weight",
            "model.layers.0.mlp.experts.down_proj",
            "model.layers.0.mlp.experts.down_proj_bias",
            "model.layers.0.mlp.experts.gate_up_proj",
            "model.layers.0.mlp.experts.gate_up_proj_bias",
            "model.layers.0.mlp.router.weight",
        ]
    );
    assert_eq!(tensors[1].ty, TensorType::Named("MXFP4".to_string()));
    assert_eq!(tensors[1].shape, vec![3, 96, 16]);
    let s = checkpoint(&opened).summary();
    // Two FP4 values a block byte, scales not parameters; biases, router and lm_head plain.
    let logical = 2 * 64 * 24 + 3 * 96 * 16;
    assert_eq!(
        s.parameter_count,
        logical + 2 * 24 + 3 * 16 + 3 * 64 + 8 * 64
    );
    let m = s.checkpoint().unwrap().mxfp4.clone().unwrap();
    assert_eq!(m.layers, 2);
    assert_eq!(m.not_converted[3], "lm_head");
    let mix = s.type_mix.iter().find(|m| m.ty.name() == "MXFP4").unwrap();
    assert_eq!((mix.tensors, mix.elements), (2, logical));
    assert_eq!(mix.bytes, 1536 + 96 + 2304 + 144);
    assert_eq!(s.type_mix.len(), 2);
}

/// A copy of the fixture in a temporary directory with its model bytes changed by `bytes` and
/// its header's JSON by `header`.
fn broken(
    header: impl Fn(&mut serde_json::Value),
    bytes: impl Fn(&SafetensorsFile, &mut Vec<u8>),
) -> (tempfile::TempDir, String) {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    std::fs::copy(dir().join("config.json"), tmp.path().join("config.json")).unwrap();
    let mut model = std::fs::read(dir().join("model.safetensors")).unwrap();
    let file = SafetensorsFile::from_bytes(&model).unwrap();
    bytes(&file, &mut model);
    let n = u64::from_le_bytes(model[..8].try_into().unwrap()) as usize;
    let mut doc: serde_json::Value = serde_json::from_slice(&model[8..8 + n]).unwrap();
    header(&mut doc);
    let mut text = doc.to_string().into_bytes();
    text.resize(n, b' ');
    assert_eq!(text.len(), n, "the changed header must fit");
    model[8..8 + n].copy_from_slice(&text);
    let path = tmp.path().join("model.safetensors");
    std::fs::write(&path, model).unwrap();
    (tmp, path.to_str().unwrap().to_string())
}

fn read_error(path: &str, name: &str) -> String {
    let opened = open(path).unwrap();
    let kernel = Kernel::auto().unwrap();
    let message = match opened
        .model
        .rows(name, &opened.files, kernel, V1Zeros::default())
    {
        Err(e) => e.to_string(),
        Ok(mut rows) => {
            let n = rows.n_rows();
            rows.read(0..n).unwrap_err().to_string()
        }
    };
    message
}

#[test]
fn each_part_that_does_not_fit_is_one_error() {
    let keep = |_: &SafetensorsFile, _: &mut Vec<u8>| {};
    let name = format!("{PREFIX}.down_proj");
    // Scales of the wrong shape (one block fewer per row: same bytes, relabelled).
    let (_t, path) = broken(
        |h| h[format!("{name}_scales")]["shape"] = serde_json::json!([3, 48, 1]),
        keep,
    );
    let e = open(&path).err().unwrap().to_string();
    assert!(
        e.contains(&format!(
            "MXFP4 tensor {name}: _scales is U8 [3, 48, 1], expected U8 (e8m0) [3, 16, 3]"
        )),
        "{e}"
    );
    // Blocks that are not 16 bytes (32 values) wide.
    let (_t, path) = broken(
        |h| h[format!("{name}_blocks")]["shape"] = serde_json::json!([3, 16, 6, 8]),
        keep,
    );
    let e = open(&path).err().unwrap().to_string();
    assert!(
        e.contains("_blocks is U8 [3, 16, 6, 8], expected U8 [experts, rows, groups, 16]"),
        "{e}"
    );
    // Blocks of another dtype.
    let (_t, path) = broken(
        |h| {
            h[format!("{name}_blocks")]["dtype"] = "I8".into();
        },
        keep,
    );
    let e = open(&path).err().unwrap().to_string();
    assert!(e.contains("_blocks is I8 [3, 16, 3, 16]"), "{e}");
    // A NaN scale (e8m0 255), named by expert, row and block, and its byte.
    let (_t, path) = broken(
        |_| {},
        |f, m| {
            let r = f.data_range(f.get(&format!("{name}_scales")).unwrap());
            // Expert 1, row 2, block 1: byte (1 * 16 + 2) * 3 + 1.
            m[r.start as usize + 55] = 255;
        },
    );
    let e = read_error(&path, &name);
    assert!(
        e.contains("_scales 255 (e8m0 NaN) of expert 1, row 2, block 1 (byte 55) is not a scale"),
        "{e}"
    );
    // Rows of expert 0 do not use it and still read.
    let opened = open(&path).unwrap();
    let mut rows = (opened.model)
        .rows(
            &name,
            &opened.files,
            Kernel::auto().unwrap(),
            V1Zeros::default(),
        )
        .unwrap();
    let got = rows.read(0..96).unwrap().to_vec();
    assert_eq!(bits(&got), bits(&expected(&name)[..96 * 16]));
    // A config with modules_to_not_convert that is not a list.
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    std::fs::copy(
        dir().join("model.safetensors"),
        tmp.path().join("model.safetensors"),
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("config.json"),
        r#"{"quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": "lm_head"}}"#,
    )
    .unwrap();
    let e = open(tmp.path().join("model.safetensors").to_str().unwrap())
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("modules_to_not_convert \"lm_head\" is not a list of names"),
        "{e}"
    );
}

#[test]
fn without_config_json_the_tensors_are_inferred_from_names_and_shapes() {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = tmp.path().join("model.safetensors");
    std::fs::copy(dir().join("model.safetensors"), &path).unwrap();
    let opened = open(path.to_str().unwrap()).unwrap();
    assert_eq!(opened.files.config_source, None);
    let names: Vec<String> = (opened.model.tensors(Layout::Logical).into_iter())
        .map(|t| t.name)
        .collect();
    assert!(names.contains(&format!("{PREFIX}.down_proj")));
    assert!(!names.contains(&format!("{PREFIX}.down_proj_blocks")));
    let s = checkpoint(&opened).summary();
    let m = s.checkpoint().unwrap().mxfp4.clone().unwrap();
    assert_eq!((m.layers, m.inferred), (2, true));
    assert!(m.not_converted.is_empty());
    for (proj, _) in LAYERS {
        let name = format!("{PREFIX}.{proj}");
        let got = read_all(&opened.model, &opened.files, &name, 17);
        assert_eq!(bits(&got), bits(&expected(&name)), "{proj}");
    }
    // A pair that does not fit gpt-oss's layout stays two plain tensors, without an error.
    let (_t, path) = broken(
        |h| h[format!("{PREFIX}.down_proj_blocks")]["dtype"] = "I8".into(),
        |_, _| {},
    );
    std::fs::remove_file(Path::new(&path).with_file_name("config.json")).unwrap();
    let opened = open(&path).unwrap();
    let names: Vec<String> = (opened.model.tensors(Layout::Logical).into_iter())
        .map(|t| t.name)
        .collect();
    assert!(names.contains(&format!("{PREFIX}.down_proj_blocks")));
    assert!(names.contains(&format!("{PREFIX}.gate_up_proj")));
}
