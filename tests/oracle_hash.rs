//! Oracle test: tensor-data hashes against llama.cpp's `llama-gguf-hash`, gguf-py's
//! `gguf_hash.py` and Python `xxhash` (fixtures/hash/expected.json, made by
//! fixtures/make_hash.py): the same lines, byte for byte, for 39 files (every ggml type, the
//! samples, a file with no tensors), `--no-layer`, the default (xxh64), and `--check`.

mod common;

use std::fs::File;

use gguf_lens::gguf::read_header;
use gguf_lens::hash::{Algorithms, Hasher};
use serde_json::Value;

fn expected() -> Value {
    let text = std::fs::read_to_string(common::root().join("fixtures/hash/expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The library's one-thread `Hasher`, fed in small uneven pieces, prints llama-gguf-hash's lines.
#[test]
fn hasher_matches_llama_gguf_hash_on_every_file() {
    let doc = expected();
    let files = doc["files"].as_object().unwrap();
    assert!(files.len() >= 39);
    let all = Algorithms {
        xxh64: true,
        sha1: true,
        sha256: true,
        uuid: true,
    };
    for (name, case) in files {
        let bytes = std::fs::read(common::root().join(name)).unwrap();
        let file = gguf_lens::gguf::GgufFile::from_bytes(&bytes).unwrap();
        let mut hasher = Hasher::new(all, true);
        for tensor in file.tensors() {
            let data = file.tensor_data(&bytes, tensor).unwrap();
            for piece in data.chunks(777) {
                hasher.update(piece);
            }
            hasher.end_tensor(tensor.name());
        }
        let ours = hasher.finish().to_lines(name);
        assert_eq!(ours, case["all_uuid"].as_str().unwrap(), "{name}");
        // gguf_hash.py prints the sha1/sha256/uuid lines of the same run.
        if let Some(py) = case["gguf_hash_py"].as_str() {
            let ours_py: String = ours
                .lines()
                .filter(|l| !l.starts_with("xxh64"))
                .map(|l| format!("{l}\n"))
                .collect();
            assert_eq!(ours_py, py, "gguf_hash.py on {name}");
        }
    }
}

/// The threaded file hasher gives the same report on 1, 2 and 5 threads.
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
#[test]
fn threaded_hash_matches_on_any_thread_count() {
    let doc = expected();
    for name in [
        "fixtures/sample/tiny-llama-Q4_K_M.gguf",
        "fixtures/dequant/IQ4_XS.gguf",
    ] {
        let path = common::root().join(name);
        for threads in [1, 2, 5] {
            let mut file = File::open(&path).unwrap();
            let size = file.metadata().unwrap().len();
            let header = read_header(&mut file, size).unwrap();
            let all = Algorithms {
                xxh64: true,
                sha1: true,
                sha256: true,
                uuid: true,
            };
            let mut last = (0, 0);
            let report = gguf_lens::hash::threads::hash_file(
                &mut file,
                &header,
                all,
                true,
                threads,
                &mut |done, total| last = (done, total),
            )
            .unwrap();
            assert_eq!(last.0, last.1, "progress ends at the total");
            assert_eq!(
                report.to_lines(name),
                doc["files"][name]["all_uuid"].as_str().unwrap(),
                "{name} on {threads} threads"
            );
        }
    }
}

#[cfg(not(target_os = "wasi"))]
mod cli {
    use super::*;

    fn stdout(args: &[&str]) -> (String, Option<i32>) {
        let out = common::run_in_root(args);
        (String::from_utf8(out.stdout).unwrap(), out.status.code())
    }

    #[test]
    fn cli_prints_llama_gguf_hash_lines() {
        let doc = expected();
        for (name, case) in doc["files"].as_object().unwrap() {
            let (all, code) = stdout(&["hash", "--all", "--uuid", name]);
            assert_eq!(code, Some(0));
            assert_eq!(all, case["all_uuid"].as_str().unwrap(), "{name}");
            let (default, _) = stdout(&["hash", name]);
            assert_eq!(default, case["default"].as_str().unwrap(), "{name}");
            let (no_layer, _) = stdout(&["hash", "--no-layer", "--sha256", name]);
            assert_eq!(
                no_layer,
                case["no_layer_sha256"].as_str().unwrap(),
                "{name}"
            );
        }
    }

    /// `--check`: the same lines, verdicts and exit code as llama-gguf-hash.
    #[test]
    fn cli_check_verifies_a_manifest_as_llama_gguf_hash_does() {
        let doc = expected();
        let checks = doc["checks"].as_array().unwrap();
        assert_eq!(checks.len(), 3);
        for check in checks {
            let path = common::root().join(check["manifest_path"].as_str().unwrap());
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            // Each test writes its own manifest name, so parallel tests do not meet.
            std::fs::write(&path, check["manifest"].as_str().unwrap()).unwrap();
            let (out, code) = stdout(&[
                "hash",
                "--check",
                check["manifest_path"].as_str().unwrap(),
                check["file"].as_str().unwrap(),
            ]);
            let _ = std::fs::remove_file(&path);
            assert_eq!(out, check["stdout"].as_str().unwrap(), "{}", check["label"]);
            assert_eq!(
                code,
                Some(check["exit_code"].as_i64().unwrap() as i32),
                "{}",
                check["label"]
            );
        }
    }

    #[test]
    fn json_has_every_digest() {
        let (out, code) = stdout(&[
            "hash",
            "--all",
            "--uuid",
            "--json",
            "fixtures/sample/tiny-llama-Q8_0.gguf",
        ]);
        assert_eq!(code, Some(0));
        let doc: Value = serde_json::from_str(&out).unwrap();
        let lines = expected()["files"]["fixtures/sample/tiny-llama-Q8_0.gguf"]["all_uuid"]
            .as_str()
            .unwrap()
            .to_string();
        let model_sha = lines
            .lines()
            .find(|l| l.starts_with("sha256") && !l.contains(".gguf:"))
            .unwrap();
        assert!(model_sha.contains(doc["model"]["sha256"].as_str().unwrap()));
        let tensor_lines = lines.lines().filter(|l| l.contains(".gguf:")).count();
        assert_eq!(doc["tensors"].as_array().unwrap().len() * 3, tensor_lines);
        assert!(doc["tensors"][0]["uuid"].is_null());
    }

    #[test]
    fn a_truncated_file_is_one_error_line() {
        let dir = tempfile::tempdir().unwrap();
        let bytes =
            std::fs::read(common::root().join("fixtures/sample/tiny-llama-Q8_0.gguf")).unwrap();
        let path = dir.path().join("cut.gguf");
        std::fs::write(&path, &bytes[..bytes.len() - 100]).unwrap();
        let out = common::run_in_root(&["hash", path.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with("error: "), "{stderr}");
    }
}
