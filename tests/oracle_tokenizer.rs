//! The tokenizer against llama.cpp's own test vectors: every `models/ggml-vocab-*.gguf` in the
//! llama.cpp that llama-cpp-python 0.3.36 vendors, with its `.inp`/`.out` files (made by
//! llama.cpp's tokenizer; `llama_tokenize(text, add_special = false, parse_special = false)`,
//! as test-tokenizer-0 runs it). The files come from `scripts/llama-sdist.sh` (its cache, or
//! `$LLAMA_CPP_SDIST`); nothing is downloaded here. Without them the test prints SKIPPED, and
//! fails when `CI` is set.

// Not on WASI: the sdist cache is outside the directories the WASI runner preopens. The wasm
// build is checked through the npm package instead (pkg-tests/tokenizer.test.mjs).
#![cfg(not(target_os = "wasi"))]

mod common;

use std::path::PathBuf;

use gguf_lens::tokenizer::Tokenizer;
use gguf_lens::GgufFile;

fn sdist_models() -> Option<PathBuf> {
    let dir = common::llama_cpp_sdist()?.join("models");
    dir.is_dir().then_some(dir)
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
const NOT_YET: &[&str] = &[];

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
    check_corpus("fixtures/tokenizer/corpus.json", 200);
}

/// fixtures/differential/tokenizer*.json: 120 seeded random texts each
/// (fixtures/make_differential_text.py: scripts, emoji, controls, noncharacters, unassigned code
/// points, special-token text), the same vocabularies and modes; `tokenizer-found-SEED.json` are
/// soak runs' finds. `GGUF_LENS_DIFFERENTIAL_TEXT=FILE` checks another file (scripts/soak.sh).
#[test]
fn seeded_random_texts_match_llama_cpp_on_every_vocab() {
    if let Some(file) = std::env::var_os("GGUF_LENS_DIFFERENTIAL_TEXT") {
        return check_corpus(&file.to_string_lossy(), 1);
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/differential");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.starts_with("tokenizer") && name.ends_with(".json")
        })
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "no fixtures/differential/tokenizer*.json"
    );
    for file in files {
        check_corpus(&file.to_string_lossy(), 100);
    }
}

fn check_corpus(file: &str, min_texts: usize) {
    let Some(models) = sdist_models() else {
        skip(file);
        return;
    };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // `root.join` keeps an absolute `file` as it is.
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join(file)).unwrap()).unwrap();
    let texts = common::corpus::texts(&doc);
    assert!(texts.len() >= min_texts);
    let modes = common::corpus::modes(&doc);
    let only = std::env::var("VOCAB").ok();
    let mut failures = Vec::new();
    let mut vocabs = 0;
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
        vocabs += 1;
        let (bad, total) =
            common::corpus::check_ids(name, &tok, &texts, &modes, ids, 3, &mut failures);
        let pieces = v["pieces"].as_object().unwrap();
        let (bad_pieces, n_pieces) =
            common::corpus::check_pieces(name, &tok, pieces, &mut failures);
        eprintln!(
            "{name}: {}/{total} corpus cases match; {bad_pieces} of {n_pieces} pieces differ",
            total - bad
        );
    }
    assert!(
        only.is_some() || vocabs >= 15,
        "only {vocabs} vocabularies checked"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Corpus vocabs whose tokenizer type is not implemented yet (printed loudly).
const NOT_YET_CORPUS: &[&str] = &[];

/// Bytes llama.cpp aborts on (a code point past U+10FFFF) and other junk never panic here.
#[test]
fn hostile_bytes_never_panic() {
    let Some(models) = sdist_models() else {
        skip("hostile_bytes_never_panic");
        return;
    };
    let inputs: &[&[u8]] = &[
        b"\xf4\x90\x80\x80",
        b"a\xf7\xbf\xbf\xbfb",
        b"\xff\xfe\xfd",
        b"\xed\xa0\x80\xed\xbf\xbf",
        b"<s\xff>",
        b"\x00\x00",
    ];
    for name in vocab_files(&models) {
        let bytes = std::fs::read(models.join(&name)).unwrap();
        let file = GgufFile::from_bytes(&bytes).unwrap();
        let Ok(tok) = Tokenizer::from_gguf(&file) else {
            continue;
        };
        for input in inputs {
            for (add, parse) in [(true, true), (false, false)] {
                let ids = tok.tokenize(input, add, parse);
                let _ = tok.detokenize(&ids, true);
            }
        }
        for id in [-1, i32::MIN, i32::MAX, tok.len() as i32] {
            assert!(tok.token_to_piece(id, true).is_empty());
        }
    }
}

/// `gguf-lens tokenize` / `detokenize` as users run them, against the corpus.
#[cfg(not(target_os = "wasi"))]
#[test]
fn cli_tokenize_matches_the_corpus() {
    use std::io::Write;
    use std::process::Stdio;
    let Some(models) = sdist_models() else {
        skip("cli_tokenize_matches_the_corpus");
        return;
    };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let doc: serde_json::Value = serde_json::from_slice(
        &std::fs::read(root.join("fixtures/tokenizer/corpus.json")).unwrap(),
    )
    .unwrap();
    for name in ["ggml-vocab-llama-spm.gguf", "ggml-vocab-llama-bpe.gguf"] {
        let path = models.join(name);
        let v = &doc["vocabs"][name];
        // Text 0 is "", 3 is "   ", and the invalid-UTF-8 ones come last (stdin only).
        let texts = doc["texts"].as_array().unwrap();
        for i in [0usize, 3, 40, 150, 200, texts.len() - 1] {
            let input = common::corpus::text_bytes(&texts[i]);
            for (mode, flags) in [(0, &[][..]), (1, &["--no-special", "--parse-special"][..])] {
                let mut child = common::gguf_lens_command()
                    .arg("tokenize")
                    .arg(&path)
                    .args(flags)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .spawn()
                    .unwrap();
                child.stdin.take().unwrap().write_all(&input).unwrap();
                let out = child.wait_with_output().unwrap();
                assert!(out.status.success());
                let want = v["ids"][i][mode].as_str().unwrap();
                assert_eq!(
                    String::from_utf8(out.stdout).unwrap().trim_end(),
                    want,
                    "{name} text {i}"
                );
            }
        }
        // --json: ids and pieces (llama_token_to_piece, special = true).
        let out = common::gguf_lens_command()
            .args([
                "tokenize",
                path.to_str().unwrap(),
                "--text",
                "Hello world",
                "--json",
            ])
            .output()
            .unwrap();
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let ids: Vec<i64> = j["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_i64().unwrap())
            .collect();
        let mut text = Vec::new();
        for (id, piece) in ids.iter().zip(j["pieces"].as_array().unwrap()) {
            let hex = v["pieces"][id.to_string()][0].as_str().unwrap();
            let want: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|k| u8::from_str_radix(&hex[k..k + 2], 16).unwrap())
                .collect();
            assert_eq!(piece.as_str().unwrap().as_bytes(), &want[..]);
            text.extend_from_slice(&want);
        }
        // detokenize: the pieces concatenated.
        let mut cmd = common::gguf_lens_command();
        cmd.args(["detokenize", path.to_str().unwrap()]);
        cmd.args(ids.iter().map(|i| i.to_string()));
        let out = cmd.output().unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout, text);
        let bad = common::gguf_lens_command()
            .args(["detokenize", path.to_str().unwrap(), "99999999"])
            .output()
            .unwrap();
        assert_eq!(bad.status.code(), Some(1));
        let err = String::from_utf8(bad.stderr).unwrap();
        assert!(
            err.starts_with("error: ") && err.lines().count() == 1,
            "{err}"
        );
    }
}

/// The sdist's `base` vocab (no tensors, so its new header is the whole file) with
/// `tokenizer.ggml.pre` set to `pre`, and without merges for "kimi-k2 without merges".
fn relabelled(base: &[u8], pre: &str) -> Vec<u8> {
    use gguf_lens::edit::{build_header, Edits, NewValue};
    let file = GgufFile::from_bytes(base).unwrap();
    let (pre, remove) = match pre.strip_suffix(" without merges") {
        Some(p) => (p, vec!["tokenizer.ggml.merges".to_string()]),
        None => (pre, Vec::new()),
    };
    let edits = Edits {
        set: vec![(
            "tokenizer.ggml.pre".to_string(),
            NewValue::String(pre.to_string()),
        )],
        remove,
    };
    build_header(&file, &edits).unwrap()
}

/// fixtures/tokenizer/pretok_extra.json: the pre-tokenizers llama.cpp splits by hand
/// (kimi-k2, afmoe, tiny_aya's digits) or with a lookahead-only regex (superbpe), on a vocab
/// relabelled to each (and kimi-k2 without merges, which llama.cpp accepts), against the ids
/// llama.cpp gives.
#[test]
fn hand_written_pretokenizers_match_llama_cpp() {
    let Some(models) = sdist_models() else {
        skip("hand_written_pretokenizers_match_llama_cpp");
        return;
    };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let doc: serde_json::Value = serde_json::from_slice(
        &std::fs::read(root.join("fixtures/tokenizer/pretok_extra.json")).unwrap(),
    )
    .unwrap();
    let texts = common::corpus::texts(&doc);
    let modes = common::corpus::modes(&doc);
    let base = std::fs::read(models.join(doc["base"].as_str().unwrap())).unwrap();
    let ids = doc["ids"].as_object().unwrap();
    assert_eq!(ids.len(), 5);
    let mut failures = Vec::new();
    for (pre, per_text) in ids {
        let bytes = relabelled(&base, pre);
        let file = GgufFile::from_bytes(&bytes).unwrap();
        let tok = Tokenizer::from_gguf(&file).unwrap_or_else(|e| panic!("{pre}: {e}"));
        let per_text = per_text.as_array().unwrap();
        let (bad, total) =
            common::corpus::check_ids(pre, &tok, &texts, &modes, per_text, 5, &mut failures);
        eprintln!("{pre}: {bad} of {total} cases differ");
        // Junk through the hand-written splitters: invalid UTF-8, surrogates, past U+10FFFF.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let junk: Vec<u8> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 56) as u8
            })
            .collect();
        for input in [
            &junk[..],
            b"\xf4\x90\x80\x80 1\xed\xa0\x80234",
            b"'\xff'",
            b"9 \xe4\xb8",
        ] {
            let _ = tok.tokenize(input, true, true);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
