//! bitsandbytes 4-bit layers through the one `model::Model` (fixtures/bnb/{nf4,fp4}, made by
//! fixtures/make_bnb.py with bitsandbytes' own `Linear4bit` writer and `dequantize_4bit`):
//! each layer's rows against expected.safetensors, bit for bit, by any row range, from files
//! and from memory; the listed tensors and the summary (with and without config.json); and
//! one error for each part that does not fit.

mod common;

use std::path::{Path, PathBuf};

use common::model_rows::{checkpoint, expected_f32, read_all};
use gguf_lens::gptq::V1Zeros;
use gguf_lens::model::{open, Checkpoint, Layout, Model, TensorType};
use gguf_lens::quant::Kernel;
use gguf_lens::safetensors::SafetensorsFile;

/// (checkpoint, layer path, shape, type label).
const LAYERS: [(&str, &str, [u64; 2], &str); 6] = [
    (
        "nf4",
        "model.layers.0.self_attn.q_proj",
        [32, 96],
        "NF4-b64-dq",
    ),
    (
        "nf4",
        "model.layers.0.mlp.down_proj",
        [20, 33],
        "NF4-b32-dq",
    ),
    ("nf4", "model.layers.0.mlp.up_proj", [16, 64], "NF4-b64"),
    (
        "fp4",
        "model.layers.0.self_attn.k_proj",
        [24, 80],
        "FP4-b128",
    ),
    (
        "fp4",
        "model.layers.0.self_attn.v_proj",
        [96, 100],
        "FP4-b32-dq",
    ),
    ("fp4", "model.layers.0.mlp.gate_proj", [10, 27], "FP4-b64"),
];

fn dir(which: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/bnb")
        .join(which)
}

/// Bit-for-bit equality, naming the first value that differs.
fn same(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    if let Some(i) = (0..got.len()).find(|&i| got[i].to_bits() != want[i].to_bits()) {
        panic!(
            "{what}: value {i} is {} ({:#x}), expected {} ({:#x})",
            got[i],
            got[i].to_bits(),
            want[i],
            want[i].to_bits()
        );
    }
}

/// Tensor `name`'s f32 values in expected.safetensors.
fn expected(which: &str, name: &str) -> Vec<f32> {
    expected_f32(&dir(which).join("expected.safetensors"), name)
}

#[test]
fn every_layer_reads_as_dequantize_4bit_bit_for_bit_by_any_rows() {
    let kernel = Kernel::auto().unwrap();
    for (which, path, shape, label) in LAYERS {
        let file = dir(which).join("model.safetensors");
        let opened = open(file.to_str().unwrap()).unwrap();
        assert_eq!(opened.files.config_source.as_deref(), Some("config.json"));
        let name = format!("{path}.weight");
        let want = expected(which, &name);
        assert_eq!(want.len() as u64, shape[0] * shape[1]);
        assert!(want.iter().any(|w| *w != 0.0), "{name}");
        let rows = (opened.model)
            .rows(&name, &opened.files, kernel, V1Zeros::default())
            .unwrap();
        assert_eq!(rows.type_name(), label);
        assert_eq!(rows.shape(), shape.to_vec());
        assert_eq!(rows.n_rows(), shape[0]);
        assert_eq!(rows.row_len(), shape[1]);
        assert!(rows.check_rows(0..shape[0] + 1).is_err());
        // Steps that start rows mid-byte (odd rows) and mid-block.
        for step in [1, 2, 3, 7, 1000] {
            let got = read_all(&opened.model, &opened.files, &name, step);
            same(&got, &want, &format!("{name} in steps of {step}"));
        }
        let memory = vec![std::fs::read(&file).unwrap()];
        let got = read_all(&opened.model, &memory, &name, 5);
        same(&got, &want, &format!("{name} from memory"));
        // The module path names the layer too.
        let mut rows = (opened.model)
            .rows(path, &opened.files, kernel, V1Zeros::default())
            .unwrap();
        let r = shape[1] as usize;
        let got = rows.read(3..5).unwrap().to_vec();
        same(&got, &want[3 * r..5 * r], path);
    }
}

#[test]
fn a_layer_is_listed_once_and_counted_as_the_hub_counts() {
    let opened = open(dir("nf4").join("model.safetensors").to_str().unwrap()).unwrap();
    let tensors = opened.model.tensors(Layout::Logical);
    let names: Vec<&str> = tensors.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "model.layers.0.mlp.down_proj.weight",
            "model.layers.0.mlp.up_proj.weight",
            "model.layers.0.self_attn.q_proj.weight",
            "model.norm.weight",
        ]
    );
    assert_eq!(tensors[0].ty, TensorType::Named("NF4-b32-dq".to_string()));
    assert_eq!(tensors[0].shape, vec![20, 33]);
    let s = checkpoint(&opened).summary();
    // Logical elements; absmax, code books and quant states are not parameters.
    assert_eq!(s.parameter_count, 20 * 33 + 16 * 64 + 32 * 96 + 16);
    let b = s.checkpoint().unwrap().bnb.clone().unwrap();
    assert_eq!(b.layers, 3);
    let config = b.config.unwrap();
    assert!(config.double_quant);
    assert_eq!(config.not_converted, ["lm_head"]);
    let mix = s
        .type_mix
        .iter()
        .find(|m| m.ty.name() == "NF4-b64-dq")
        .unwrap();
    // q_proj: 1536 code bytes, 48 u8 scales, 4 nested + 1024 map, 64 quant map, 167 state.
    assert_eq!((mix.tensors, mix.elements), (1, 32 * 96));
    assert_eq!(mix.bytes, 1536 + 48 + 4 + 1024 + 64 + 167);
    // Every stored tensor is counted once: the mix covers all bytes.
    let all: u64 = s.type_mix.iter().map(|m| m.bytes).sum();
    assert_eq!(all, s.tensor_bytes);
}

#[test]
fn without_config_json_the_layers_are_found_by_their_quant_state() {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = tmp.path().join("model.safetensors");
    std::fs::copy(dir("fp4").join("model.safetensors"), &path).unwrap();
    let opened = open(path.to_str().unwrap()).unwrap();
    assert_eq!(opened.files.config_source, None);
    let s = checkpoint(&opened).summary();
    let b = s.checkpoint().unwrap().bnb.clone().unwrap();
    assert_eq!((b.layers, b.config), (3, None));
    let name = "model.layers.0.self_attn.v_proj.weight";
    let got = read_all(&opened.model, &opened.files, name, 9);
    same(&got, &expected("fp4", name), name);
}

/// A copy of a fixture in a temporary directory with its model bytes changed by `bytes` and
/// its header's JSON by `header`.
fn broken(
    which: &str,
    header: impl Fn(&mut serde_json::Value),
    bytes: impl Fn(&SafetensorsFile, &mut Vec<u8>),
) -> (tempfile::TempDir, String) {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    std::fs::copy(
        dir(which).join("config.json"),
        tmp.path().join("config.json"),
    )
    .unwrap();
    let mut model = std::fs::read(dir(which).join("model.safetensors")).unwrap();
    let file = SafetensorsFile::from_bytes(&model).unwrap();
    bytes(&file, &mut model);
    let n = u64::from_le_bytes(model[..8].try_into().unwrap()) as usize;
    let mut doc: serde_json::Value = serde_json::from_slice(&model[8..8 + n]).unwrap();
    header(&mut doc);
    let mut text = doc.to_string().into_bytes();
    assert!(text.len() <= n, "the changed header must fit");
    text.resize(n, b' ');
    model[8..8 + n].copy_from_slice(&text);
    let path = tmp.path().join("model.safetensors");
    std::fs::write(&path, model).unwrap();
    (tmp, path.to_str().unwrap().to_string())
}

/// Replaces `from` by `to` (same length) in the quant-state JSON of `layer`.
fn state_edit(
    layer: &'static str,
    from: &'static str,
    to: &'static str,
) -> impl Fn(&SafetensorsFile, &mut Vec<u8>) {
    move |f, m| {
        let t = f
            .tensors()
            .iter()
            .find(|t| {
                t.name()
                    .starts_with(&format!("{layer}.weight.quant_state."))
            })
            .unwrap();
        let r = f.data_range(t);
        let json = &mut m[r.start as usize..r.end as usize];
        let text = String::from_utf8(json.to_vec()).unwrap();
        assert!(text.contains(from), "{text}");
        let edited = text.replacen(from, to, 1);
        assert_eq!(edited.len(), json.len());
        json.copy_from_slice(edited.as_bytes());
    }
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

fn set_f32(name: String, at: usize, v: f32) -> impl Fn(&SafetensorsFile, &mut Vec<u8>) {
    move |f, m| {
        let r = f.data_range(f.get(&name).unwrap());
        let i = r.start as usize + 4 * at;
        m[i..i + 4].copy_from_slice(&v.to_le_bytes());
    }
}

#[test]
fn each_part_that_does_not_fit_is_one_error() {
    let keep = |_: &SafetensorsFile, _: &mut Vec<u8>| {};
    let q = "model.layers.0.self_attn.q_proj";
    let up = "model.layers.0.mlp.up_proj";
    let open_error = |path: &str| match open(path) {
        Ok(_) => panic!("{path} opened"),
        Err(e) => e.to_string(),
    };
    // Scales of the wrong shape (same bytes, relabelled).
    let (_t, path) = broken(
        "nf4",
        |h| h[format!("{q}.weight.absmax")]["shape"] = serde_json::json!([2, 24]),
        keep,
    );
    let e = open_error(&path);
    assert!(e.contains(&format!("bitsandbytes layer {q}: .weight.absmax is U8 [2, 24], expected U8 [48] (one per block of 64 of 3072 values, double-quantized)")), "{e}");
    // Packed codes that are not the logical shape's.
    let (_t, path) = broken("nf4", |_| {}, state_edit(up, "[16, 64]", "[16, 66]"));
    let e = open_error(&path);
    assert!(e.contains(&format!("bitsandbytes layer {up}: .weight is U8 [512, 1], expected U8 [528, 1] (two 4-bit codes a byte for shape [16, 66])")), "{e}");
    let (_t, path) = broken(
        "nf4",
        |h| h[format!("{up}.weight")]["dtype"] = "I8".into(),
        keep,
    );
    assert!(open_error(&path).contains(".weight is I8 [512, 1]"));
    // A nested absmax of the wrong dtype.
    let (_t, path) = broken(
        "nf4",
        |h| h[format!("{q}.weight.nested_absmax")]["dtype"] = "I32".into(),
        keep,
    );
    let e = open_error(&path);
    assert!(
        e.contains(".weight.nested_absmax is I32 [1], expected F32 [1] (one per 256 scales)"),
        "{e}"
    );
    // A missing part.
    let (_t, path) = broken(
        "nf4",
        |h| {
            let v = h
                .as_object_mut()
                .unwrap()
                .remove(&format!("{up}.weight.absmax"))
                .unwrap();
            h[format!("{up}.weight.absmay")] = v;
        },
        keep,
    );
    assert!(open_error(&path).contains(&format!("no {up}.weight.absmax tensor")));
    // A block size bitsandbytes does not make.
    let (_t, path) = broken(
        "nf4",
        |_| {},
        state_edit(up, "\"blocksize\": 64", "\"blocksize\": 48"),
    );
    let e = open_error(&path);
    assert!(
        e.contains(&format!(
            "bitsandbytes layer {up}: quant state blocksize 48 is not one of bitsandbytes' [32, 64"
        )),
        "{e}"
    );
    // An unknown quant type, in the JSON and in the tensor name.
    let (_t, path) = broken("nf4", |_| {}, state_edit(up, "\"nf4\"", "\"nf5\""));
    assert!(open_error(&path).contains("quant state quant_type \"nf5\" is not nf4 or fp4"));
    let (_t, path) = broken(
        "nf4",
        |h| {
            let key = format!("{up}.weight.quant_state.bitsandbytes__nf4");
            let v = h.as_object_mut().unwrap().remove(&key).unwrap();
            h[format!("{up}.weight.quant_state.bitsandbytes__nf8")] = v;
        },
        keep,
    );
    assert!(open_error(&path).contains("quant state is not bitsandbytes__nf4 or bitsandbytes__fp4"));
    // A quant state that is not JSON, and a dtype bnb does not return.
    let (_t, path) = broken("nf4", |_| {}, state_edit(up, "{", "["));
    assert!(open_error(&path).contains(&format!(
        "bitsandbytes layer {up}: quant state is not JSON (77 bytes)"
    )));
    let (_t, path) = broken("nf4", |_| {}, state_edit(up, "float16", "float64"));
    assert!(open_error(&path)
        .contains("quant state dtype \"float64\" is not float32, float16 or bfloat16"));
    // A NaN / infinite scale, named by its block, when a read uses it.
    let (_t, path) = broken(
        "nf4",
        |_| {},
        set_f32(format!("{up}.weight.absmax"), 9, f32::NAN),
    );
    let e = read_error(&path, &format!("{up}.weight"));
    assert!(
        e.contains(&format!(
            "bitsandbytes layer {up}: absmax NaN of block 9 is not finite"
        )),
        "{e}"
    );
    let opened = open(&path).unwrap();
    let mut rows = (opened.model)
        .rows(
            &format!("{up}.weight"),
            &opened.files,
            Kernel::auto().unwrap(),
            V1Zeros::default(),
        )
        .unwrap();
    let got = rows.read(0..9).unwrap().to_vec();
    same(
        &got,
        &expected("nf4", &format!("{up}.weight"))[..9 * 64],
        up,
    );
    let (_t, path) = broken(
        "nf4",
        |_| {},
        set_f32(format!("{q}.weight.nested_absmax"), 0, f32::INFINITY),
    );
    let e = read_error(&path, &format!("{q}.weight"));
    assert!(
        e.contains("absmax inf of block 0 is not finite") || e.contains("is not finite"),
        "{e}"
    );
    // A stored code book that is not the quant type's.
    let (_t, path) = broken(
        "nf4",
        |_| {},
        set_f32(format!("{up}.weight.quant_map"), 3, 0.5),
    );
    let e = read_error(&path, &format!("{up}.weight"));
    assert!(
        e.contains(".weight.quant_map") && e.contains("is not bitsandbytes' nf4 code book"),
        "{e}"
    );
    // 8-bit and unknown quant types in config.json.
    for (config, want) in [
        (
            r#"{"quantization_config": {"quant_method": "bitsandbytes", "load_in_8bit": true}}"#,
            "8-bit LLM.int8",
        ),
        (
            r#"{"quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": true, "bnb_4bit_quant_type": "int4"}}"#,
            "bnb_4bit_quant_type \"int4\" is not nf4 or fp4",
        ),
    ] {
        let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        std::fs::copy(
            dir("nf4").join("model.safetensors"),
            tmp.path().join("model.safetensors"),
        )
        .unwrap();
        std::fs::write(tmp.path().join("config.json"), config).unwrap();
        let e = open(tmp.path().join("model.safetensors").to_str().unwrap())
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains(want), "{e}");
    }
}

/// Every byte of a quant state changed (to a digit, a quote, a brace, a space and its
/// complement), and every truncation: the checkpoint is built from memory, each layer found or
/// refused with one error, and a found layer reads whole or gives one error; never a panic.
#[test]
fn hostile_quant_states_never_panic() {
    let bytes = std::fs::read(dir("nf4").join("model.safetensors")).unwrap();
    let file = SafetensorsFile::from_bytes(&bytes).unwrap();
    let kernel = Kernel::auto().unwrap();
    let state_name = "model.layers.0.self_attn.q_proj.weight.quant_state.bitsandbytes__nf4";
    let r = file.data_range(file.get(state_name).unwrap());
    let state = bytes[r.start as usize..r.end as usize].to_vec();
    let others: Vec<(String, Vec<u8>)> = file
        .tensors()
        .iter()
        .filter(|t| t.name().contains(".quant_state.") && t.name() != state_name)
        .map(|t| {
            let r = file.data_range(t);
            (
                t.name().to_string(),
                bytes[r.start as usize..r.end as usize].to_vec(),
            )
        })
        .collect();
    let mut variants: Vec<Vec<u8>> = (0..=state.len()).map(|n| state[..n].to_vec()).collect();
    for i in 0..state.len() {
        for b in [b'9', b'0', b'"', b'}', b' ', !state[i]] {
            let mut v = state.clone();
            v[i] = b;
            variants.push(v);
        }
    }
    let memory = vec![bytes.clone()];
    let (mut found, mut refused) = (0, 0);
    for v in variants {
        let mut c = Checkpoint::new(vec![file.clone()], None);
        c.set_bnb_states(others.iter().cloned().chain([(state_name.to_string(), v)]));
        if c.bnb_layer("model.layers.0.self_attn.q_proj").is_none() {
            assert_eq!(c.layer_errors().len(), 1, "{:?}", c.layer_errors());
            refused += 1;
            continue;
        }
        found += 1;
        let model = Model::Safetensors(Box::new(c));
        let name = "model.layers.0.self_attn.q_proj.weight";
        let read = match model.rows(name, &memory, kernel, V1Zeros::default()) {
            Ok(mut rows) => {
                let n = rows.n_rows();
                rows.read(0..n).map(|_| ())
            }
            Err(e) => Err(e),
        };
        // A read either works or is one error line.
        if let Err(e) = read {
            assert_eq!(e.to_string().lines().count(), 1, "{e}");
        }
    }
    // Most changes are refused; some (a changed offset digit, a space) still fit.
    assert!(
        found > 0 && refused > found,
        "{found} found, {refused} refused"
    );
}

/// A quant state larger than any bitsandbytes writes is refused before it is read.
#[test]
fn an_oversized_quant_state_is_one_error() {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let name = "a.weight.quant_state.bitsandbytes__nf4";
    let n = 70_000;
    let header = format!(r#"{{"{name}":{{"dtype":"U8","shape":[{n}],"data_offsets":[0,{n}]}}}}"#);
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.resize(bytes.len() + n, b' ');
    let path = tmp.path().join("model.safetensors");
    std::fs::write(&path, bytes).unwrap();
    let e = open(path.to_str().unwrap()).err().unwrap().to_string();
    assert!(
        e.contains(&format!(
            "bitsandbytes quant state {name} length 70000 is too long (limit 65536)"
        )),
        "{e}"
    );
}
