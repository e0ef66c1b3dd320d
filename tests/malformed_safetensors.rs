//! Every way a safetensors header (and a GPTQ layer inside one) can be wrong gives its own
//! error, at the right byte, without panicking. Valid files come from the `safetensors` library
//! (fixtures/gptq/); this builds the broken ones by hand.

use gguf_lens::gptq::{
    dequantize_rows, find_layers, CheckpointFormat, LayerParts, QuantConfig, V1Zeros,
};
use gguf_lens::safetensors::{parse, to_f32, Dtype, ParseStatus, SafetensorsFile, ShardIndex};
use gguf_lens::ErrorKind;

/// A file: 8-byte length, the JSON text, `data_len` data bytes.
fn file(json: &str, data_len: usize) -> Vec<u8> {
    let mut bytes = (json.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(json.as_bytes());
    bytes.resize(bytes.len() + data_len, 0);
    bytes
}

const VALID: &str = r#"{"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},"b":{"dtype":"BF16","shape":[3],"data_offsets":[16,22]}}"#;

fn error_of(bytes: &[u8]) -> gguf_lens::Error {
    SafetensorsFile::from_bytes(bytes).expect_err("the file should be rejected")
}

#[test]
fn the_valid_base_file_parses() {
    let f = SafetensorsFile::from_bytes(&file(VALID, 22)).unwrap();
    assert_eq!(f.tensors().len(), 2);
    assert_eq!(f.data_offset(), 8 + VALID.len() as u64);
    let b = f.tensor("b").unwrap();
    assert_eq!(
        (b.dtype(), b.shape(), b.offset(), b.n_bytes()),
        (Dtype::BF16, &[3u64][..], 16, 6)
    );
    assert_eq!(f.metadata()[0], ("format".to_string(), "pt".to_string()));
}

#[test]
fn every_prefix_needs_exactly_the_header() {
    let bytes = file(VALID, 22);
    let header_end = 8 + VALID.len() as u64;
    for len in 0..=bytes.len() {
        match parse(&bytes[..len], Some(bytes.len() as u64)).unwrap() {
            ParseStatus::NeedMore { at_least } => {
                let want = if len < 8 { 8 } else { header_end };
                assert_eq!(at_least, want, "prefix {len}");
                assert!((len as u64) < header_end);
            }
            ParseStatus::Complete(f) => {
                assert!(len as u64 >= header_end, "prefix {len}");
                assert_eq!(f.tensors().len(), 2);
            }
        }
    }
    // Without the file size, the last tensor need not reach the end.
    assert!(matches!(
        parse(&bytes[..header_end as usize], None),
        Ok(ParseStatus::Complete(_))
    ));
}

#[test]
fn truncation_at_every_offset_is_an_error() {
    let bytes = file(VALID, 22);
    for len in 0..bytes.len() {
        let err = error_of(&bytes[..len]);
        assert!(err.offset.unwrap() <= len as u64, "{len}: {err}");
    }
}

#[test]
fn header_length_past_end_of_file() {
    let mut bytes = file(VALID, 22);
    bytes[0..8].copy_from_slice(&10_000u64.to_le_bytes());
    let err = error_of(&bytes);
    assert!(
        matches!(err.kind, ErrorKind::Truncated { needed: 10_000, .. }),
        "{err}"
    );
    assert_eq!(err.offset, Some(8));
    // From a short prefix too: the file size alone rules it out.
    assert!(parse(&bytes[..8], Some(bytes.len() as u64)).is_err());
    let err = error_of(&bytes[..5]);
    assert!(
        matches!(err.kind, ErrorKind::Truncated { needed: 8, .. }),
        "{err}"
    );
}

#[test]
fn header_length_over_the_cap() {
    let mut bytes = file(VALID, 22);
    bytes[0..8].copy_from_slice(&u64::MAX.to_le_bytes());
    let err = parse(&bytes[..8], None).unwrap_err();
    assert!(
        matches!(
            err.kind,
            ErrorKind::HeaderTooLarge {
                needed: u64::MAX,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(err.offset, Some(0));
}

#[test]
fn non_json_headers() {
    for (json, at) in [
        ("{\"a\": nope}", 15u64),
        ("[1, 2, 3]", 8),
        ("{\"a\":1} x", 16),
        ("  {}", 8),
    ] {
        let err = error_of(&file(json, 0));
        assert!(
            matches!(err.kind, ErrorKind::BadJson { .. }),
            "{json}: {err}"
        );
        assert_eq!(err.offset, Some(at), "{json}: {err}");
    }
    let err = error_of(
        &file("{\"\u{e9}\": 1}", 0)
            .iter()
            .map(|&b| if b == 0xC3 { 0xFF } else { b })
            .collect::<Vec<_>>(),
    );
    assert!(matches!(err.kind, ErrorKind::InvalidUtf8 { .. }), "{err}");
    assert_eq!(err.offset, Some(10));
}

/// mlx's `save_safetensors` writes `"__metadata__": null` when there is none; safetensors reads
/// that as no metadata.
#[test]
fn null_metadata_is_none() {
    let json = r#"{"__metadata__":null,"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#;
    let f = SafetensorsFile::from_bytes(&file(json, 4)).unwrap();
    assert!(f.metadata().is_empty());
    assert_eq!(f.tensors().len(), 1);
}

#[test]
fn bad_entries_are_bad_json() {
    for json in [
        r#"{"__metadata__":{"format":1}}"#,
        r#"{"__metadata__":[]}"#,
        r#"{"__metadata__":"none"}"#,
        r#"{"a":{"shape":[1],"data_offsets":[0,4]}}"#,
        r#"{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}"#,
        r#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}}"#,
        r#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,1.5]}}"#,
        r#"{"a":3}"#,
    ] {
        let err = error_of(&file(json, 4));
        assert!(
            matches!(err.kind, ErrorKind::BadJson { .. }),
            "{json}: {err}"
        );
    }
}

#[test]
fn unknown_dtype() {
    let json = r#"{"a":{"dtype":"F12","shape":[1],"data_offsets":[0,4]}}"#;
    let err = error_of(&file(json, 4));
    assert!(
        matches!(&err.kind, ErrorKind::UnknownDtype { dtype, .. } if dtype == "F12"),
        "{err}"
    );
}

#[test]
fn offsets_out_of_range() {
    let json = r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#;
    let err = error_of(&file(json, 4));
    assert!(
        matches!(err.kind, ErrorKind::TensorOutOfFile { .. }),
        "{err}"
    );
    assert!(
        err.to_string().contains("extends past end of file"),
        "{err}"
    );
}

#[test]
fn overlapping_tensors() {
    let json = r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}"#;
    let err = error_of(&file(json, 12));
    assert!(
        matches!(&err.kind, ErrorKind::TensorsOverlap { first, second } if first == "a" && second == "b"),
        "{err}"
    );
    assert_eq!(err.offset, Some(8 + json.len() as u64 + 4));
}

#[test]
fn gaps_and_reversed_offsets() {
    let gap = r#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}"#;
    let err = error_of(&file(gap, 8));
    assert!(
        matches!(
            err.kind,
            ErrorKind::DataOffsetGap {
                start: 4,
                expected_start: 0,
                ..
            }
        ),
        "{err}"
    );
    let reversed = r#"{"a":{"dtype":"F32","shape":[0],"data_offsets":[4,0]}}"#;
    let err = error_of(&file(reversed, 4));
    assert!(matches!(err.kind, ErrorKind::DataOffsetGap { .. }), "{err}");
}

#[test]
fn unused_trailing_data() {
    let json = r#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#;
    let err = error_of(&file(json, 6));
    assert!(
        matches!(
            err.kind,
            ErrorKind::UnusedData {
                end: 4,
                data_len: 6
            }
        ),
        "{err}"
    );
}

#[test]
fn shape_and_size_disagree() {
    for json in [
        r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}"#,
        r#"{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}}"#,
    ] {
        let err = error_of(&file(json, 4));
        assert!(
            matches!(err.kind, ErrorKind::ShapeMismatch { .. }),
            "{json}: {err}"
        );
    }
    let json = r#"{"a":{"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,4]}}"#;
    let err = error_of(&file(json, 4));
    assert!(matches!(err.kind, ErrorKind::DimsOverflow { .. }), "{err}");
}

#[test]
fn unsupported_dtype_conversion_and_lengths() {
    let err = to_f32(Dtype::C64, "c", &[0; 8], &mut [0f32; 1]).unwrap_err();
    assert!(
        matches!(err.kind, ErrorKind::UnsupportedDtype { dtype: "C64", .. }),
        "{err}"
    );
    let err = to_f32(Dtype::F32, "f", &[0; 7], &mut [0f32; 2]).unwrap_err();
    assert!(matches!(err.kind, ErrorKind::BadLength { .. }), "{err}");
    let f = SafetensorsFile::from_bytes(&file(VALID, 22)).unwrap();
    let err = f.rows_range(f.tensor("a").unwrap(), 1..3).unwrap_err();
    assert!(matches!(err.kind, ErrorKind::BadRowRange { .. }), "{err}");
    assert!(matches!(
        f.tensor("zz").unwrap_err().kind,
        ErrorKind::NoSuchTensor { .. }
    ));
}

#[test]
fn byte_flips_never_panic() {
    let base = file(VALID, 22);
    for i in 0..base.len() {
        for v in [0u8, b'{', b'"', b'9', b'-', 0xFF] {
            let mut bytes = base.clone();
            bytes[i] = v;
            let _ = SafetensorsFile::from_bytes(&bytes);
        }
    }
}

/// A GPTQ layer "l" with 4-bit, 32 inputs, 8 outputs, 2 groups, with the given edits.
fn gptq_file(scales_shape: &str, g_idx: Option<&[i32]>) -> Vec<u8> {
    let mut json = format!(
        r#"{{"l.qweight":{{"dtype":"I32","shape":[4,8],"data_offsets":[0,128]}},"l.qzeros":{{"dtype":"I32","shape":[2,1],"data_offsets":[128,136]}},"l.scales":{{"dtype":"F16","shape":{scales_shape},"data_offsets":[136,{}]}}"#,
        136 + 32
    );
    let mut data = vec![0u8; 168];
    if let Some(g) = g_idx {
        json += &format!(
            r#","l.g_idx":{{"dtype":"I32","shape":[{}],"data_offsets":[168,{}]}}"#,
            g.len(),
            168 + 4 * g.len()
        );
        for v in g {
            data.extend_from_slice(&v.to_le_bytes());
        }
    }
    json += "}";
    let mut bytes = file(&json, 0);
    bytes.extend_from_slice(&data);
    bytes
}

#[test]
fn gptq_layout_errors() {
    // Scales that do not match qzeros' groups and qweight's outputs.
    let bytes = gptq_file("[8,2]", None);
    let f = SafetensorsFile::from_bytes(&bytes).unwrap();
    let err = find_layers(&f, None).unwrap_err();
    assert!(
        matches!(&err.kind, ErrorKind::GptqLayout { layer, .. } if layer == "l"),
        "{err}"
    );
    // A config whose bits disagree with the shapes.
    let bytes = gptq_file("[2,8]", None);
    let f = SafetensorsFile::from_bytes(&bytes).unwrap();
    let config = QuantConfig::from_quantize_config(br#"{"bits": 8}"#).unwrap();
    assert!(matches!(
        find_layers(&f, Some(&config)).unwrap_err().kind,
        ErrorKind::GptqLayout { .. }
    ));
    // 8 outputs in one zero word: 2, 3 or 4 bits; only a config (or g_idx) tells.
    let err = find_layers(&f, None).unwrap_err();
    assert!(
        err.to_string().contains("cannot tell the bit width"),
        "{err}"
    );
    let config = QuantConfig::from_quantize_config(br#"{"bits": 4}"#).unwrap();
    let layers = find_layers(&f, Some(&config)).unwrap();
    assert_eq!(
        (layers[0].bits, layers[0].in_features, layers[0].group_size),
        (4, 32, 16)
    );
    // A g_idx entry outside the groups.
    let mut g: Vec<i32> = (0..32).map(|i| i / 16).collect();
    g[7] = 2;
    let bytes = gptq_file("[2,8]", Some(&g));
    let f = SafetensorsFile::from_bytes(&bytes).unwrap();
    let layer = &find_layers(&f, None).unwrap()[0];
    let d = f.data_offset() as usize;
    let parts = LayerParts {
        qweight: &bytes[d..d + 128],
        qzeros: &bytes[d + 128..d + 136],
        scales: &bytes[d + 136..d + 168],
        g_idx: Some(&bytes[d + 168..d + 296]),
    };
    let mut out = vec![0f32; 32 * 8];
    let err = dequantize_rows(
        layer,
        &parts,
        CheckpointFormat::V2,
        V1Zeros::Unmasked,
        0..8,
        &mut out,
    )
    .unwrap_err();
    assert!(err.to_string().contains("g_idx[7] = 2"), "{err}");
    // Short buffers and bad row ranges.
    let short = LayerParts {
        qweight: &bytes[d..d + 124],
        ..parts
    };
    let err = dequantize_rows(
        layer,
        &short,
        CheckpointFormat::V2,
        V1Zeros::Unmasked,
        0..8,
        &mut out,
    )
    .unwrap_err();
    assert!(matches!(err.kind, ErrorKind::BadLength { .. }), "{err}");
    let err = dequantize_rows(
        layer,
        &parts,
        CheckpointFormat::V2,
        V1Zeros::Unmasked,
        0..9,
        &mut out,
    )
    .unwrap_err();
    assert!(matches!(err.kind, ErrorKind::BadRowRange { .. }), "{err}");
    // A missing part.
    let json = r#"{"l.qweight":{"dtype":"I32","shape":[1,1],"data_offsets":[0,4]}}"#;
    let f = SafetensorsFile::from_bytes(&file(json, 4)).unwrap();
    assert!(find_layers(&f, None)
        .unwrap_err()
        .to_string()
        .contains("no l.qzeros tensor"));
}

#[test]
fn bad_configs_and_indexes() {
    for json in [
        &br#"{"bits": 5}"#[..],
        br#"{"bits": 4, "group_size": 0}"#,
        br#"{"bits": 4, "checkpoint_format": "marlin"}"#,
        br#"{"bits": 4, "desc_act": "yes"}"#,
        br#"{"quant_method": "awq"}"#,
        br#"not json"#,
    ] {
        let err = QuantConfig::from_quantize_config(json).unwrap_err();
        assert!(matches!(err.kind, ErrorKind::BadJson { .. }), "{err}");
    }
    assert_eq!(
        QuantConfig::from_config_json(br#"{"model_type": "llama"}"#).unwrap(),
        None
    );
    for json in [
        &br#"{"weight_map": {"a": "../x.safetensors"}}"#[..],
        br#"{"weight_map": {"a": 3}}"#,
        br#"{"metadata": {}}"#,
        br#"{"weight_map": "#,
    ] {
        let err = ShardIndex::from_bytes(json).unwrap_err();
        assert!(matches!(err.kind, ErrorKind::BadJson { .. }), "{err}");
    }
}

#[test]
fn degenerate_layers_cost_nothing() {
    // No outputs: qweight has no bytes to bound its row count.
    let json = r#"{"l.qweight":{"dtype":"I32","shape":[1099511627776,0],"data_offsets":[0,0]},"l.qzeros":{"dtype":"I32","shape":[1,0],"data_offsets":[0,0]},"l.scales":{"dtype":"F16","shape":[1,0],"data_offsets":[0,0]}}"#;
    let f = SafetensorsFile::from_bytes(&file(json, 0)).unwrap();
    let config = QuantConfig::from_quantize_config(br#"{"bits": 4}"#).unwrap();
    let layer = &find_layers(&f, Some(&config)).unwrap()[0];
    assert_eq!((layer.out_features, layer.in_features), (0, 1 << 43));
    let parts = LayerParts {
        qweight: &[],
        qzeros: &[],
        scales: &[],
        g_idx: None,
    };
    dequantize_rows(
        layer,
        &parts,
        CheckpointFormat::V1,
        V1Zeros::Unmasked,
        0..0,
        &mut [],
    )
    .unwrap();
}

#[test]
fn zero_width_rows_are_no_rows() {
    // 2^62 rows of nothing: the element count is 0, so no row loop may walk them.
    let json = r#"{"z":{"dtype":"F32","shape":[4611686018427387904,0],"data_offsets":[0,0]}}"#;
    let f = SafetensorsFile::from_bytes(&file(json, 0)).unwrap();
    let t = f.tensor("z").unwrap();
    assert_eq!((t.n_elements(), t.row_len(), t.n_rows()), (0, 0, 0));
    assert_eq!(
        f.rows_range(t, 0..0).unwrap(),
        f.data_offset()..f.data_offset()
    );
    assert!(f.rows_range(t, 0..1).is_err());
}
