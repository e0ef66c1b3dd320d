//! Every way a header can be wrong gives its own error, at the right byte, without panicking,
//! hanging or allocating for counts the bytes cannot back.

mod common;

use common::{valid_file, Builder};
use gguf_lens::{parse, ErrorKind, GgufFile, ParseStatus};

fn error_of(bytes: &[u8]) -> gguf_lens::Error {
    GgufFile::from_bytes(bytes).expect_err("the file should be rejected")
}

#[test]
fn the_valid_base_file_parses() {
    let file = GgufFile::from_bytes(&valid_file()).unwrap();
    assert_eq!(file.tensors().len(), 2);
    let tokens = file.get("tokens").unwrap();
    let tokens = tokens.as_array().unwrap();
    assert_eq!(tokens.len(), 3);
    assert_eq!(tokens.get(1).unwrap().as_str().unwrap(), "bc");
    assert!(tokens.get(3).is_none());
}

#[test]
fn bad_magic() {
    let mut bytes = valid_file();
    bytes[0..4].copy_from_slice(b"GGML");
    let err = error_of(&bytes);
    assert!(matches!(err.kind, ErrorKind::BadMagic { found } if &found == b"GGML"));
    assert_eq!(err.offset, Some(0));
    assert!(err.to_string().contains("not a GGUF file"), "{err}");
}

#[test]
fn bad_versions() {
    for version in [0u32, 4, 0xFFFF_FFFF, 0x0004_0000] {
        let mut bytes = valid_file();
        bytes[4..8].copy_from_slice(&version.to_le_bytes());
        let err = error_of(&bytes);
        assert!(
            matches!(err.kind, ErrorKind::UnsupportedVersion { .. }),
            "{version:#x}: {err}"
        );
        assert_eq!(err.offset, Some(4));
    }
}

#[test]
fn truncation_at_every_offset_is_an_error_naming_the_offset() {
    let bytes = valid_file();
    for len in 0..bytes.len() {
        let prefix = &bytes[..len];
        let err = GgufFile::from_bytes(prefix).expect_err("a truncated file must fail");
        let offset = err.offset.expect("truncation names an offset");
        assert!(
            offset <= len as u64,
            "len {len}: offset {offset} past the end"
        );
        assert!(err
            .to_string()
            .starts_with(|c: char| c.is_ascii_lowercase() || c == '"'));
    }
}

#[test]
fn every_prefix_either_needs_more_or_is_complete() {
    let bytes = valid_file();
    let whole = GgufFile::from_bytes(&bytes).unwrap();
    let header_len = whole.header_len();
    for len in 0..=bytes.len() {
        match parse(&bytes[..len], Some(bytes.len() as u64)).unwrap() {
            ParseStatus::NeedMore { at_least, estimate } => {
                assert!((len as u64) < header_len, "len {len} holds the header");
                assert!(
                    at_least > len as u64 && at_least <= header_len,
                    "len {len}: {at_least}"
                );
                assert!(estimate >= at_least);
            }
            ParseStatus::Complete(file) => {
                assert!(len as u64 >= header_len);
                assert_eq!(file.tensors(), whole.tensors());
            }
        }
        // Unknown file size: same answers, no extent checks.
        if let ParseStatus::NeedMore { at_least, .. } = parse(&bytes[..len], None).unwrap() {
            assert!(at_least <= header_len);
        }
    }
}

#[test]
fn huge_tensor_count_fails_at_once() {
    let mut b = Builder::new(3);
    b.header(1 << 63, 0);
    let err = error_of(&b.build());
    assert!(matches!(err.kind, ErrorKind::TooMany { .. }), "{err}");
    assert_eq!(err.offset, Some(8));
    // Unknown size: the cap applies instead of the file size.
    let err = parse(&b.build(), None).unwrap_err();
    assert!(matches!(err.kind, ErrorKind::TooMany { .. }), "{err}");
}

#[test]
fn huge_kv_count_fails_at_once() {
    let mut b = Builder::new(3);
    b.header(0, 1 << 40);
    let err = error_of(&b.build());
    assert!(matches!(err.kind, ErrorKind::TooMany { .. }), "{err}");
    assert_eq!(err.offset, Some(16));
}

#[test]
fn huge_array_length_fails_at_once() {
    for item_type in [0u32, 8, 9, 10] {
        let mut b = Builder::new(3);
        b.header(0, 1)
            .string(b"big")
            .u32(9)
            .u32(item_type)
            .u64(1 << 60);
        let bytes = b.build();
        let err = error_of(&bytes);
        assert!(
            matches!(err.kind, ErrorKind::TooMany { .. }),
            "{item_type}: {err}"
        );
        assert_eq!(err.offset, Some(43), "the array length field");
        // Without a file size, the header cap refuses it instead of asking for 2^60 bytes.
        let err = parse(&bytes, None).unwrap_err();
        assert!(matches!(
            err.kind,
            ErrorKind::HeaderTooLarge { .. } | ErrorKind::TooMany { .. }
        ));
    }
}

#[test]
fn long_strings() {
    let mut b = Builder::new(3);
    b.header(0, 1).string(b"k").u32(8).u64(u64::MAX);
    let err = error_of(&b.build());
    assert!(matches!(err.kind, ErrorKind::StringTooLong { .. }), "{err}");
    assert_eq!(err.offset, Some(37), "the string length field");
    let mut b = Builder::new(3);
    b.header(0, 1).string(b"k").u32(8).u64(1000).raw(b"short");
    let err = error_of(&b.build());
    assert!(matches!(err.kind, ErrorKind::TooMany { .. }), "{err}");
}

#[test]
fn invalid_utf8_in_key_and_tensor_name() {
    let mut b = Builder::new(3);
    b.header(0, 1).string(b"ok\xff").u32(4).u32(1);
    let err = error_of(&b.build());
    assert!(matches!(err.kind, ErrorKind::InvalidUtf8 { .. }), "{err}");
    assert_eq!(err.offset, Some(24 + 8 + 2));

    let mut b = Builder::new(3);
    b.header(1, 0)
        .string(b"\xc3(")
        .u32(1)
        .u64(32)
        .u32(0)
        .u64(0)
        .data(32, 128);
    let err = error_of(&b.build());
    assert!(matches!(err.kind, ErrorKind::InvalidUtf8 { .. }), "{err}");
}

#[test]
fn invalid_utf8_in_string_values_is_reported_not_fatal() {
    let mut b = Builder::new(3);
    b.header(0, 1).kv_str("name", b"caf\xe9");
    let file = GgufFile::from_bytes(&b.build()).unwrap();
    let gguf_lens::Value::String(s) = file.get("name").unwrap() else {
        panic!("not a string")
    };
    let err = s.to_str().unwrap_err();
    assert_eq!(err.offset, Some(24 + 8 + 4 + 4 + 8 + 3));
    assert_eq!(s.to_string_lossy(), "caf\u{fffd}");
}

#[test]
fn unknown_value_types() {
    let mut b = Builder::new(3);
    b.header(0, 1).string(b"k").u32(13).u32(0);
    let err = error_of(&b.build());
    assert!(
        matches!(err.kind, ErrorKind::UnknownValueType { type_id: 13, .. }),
        "{err}"
    );
    assert_eq!(err.offset, Some(33));
    let mut b = Builder::new(3);
    b.header(0, 1).string(b"k").u32(9).u32(77).u64(0);
    let err = error_of(&b.build());
    assert!(
        matches!(err.kind, ErrorKind::UnknownValueType { type_id: 77, .. }),
        "{err}"
    );
}

#[test]
fn nesting_too_deep() {
    let mut b = Builder::new(3);
    b.header(0, 1).string(b"deep").u32(9);
    for _ in 0..20 {
        b.u32(9).u64(1);
    }
    b.u32(0).u64(0);
    let err = error_of(&b.build());
    assert!(
        matches!(err.kind, ErrorKind::NestingTooDeep { .. }),
        "{err}"
    );
}

#[test]
fn nested_arrays_within_the_cap_read_back() {
    let mut b = Builder::new(3);
    b.header(0, 1).string(b"nested").u32(9).u32(9).u64(2);
    b.u32(4).u64(2).u32(7).u32(8);
    b.u32(8).u64(1).string(b"hi");
    let file = GgufFile::from_bytes(&b.build()).unwrap();
    let value = file.get("nested").unwrap();
    let outer = value.as_array().unwrap();
    assert_eq!(outer.len(), 2);
    let first = outer.get(0).unwrap();
    let first = first.as_array().unwrap();
    assert_eq!(first.get(1).unwrap().as_u64(), Some(8));
    let second = outer.get(1).unwrap();
    assert_eq!(
        second.as_array().unwrap().get(0).unwrap().as_str().unwrap(),
        "hi"
    );
}

#[test]
fn duplicate_key_and_tensor() {
    let mut b = Builder::new(3);
    b.header(0, 2).kv_u32("a", 1).kv_u32("a", 2);
    let err = error_of(&b.build());
    assert!(
        matches!(&err.kind, ErrorKind::DuplicateKey { key } if key == "a"),
        "{err}"
    );
    assert_eq!(err.offset, Some(24 + 17), "the second key");

    let mut b = Builder::new(3);
    b.header(2, 0)
        .tensor("t", &[4], 0, 0)
        .tensor("t", &[4], 0, 32)
        .data(32, 64);
    let err = error_of(&b.build());
    assert!(
        matches!(&err.kind, ErrorKind::DuplicateTensor { name } if name == "t"),
        "{err}"
    );
}

#[test]
fn alignment_must_be_a_u32_power_of_two() {
    for alignment in [0u32, 3, 48] {
        let mut b = Builder::new(3);
        b.header(0, 1).kv_u32("general.alignment", alignment);
        let err = error_of(&b.build());
        assert!(
            matches!(err.kind, ErrorKind::BadAlignment { .. }),
            "{alignment}: {err}"
        );
        assert_eq!(err.offset, Some(24 + 8 + 17 + 4));
    }
    let mut b = Builder::new(3);
    b.header(0, 1).kv_str("general.alignment", b"32");
    let err = error_of(&b.build());
    assert!(
        matches!(err.kind, ErrorKind::WrongValueType { .. }),
        "{err}"
    );
}

#[test]
fn unknown_and_removed_tensor_types() {
    for (id, removed) in [
        (4u32, true),
        (31, true),
        (38, true),
        (43, false),
        (1000, false),
    ] {
        let mut b = Builder::new(3);
        b.header(1, 0).tensor("w", &[32], id, 0).data(32, 64);
        let err = error_of(&b.build());
        if removed {
            assert!(
                matches!(err.kind, ErrorKind::RemovedTensorType { .. }),
                "{id}: {err}"
            );
        } else {
            assert!(
                matches!(err.kind, ErrorKind::UnknownTensorType { .. }),
                "{id}: {err}"
            );
        }
        assert!(err.to_string().contains(&id.to_string()));
        assert_eq!(err.offset, Some(24 + 9 + 4 + 8));
    }
}

#[test]
fn tensor_names_of_64_bytes_or_more_are_refused_as_ggml_does() {
    for len in [63usize, 64, 65, 200] {
        let name = "n".repeat(len);
        let mut b = Builder::new(3);
        b.header(1, 0).tensor(&name, &[8], 0, 0).data(32, 32);
        let result = GgufFile::from_bytes(&b.build());
        if len < 64 {
            assert_eq!(result.unwrap().tensors()[0].name(), name);
            continue;
        }
        let err = result.expect_err("GGML_MAX_NAME is 64");
        assert!(
            matches!(&err.kind, ErrorKind::TensorNameTooLong { name: n, len: l, limit: 64 }
                if *n == name && *l == len as u64),
            "{err}"
        );
        assert_eq!(err.offset, Some(24), "the tensor info");
        let text = err.to_string();
        assert!(
            text.contains(&format!("{len} bytes")) && text.contains("64"),
            "{text}"
        );
    }
}

#[test]
fn too_many_dims() {
    let mut b = Builder::new(3);
    b.header(1, 0)
        .tensor("w", &[1, 1, 1, 1, 1], 0, 0)
        .data(32, 4);
    let err = error_of(&b.build());
    assert!(
        matches!(err.kind, ErrorKind::TooManyDims { n_dims: 5, .. }),
        "{err}"
    );
}

#[test]
fn overflowing_dims() {
    for dims in [&[u64::MAX][..], &[1 << 32, 1 << 32], &[1 << 62, 2]] {
        let mut b = Builder::new(3);
        b.header(1, 0).tensor("w", dims, 0, 0).data(32, 4);
        let err = error_of(&b.build());
        assert!(
            matches!(err.kind, ErrorKind::DimsOverflow { .. }),
            "{dims:?}: {err}"
        );
    }
}

#[test]
fn partial_block_rows() {
    let mut b = Builder::new(3);
    b.header(1, 0).tensor("w", &[33, 2], 2, 0).data(32, 64);
    let err = error_of(&b.build());
    assert!(
        matches!(
            err.kind,
            ErrorKind::PartialBlock {
                ne0: 33,
                block_size: 32,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn misaligned_tensor() {
    let mut b = Builder::new(3);
    b.header(1, 0).tensor("w", &[4], 0, 4).data(32, 64);
    let err = error_of(&b.build());
    assert!(
        matches!(err.kind, ErrorKind::Misaligned { offset: 4, .. }),
        "{err}"
    );
}

#[test]
fn tensor_out_of_file() {
    let mut b = Builder::new(3);
    b.header(1, 0)
        .tensor("blk.3.ffn_up.weight", &[8], 0, 0)
        .data(32, 31);
    let err = error_of(&b.build());
    assert!(
        matches!(err.kind, ErrorKind::TensorOutOfFile { size: 32, .. }),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("blk.3.ffn_up.weight extends past end of file"),
        "{err}"
    );
    let mut b = Builder::new(3);
    b.header(1, 0)
        .tensor("w", &[8], 0, u64::MAX - 31)
        .data(32, 64);
    let err = error_of(&b.build());
    assert!(
        matches!(err.kind, ErrorKind::TensorOutOfFile { .. }),
        "{err}"
    );
}

#[test]
fn overlapping_tensors() {
    let mut b = Builder::new(3);
    b.header(2, 0)
        .tensor("a", &[16], 0, 0)
        .tensor("b", &[16], 0, 32)
        .data(32, 128);
    let err = error_of(&b.build());
    assert!(
        matches!(&err.kind, ErrorKind::TensorsOverlap { first, second } if first == "a" && second == "b"),
        "{err}"
    );
}

#[test]
fn big_endian_and_v1_headers() {
    let mut b = Builder::new(3).big_endian();
    b.header(1, 1)
        .kv_u32("n", 7)
        .tensor("w", &[4], 0, 0)
        .data(32, 16);
    let file = GgufFile::from_bytes(&b.build()).unwrap();
    assert_eq!(file.endian(), gguf_lens::gguf::Endian::Big);
    assert_eq!(file.get("n").unwrap().as_u64(), Some(7));
    assert_eq!(file.tensors()[0].dims(), &[4]);

    let mut b = Builder::new(1);
    b.header(1, 1)
        .kv_str("s", b"v1")
        .tensor("w", &[2, 3], 1, 0)
        .data(32, 12);
    let file = GgufFile::from_bytes(&b.build()).unwrap();
    assert_eq!(file.version(), 1);
    assert_eq!(file.get("s").unwrap().as_str().unwrap(), "v1");
    assert_eq!(file.tensors()[0].n_elements(), 6);
}

#[test]
fn row_ranges_are_checked() {
    let file = GgufFile::from_bytes(&valid_file()).unwrap();
    let t = file.tensor("y").unwrap();
    // Header: 24 + 33 (alignment) + 57 (tokens) + 2 * 41 (tensor infos) = 196, padded to 224.
    assert_eq!(file.data_offset(), 224);
    assert_eq!(
        file.rows_range(t, 1..2).unwrap(),
        224 + 32 + 16..224 + 32 + 32
    );
    #[allow(clippy::reversed_empty_ranges)] // a reversed range is one of the bad inputs
    let bad = [0..3, 2..1, 3..3];
    for rows in bad {
        let err = file.rows_range(t, rows.clone()).unwrap_err();
        assert!(
            matches!(err.kind, ErrorKind::BadRowRange { .. }),
            "{rows:?}"
        );
    }
    let err = file.tensor("nope").unwrap_err();
    assert!(matches!(err.kind, ErrorKind::NoSuchTensor { .. }));
}

#[test]
fn dequantize_checks_lengths() {
    let mut out = [0f32; 31];
    let err = gguf_lens::dequantize(gguf_lens::GgmlType::Q4_0, &[0u8; 18], &mut out).unwrap_err();
    assert!(
        matches!(err.kind, ErrorKind::BadLength { expected: 32, .. }),
        "{err}"
    );
    let err = gguf_lens::dequantize(gguf_lens::GgmlType::Q4_0, &[0u8; 17], &mut []).unwrap_err();
    assert!(matches!(err.kind, ErrorKind::BadLength { .. }), "{err}");
}

#[test]
fn big_endian_quantized_data_is_refused() {
    let err =
        gguf_lens::quant::big_endian_to_little(gguf_lens::GgmlType::Q8_0, &[0; 34]).unwrap_err();
    assert!(matches!(err.kind, ErrorKind::BigEndianData { .. }));
    let swapped =
        gguf_lens::quant::big_endian_to_little(gguf_lens::GgmlType::F32, &[1, 2, 3, 4]).unwrap();
    assert_eq!(swapped, [4, 3, 2, 1]);
}

#[test]
fn unknown_kernel_name() {
    let err = gguf_lens::Kernel::from_name("avx9000").unwrap_err();
    assert!(matches!(err.kind, ErrorKind::KernelUnavailable { .. }));
}
