//! The one `model::Model` over every storage: values read through `rows` against the torch /
//! GPTQModel / llama.cpp oracle files of fixtures/gptq (see fixtures/gptq/manifest.json), a
//! layer whose parts are split across the shards of an index, readers made by `another`, the
//! listed tensors and the dtype mix under one label, and in-memory shards against files.

use gguf_lens::gptq::V1Zeros;
use gguf_lens::model::{open, Format, Layout, Model, Opened, TensorType};
use gguf_lens::quant::Kernel;

const LAYER: &str = "model.layers.0.self_attn.q_proj";

fn f32s(path: &str) -> Vec<f32> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

fn bits(values: &[f32]) -> Vec<u32> {
    values.iter().map(|v| v.to_bits()).collect()
}

/// Every row of `name`, read in chunks of `step` rows, alternating between two readers.
fn read_all(opened: &Opened, name: &str, step: u64) -> Vec<f32> {
    let kernel = Kernel::auto().unwrap();
    let mut first = (opened.model)
        .rows(name, &opened.files, kernel, V1Zeros::default())
        .unwrap();
    let mut second = first.another().unwrap();
    let mut out = Vec::new();
    let mut start = 0;
    let n = first.n_rows();
    while start < n {
        let end = (start + step).min(n);
        let reader = if (start / step) % 2 == 0 {
            &mut first
        } else {
            &mut second
        };
        out.extend_from_slice(reader.read(start..end).unwrap());
        start = end;
    }
    out
}

#[test]
fn a_gptq_layer_split_across_shards_reads_as_the_oracle() {
    let single = open("fixtures/gptq/b4_g32_v1/model.safetensors").unwrap();
    let sharded = open("fixtures/gptq/sharded/model.safetensors.index.json").unwrap();
    let expected = f32s("fixtures/gptq/b4_g32_v1/expected.f32");
    assert_eq!(expected.len(), 32 * 128);
    for opened in [&single, &sharded] {
        assert_eq!(opened.model.format(), Format::Safetensors);
        for name in [LAYER.to_string(), format!("{LAYER}.weight")] {
            for step in [1, 5, 32] {
                let got = read_all(opened, &name, step);
                assert_eq!(bits(&got), bits(&expected), "{name} in steps of {step}");
            }
        }
        // A plain tensor of the second shard, against torch's `.to(float32)`.
        let bias = f32s("fixtures/gptq/b4_g32_v1/lm_head.bias.f32");
        assert_eq!(bits(&read_all(opened, "lm_head.bias", 1)), bits(&bias));
    }
    assert_eq!(sharded.files.shards.len(), 2);
    let Model::Safetensors(c) = &sharded.model else {
        panic!("a checkpoint");
    };
    assert_eq!(c.tensor(&format!("{LAYER}.qweight")).unwrap().0, 0);
    assert_eq!(c.tensor(&format!("{LAYER}.scales")).unwrap().0, 1);
}

#[test]
fn a_gptq_layer_has_one_label_everywhere() {
    let opened = open("fixtures/gptq/b4_g32_v1/model.safetensors").unwrap();
    let listed = opened.model.tensors(Layout::Logical);
    let layer = listed
        .iter()
        .find(|t| t.name == format!("{LAYER}.weight"))
        .expect("the layer listed as <layer>.weight");
    assert_eq!(layer.ty, TensorType::Named("GPTQ-4bit".to_string()));
    assert_eq!(layer.shape, [32, 128]);
    // Its parts are not listed beside it.
    assert!(!listed.iter().any(|t| t.name.ends_with(".qweight")));
    let Model::Safetensors(c) = &opened.model else {
        panic!("a checkpoint");
    };
    let mix = c.summary().type_mix;
    assert!(
        mix.iter().any(|m| m.ty.name() == layer.ty.name()),
        "{mix:?}"
    );
    let rows = (opened.model)
        .rows(
            LAYER,
            &opened.files,
            Kernel::auto().unwrap(),
            V1Zeros::default(),
        )
        .unwrap();
    assert_eq!(rows.type_name(), layer.ty.name());
    assert_eq!(rows.shape(), layer.shape);
}

#[test]
fn shards_in_memory_read_as_the_files() {
    let path = "fixtures/sample/tiny-llama-Q4_K_M.gguf";
    let opened = open(path).unwrap();
    assert_eq!(opened.model.format(), Format::Gguf);
    let memory = vec![std::fs::read(path).unwrap()];
    let kernel = Kernel::auto().unwrap();
    let listed = opened.model.tensors(Layout::Gguf);
    assert!(!listed.is_empty());
    for t in &listed {
        let mut from_file = (opened.model)
            .rows(&t.name, &opened.files, kernel, V1Zeros::default())
            .unwrap();
        let mut from_memory = (opened.model)
            .rows(&t.name, &memory, kernel, V1Zeros::default())
            .unwrap();
        assert_eq!(from_file.shape(), t.shape, "{}", t.name);
        assert_eq!(from_file.type_name(), t.ty.name());
        let n = from_file.n_rows();
        let a = from_file.read(0..n).unwrap().to_vec();
        let b = from_memory.read(0..n).unwrap();
        assert_eq!(bits(&a), bits(b), "{}", t.name);
        assert!(from_file.check_rows(0..n + 1).is_err(), "{}", t.name);
    }
}

#[test]
fn a_missing_tensor_and_a_missing_file_are_errors_naming_them() {
    let opened = open("fixtures/gptq/b4_g32_v1/model.safetensors").unwrap();
    let kernel = Kernel::auto().unwrap();
    let err = (opened.model)
        .rows("nope.weight", &opened.files, kernel, V1Zeros::default())
        .err()
        .unwrap();
    assert!(err.to_string().contains("\"nope.weight\""), "{err}");
    let err = open("fixtures/no-such-file.safetensors").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("fixtures/no-such-file.safetensors: "),
        "{err}"
    );
}

#[test]
fn quant_error_reads_any_storage_and_names_what_it_skips() {
    use gguf_lens::quantize::{tensor_quant_error, Outcome};
    use gguf_lens::GgmlType;
    let opened = open("fixtures/gptq/sharded/model.safetensors.index.json").unwrap();
    let kernel = Kernel::auto().unwrap();
    let types = [
        GgmlType::Q8_0,
        GgmlType::Q4_K,
        GgmlType::Q4_0,
        GgmlType::IQ4_NL,
    ];
    let run = |threads| {
        tensor_quant_error(
            &opened.model,
            &opened.files,
            LAYER,
            None,
            &types,
            threads,
            kernel,
        )
        .unwrap()
    };
    let one = run(1);
    assert_eq!((one.type_name.as_str(), one.row_len), ("GPTQ-4bit", 128));
    assert_eq!(one.rows, 0..32);
    let done: Vec<_> = (one.outcomes.iter())
        .filter_map(|o| match o {
            Outcome::Done(r) => Some((r.ty, r.rmse.to_bits(), r.cosine.to_bits())),
            Outcome::Skipped(..) => None,
        })
        .collect();
    let tys: Vec<GgmlType> = done.iter().map(|d| d.0).collect();
    assert_eq!(tys, [GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::IQ4_NL]);
    // Q4_K's block of 256 does not divide a row of 128: listed last, with the reason.
    match one.outcomes.last().unwrap() {
        Outcome::Skipped(GgmlType::Q4_K, why) => {
            assert_eq!(why, "row length 128 is not a multiple of its block of 256")
        }
        other => panic!("{other:?}"),
    }
    // Threads split the types, not the values: the same bits.
    let four = run(4);
    let done4: Vec<_> = (four.outcomes.iter())
        .filter_map(|o| match o {
            Outcome::Done(r) => Some((r.ty, r.rmse.to_bits(), r.cosine.to_bits())),
            Outcome::Skipped(..) => None,
        })
        .collect();
    assert_eq!(done, done4);
}

/// `dir/model.safetensors` holding the GPTQ-named tensors `l.*` with the given shapes
/// (zero data): a `.qweight` set whatever its shapes say.
fn write_qweight_set(dir: &std::path::Path, parts: &[(&str, &str, &[u64])]) -> String {
    let (mut json, mut offset) = (String::from("{"), 0u64);
    for (i, (suffix, dtype, shape)) in parts.iter().enumerate() {
        let n = shape.iter().product::<u64>() * if *dtype == "F16" { 2 } else { 4 };
        let sep = if i == 0 { "" } else { "," };
        json += &format!(
            r#"{sep}"l.{suffix}":{{"dtype":"{dtype}","shape":{shape:?},"data_offsets":[{offset},{}]}}"#,
            offset + n
        );
        offset += n;
    }
    json += "}";
    let mut bytes = (json.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(json.as_bytes());
    bytes.resize(bytes.len() + offset as usize, 0);
    let path = dir.join("model.safetensors");
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn gptq_without_a_config_needs_shapes_that_fix_bits_and_groups() {
    // The fixture's quantize_config.json left behind: 128 outputs in 16 zero words fix 4 bits,
    // 32 inputs in one group fix the group size, and the values read as the oracle's.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let copy = dir.path().join("model.safetensors");
    std::fs::copy("fixtures/gptq/b4_g32_v1/model.safetensors", &copy).unwrap();
    let opened = open(copy.to_str().unwrap()).unwrap();
    let Model::Safetensors(c) = &opened.model else {
        panic!("a checkpoint");
    };
    assert!(c.config().is_none());
    let layer = c
        .layers()
        .iter()
        .find(|l| l.name == LAYER)
        .expect("detected from the shapes");
    assert_eq!((layer.bits, layer.group_size), (4, 32));
    let expected = f32s("fixtures/gptq/b4_g32_v1/expected.f32");
    assert_eq!(bits(&read_all(&opened, LAYER, 7)), bits(&expected));

    // Sets whose shapes do not fit (scales not [groups, out]; 8 outputs in one zero word,
    // which 2, 3 or 4 bits all fill) stay plain tensors, without an error.
    for (scales, fits_with_config) in [([8u64, 2], false), ([2, 8], true)] {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let path = write_qweight_set(
            dir.path(),
            &[
                ("qweight", "I32", &[4, 8]),
                ("qzeros", "I32", &[2, 1]),
                ("scales", "F16", &scales),
            ],
        );
        let opened = open(&path).unwrap();
        let Model::Safetensors(c) = &opened.model else {
            panic!("a checkpoint");
        };
        assert!(c.layers().is_empty(), "{scales:?}");
        let listed = opened.model.tensors(Layout::Logical);
        let qweight = listed.iter().find(|t| t.name == "l.qweight").unwrap();
        assert_eq!(qweight.shape, [4, 8]);

        // With a config saying GPTQ the same set is a layer if it fits, else an error naming it.
        std::fs::write(dir.path().join("quantize_config.json"), r#"{"bits": 4}"#).unwrap();
        match open(&path) {
            Ok(opened) if fits_with_config => {
                let Model::Safetensors(c) = &opened.model else {
                    panic!("a checkpoint");
                };
                assert_eq!(c.layers()[0].bits, 4);
            }
            Err(err) if !fits_with_config => {
                assert!(err.to_string().contains("GPTQ layer l"), "{err}")
            }
            other => panic!("{scales:?}: {:?}", other.map(|o| o.model.format())),
        }
    }
}
