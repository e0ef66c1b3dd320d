//! `gguf-lens inspect --json` against gguf-py's reading of the same files (fixtures/meta: every
//! value type, v1/v2/v3, big-endian; fixtures/real: a vocabulary file made by llama.cpp).
//! The expected JSON was written by fixtures/generate.py from gguf-py's GGUFReader.
// Spawns the gguf-lens binary, which WASI cannot do.
#![cfg(not(target_os = "wasi"))]

mod common;

use std::path::{Path, PathBuf};

use serde_json::Value as Json;

fn fixtures_with_expectations(dir: &str) -> Vec<(PathBuf, PathBuf)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(dir);
    let mut pairs: Vec<(PathBuf, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let name = path
                .file_name()?
                .to_str()?
                .strip_suffix(".gguf")?
                .to_string();
            let expected = dir.join(format!("{name}.expected.json"));
            expected.exists().then_some((path, expected))
        })
        .collect();
    pairs.sort();
    pairs
}

/// Finds the first difference between two JSON documents, as a path.
fn first_difference(got: &Json, want: &Json, path: &str) -> Option<String> {
    match (got, want) {
        (Json::Object(a), Json::Object(b)) => {
            if a.len() != b.len() {
                let keys_a: Vec<_> = a.keys().collect();
                let keys_b: Vec<_> = b.keys().collect();
                return Some(format!("{path}: keys {keys_a:?} vs {keys_b:?}"));
            }
            b.iter().find_map(|(k, v)| match a.get(k) {
                Some(av) => first_difference(av, v, &format!("{path}.{k}")),
                None => Some(format!("{path}.{k}: missing")),
            })
        }
        (Json::Array(a), Json::Array(b)) => {
            if a.len() != b.len() {
                return Some(format!("{path}: length {} vs {}", a.len(), b.len()));
            }
            a.iter()
                .zip(b)
                .enumerate()
                .find_map(|(i, (x, y))| first_difference(x, y, &format!("{path}[{i}]")))
        }
        _ if got == want => None,
        _ => Some(format!("{path}: got {got}, gguf-py says {want}")),
    }
}

fn check_dir(dir: &str, minimum: usize) {
    let pairs = fixtures_with_expectations(dir);
    assert!(
        pairs.len() >= minimum,
        "{dir}: only {} fixtures",
        pairs.len()
    );
    for (gguf, expected) in pairs {
        let output = common::gguf_lens_command()
            .args(["inspect", gguf.to_str().unwrap(), "--json"])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}: {}",
            gguf.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        let mut got: Json = serde_json::from_slice(&output.stdout).unwrap();
        let want: Json = serde_json::from_slice(&std::fs::read(&expected).unwrap()).unwrap();
        // gguf-py's tensor `shape` is ggml's ne (innermost first): ours is `ne`, and our `shape`
        // is it reversed (outermost first). Checked here, then compared as gguf-py gives them.
        for t in got["tensors"].as_array_mut().unwrap() {
            let ne = t["ne"].take();
            let mut reversed = ne.as_array().unwrap().clone();
            reversed.reverse();
            assert_eq!(
                t["shape"],
                Json::Array(reversed),
                "{}: {}",
                gguf.display(),
                t["name"]
            );
            t["shape"] = ne;
            t.as_object_mut().unwrap().remove("ne");
        }
        if let Some(diff) = first_difference(&got, &want, "$") {
            panic!("{}: {diff}", gguf.display());
        }
    }
}

#[test]
fn metadata_fixtures_match_gguf_py() {
    check_dir("meta", 5);
}

#[test]
fn llama_cpp_made_file_matches_gguf_py() {
    check_dir("real", 1);
}

/// Every `tokenizer.ggml.*_token_id` key gguf-py reads from llama.cpp's bert-bge vocabulary (a
/// real file with unknown, seperator, padding, cls and mask ids) comes back from the core's
/// `special_tokens`, with gguf-py's value; no other key does.
#[test]
fn special_tokens_match_gguf_py_on_a_real_vocab() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(root.join("fixtures/real/ggml-vocab-bert-bge.gguf")).unwrap();
    let expected: Json = serde_json::from_slice(
        &std::fs::read(root.join("fixtures/real/ggml-vocab-bert-bge.expected.json")).unwrap(),
    )
    .unwrap();
    let mut want: Vec<(String, u64)> = expected["metadata"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            let key = e["key"].as_str().unwrap();
            key.starts_with("tokenizer.ggml.") && key.ends_with("_token_id")
        })
        .map(|e| {
            (
                e["key"].as_str().unwrap().to_string(),
                e["value"].as_u64().unwrap(),
            )
        })
        .collect();
    want.sort();
    assert!(want.len() >= 5, "{want:?}");
    let file = gguf_lens::GgufFile::from_bytes(&bytes).unwrap();
    let mut got: Vec<(String, u64)> = gguf_lens::special_tokens::special_tokens(&file)
        .into_iter()
        .map(|t| (t.key.to_string(), t.id))
        .collect();
    got.sort();
    assert_eq!(got, want);
}

/// `ArrayView::find_text` searches a whole string array in place: on llama.cpp's bert-bge
/// vocabulary (30k tokens) it finds exactly the tokens that gguf-py's values contain (ASCII case
/// folded), from any start and up to any limit.
#[test]
fn find_text_matches_a_scan_of_gguf_py_values() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(root.join("fixtures/real/ggml-vocab-bert-bge.gguf")).unwrap();
    let expected: Json = serde_json::from_slice(
        &std::fs::read(root.join("fixtures/real/ggml-vocab-bert-bge.expected.json")).unwrap(),
    )
    .unwrap();
    let tokens: Vec<String> = expected["metadata"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["key"] == "tokenizer.ggml.tokens")
        .unwrap()["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    assert!(tokens.len() > 30_000);
    let file = gguf_lens::GgufFile::from_bytes(&bytes).unwrap();
    let array = file.get("tokenizer.ggml.tokens").unwrap();
    let array = array.as_array().unwrap();
    for (needle, start, limit) in [
        ("##ING", 0, usize::MAX),
        ("[unused", 5, 7),
        ("qu", 20_000, 50),
        ("zzzzq", 0, 10),
    ] {
        let want: Vec<usize> = tokens
            .iter()
            .enumerate()
            .skip(start)
            .filter(|(_, t)| {
                t.to_ascii_lowercase()
                    .contains(&needle.to_ascii_lowercase())
            })
            .map(|(i, _)| i)
            .take(limit)
            .collect();
        assert_eq!(array.find_text(needle, start, limit), want, "{needle}");
    }
    // A number array matches nothing.
    let types = file.get("tokenizer.ggml.token_type").unwrap();
    assert!(types.as_array().unwrap().find_text("1", 0, 10).is_empty());
}
