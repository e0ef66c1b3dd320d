//! GPTQ dequantization and safetensors reads against fixtures/gptq/ (made by
//! fixtures/make_gptq.py): expected f32 from llama.cpp's convert_hf_to_gguf.py `dequant_gptq`
//! and GPTQModel's `convert_gptq_file`, both f32 arithmetic, compared bit for bit.

use std::path::{Path, PathBuf};

use gguf_lens::gptq::{
    dequantize_rows, find_layers, CheckpointFormat, LayerParts, QuantConfig, V1Zeros,
};
use gguf_lens::safetensors::{to_f32, SafetensorsFile, ShardIndex};
use serde_json::Value;

/// See tests/oracle_dequant.rs: the fixtures hold x86's default NaN (0·∞ with an infinite
/// scale); AArch64 makes 0x7FC00000 for the same operation.
fn same_bits(got: f32, expected: u32) -> bool {
    got.to_bits() == expected
        || (cfg!(target_arch = "aarch64")
            && got.to_bits() == 0x7FC0_0000
            && expected == 0xFFC0_0000)
}

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join("gptq")
}

fn manifest() -> Value {
    serde_json::from_slice(&std::fs::read(dir().join("manifest.json")).unwrap()).unwrap()
}

fn read_f32(path: &Path) -> Vec<u32> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

fn config_of(case_dir: &Path) -> QuantConfig {
    let q = case_dir.join("quantize_config.json");
    if q.exists() {
        QuantConfig::from_quantize_config(&std::fs::read(q).unwrap()).unwrap()
    } else {
        let c = std::fs::read(case_dir.join("config.json")).unwrap();
        QuantConfig::from_config_json(&c)
            .unwrap()
            .expect("a gptq quantization_config")
    }
}

/// Dequantizes `layer` rows `rows` of the file in `case_dir`.
fn dequant(
    case_dir: &Path,
    layer: &str,
    config: Option<&QuantConfig>,
    v1: V1Zeros,
    rows: std::ops::Range<u64>,
) -> Vec<f32> {
    let bytes = std::fs::read(case_dir.join("model.safetensors")).unwrap();
    let file = SafetensorsFile::from_bytes(&bytes).unwrap();
    let layers = find_layers(&file, config).unwrap();
    let layer = layers.iter().find(|l| l.name == layer).unwrap();
    let data = |suffix: &str| {
        file.get(&layer.part(suffix)).map(|t| {
            let r = file.data_range(t);
            &bytes[r.start as usize..r.end as usize]
        })
    };
    let parts = LayerParts {
        qweight: data("qweight").unwrap(),
        qzeros: data("qzeros").unwrap(),
        scales: data("scales").unwrap(),
        g_idx: data("g_idx"),
    };
    let format = config.map_or(CheckpointFormat::V1, |c| c.checkpoint_format);
    let mut out =
        vec![f32::from_bits(0x7FBA_DBAD); ((rows.end - rows.start) * layer.in_features) as usize];
    dequantize_rows(layer, &parts, format, v1, rows, &mut out).unwrap();
    out
}

fn assert_same(got: &[f32], expected: &[u32], what: &str) {
    assert_eq!(got.len(), expected.len(), "{what}: length");
    let bad: Vec<usize> = (0..got.len())
        .filter(|&i| !same_bits(got[i], expected[i]))
        .collect();
    assert!(
        bad.is_empty(),
        "{what}: {} of {} values differ, first at {}: got {:#010x}, expected {:#010x}",
        bad.len(),
        got.len(),
        bad[0],
        got[bad[0]].to_bits(),
        expected[bad[0]]
    );
}

#[test]
fn every_case_matches_its_oracles_bit_for_bit() {
    let manifest = manifest();
    let cases = manifest["cases"].as_array().unwrap();
    assert!(cases.len() >= 17);
    let mut compared = 0;
    for case in cases {
        let name = case["case"].as_str().unwrap();
        let case_dir = dir().join(name);
        let config = config_of(&case_dir);
        assert_eq!(config.bits, Some(case["bits"].as_u64().unwrap() as u32));
        let layer = case["layer"].as_str().unwrap();
        let out = case["out_features"].as_u64().unwrap();
        for (file, oracles) in case["expected"].as_object().unwrap() {
            let oracles: Vec<&str> = oracles
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o.as_str().unwrap())
                .collect();
            // The two oracles differ only in how v1 adds 1 to a stored zero of 2^bits - 1.
            let v1 = if oracles == ["gptqmodel"] {
                V1Zeros::Wrapping
            } else {
                V1Zeros::Unmasked
            };
            let expected = read_f32(&case_dir.join(file));
            let got = dequant(&case_dir, layer, Some(&config), v1, 0..out);
            assert_same(&got, &expected, &format!("{name} {file} ({oracles:?})"));
            compared += 1;
        }
    }
    assert!(compared >= 20, "{compared}");
}

#[test]
fn row_ranges_equal_slices_of_the_whole() {
    for name in ["b3_actorder_v2", "b4_v2", "b8_g32_v1"] {
        let case_dir = dir().join(name);
        let config = config_of(&case_dir);
        let layer = "model.layers.0.self_attn.q_proj";
        let whole = dequant(&case_dir, layer, Some(&config), V1Zeros::Unmasked, 0..32);
        let n_in = whole.len() / 32;
        for (a, b) in [(0u64, 1u64), (5, 6), (3, 17), (31, 32), (7, 7)] {
            let part = dequant(&case_dir, layer, Some(&config), V1Zeros::Unmasked, a..b);
            let slice = &whole[a as usize * n_in..b as usize * n_in];
            assert_eq!(
                part.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                slice.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                "{name} {a}..{b}"
            );
        }
    }
}

#[test]
fn bits_and_groups_are_inferred_without_a_config() {
    // v1 is the default format, as in both oracles.
    for case in manifest()["cases"].as_array().unwrap() {
        let name = case["case"].as_str().unwrap();
        let case_dir = dir().join(name);
        let bytes = std::fs::read(case_dir.join("model.safetensors")).unwrap();
        let file = SafetensorsFile::from_bytes(&bytes).unwrap();
        let layers = find_layers(&file, None).unwrap();
        assert_eq!(layers.len(), 1, "{name}");
        let l = &layers[0];
        assert_eq!(u64::from(l.bits), case["bits"].as_u64().unwrap(), "{name}");
        assert_eq!(
            l.in_features,
            case["in_features"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            l.out_features,
            case["out_features"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(l.n_groups, case["n_groups"].as_u64().unwrap(), "{name}");
        assert_eq!(
            l.has_g_idx,
            case["g_idx_in_file"].as_bool().unwrap(),
            "{name}"
        );
        if case["checkpoint_format"] == "gptq" && case["expected"].get("expected.f32").is_some() {
            let expected = read_f32(&case_dir.join("expected.f32"));
            let got = dequant(
                &case_dir,
                &l.name,
                None,
                V1Zeros::Unmasked,
                0..l.out_features,
            );
            assert_same(&got, &expected, name);
        }
    }
}

#[test]
fn plain_tensors_read_as_f32() {
    let manifest = manifest();
    let case = manifest["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["case"] == "b4_g32_v1")
        .unwrap();
    let case_dir = dir().join("b4_g32_v1");
    let bytes = std::fs::read(case_dir.join("model.safetensors")).unwrap();
    let file = SafetensorsFile::from_bytes(&bytes).unwrap();
    assert_eq!(file.metadata(), &[("format".to_string(), "pt".to_string())]);
    let plain = case["plain"].as_object().unwrap();
    assert_eq!(plain.len(), 4);
    for (name, info) in plain {
        let t = file.tensor(name).unwrap();
        let shape: Vec<u64> = info["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap())
            .collect();
        assert_eq!(t.shape(), &shape[..], "{name}");
        let expected = read_f32(&case_dir.join(info["file"].as_str().unwrap()));
        // The last row alone, then everything.
        let rows = t.n_rows();
        let range = file.rows_range(t, rows - 1..rows).unwrap();
        let mut last = vec![0f32; t.row_len() as usize];
        to_f32(
            t.dtype(),
            name,
            &bytes[range.start as usize..range.end as usize],
            &mut last,
        )
        .unwrap();
        assert_same(&last, &expected[expected.len() - last.len()..], name);
        let range = file.data_range(t);
        let mut all = vec![0f32; t.n_elements() as usize];
        to_f32(
            t.dtype(),
            name,
            &bytes[range.start as usize..range.end as usize],
            &mut all,
        )
        .unwrap();
        assert_same(&all, &expected, name);
    }
}

#[test]
fn the_shard_index_maps_tensors_to_shards() {
    let manifest = manifest();
    let sharded = &manifest["sharded"];
    let case_dir = dir().join("sharded");
    let index = ShardIndex::from_bytes(
        &std::fs::read(case_dir.join("model.safetensors.index.json")).unwrap(),
    )
    .unwrap();
    let map = sharded["weight_map"].as_object().unwrap();
    assert_eq!(index.weight_map().len(), map.len());
    for (tensor, shard) in map {
        assert_eq!(index.shard_of(tensor), shard.as_str(), "{tensor}");
        let bytes = std::fs::read(case_dir.join(shard.as_str().unwrap())).unwrap();
        let file = SafetensorsFile::from_bytes(&bytes).unwrap();
        assert!(file.get(tensor).is_some(), "{tensor} in {shard}");
    }
    let shards: Vec<&str> = sharded["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(index.shards(), shards);
    assert!(index.shard_of("nope").is_none());
    assert!(index.metadata().contains_key("total_size"));
}

#[test]
fn every_plain_dtype_reads_as_torch_converts_it() {
    let manifest = manifest();
    let plain = &manifest["plain_dtypes"];
    let case_dir = dir().join(plain["dir"].as_str().unwrap());
    let bytes = std::fs::read(case_dir.join("model.safetensors")).unwrap();
    let file = SafetensorsFile::from_bytes(&bytes).unwrap();
    let tensors = plain["tensors"].as_object().unwrap();
    assert_eq!(tensors.len(), file.tensors().len());
    for (name, info) in tensors {
        let t = file.tensor(name).unwrap();
        let shape: Vec<u64> = info["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap())
            .collect();
        assert_eq!(t.shape(), &shape[..], "{name}");
        let expected = read_f32(&case_dir.join(info["file"].as_str().unwrap()));
        let range = file.data_range(t);
        let mut got = vec![0f32; t.n_elements() as usize];
        to_f32(
            t.dtype(),
            name,
            &bytes[range.start as usize..range.end as usize],
            &mut got,
        )
        .unwrap();
        assert_same(&got, &expected, &format!("{name} ({})", t.dtype().name()));
    }
}
