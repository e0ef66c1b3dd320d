//! Editing against gguf-py: `fixtures/make_edit.py` wrote an input and, for each edit case, the
//! file gguf-py writes with the edited metadata; our edited file must be byte-identical (sha256).
// Writes files in a temporary directory, which the WASI runner does not give tests.
#![cfg(not(target_os = "wasi"))]

use std::path::{Path, PathBuf};

use gguf_lens::edit::{edit_file, Edits, NewValue};
use gguf_lens::gguf::ValueType;
use sha2::{Digest, Sha256};

fn scalar(type_name: &str, v: &serde_json::Value) -> NewValue {
    match type_name {
        "STRING" => NewValue::String(v.as_str().unwrap().to_string()),
        "FLOAT32" => NewValue::F32(v.as_f64().unwrap() as f32),
        "FLOAT64" => NewValue::F64(v.as_f64().unwrap()),
        "UINT32" => NewValue::U32(v.as_u64().unwrap() as u32),
        "UINT64" => NewValue::U64(v.as_u64().unwrap()),
        "INT64" => NewValue::I64(v.as_i64().unwrap()),
        other => panic!("type {other} not used by make_edit.py"),
    }
}

fn value(type_name: &str, v: &serde_json::Value) -> NewValue {
    match v.as_array() {
        Some(items) => {
            let items: Vec<NewValue> = items.iter().map(|i| scalar(type_name, i)).collect();
            let item_type = scalar(
                type_name,
                &serde_json::json!(if type_name == "STRING" {
                    serde_json::json!("")
                } else {
                    serde_json::json!(0)
                }),
            )
            .value_type();
            NewValue::Array(item_type, items)
        }
        None => scalar(type_name, v),
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gguf-lens-edit-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn edited_files_are_byte_identical_to_gguf_py() {
    let input = Path::new("fixtures/edit/input.gguf");
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("fixtures/edit/expected.json").unwrap())
            .unwrap();
    let dir = scratch("oracle");
    let cases = expected.as_object().unwrap();
    assert!(cases.len() >= 6);
    for (name, case) in cases {
        let mut edits = Edits::default();
        for set in case["sets"].as_array().unwrap() {
            let key = set[0].as_str().unwrap().to_string();
            edits
                .set
                .push((key, value(set[1].as_str().unwrap(), &set[2])));
        }
        for key in case["removes"].as_array().unwrap() {
            edits.remove.push(key.as_str().unwrap().to_string());
        }
        let out = dir.join(format!("{name}.gguf"));
        edit_file(input, &out, &edits).unwrap_or_else(|e| panic!("{name}: {e}"));
        let got = format!("{:x}", Sha256::digest(std::fs::read(&out).unwrap()));
        assert_eq!(got, case["sha256"].as_str().unwrap(), "{name}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn failures_leave_no_output_and_name_the_reason() {
    let input = Path::new("fixtures/edit/input.gguf");
    let dir = scratch("fail");
    // Output directory missing: nothing is written anywhere.
    let out = dir.join("missing/out.gguf");
    assert!(edit_file(input, &out, &Edits::default()).is_err());
    assert!(!out.exists());
    // Same file through a hard link is refused.
    let copy = dir.join("in.gguf");
    std::fs::copy(input, &copy).unwrap();
    let link = dir.join("link.gguf");
    std::fs::hard_link(&copy, &link).unwrap();
    let err = edit_file(&copy, &link, &Edits::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("same file"), "{err}");
    // A key that does not exist, and an array whose items disagree with its type.
    let out = dir.join("out.gguf");
    let edits = Edits {
        remove: vec!["no.such.key".into()],
        ..Default::default()
    };
    let err = edit_file(input, &out, &edits).unwrap_err().to_string();
    assert!(err.contains("no.such.key"), "{err}");
    let edits = Edits {
        set: vec![(
            "x.arr".into(),
            NewValue::Array(ValueType::U8, vec![NewValue::Bool(true)]),
        )],
        ..Default::default()
    };
    let err = edit_file(input, &out, &edits).unwrap_err().to_string();
    assert!(err.starts_with("x.arr:"), "{err}");
    // An alignment that is not a power of two, or not a uint32, as ggml requires.
    for bad in [NewValue::U32(48), NewValue::U32(0), NewValue::U64(64)] {
        let edits = Edits {
            set: vec![("general.alignment".into(), bad)],
            ..Default::default()
        };
        let err = edit_file(input, &out, &edits).unwrap_err().to_string();
        assert!(err.starts_with("general.alignment:"), "{err}");
    }
    assert!(!out.exists());
    // Only the copy and its hard link are left: no temporary file, no output.
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A sparse input (a 256 MiB tensor that is one hole) gives a sparse output with the same bytes
/// around the hole, realigned or not.
#[cfg(target_os = "linux")]
#[test]
fn sparse_input_stays_sparse() {
    use std::io::{Seek, SeekFrom, Write};
    use std::os::unix::fs::MetadataExt;
    let dir = scratch("sparse");
    let big = dir.join("big.gguf");
    // Header: one F32 tensor of 64M elements, then 32-byte alignment; data: 4 bytes, hole, 4 bytes.
    let n: u64 = 64 << 20;
    let mut head = b"GGUF".to_vec();
    head.extend_from_slice(&3u32.to_le_bytes());
    head.extend_from_slice(&1u64.to_le_bytes());
    head.extend_from_slice(&0u64.to_le_bytes());
    head.extend_from_slice(&8u64.to_le_bytes());
    head.extend_from_slice(b"t.weight");
    head.extend_from_slice(&1u32.to_le_bytes());
    head.extend_from_slice(&n.to_le_bytes());
    head.extend_from_slice(&0u32.to_le_bytes());
    head.extend_from_slice(&0u64.to_le_bytes());
    head.resize(head.len().div_ceil(32) * 32, 0);
    let data_at = head.len() as u64;
    let mut f = std::fs::File::create(&big).unwrap();
    f.write_all(&head).unwrap();
    f.write_all(&1.5f32.to_le_bytes()).unwrap();
    f.seek(SeekFrom::Start(data_at + n * 4 - 4)).unwrap();
    f.write_all(&2.5f32.to_le_bytes()).unwrap();
    drop(f);
    let sparse_fs = std::fs::metadata(&big).unwrap().blocks() * 512 < n;
    for (label, alignment) in [("same", None), ("realigned", Some(4096u32))] {
        let out = dir.join(format!("{label}.gguf"));
        let mut edits = Edits::default();
        edits
            .set
            .push(("general.name".into(), NewValue::String("x".repeat(100))));
        if let Some(a) = alignment {
            edits
                .set
                .push(("general.alignment".into(), NewValue::U32(a)));
        }
        edit_file(&big, &out, &edits).unwrap();
        let bytes_len = std::fs::metadata(&out).unwrap().len();
        let file = gguf_lens::gguf::read_header(&mut std::fs::File::open(&out).unwrap(), bytes_len)
            .unwrap();
        let t = &file.tensors()[0];
        let range = file.tensor_range(t);
        let mut f = std::fs::File::open(&out).unwrap();
        let mut word = [0u8; 4];
        use std::io::Read;
        f.seek(SeekFrom::Start(range.start)).unwrap();
        f.read_exact(&mut word).unwrap();
        assert_eq!(f32::from_le_bytes(word), 1.5, "{label}");
        f.seek(SeekFrom::Start(range.end - 4)).unwrap();
        f.read_exact(&mut word).unwrap();
        assert_eq!(f32::from_le_bytes(word), 2.5, "{label}");
        f.seek(SeekFrom::Start(range.start + n * 2)).unwrap();
        f.read_exact(&mut word).unwrap();
        assert_eq!(word, [0; 4], "{label}");
        if sparse_fs {
            let used = std::fs::metadata(&out).unwrap().blocks() * 512;
            assert!(
                used < n,
                "{label}: {used} bytes allocated for a sparse copy"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
