//! MLX affine dequantization against fixtures/mlx/ (made by fixtures/make_mlx.py): expected f32
//! from `mx.dequantize` for every bit width (2, 3, 4, 5, 6, 8) x group size (32, 64, 128), and
//! config.json's `quantization` as mlx-lm writes it (defaults, per-layer entries).

use std::path::{Path, PathBuf};

use gguf_lens::mlx::{dequantize_rows, MlxConfig, MlxLayer};
use gguf_lens::safetensors::{to_f32, Dtype, SafetensorsFile};
use serde_json::Value;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join("mlx")
}

fn load(name: &str) -> (SafetensorsFile, Vec<u8>) {
    let bytes = std::fs::read(dir().join(name)).unwrap();
    (SafetensorsFile::from_bytes(&bytes).unwrap(), bytes)
}

fn data<'a>(f: &SafetensorsFile, bytes: &'a [u8], name: &str) -> &'a [u8] {
    let r = f.data_range(f.get(name).unwrap());
    &bytes[r.start as usize..r.end as usize]
}

fn layer_of(
    f: &SafetensorsFile,
    name: &str,
    config: MlxConfig,
) -> gguf_lens::error::Result<MlxLayer> {
    let prefix = name.strip_suffix(".weight").unwrap();
    let part = |p: &str| {
        let t = f.get(&format!("{prefix}.{p}")).unwrap();
        (t.dtype(), t.shape())
    };
    MlxLayer::new(
        prefix,
        part("weight"),
        part("scales"),
        part("biases"),
        config,
    )
}

#[test]
fn every_width_and_group_equals_mx_dequantize() {
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir().join("manifest.json")).unwrap()).unwrap();
    let (model, model_bytes) = load("model.safetensors");
    let (expected, expected_bytes) = load("expected.safetensors");
    let layers = manifest["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 20);
    for case in layers {
        let name = case["name"].as_str().unwrap();
        let config = MlxConfig {
            bits: case["bits"].as_u64().unwrap() as u32,
            group_size: case["group_size"].as_u64().unwrap(),
        };
        let layer = layer_of(&model, name, config).unwrap();
        let shape: Vec<u64> = serde_json::from_value(case["shape"].clone()).unwrap();
        assert_eq!(layer.shape, shape, "{name}");
        let n = (layer.n_rows() * layer.row_len()) as usize;
        assert_eq!(
            layer.type_name(),
            format!("MLX-{}bit-g{}", config.bits, config.group_size)
        );
        let mut want = vec![0f32; n];
        to_f32(
            Dtype::F32,
            name,
            data(&expected, &expected_bytes, name),
            &mut want,
        )
        .unwrap();
        let prefix = name.strip_suffix(".weight").unwrap();
        let (w, s, b) = (
            data(&model, &model_bytes, name),
            data(&model, &model_bytes, &format!("{prefix}.scales")),
            data(&model, &model_bytes, &format!("{prefix}.biases")),
        );
        let mut got = vec![0f32; n];
        dequantize_rows(&layer, 0, w, s, b, &mut got).unwrap();
        let max_abs = want.iter().fold(0f32, |m, x| m.max(x.abs()));
        let worst = got
            .iter()
            .zip(&want)
            .map(|(g, w)| (g - w).abs())
            .fold(0f32, f32::max);
        assert!(
            worst <= 1e-6 * max_abs,
            "{name}: worst {worst}, max|w| {max_abs}"
        );
        // Rows 1..3 alone read the same values.
        let (rb, gb) = (layer.row_bytes() as usize, layer.groups_per_row() as usize);
        let sz = (layer.scales_dtype.bits() / 8) as usize;
        let mut part = vec![0f32; 2 * 256];
        dequantize_rows(
            &layer,
            1,
            &w[rb..3 * rb],
            &s[gb * sz..3 * gb * sz],
            &b[gb * sz..3 * gb * sz],
            &mut part,
        )
        .unwrap();
        assert_eq!(part, got[256..3 * 256], "{name} rows 1..3");
    }
}

#[test]
fn bad_layouts_are_one_error_each() {
    let c = MlxConfig {
        bits: 4,
        group_size: 64,
    };
    let msg = |r: gguf_lens::error::Result<MlxLayer>| r.unwrap_err().to_string();
    let f32s = Dtype::F32;
    // 3-bit from 5 words: 160 bits are not a whole number of values.
    let e = msg(MlxLayer::new(
        "l",
        (Dtype::U32, &[4, 5]),
        (f32s, &[4, 1]),
        (f32s, &[4, 1]),
        MlxConfig {
            bits: 3,
            group_size: 32,
        },
    ));
    assert!(e.contains("not a whole number of 3-bit values"), "{e}");
    // 4 words of 4-bit = 32 inputs, not a multiple of 64.
    let e = msg(MlxLayer::new(
        "l",
        (Dtype::U32, &[4, 4]),
        (f32s, &[4, 1]),
        (f32s, &[4, 1]),
        c,
    ));
    assert!(e.contains("do not divide into groups of 64"), "{e}");
    let e = msg(MlxLayer::new(
        "l",
        (Dtype::U32, &[4, 32]),
        (f32s, &[4, 3]),
        (f32s, &[4, 4]),
        c,
    ));
    assert!(e.contains("scales shape [4, 3] is not [4, 4]"), "{e}");
    let e = msg(MlxLayer::new(
        "l",
        (Dtype::I32, &[4, 32]),
        (f32s, &[4, 4]),
        (f32s, &[4, 4]),
        c,
    ));
    assert!(e.contains("expected U32"), "{e}");
    let e = msg(MlxLayer::new(
        "l",
        (Dtype::U32, &[4, 32]),
        (f32s, &[4, 4]),
        (f32s, &[4, 4]),
        MlxConfig {
            bits: 7,
            group_size: 64,
        },
    ));
    assert!(e.contains("7-bit"), "{e}");
    let e = MlxConfig::from_config(
        &serde_json::json!({"quantization": {"mode": "mxfp4", "bits": 4, "group_size": 32}}),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("mode \"mxfp4\" is not supported"), "{e}");
    assert_eq!(
        MlxConfig::from_config(&serde_json::json!({"quantization": {"bits": 4, "group_size": 64}}))
            .unwrap(),
        Some(c)
    );
    // A NaN scale is refused, naming its row and group.
    let layer = MlxLayer::new(
        "l",
        (Dtype::U32, &[2, 8]),
        (f32s, &[2, 1]),
        (f32s, &[2, 1]),
        c,
    )
    .unwrap();
    let scales: Vec<u8> = [1.0f32, f32::NAN]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let biases = vec![0u8; 8];
    let mut out = vec![0f32; 128];
    let e = dequantize_rows(&layer, 0, &[0u8; 64], &scales, &biases, &mut out)
        .unwrap_err()
        .to_string();
    assert!(e.contains("row 1, group 0 is not finite"), "{e}");
    // Bytes that do not fit the rows asked for.
    let e = dequantize_rows(&layer, 0, &[0u8; 60], &[0u8; 8], &biases, &mut out)
        .unwrap_err()
        .to_string();
    assert!(e.contains("60 weight"), "{e}");
}

#[test]
fn per_layer_entries_override_the_defaults() {
    use gguf_lens::mlx::MlxQuantization;
    let config = std::fs::read(dir().join("config.json")).unwrap();
    let q = MlxQuantization::from_config_json(&config).unwrap().unwrap();
    let four = MlxConfig {
        bits: 4,
        group_size: 64,
    };
    assert_eq!(q.default, four);
    assert_eq!(
        q.for_layer("model.layers.b3_g128_f32"),
        Some(MlxConfig {
            bits: 3,
            group_size: 128
        })
    );
    assert_eq!(q.for_layer("model.layers.b4_g64_f32"), Some(four));
    // An entry passed to mlx's `to_quantized` takes its defaults for what it leaves out;
    // `false` leaves a layer unquantized.
    let q = MlxQuantization::from_config(&serde_json::json!({"quantization": {
        "group_size": 32, "bits": 8, "a": {"bits": 6}, "b": false, "c": true,
    }}))
    .unwrap()
    .unwrap();
    let six = MlxConfig {
        bits: 6,
        group_size: 64,
    };
    assert_eq!(q.for_layer("a"), Some(six));
    assert_eq!(q.for_layer("b"), None);
    assert_eq!(q.for_layer("c"), Some(q.default));
    for (bad, expect) in [
        (
            serde_json::json!({"group_size": 64, "bits": 4, "a": {"bits": 7}}),
            "layer \"a\": bits 7",
        ),
        (
            serde_json::json!({"group_size": 64, "bits": 4, "a": {"mode": "nvfp4"}}),
            "layer \"a\": mode \"nvfp4\"",
        ),
        (
            serde_json::json!({"group_size": 64, "bits": 4, "a": 3}),
            "layer \"a\": 3 is not a parameters object",
        ),
        (serde_json::json!([4]), "not a JSON object"),
    ] {
        let e = MlxQuantization::from_config(&serde_json::json!({ "quantization": bad }))
            .unwrap_err()
            .to_string();
        assert!(e.contains(expect), "{expect}: {e}");
    }
}
