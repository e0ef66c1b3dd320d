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
    let err = edit_file(&copy, &link, &Edits::default()).unwrap_err();
    assert!(err.contains("same file"), "{err}");
    // A key that does not exist, and an array whose items disagree with its type.
    let out = dir.join("out.gguf");
    let edits = Edits {
        remove: vec!["no.such.key".into()],
        ..Default::default()
    };
    let err = edit_file(input, &out, &edits).unwrap_err();
    assert!(err.contains("no.such.key"), "{err}");
    let edits = Edits {
        set: vec![(
            "x.arr".into(),
            NewValue::Array(ValueType::U8, vec![NewValue::Bool(true)]),
        )],
        ..Default::default()
    };
    let err = edit_file(input, &out, &edits).unwrap_err();
    assert!(err.starts_with("x.arr:"), "{err}");
    assert!(!out.exists());
    // Only the copy and its hard link are left: no temporary file, no output.
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
