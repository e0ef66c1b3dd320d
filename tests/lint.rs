//! Lint: the bundled real and sample models have no errors; copies corrupted in memory (one
//! mistake each) give exactly the expected error code.

mod common;

use common::{root, Builder};
use gguf_lens::edit::{build_header, Edits, NewValue};
use gguf_lens::gguf::ValueType;
use gguf_lens::lint::{lint, lint_bytes, Finding, Report, Severity};
use gguf_lens::GgufFile;

const SAMPLE: &str = "fixtures/sample/tiny-llama-Q4_K_M.gguf";

fn read(path: &str) -> Vec<u8> {
    std::fs::read(root().join(path)).unwrap()
}

fn report_of(bytes: &[u8]) -> Report {
    lint_bytes(bytes, bytes.len() as u64)
}

fn codes(report: &Report, severity: Severity) -> Vec<&'static str> {
    report
        .findings
        .iter()
        .filter(|f| f.severity == severity)
        .map(|f| f.code)
        .collect()
}

fn errors(report: &Report) -> Vec<&'static str> {
    codes(report, Severity::Error)
}

/// `bytes` with its metadata edited (tensor data copied after the new header).
fn edited(bytes: &[u8], set: Vec<(&str, NewValue)>, remove: &[&str]) -> Vec<u8> {
    let file = GgufFile::from_bytes(bytes).unwrap();
    let edits = Edits {
        set: set.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        remove: remove.iter().map(|k| k.to_string()).collect(),
    };
    let mut out = build_header(&file, &edits).unwrap();
    out.extend_from_slice(&bytes[file.data_offset() as usize..]);
    out
}

/// A tensor info as written: name, ne, ggml type id, data offset.
type Info = (String, Vec<u64>, u32, u64);

/// `bytes` (a little-endian v3 file) with its tensor infos rewritten by `change`; the metadata
/// and the data section are kept, `extra` zero bytes appended to the data.
fn retensored(bytes: &[u8], extra: usize, change: impl FnOnce(&mut Vec<Info>)) -> Vec<u8> {
    let file = GgufFile::from_bytes(bytes).unwrap();
    assert_eq!(file.version(), 3);
    let mut infos: Vec<Info> = file
        .tensors()
        .iter()
        .map(|t| {
            let name = t.name().to_string();
            (name, t.dims().to_vec(), t.ggml_type() as u32, t.offset())
        })
        .collect();
    change(&mut infos);
    let first = file.tensors()[0].info_offset() as usize;
    let mut out = bytes[..first].to_vec();
    out[8..16].copy_from_slice(&(infos.len() as u64).to_le_bytes());
    for (name, ne, type_id, offset) in &infos {
        out.extend_from_slice(&(name.len() as u64).to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&(ne.len() as u32).to_le_bytes());
        for d in ne {
            out.extend_from_slice(&d.to_le_bytes());
        }
        out.extend_from_slice(&type_id.to_le_bytes());
        out.extend_from_slice(&offset.to_le_bytes());
    }
    let align = file.alignment() as usize;
    out.resize(out.len().div_ceil(align) * align, 0);
    out.extend_from_slice(&bytes[file.data_offset() as usize..]);
    out.resize(out.len() + extra, 0);
    out
}

fn set_tensor(infos: &mut [Info], name: &str, change: impl FnOnce(&mut Info)) {
    let info = infos.iter_mut().find(|i| i.0 == name).unwrap();
    change(info);
}

#[test]
fn bundled_models_have_no_errors() {
    let mut paths = Vec::new();
    for dir in ["fixtures/sample", "fixtures/real"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "gguf") {
                paths.push(path);
            }
        }
    }
    assert!(paths.len() >= 3, "{paths:?}");
    for path in paths {
        let bytes = std::fs::read(&path).unwrap();
        let report = report_of(&bytes);
        assert_eq!(
            errors(&report),
            Vec::<&str>::new(),
            "{}: {:#?}",
            path.display(),
            report.findings
        );
        assert_eq!(report.need_more, None);
    }
}

#[test]
fn a_lying_file_type_is_an_error_and_a_missing_one_a_warning() {
    let bytes = read(SAMPLE);
    let report = report_of(&edited(
        &bytes,
        vec![("general.file_type", NewValue::U32(1))],
        &[],
    ));
    assert_eq!(errors(&report), ["file-type-mismatch"], "{report:#?}");
    let f = &report.findings[0];
    assert_eq!(f.key.as_deref(), Some("general.file_type"));
    assert!(
        f.message.contains("MOSTLY_F16") && f.message.contains("Q4_K"),
        "{f:?}"
    );
    assert!(f.offset.is_some());

    // Q4_K_S on a file whose attn_v/ffn_down upgrades make it Q4_K_M: same base type, a warning.
    let report = report_of(&edited(
        &bytes,
        vec![("general.file_type", NewValue::U32(14))],
        &[],
    ));
    assert_eq!(errors(&report), Vec::<&str>::new());
    assert_eq!(codes(&report, Severity::Warning), ["file-type-variant"]);

    let report = report_of(&edited(&bytes, vec![], &["general.file_type"]));
    assert_eq!(errors(&report), Vec::<&str>::new());
    assert_eq!(codes(&report, Severity::Warning), ["file-type-missing"]);
}

#[test]
fn a_special_token_outside_the_vocabulary() {
    let bytes = read(SAMPLE);
    let report = report_of(&edited(
        &bytes,
        vec![("tokenizer.ggml.eos_token_id", NewValue::U32(256))],
        &[],
    ));
    assert_eq!(
        errors(&report),
        ["special-token-out-of-vocab"],
        "{report:#?}"
    );
    assert_eq!(
        report.findings[0].key.as_deref(),
        Some("tokenizer.ggml.eos_token_id")
    );
    // The last id inside is fine.
    let report = report_of(&edited(
        &bytes,
        vec![("tokenizer.ggml.eos_token_id", NewValue::U32(255))],
        &[],
    ));
    assert_eq!(errors(&report), Vec::<&str>::new());
}

#[test]
fn vocabulary_arrays_of_different_lengths() {
    let bytes = read(SAMPLE);
    let scores = |n: usize| NewValue::Array(ValueType::F32, vec![NewValue::F32(0.0); n]);
    for n in [255, 257] {
        let report = report_of(&edited(
            &bytes,
            vec![("tokenizer.ggml.scores", scores(n))],
            &[],
        ));
        assert_eq!(errors(&report), ["vocab-array-length"], "{n}: {report:#?}");
        assert_eq!(
            report.findings[0].key.as_deref(),
            Some("tokenizer.ggml.scores")
        );
    }
}

#[test]
fn block_count_against_the_blocks() {
    let bytes = read(SAMPLE);
    // u32::MAX: one comparison per block present, not per block claimed.
    for n in [1, 3, u32::MAX] {
        let report = report_of(&edited(
            &bytes,
            vec![("llama.block_count", NewValue::U32(n))],
            &[],
        ));
        assert_eq!(
            errors(&report),
            ["block-count-mismatch"],
            "{n}: {report:#?}"
        );
    }
    // A third block counted as a multi-token-prediction layer may have no tensors.
    let report = report_of(&edited(
        &bytes,
        vec![
            ("llama.block_count", NewValue::U32(3)),
            ("llama.nextn_predict_layers", NewValue::U32(1)),
        ],
        &[],
    ));
    assert_eq!(errors(&report), Vec::<&str>::new(), "{report:#?}");
}

#[test]
fn a_chat_template_that_does_not_parse() {
    let bytes = read(SAMPLE);
    let bad = "{% for message in messages %}{{ message['content'] }}";
    let report = report_of(&edited(
        &bytes,
        vec![("tokenizer.chat_template", NewValue::String(bad.into()))],
        &[],
    ));
    assert_eq!(errors(&report), ["chat-template-syntax"], "{report:#?}");
    // Loop controls and Hugging Face's generation tags are accepted, as transformers does.
    let good = "{% for m in messages %}{% if loop.index > 3 %}{% break %}{% endif %}\
                {% generation %}{{ m['content'] }}{% endgeneration %}{% endfor %}";
    let report = report_of(&edited(
        &bytes,
        vec![("tokenizer.chat_template", NewValue::String(good.into()))],
        &[],
    ));
    assert_eq!(errors(&report), Vec::<&str>::new(), "{report:#?}");
}

#[test]
fn merges_naming_missing_tokens_are_a_warning() {
    let bytes = read(SAMPLE);
    let file = GgufFile::from_bytes(&bytes).unwrap();
    let tokens: Vec<String> = file
        .get("tokenizer.ggml.tokens")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().into_owned())
        .collect();
    // A real merge: "▁the s" once "▁thes" is a token (in place of the last one).
    assert!(tokens.iter().any(|t| t == "▁the") && tokens.iter().any(|t| t == "s"));
    let mut with_thes = tokens.clone();
    *with_thes.last_mut().unwrap() = "▁thes".to_string();
    let vocab = NewValue::Array(
        ValueType::String,
        with_thes.into_iter().map(NewValue::String).collect(),
    );
    let good = "▁the s";
    let merges = |items: &[&str]| {
        NewValue::Array(
            ValueType::String,
            items
                .iter()
                .map(|s| NewValue::String(s.to_string()))
                .collect(),
        )
    };
    let report = report_of(&edited(
        &bytes,
        vec![
            ("tokenizer.ggml.tokens", vocab.clone()),
            ("tokenizer.ggml.merges", merges(&[good])),
        ],
        &[],
    ));
    assert!(report.findings.is_empty(), "{good}: {report:#?}");
    let report = report_of(&edited(
        &bytes,
        vec![
            ("tokenizer.ggml.tokens", vocab),
            (
                "tokenizer.ggml.merges",
                merges(&[good, "<s> </s>", "nospace"]),
            ),
        ],
        &[],
    ));
    assert_eq!(errors(&report), Vec::<&str>::new());
    assert_eq!(codes(&report, Severity::Warning), ["merge-unknown-token"]);
    assert!(
        report.findings[0].message.starts_with("2 of 3 merges"),
        "{:?}",
        report.findings[0]
    );
}

#[test]
fn a_misaligned_tensor_is_the_parser_error_with_its_offset() {
    let bytes = read(SAMPLE);
    let corrupted = retensored(&bytes, 0, |infos| {
        set_tensor(infos, "blk.1.ffn_up.weight", |t| t.3 += 1);
    });
    let report = report_of(&corrupted);
    assert_eq!(errors(&report), ["misaligned"], "{report:#?}");
    let f = &report.findings[0];
    assert_eq!(f.tensor.as_deref(), Some("blk.1.ffn_up.weight"));
    let file = GgufFile::from_bytes(&bytes).unwrap();
    let info_offset = file.tensor("blk.1.ffn_up.weight").unwrap().info_offset();
    assert_eq!(
        f.offset,
        Some(info_offset),
        "same metadata, same info offset"
    );
}

#[test]
fn a_tensor_name_of_64_bytes() {
    let bytes = read(SAMPLE);
    let long = format!("blk.0.{}", "x".repeat(58));
    assert_eq!(long.len(), 64);
    let corrupted = retensored(&bytes, 0, |infos| {
        set_tensor(infos, "output.weight", |t| t.0 = long.clone());
    });
    let report = report_of(&corrupted);
    assert_eq!(errors(&report), ["tensor-name-too-long"], "{report:#?}");
    assert_eq!(report.findings[0].tensor.as_deref(), Some(long.as_str()));
    assert!(report.findings[0].message.contains("64"));
    // 63 bytes load (output.weight is optional: no other error).
    let corrupted = retensored(&bytes, 0, |infos| {
        set_tensor(infos, "output.weight", |t| t.0 = long[..63].to_string());
    });
    assert_eq!(errors(&report_of(&corrupted)), Vec::<&str>::new());
}

#[test]
fn a_missing_required_tensor_and_a_wrong_shape() {
    let bytes = read(SAMPLE);
    let corrupted = retensored(&bytes, 0, |infos| {
        infos.retain(|t| t.0 != "blk.1.ffn_up.weight");
    });
    let report = report_of(&corrupted);
    assert_eq!(errors(&report), ["tensor-missing"], "{report:#?}");
    assert_eq!(
        report.findings[0].tensor.as_deref(),
        Some("blk.1.ffn_up.weight")
    );
    // Its bytes are now a gap in the data.
    assert_eq!(codes(&report, Severity::Warning), ["tensor-data-gap"]);

    // Same bytes, transposed: ne [512, 128] for llama's [256, 256] attn_q.
    let corrupted = retensored(&bytes, 0, |infos| {
        set_tensor(infos, "blk.0.attn_q.weight", |t| t.1 = vec![512, 128]);
    });
    let report = report_of(&corrupted);
    assert_eq!(errors(&report), ["tensor-shape"], "{report:#?}");
    assert!(report.findings[0].message.contains("[256, 256]"));

    // A LoRA adapter's tensors are not a model's: no block or tensor checks.
    let adapter = edited(
        &retensored(&bytes, 0, |infos| {
            infos.retain(|t| t.0 != "blk.1.ffn_up.weight")
        }),
        vec![("general.type", NewValue::String("adapter".into()))],
        &[],
    );
    assert_eq!(errors(&report_of(&adapter)), Vec::<&str>::new());

    // output.weight is optional (tied to token_embd).
    let corrupted = retensored(&bytes, 0, |infos| infos.retain(|t| t.0 != "output.weight"));
    assert_eq!(errors(&report_of(&corrupted)), Vec::<&str>::new());
}

#[test]
fn gaps_and_trailing_bytes_are_warnings() {
    let bytes = read(SAMPLE);
    let last = {
        let file = GgufFile::from_bytes(&bytes).unwrap();
        let t = file.tensors().iter().max_by_key(|t| t.offset()).unwrap();
        t.name().to_string()
    };
    let corrupted = retensored(&bytes, 64, |infos| {
        set_tensor(infos, &last, |t| t.3 += 32);
    });
    let report = report_of(&corrupted);
    assert_eq!(errors(&report), Vec::<&str>::new());
    assert_eq!(
        codes(&report, Severity::Warning),
        ["tensor-data-gap", "trailing-data"],
        "{report:#?}"
    );
    assert_eq!(report.findings[0].tensor.as_deref(), Some(last.as_str()));
}

#[test]
fn parser_errors_become_one_finding() {
    let mut b = Builder::new(3);
    b.header(0, 2).kv_u32("a", 1).kv_u32("a", 2);
    let report = report_of(&b.build());
    assert_eq!(report.findings.len(), 1);
    let f: &Finding = &report.findings[0];
    assert_eq!((f.code, f.severity), ("duplicate-key", Severity::Error));
    assert_eq!(f.key.as_deref(), Some("a"));
    assert_eq!(f.offset, Some(24 + 17));

    let mut b = Builder::new(3);
    b.header(2, 0)
        .tensor("a", &[16], 0, 0)
        .tensor("b", &[16], 0, 32)
        .data(32, 128);
    assert_eq!(errors(&report_of(&b.build())), ["tensors-overlap"]);

    let mut b = Builder::new(3);
    b.header(1, 0).tensor("w", &[8], 0, 0).data(32, 31);
    assert_eq!(errors(&report_of(&b.build())), ["tensor-out-of-file"]);
}

#[test]
fn a_short_prefix_asks_for_more() {
    let bytes = read(SAMPLE);
    let report = lint_bytes(&bytes[..100], bytes.len() as u64);
    assert!(report.findings.is_empty());
    let need = report.need_more.expect("the header goes on");
    assert!(need > 100);
    let file = GgufFile::from_bytes(&bytes).unwrap();
    let whole = lint_bytes(&bytes[..file.header_len() as usize], bytes.len() as u64);
    assert_eq!(whole.need_more, None);
    assert_eq!(whole, Report::new(lint(&file)));
}

#[test]
fn report_json_is_camel_case() {
    let bytes = read(SAMPLE);
    let report = report_of(&edited(
        &bytes,
        vec![("tokenizer.ggml.eos_token_id", NewValue::U32(999))],
        &[],
    ));
    let doc = serde_json::to_value(&report).unwrap();
    assert_eq!(doc["errors"], 1);
    assert_eq!(doc["findings"][0]["severity"], "error");
    assert_eq!(doc["findings"][0]["code"], "special-token-out-of-vocab");
    assert!(doc.get("needMore").is_none());
}

#[test]
#[cfg(not(target_os = "wasi"))] // spawns the binary
fn cli_lint_exit_codes_and_lines() {
    use common::run_in_root;
    let ok = run_in_root(&["lint", SAMPLE]);
    assert_eq!(ok.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&ok.stdout),
        "0 errors, 0 warnings, 0 notes\n"
    );
    // A synthetic fixture whose file type lies (F16 label, Q4_K tensors).
    let bad = run_in_root(&["lint", "fixtures/meta/tensors.gguf"]);
    assert_eq!(bad.status.code(), Some(1));
    let out = String::from_utf8_lossy(&bad.stdout);
    assert!(
        out.starts_with("error[file-type-mismatch] general.file_type: "),
        "{out}"
    );
    // It has a blk.0 tensor and no tensors.block_count either.
    assert!(
        out.contains("\nerror[block-count-missing] tensors.block_count: "),
        "{out}"
    );
    assert!(out.ends_with("\n2 errors, 0 warnings, 0 notes\n"), "{out}");
    assert!(bad.stderr.is_empty());
    let json = run_in_root(&["lint", "fixtures/meta/tensors.gguf", "--json"]);
    assert_eq!(json.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["findings"][0]["code"], "file-type-mismatch");
    let missing = run_in_root(&["lint", "fixtures/no-such-file.gguf"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).starts_with("error: "));
}

/// llama.cpp's own vocabularies and chat templates (from the llama-cpp-python sdist that
/// `scripts/llama-sdist.sh` caches, or `$LLAMA_CPP_SDIST`), when present: no errors, and no
/// merge warnings (every BPE vocabulary's merges name its tokens).
#[test]
#[cfg(not(target_os = "wasi"))]
fn llama_cpp_vocabularies_and_templates_have_no_errors() {
    let dir = common::llama_cpp_sdist().unwrap_or_default().join("models");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        // scripts/test.sh fetches the sdist first: under CI its absence is a failure, never a pass.
        assert!(
            std::env::var_os("CI").is_none(),
            "no llama.cpp sdist at {} (run scripts/llama-sdist.sh)",
            dir.display()
        );
        eprintln!("SKIPPED: no llama.cpp sdist at {}", dir.display());
        return;
    };
    let mut vocabularies = 0;
    for entry in entries {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "gguf") {
            let report = report_of(&std::fs::read(&path).unwrap());
            assert!(
                report.findings.is_empty(),
                "{}: {report:#?}",
                path.display()
            );
            vocabularies += 1;
        }
    }
    assert!(vocabularies >= 10, "{vocabularies}");
    let bytes = read(SAMPLE);
    let mut templates = 0;
    for entry in std::fs::read_dir(dir.join("templates")).unwrap() {
        let path = entry.unwrap().path();
        if !path.extension().is_some_and(|e| e == "jinja") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let report = report_of(&edited(
            &bytes,
            vec![("tokenizer.chat_template", NewValue::String(text))],
            &[],
        ));
        assert_eq!(
            errors(&report),
            Vec::<&str>::new(),
            "{}: {report:#?}",
            path.display()
        );
        templates += 1;
    }
    assert!(templates >= 20, "{templates}");
}

/// Corrupted headers (random bytes overwritten, deterministic) and every prefix of the header:
/// always a report, never a panic; a whole file never asks for more.
#[test]
fn any_bytes_give_a_report() {
    let bytes = read(SAMPLE);
    let header_len = GgufFile::from_bytes(&bytes).unwrap().header_len() as usize;
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut refused = 0;
    for _ in 0..1500 {
        let mut corrupted = bytes.clone();
        for _ in 0..1 + next() % 4 {
            let at = (next() % header_len as u64) as usize;
            corrupted[at] = next() as u8;
        }
        let report = report_of(&corrupted);
        assert_eq!(report.need_more, None);
        if report.findings.len() == 1 && report.findings[0].offset.is_some() {
            refused += 1;
        }
    }
    assert!(
        refused > 0,
        "some corruptions must be refused by the parser"
    );
    for len in (0..header_len).step_by(97) {
        let report = lint_bytes(&bytes[..len], bytes.len() as u64);
        assert!(report.need_more.is_some_and(|n| n > len as u64), "{len}");
    }
}

/// A shard linted alone skips what needs every tensor; the whole split model is linted as one
/// (the synthetic split fixture claims llama with one block and has none of its tensors).
#[test]
fn split_models_are_linted_over_every_shard() {
    use gguf_lens::lint::lint_model;
    use gguf_lens::model::GgufModel;
    let shards: Vec<GgufFile> = (1..=3)
        .map(|i| {
            GgufFile::from_bytes(&read(&format!(
                "fixtures/diff/split-b-0000{i}-of-00003.gguf"
            )))
            .unwrap()
        })
        .collect();
    let alone = lint(&shards[0]);
    assert_eq!(
        alone.iter().map(|f| f.code).collect::<Vec<_>>(),
        ["split-shard"],
        "{alone:#?}"
    );
    let whole = Report::new(lint_model(&GgufModel::from_shards(shards).unwrap()));
    assert!(!whole.findings.iter().any(|f| f.code == "split-shard"));
    assert!(
        errors(&whole).contains(&"block-count-mismatch"),
        "{whole:#?}"
    );
    assert!(
        whole
            .findings
            .iter()
            .any(|f| f.code == "tensor-missing" && f.tensor.as_deref() == Some("token_embd.weight")),
        "{whole:#?}"
    );
}

/// The required-tensor tables against llama.cpp itself: fixtures/make_lint_arch.py wrote a
/// tiny model per architecture that llama.cpp (llama-cpp-python 0.3.36) loads, and recorded
/// whether it still loads with each tensor of block 0 (and each global one) dropped, and with
/// each shape hyper-parameter changed, and (llama) with keys of another type. The same corruptions, made here in memory, must give a
/// lint error exactly when llama.cpp refused the file.
#[test]
fn required_tensors_agree_with_llama_cpp() {
    let text = std::fs::read_to_string(root().join("fixtures/lint/expected.json")).unwrap();
    let expected: serde_json::Value = serde_json::from_str(&text).unwrap();
    let archs = expected.as_object().unwrap();
    assert_eq!(archs.len(), 7);
    for (arch, verdicts) in archs {
        let bytes = read(&format!("fixtures/lint/{arch}.gguf"));
        let report = report_of(&bytes);
        assert!(report.findings.is_empty(), "{arch}: {report:#?}");
        let drops = verdicts["drop"].as_object().unwrap();
        assert!(drops.len() >= 9, "{arch}");
        for (name, loads) in drops {
            let corrupted = retensored(&bytes, 0, |infos| infos.retain(|t| &t.0 != name));
            let report = report_of(&corrupted);
            let mut codes = errors(&report);
            codes.dedup(); // a fused attn_qkv dropped: attn_q, attn_k and attn_v are missing
            let want: &[&str] = if loads.as_bool().unwrap() {
                &[]
            } else {
                &["tensor-missing"]
            };
            assert_eq!(codes, want, "{arch} without {name}: {report:#?}");
        }
        let retypes = verdicts.get("retype").and_then(|r| r.as_object());
        for (key, change) in retypes.into_iter().flatten() {
            let v = &change["value"];
            let value = match change["type"].as_str().unwrap() {
                "int32" => NewValue::I32(v.as_i64().unwrap() as i32),
                "uint64" => NewValue::U64(v.as_u64().unwrap()),
                "float64" => NewValue::F64(v.as_f64().unwrap()),
                "uint8" => NewValue::U8(v.as_u64().unwrap() as u8),
                // gguf-py writes a list of ints as an int32 array.
                "array" => NewValue::Array(
                    ValueType::I32,
                    v.as_array()
                        .unwrap()
                        .iter()
                        .map(|n| NewValue::I32(n.as_i64().unwrap() as i32))
                        .collect(),
                ),
                other => panic!("type {other} not written by make_lint_arch.py"),
            };
            let report = report_of(&edited(&bytes, vec![(key.as_str(), value)], &[]));
            let codes = errors(&report);
            if change["loads"].as_bool().unwrap() {
                assert!(codes.is_empty(), "{arch} {key} as {change}: {report:#?}");
            } else {
                assert!(
                    !codes.is_empty()
                        && codes
                            .iter()
                            .all(|c| ["wrong-value-type", "hparam-invalid"].contains(c)),
                    "{arch} {key} as {change}: {report:#?}"
                );
            }
        }
        for (key, change) in verdicts["set"].as_object().unwrap() {
            let value = change["value"].as_u64().unwrap() as u32;
            let corrupted = edited(&bytes, vec![(key.as_str(), NewValue::U32(value))], &[]);
            let report = report_of(&corrupted);
            let codes = errors(&report);
            if change["loads"].as_bool().unwrap() {
                assert!(codes.is_empty(), "{arch} {key}={value}: {report:#?}");
            } else {
                assert!(
                    !codes.is_empty()
                        && codes
                            .iter()
                            .all(|c| ["tensor-shape", "hparam-invalid"].contains(c)),
                    "{arch} {key}={value}: {report:#?}"
                );
            }
        }
    }
}

/// Rows llama-quantize cannot put in the label's type fall back to another (Q4_K → Q5_0 for a
/// row of 896, as in Qwen2.5-0.5B): the label does not lie, even when they hold most elements.
#[test]
fn fallback_types_do_not_make_the_label_lie() {
    let file = |file_type: u32| {
        let mut b = Builder::new(3);
        b.header(3, 1).kv_u32("general.file_type", file_type);
        // Q5_0 (id 6) [8 rows of 896], Q4_K (id 12) and Q6_K (id 14) [1 row of 4864].
        b.tensor("blk.0.attn_q.weight", &[896, 8], 6, 0)
            .tensor("blk.0.ffn_down.weight", &[4864, 1], 14, 4928)
            .tensor("blk.1.ffn_down.weight", &[4864, 1], 12, 4928 + 4000);
        b.data(32, 4928 + 4000 + 2736);
        report_of(&b.build())
    };
    let q4_k_m = file(15);
    assert!(q4_k_m.findings.is_empty(), "{q4_k_m:#?}");
    assert_eq!(errors(&file(1)), ["file-type-mismatch"]); // F16
    assert_eq!(errors(&file(7)), ["file-type-mismatch"]); // Q8_0
}
