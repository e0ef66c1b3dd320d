//! Chat templates against jinja2 configured as transformers' apply_chat_template
//! (fixtures/chat/expected.json, fixtures/make_chat.py): every template in llama.cpp's
//! models/templates/ (from the sdist, scripts/llama-sdist.sh) over five conversations, with and
//! without the generation prompt; where jinja2 raises we must raise. Without the sdist the test
//! prints SKIPPED, and fails when `CI` is set.

// Not on WASI: the sdist cache is outside the directories the WASI runner preopens. The wasm
// build is checked through the npm package instead (pkg-tests/tokenizer.test.mjs).
#![cfg(not(target_os = "wasi"))]

mod common;

use std::path::PathBuf;

use gguf_lens::chat::{render_chat_template, ChatOptions};

fn templates_dir() -> Option<PathBuf> {
    let dir = common::llama_cpp_sdist()?.join("models/templates");
    dir.is_dir().then_some(dir)
}

/// Cases where minijinja cannot do what jinja2 does (template, conversation or "" for all,
/// why). Printed on every run; a case listed here that starts to match is simply counted.
const KNOWN_DIFFERENCES: &[(&str, &str, &str)] = &[];

/// 2026-01-15 10:30:00 UTC, the time make_chat.py pins strftime_now to.
const NOW: i64 = 1768473000;

#[test]
fn every_template_renders_as_jinja2() {
    let Some(dir) = templates_dir() else {
        eprintln!("SKIPPED: every_template_renders_as_jinja2: llama.cpp sdist not found");
        if std::env::var_os("CI").is_some_and(|v| v == "true" || v == "1") {
            panic!("the llama.cpp sdist is required under CI");
        }
        return;
    };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("fixtures/chat/expected.json")).unwrap())
            .unwrap();
    let only = std::env::var("TEMPLATE").ok();
    let mut failures = Vec::new();
    let mut passed = 0;
    let mut known_count = 0;
    let cases = doc["cases"].as_array().unwrap();
    for case in cases {
        let name = case["template"].as_str().unwrap();
        if only.as_deref().is_some_and(|o| !name.contains(o)) {
            continue;
        }
        let conv = &doc["conversations"][case["conversation"].as_str().unwrap()];
        let source = std::fs::read_to_string(dir.join(name)).unwrap();
        let opts = ChatOptions {
            tools: conv.get("tools").cloned(),
            add_generation_prompt: case["add_generation_prompt"].as_bool().unwrap(),
            variables: conv
                .get("variables")
                .and_then(|v| v.as_object().cloned())
                .unwrap_or_default(),
            bos_token: doc["bos_token"].as_str().unwrap().to_string(),
            eos_token: doc["eos_token"].as_str().unwrap().to_string(),
            now: Some(NOW),
        };
        let got = render_chat_template(&source, &conv["messages"], &opts);
        let ok = match (&got, case.get("output"), case.get("error")) {
            (Ok(out), Some(want), _) => out == want.as_str().unwrap(),
            (Err(_), _, Some(_)) => true,
            _ => false,
        };
        let known = KNOWN_DIFFERENCES
            .iter()
            .find(|(t, c, _)| *t == name && (c.is_empty() || *c == case["conversation"]));
        if let (false, Some((_, _, why))) = (ok, known) {
            eprintln!("KNOWN DIFFERENCE: {name} / {}: {why}", case["conversation"]);
            known_count += 1;
            continue;
        }
        if ok {
            passed += 1;
        } else {
            let want = case
                .get("output")
                .or(case.get("error"))
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string();
            let got = match got {
                Ok(s) => s,
                Err(e) => format!("error: {e}"),
            };
            let at = want
                .char_indices()
                .zip(got.chars())
                .find(|((_, a), b)| a != b)
                .map(|((i, _), _)| i)
                .unwrap_or(want.len().min(got.len()));
            let from = floor_boundary(&want, at.saturating_sub(60));
            let from_got = floor_boundary(&got, from.min(got.len()));
            let cut = |s: &str, a: usize| s[a..].chars().take(160).collect::<String>();
            failures.push(format!(
                "{name} / {} / agp={} (first difference at byte {at}):\n  want {:?}\n  got  {:?}",
                case["conversation"],
                case["add_generation_prompt"],
                cut(&want, from),
                cut(&got, from_got),
            ));
        }
    }
    eprintln!(
        "{passed} of {} template cases render as jinja2; {known_count} known differences",
        passed + failures.len() + known_count
    );
    assert!(
        failures.is_empty(),
        "{} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `gguf-lens chat` as users run it: a template file over a conversation from the fixture gives
/// jinja2's text exactly; raise_exception exits 1 with one `error:` line.
#[cfg(not(target_os = "wasi"))]
#[test]
fn cli_chat_prints_exactly_what_jinja2_renders() {
    let Some(dir) = templates_dir() else {
        eprintln!(
            "SKIPPED: cli_chat_prints_exactly_what_jinja2_renders: llama.cpp sdist not found"
        );
        if std::env::var_os("CI").is_some_and(|v| v == "true" || v == "1") {
            panic!("the llama.cpp sdist is required under CI");
        }
        return;
    };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("fixtures/chat/expected.json")).unwrap())
            .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    // Any GGUF will do with --template: bos/eos come from its vocabulary, so use a template
    // case whose output does not depend on them.
    let gguf = root.join("fixtures/real/ggml-vocab-bert-bge.gguf");
    let mut checked = 0;
    for case in doc["cases"].as_array().unwrap() {
        let name = case["template"].as_str().unwrap();
        let Some(want) = case.get("output").and_then(|o| o.as_str()) else {
            continue;
        };
        if want.contains("<|BOS|>") || want.contains("<|EOS|>") || want.contains("2026") {
            continue;
        }
        if case["conversation"] != "tool_call" || checked >= 5 {
            continue;
        }
        let conv = &doc["conversations"]["tool_call"];
        let m = tmp.path().join("m.json");
        let t = tmp.path().join("t.json");
        std::fs::write(&m, conv["messages"].to_string()).unwrap();
        std::fs::write(&t, conv["tools"].to_string()).unwrap();
        let mut cmd = common::gguf_lens_command();
        cmd.arg("chat")
            .arg(&gguf)
            .arg("--messages")
            .arg(&m)
            .arg("--tools")
            .arg(&t);
        cmd.arg("--template").arg(dir.join(name));
        if case["add_generation_prompt"].as_bool().unwrap() {
            cmd.arg("--add-generation-prompt");
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8(out.stdout).unwrap(), want, "{name}");
        checked += 1;
    }
    assert!(checked > 0);
    let bad = tmp.path().join("bad.jinja");
    std::fs::write(&bad, "{{ raise_exception('no system\nmessage') }}").unwrap();
    let m = tmp.path().join("m.json");
    let out = common::gguf_lens_command()
        .arg("chat")
        .arg(&gguf)
        .arg("--messages")
        .arg(&m)
        .arg("--template")
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "error: no system message\n"
    );
    assert!(out.stdout.is_empty());
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}
