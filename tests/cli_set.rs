//! `gguf-lens set` as users run it, against gguf-py (fixtures/edit/expected.json): every case
//! the command line can express gives gguf-py's file byte for byte; errors leave nothing.
// Spawns the binary and writes files in a temporary directory: not on WASI.
#![cfg(not(target_os = "wasi"))]

mod common;

use sha2::{Digest, Sha256};

fn type_name(oracle: &str) -> &'static str {
    match oracle {
        "STRING" => "string",
        "UINT32" => "uint32",
        "UINT64" => "uint64",
        "FLOAT64" => "float64",
        other => panic!("type {other} not used by make_edit.py"),
    }
}

#[test]
fn set_writes_gguf_py_bytes() {
    let expected: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(common::root().join("fixtures/edit/expected.json")).unwrap(),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for (name, case) in expected.as_object().unwrap() {
        let out = dir.path().join(format!("{name}.gguf"));
        let mut args: Vec<String> = vec![
            "set".into(),
            "fixtures/edit/input.gguf".into(),
            out.to_str().unwrap().into(),
        ];
        let mut expressible = true;
        for set in case["sets"].as_array().unwrap() {
            let (key, ty, value) = (set[0].as_str().unwrap(), set[1].as_str().unwrap(), &set[2]);
            match value {
                // An array keeps its item type with --set-json: only same-type arrays here.
                serde_json::Value::Array(_) if name == "replace_float_array_and_type" => {
                    expressible = false
                }
                serde_json::Value::Array(_) => args.push(format!("--set-json={key}={value}")),
                serde_json::Value::String(s) if key == "tokenizer.chat_template" => {
                    let path = dir.path().join("t.jinja");
                    std::fs::write(&path, s).unwrap();
                    args.push(format!("--chat-template={}", path.display()));
                }
                serde_json::Value::String(s) => {
                    args.push(format!("--set={key}={}:{s}", type_name(ty)))
                }
                other => args.push(format!("--set={key}={}:{other}", type_name(ty))),
            }
        }
        for key in case["removes"].as_array().unwrap() {
            args.push(format!("--remove={}", key.as_str().unwrap()));
        }
        if !expressible {
            continue;
        }
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = common::run_in_root(&refs);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let sha = hex(&Sha256::digest(std::fs::read(&out).unwrap()));
        assert_eq!(sha, case["sha256"].as_str().unwrap(), "{name}");
        checked += 1;
    }
    assert!(checked >= 7, "{checked} cases");
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn set_errors_exit_1_with_one_line_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.gguf");
    for bad in [
        "--set=llama.block_count=uint32:many",
        "--set=general.alignment=uint32:48",
        "--set=general.name=nonsense:x",
        "--remove=no.such.key",
    ] {
        let output = common::run_in_root(&[
            "set",
            "fixtures/edit/input.gguf",
            out.to_str().unwrap(),
            bad,
        ]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{bad}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{bad}: {stderr}");
        assert!(stderr.starts_with("error: "), "{stderr}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "{bad}");
    }
}

/// llama.cpp loaded these exact files (fixtures/make_edit_llama.py: same logits as the unedited
/// sample, its metadata showing each edit): `set` must still write the same bytes.
#[test]
fn set_writes_the_files_llama_cpp_loaded() {
    let expected: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(common::root().join("fixtures/edit/llama_cpp.json")).unwrap(),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cases = expected.as_object().unwrap();
    assert_eq!(cases.len(), 2);
    for (name, case) in cases {
        assert_eq!(case["same_logits_as_unedited"], true);
        let out = dir.path().join(format!("{name}.gguf"));
        let mut args = vec![
            "set".to_string(),
            "fixtures/sample/tiny-llama-Q8_0.gguf".to_string(),
            out.to_str().unwrap().to_string(),
        ];
        for arg in case["args"].as_array().unwrap() {
            let arg = arg.as_str().unwrap();
            // What llama.cpp reported is what the argument set.
            let (key, typed) = arg.trim_start_matches("--set=").split_once('=').unwrap();
            let (_, value) = typed.split_once(':').unwrap();
            assert_eq!(case["llama_cpp_metadata"][key], value, "{name}: {key}");
            args.push(arg.to_string());
        }
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = common::run_in_root(&refs);
        assert_eq!(output.status.code(), Some(0), "{name}");
        let sha = hex(&Sha256::digest(std::fs::read(&out).unwrap()));
        assert_eq!(sha, case["sha256"].as_str().unwrap(), "{name}");
    }
}
