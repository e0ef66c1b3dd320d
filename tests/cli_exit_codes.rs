//! One exit-code convention for every subcommand (docs/cli.md, "Exit codes"): 0 success; 1 a
//! bad file, tensor or request with exactly one `error:` line on stderr; 2 bad usage (clap's
//! own errors, options that conflict or do not parse); `diff` and `lint` exit 1 for their
//! findings with nothing on stderr.
// Spawns the gguf-lens binary and writes temporary files, which WASI cannot do.
#![cfg(not(target_os = "wasi"))]

mod common;

use std::path::Path;

/// What a run must end with: the exit code and how many `error:` lines stderr holds (stderr has
/// no other line).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Expect {
    code: i32,
    error_lines: usize,
}

const ERROR: Expect = Expect {
    code: 1,
    error_lines: 1,
};
const USAGE: Expect = Expect {
    code: 2,
    error_lines: 1,
};
/// `diff` and `lint` findings: exit 1, the report on stdout, nothing on stderr.
const FINDINGS: Expect = Expect {
    code: 1,
    error_lines: 0,
};

/// The files a case may name: `{valid}` a small valid GGUF file, `{missing}` a path with no
/// file, `{junk}` a file that is not a model, `{out}` a new output path, `{messages}` a chat
/// messages file.
struct Files {
    dir: tempfile::TempDir,
}

impl Files {
    fn new() -> Files {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("valid.gguf"), common::valid_file()).unwrap();
        std::fs::write(
            dir.path().join("junk.gguf"),
            b"these bytes are not a model file of any kind\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("messages.json"),
            br#"[{"role": "user", "content": "hi"}]"#,
        )
        .unwrap();
        Files { dir }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_str().unwrap().to_string()
    }

    fn expand(&self, arg: &str) -> String {
        arg.replace("{valid}", &self.path("valid.gguf"))
            .replace("{missing}", &self.path("missing.gguf"))
            .replace("{junk}", &self.path("junk.gguf"))
            .replace("{out}", &self.path("out.bin"))
            .replace("{messages}", &self.path("messages.json"))
    }
}

/// Every subcommand with a missing file, a file that is not a model, a tensor that is not
/// there (where it takes one), options that do not parse or conflict, and an unknown option.
const CASES: &[(&str, Expect)] = &[
    // inspect
    ("inspect {missing}", ERROR),
    ("inspect {junk}", ERROR),
    ("inspect {valid} --no-such-option", USAGE),
    ("inspect", USAGE),
    // dequant
    ("dequant {missing} x -o {out}", ERROR),
    ("dequant {junk} x -o {out}", ERROR),
    ("dequant {valid} nope -o {out}", ERROR),
    ("dequant {valid} x -o {out} --rows 0:99", ERROR),
    ("dequant {valid} x -o {valid}", ERROR),
    ("dequant {valid} x -o {out} --v1-zeros plus-one", USAGE),
    ("dequant {valid} x -o {out} --rows 5", USAGE),
    ("dequant {valid} x", USAGE),
    // stats
    ("stats {missing} x", ERROR),
    ("stats {junk} x", ERROR),
    ("stats {valid} nope", ERROR),
    ("stats {valid} x --rows 0:99", ERROR),
    ("stats {valid} x --bins 0", USAGE),
    ("stats {valid}", USAGE),
    // diff
    ("diff {missing} {valid}", ERROR),
    ("diff {valid} {missing}", ERROR),
    ("diff {junk} {valid}", ERROR),
    ("diff {valid} {valid} --values --tensor nope", ERROR),
    ("diff {valid} {valid} --llama-names", USAGE),
    ("diff {valid} {valid} --format yaml", USAGE),
    ("diff {valid}", USAGE),
    // set
    ("set {missing} {out} --remove general.alignment", ERROR),
    ("set {junk} {out} --remove general.alignment", ERROR),
    ("set {valid} {out} --remove no.such.key", ERROR),
    ("set {valid} {valid} --remove general.alignment", ERROR),
    ("set {valid} {out} --set no-equals-sign", USAGE),
    ("set {valid}", USAGE),
    // hash
    ("hash {missing}", ERROR),
    ("hash {junk}", ERROR),
    ("hash {valid} --json --check {valid}", USAGE),
    // lint: a file that is not a model is a finding (stdout), an unreadable one an error
    ("lint {missing}", ERROR),
    ("lint {junk}", FINDINGS),
    ("lint {valid} --no-such-option", USAGE),
    // quantize
    ("quantize {missing} {out} --type q8_0", ERROR),
    ("quantize {junk} {out} --type q8_0", ERROR),
    ("quantize {valid} {valid} --type q8_0", ERROR),
    ("quantize {valid} {out} --type no_such_type", USAGE),
    ("quantize {valid} {out}", USAGE),
    // quant-error
    ("quant-error {missing} x", ERROR),
    ("quant-error {junk} x", ERROR),
    ("quant-error {valid} nope", ERROR),
    ("quant-error {valid} x --types no_such_type", USAGE),
    ("quant-error {valid}", USAGE),
    // memory
    ("memory {missing}", ERROR),
    ("memory {junk}", ERROR),
    ("memory {valid}", ERROR),
    ("memory {valid} --cache-type-k no_such_type", USAGE),
    // tokenize / detokenize
    ("tokenize {missing} --text hi", ERROR),
    ("tokenize {junk} --text hi", ERROR),
    ("tokenize {valid} --text hi", ERROR),
    ("tokenize", USAGE),
    ("detokenize {missing} 1", ERROR),
    ("detokenize {junk} 1", ERROR),
    ("detokenize {valid}", USAGE),
    // chat
    ("chat {missing} --messages {messages}", ERROR),
    ("chat {junk} --messages {messages}", ERROR),
    ("chat {valid} --messages {messages}", ERROR),
    ("chat {valid} --messages {missing}", ERROR),
    (
        "chat {valid} --messages {messages} --var no-equals-sign",
        USAGE,
    ),
    ("chat {valid}", USAGE),
    // no subcommand at all
    ("no-such-subcommand", USAGE),
];

fn run(files: &Files, case: &str) -> std::process::Output {
    let args: Vec<String> = case.split(' ').map(|a| files.expand(a)).collect();
    common::gguf_lens_command().args(&args).output().unwrap()
}

#[test]
fn every_subcommand_keeps_the_one_exit_code_convention() {
    let files = Files::new();
    let mut wrong = Vec::new();
    for &(case, expect) in CASES {
        let output = run(&files, case);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let code = output.status.code().unwrap_or(-1);
        let error_lines = stderr.lines().filter(|l| l.starts_with("error: ")).count();
        // clap adds usage and a hint below its one `error:` line; our own errors are one line.
        let one_line = expect == USAGE || stderr.lines().count() == error_lines;
        if code != expect.code || error_lines != expect.error_lines || !one_line {
            wrong.push(format!("{case}: exit {code}, stderr {stderr:?}"));
        }
        // A refused run writes nothing.
        assert!(!Path::new(&files.path("out.bin")).exists(), "{case} wrote");
    }
    assert!(
        wrong.is_empty(),
        "{} of {} cases broke the convention:\n{}",
        wrong.len(),
        CASES.len(),
        wrong.join("\n")
    );
    // The inputs are unchanged by every refusal.
    assert_eq!(
        std::fs::read(files.path("valid.gguf")).unwrap(),
        common::valid_file()
    );
}

#[test]
fn success_exits_0_with_nothing_on_stderr() {
    let files = Files::new();
    for case in [
        "inspect {valid}",
        "inspect {valid} --json",
        "stats {valid} x",
        "diff {valid} {valid}",
        "hash {valid}",
    ] {
        let output = run(&files, case);
        assert_eq!(output.status.code(), Some(0), "{case}: {output:?}");
        assert!(output.stderr.is_empty(), "{case}: {output:?}");
    }
}

/// Every object key of `doc` (at any depth) that is not snake_case, with its path.
fn not_snake_case(doc: &serde_json::Value, path: &str, found: &mut Vec<String>) {
    match doc {
        serde_json::Value::Object(map) => {
            for (key, value) in map {
                let snake = !key.is_empty()
                    && key
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
                if !snake {
                    found.push(format!("{path}.{key}"));
                }
                not_snake_case(value, &format!("{path}.{key}"), found);
            }
        }
        serde_json::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                not_snake_case(item, &format!("{path}[{i}]"), found);
            }
        }
        _ => {}
    }
}

/// The CLI's `--json` speaks snake_case, whatever the core or the JS side call things.
#[test]
fn every_json_output_has_snake_case_keys() {
    let model = "fixtures/sample/tiny-llama-Q8_0.gguf";
    let other = "fixtures/sample/tiny-llama-Q4_K_M.gguf";
    let tensor = "blk.0.attn_q.weight";
    let cases: &[&[&str]] = &[
        &["inspect", model, "--json"],
        &["inspect", "fixtures/diff/arrays-a.safetensors", "--json"],
        &["stats", model, tensor, "--json"],
        &["diff", model, other, "--json"],
        &["diff", model, other, "--values", "--json"],
        &["hash", model, "--all", "--json"],
        &["lint", model, "--json"],
        &[
            "quant-error",
            model,
            tensor,
            "--types",
            "Q4_0,Q8_0",
            "--json",
        ],
        &["memory", model, "--json"],
        &[
            "memory",
            "fixtures/plan/gemma3.gguf",
            "--gpu-mem",
            "1G",
            "--json",
        ],
        &["tokenize", model, "--text", "Hello world", "--json"],
    ];
    for args in cases {
        let output = common::run_in_root(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        // diff exits 1 when the files differ: still a report.
        assert!(
            matches!(output.status.code(), Some(0 | 1)) && stderr.is_empty(),
            "{args:?}: {stderr}"
        );
        let doc: serde_json::Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: not JSON: {e}"));
        let mut found = Vec::new();
        not_snake_case(&doc, "", &mut found);
        assert!(found.is_empty(), "{args:?}: keys not snake_case: {found:?}");
        assert!(
            doc.as_object().is_some_and(|m| !m.is_empty()),
            "{args:?}: {doc}"
        );
    }
}
