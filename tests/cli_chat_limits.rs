//! `gguf-lens chat` on templates that would run or allocate without end: exit 1 with one
//! `error:` line naming the limit (it aborted with SIGABRT after seconds of work).
// Spawns the gguf-lens binary, which WASI cannot do.
#![cfg(not(target_os = "wasi"))]

mod common;

use std::path::PathBuf;

#[test]
fn runaway_templates_exit_1_naming_the_limit() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let gguf = root.join("fixtures/real/ggml-vocab-bert-bge.gguf");
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("m.json");
    std::fs::write(&m, "[]").unwrap();
    for (template, limit) in [
        (
            "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
            "(fuel limit)",
        ),
        (
            "{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}",
            "(value size limit)",
        ),
    ] {
        let t = tmp.path().join("t.jinja");
        std::fs::write(&t, template).unwrap();
        let out = common::gguf_lens_command()
            .arg("chat")
            .arg(&gguf)
            .arg("--messages")
            .arg(&m)
            .arg("--template")
            .arg(&t)
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{template}: {err}");
        assert!(err.starts_with("error: chat template: "), "{err}");
        assert!(err.trim_end().ends_with(limit), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(out.stdout.is_empty());
    }
}
