//! The tokenizer against llama.cpp's own test vectors: every `models/ggml-vocab-*.gguf` in the
//! llama.cpp that llama-cpp-python 0.3.36 vendors, with its `.inp`/`.out` files (made by
//! llama.cpp's tokenizer; `llama_tokenize(text, add_special = false, parse_special = false)`,
//! as test-tokenizer-0 runs it). The files come from `scripts/llama-sdist.sh` (its cache, or
//! `$LLAMA_CPP_SDIST`); nothing is downloaded here. Without them the test prints SKIPPED, and
//! fails when `CI` is set.

use std::path::PathBuf;

use gguf_lens::tokenizer::Tokenizer;
use gguf_lens::GgufFile;

fn sdist_models() -> Option<PathBuf> {
    let dir = match std::env::var_os("LLAMA_CPP_SDIST") {
        Some(d) => PathBuf::from(d).join("vendor/llama.cpp"),
        None => {
            let cache = std::env::var_os("GGUF_LENS_CACHE")
                .map(PathBuf::from)
                .or_else(|| {
                    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/gguf-lens"))
                })?;
            let root = cache.join("llama_cpp_python-0.3.36");
            if !root.join(".complete").exists() {
                return None;
            }
            root.join("vendor/llama.cpp")
        }
    };
    let models = dir.join("models");
    models.is_dir().then_some(models)
}

fn skip(what: &str) {
    eprintln!("SKIPPED: {what}: llama.cpp sdist not found (run scripts/llama-sdist.sh)");
    if std::env::var_os("CI").is_some_and(|v| v == "true" || v == "1") {
        panic!("{what}: the llama.cpp sdist is required under CI");
    }
}

/// (input text, expected ids) pairs of one vocab's .inp/.out.
fn vectors(models: &std::path::Path, name: &str) -> Vec<(Vec<u8>, Vec<i32>)> {
    let inp = std::fs::read(models.join(format!("{name}.inp"))).unwrap();
    let out = std::fs::read_to_string(models.join(format!("{name}.out"))).unwrap();
    let sep = b"\n__ggml_vocab_test__\n";
    let mut texts = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i + sep.len() <= inp.len() {
        if &inp[i..i + sep.len()] == sep {
            texts.push(inp[start..i].to_vec());
            i += sep.len();
            start = i;
        } else {
            i += 1;
        }
    }
    let ids: Vec<Vec<i32>> = out
        .split('\n')
        .take(texts.len())
        .map(|l| l.split_whitespace().map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(
        texts.len(),
        ids.len(),
        "{name}: .inp and .out disagree on the count"
    );
    texts.into_iter().zip(ids).collect()
}

fn vocab_files(models: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(models)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("ggml-vocab-") && n.ends_with(".gguf"))
        .collect();
    names.sort();
    names
}

/// Vocab files with vectors whose tokenizer type is not implemented yet (printed loudly).
const NOT_YET: &[&str] = &["ggml-vocab-bert-bge.gguf"];

#[test]
fn every_sdist_vector_matches_llama_cpp() {
    let Some(models) = sdist_models() else {
        skip("every_sdist_vector_matches_llama_cpp");
        return;
    };
    let only = std::env::var("VOCAB").ok();
    let mut failures = Vec::new();
    let mut passed = 0;
    let mut unsupported = Vec::new();
    for name in vocab_files(&models) {
        if only.as_deref().is_some_and(|o| !name.contains(o)) {
            continue;
        }
        if !models.join(format!("{name}.inp")).exists() {
            continue;
        }
        let bytes = std::fs::read(models.join(&name)).unwrap();
        let file = GgufFile::from_bytes(&bytes).unwrap();
        let tok = match Tokenizer::from_gguf(&file) {
            Ok(t) => t,
            Err(e) => {
                unsupported.push(format!("{name}: {e}"));
                continue;
            }
        };
        let cases = vectors(&models, &name);
        let mut bad = 0;
        for (text, want) in &cases {
            let got = tok.tokenize(text, false, false);
            if &got != want {
                bad += 1;
                if bad <= 3 {
                    failures.push(format!(
                        "{name}: {:?}\n  want {want:?}\n  got  {got:?}",
                        String::from_utf8_lossy(text)
                    ));
                }
            }
        }
        eprintln!(
            "{name}: {}/{} vectors match",
            cases.len() - bad,
            cases.len()
        );
        if bad == 0 {
            passed += 1;
        } else {
            failures.push(format!("{name}: {bad} of {} vectors differ", cases.len()));
        }
    }
    for u in &unsupported {
        eprintln!("NOT SUPPORTED YET: {u}");
        if !NOT_YET.iter().any(|n| u.starts_with(n)) {
            failures.push(format!("unsupported: {u}"));
        }
    }
    eprintln!("{passed} vocab files pass every vector");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// fixtures/tokenizer/corpus.json: ~280 texts (whitespace runs, \r\n, NUL, invalid UTF-8,
/// surrogates as bytes, long words, special-token text) with the ids llama.cpp gives for every
/// sdist vocab, with (add_special, no parse_special) and (no add_special, parse_special).
#[test]
fn corpus_matches_llama_cpp_on_every_vocab() {
    let Some(models) = sdist_models() else {
        skip("corpus_matches_llama_cpp_on_every_vocab");
        return;
    };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let doc: serde_json::Value = serde_json::from_slice(
        &std::fs::read(root.join("fixtures/tokenizer/corpus.json")).unwrap(),
    )
    .unwrap();
    let texts: Vec<Vec<u8>> = doc["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| match (t.get("text"), t.get("hex")) {
            (Some(s), _) => s.as_str().unwrap().as_bytes().to_vec(),
            (_, Some(h)) => {
                let h = h.as_str().unwrap();
                (0..h.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
                    .collect()
            }
            _ => panic!("text entry without text or hex"),
        })
        .collect();
    assert!(texts.len() >= 200);
    let modes: Vec<(bool, bool)> = doc["modes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["add_special"].as_bool().unwrap(),
                m["parse_special"].as_bool().unwrap(),
            )
        })
        .collect();
    let only = std::env::var("VOCAB").ok();
    let mut failures = Vec::new();
    for (name, v) in doc["vocabs"].as_object().unwrap() {
        if only.as_deref().is_some_and(|o| !name.contains(o)) {
            continue;
        }
        let Some(ids) = v.get("ids").and_then(|i| i.as_array()) else {
            continue;
        };
        let bytes = std::fs::read(models.join(name)).unwrap();
        let file = GgufFile::from_bytes(&bytes).unwrap();
        let tok = match Tokenizer::from_gguf(&file) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("NOT SUPPORTED YET: {name}: {e}");
                if !NOT_YET_CORPUS.contains(&name.as_str()) {
                    failures.push(format!("{name}: {e}"));
                }
                continue;
            }
        };
        let mut bad = 0;
        let mut total = 0;
        for (text, per_mode) in texts.iter().zip(ids) {
            for (&(add, parse), want) in modes.iter().zip(per_mode.as_array().unwrap()) {
                let want: Vec<i32> = want
                    .as_str()
                    .unwrap()
                    .split_whitespace()
                    .map(|x| x.parse().unwrap())
                    .collect();
                let got = tok.tokenize(text, add, parse);
                total += 1;
                if got != want {
                    bad += 1;
                    if bad <= 3 {
                        failures.push(format!(
                            "{name} add_special={add} parse_special={parse} {:?}\n  want {want:?}\n  got  {got:?}",
                            String::from_utf8_lossy(text)
                        ));
                    }
                }
            }
        }
        eprintln!("{name}: {}/{total} corpus cases match", total - bad);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Corpus vocabs whose tokenizer type is not implemented yet (printed loudly).
const NOT_YET_CORPUS: &[&str] = &["ggml-vocab-bert-bge.gguf", "ggml-vocab-nomic-bert-moe.gguf"];
