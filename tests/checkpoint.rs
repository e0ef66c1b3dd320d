//! The core's summary of both formats (`GgufModel::summary`, `Checkpoint::summary`) against the
//! oracle (gguf-py and safetensors' safe_open, fixtures/make_diff.py): the same model stored as
//! GGUF and as safetensors has the same parameter count, and GPTQ layers count as in × out.

use std::fs::File;
use std::path::Path;

use gguf_lens::gptq::QuantConfig;
use gguf_lens::model::Checkpoint;
use gguf_lens::model::GgufModel;
use gguf_lens::safetensors::{SafetensorsFile, ShardIndex};

const REPO: &str = env!("CARGO_MANIFEST_DIR");

fn checkpoint(path: &Path) -> Checkpoint {
    let dir = path.parent().unwrap();
    let open = |p: &Path| {
        let mut f = File::open(p).unwrap();
        let size = f.metadata().unwrap().len();
        SafetensorsFile::read_header(&mut f, size).unwrap()
    };
    let shards = if path.to_string_lossy().ends_with(".index.json") {
        let index = ShardIndex::from_bytes(&std::fs::read(path).unwrap()).unwrap();
        index.shards().iter().map(|s| open(&dir.join(s))).collect()
    } else {
        vec![open(path)]
    };
    let config = std::fs::read(dir.join("quantize_config.json"))
        .ok()
        .map(|bytes| QuantConfig::from_quantize_config(&bytes).unwrap());
    Checkpoint::new(shards, config)
}

fn gguf(path: &Path) -> GgufModel {
    let mut f = File::open(path).unwrap();
    let size = f.metadata().unwrap().len();
    GgufModel::single(gguf_lens::gguf::read_header(&mut f, size).unwrap())
}

/// (format, parameters, bits per weight) from the core, whatever the format.
fn summary_of(path: &str) -> (&'static str, u64, f64) {
    let path = Path::new(REPO).join(path);
    // One summary type for both formats; the format is the summary's own, not the path's.
    let s = if path.extension().is_some_and(|e| e == "gguf") {
        let s = gguf(&path).summary();
        assert!(s.gguf().is_some() && s.checkpoint().is_none());
        s
    } else {
        let s = checkpoint(&path).summary();
        assert!(s.checkpoint().is_some() && s.gguf().is_none());
        s
    };
    assert!((s.type_mix.iter().map(|m| m.byte_share).sum::<f64>() - 1.0).abs() < 1e-12);
    assert_eq!(
        s.type_mix.iter().map(|m| m.bytes).sum::<u64>(),
        s.tensor_bytes
    );
    (s.format.name(), s.parameter_count, s.bits_per_weight)
}

#[test]
fn parameters_of_both_formats_equal_the_oracle() {
    let expected: serde_json::Value = serde_json::from_slice(
        &std::fs::read(Path::new(REPO).join("fixtures/diff/expected.json")).unwrap(),
    )
    .unwrap();
    let pairs = expected["cross_pairs"].as_array().unwrap();
    assert!(pairs.len() >= 4);
    for pair in pairs {
        let field = |name: &str, side: &str| {
            pair["summary"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["field"] == name)
                .map(|f| f[side].clone())
                .unwrap()
        };
        for side in ["a", "b"] {
            let path = pair[side].as_str().unwrap();
            let (format, parameters, _) = summary_of(path);
            assert_eq!(format, field("format", side), "{path}");
            assert_eq!(
                parameters,
                field("parameters", side).as_u64().unwrap(),
                "{path}"
            );
        }
    }
}

#[test]
fn one_model_in_two_formats_has_one_parameter_count() {
    // arrays-a.safetensors holds arrays-a.gguf's tensors as safetensors (fixtures/make_diff.py).
    let (_, st, _) = summary_of("fixtures/diff/arrays-a.safetensors");
    let (_, gg, _) = summary_of("fixtures/diff/arrays-a.gguf");
    assert_eq!(st, gg);
}

#[test]
fn a_gptq_layer_is_one_type_counted_in_times_out() {
    let c = checkpoint(&Path::new(REPO).join("fixtures/gptq/b4_g32_v1/model.safetensors"));
    let s = c.summary();
    let layer = &c.layers()[0];
    let gptq = s
        .type_mix
        .iter()
        .find(|m| m.ty.name() == "GPTQ-4bit")
        .unwrap();
    assert_eq!(gptq.tensors, 1);
    assert_eq!(gptq.elements, layer.in_features * layer.out_features);
    assert_eq!(gptq.bytes, c.layer_bytes(layer));
    let g = s.checkpoint().unwrap().gptq.clone().unwrap();
    assert_eq!((g.layers, g.bits, g.group_size), (1, Some(4), Some(32)));
    assert_eq!(s.tensor_count, c.tensors().count() as u64);
    // The layer by its prefix or as `<prefix>.weight`.
    assert_eq!(c.layer(&format!("{}.weight", layer.name)), Some(layer));
}

#[test]
fn a_sharded_checkpoint_finds_layers_across_shards() {
    let path = Path::new(REPO).join("fixtures/gptq/sharded/model.safetensors.index.json");
    let c = checkpoint(&path);
    assert_eq!(c.shards().len(), 2);
    assert!(!c.layers().is_empty());
    assert!(c.layer_errors().is_empty(), "{:?}", c.layer_errors());
    // Adding the shards one by one finds the same layers.
    let mut one_by_one = Checkpoint::new(vec![c.shards()[0].clone()], c.config().cloned());
    one_by_one.add_shard(c.shards()[1].clone());
    assert_eq!(one_by_one.layers(), c.layers());
    assert_eq!(one_by_one.summary(), c.summary());
}
