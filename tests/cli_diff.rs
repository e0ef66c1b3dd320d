//! `gguf-lens diff` and `gguf-lens stats` against fixtures/diff/expected.json, which
//! fixtures/make_diff.py computes with gguf-py and numpy (never with gguf-lens); plus exit codes
//! and errors on bad input.
// Spawns the gguf-lens binary, which WASI cannot do.
#![cfg(not(target_os = "wasi"))]

mod common;
#[path = "common/stats_case.rs"]
mod stats_case;

use std::process::Output;

use serde_json::Value as Json;

use common::root;
use stats_case::assert_close;

fn expected() -> Json {
    let text = std::fs::read(root().join("fixtures/diff/expected.json")).unwrap();
    serde_json::from_slice(&text).unwrap()
}

use common::run_in_root as run;

/// Runs, asserts the exit code (showing stderr when it is not `code`) and parses stdout as JSON.
fn run_json(args: &[&str], code: i32) -> Json {
    let output = run(args);
    assert_eq!(
        output.status.code(),
        Some(code),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout_json(&output)
}

fn stdout_json(output: &Output) -> Json {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn keys(entries: &Json, field: &str) -> Vec<Json> {
    entries
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e[field].clone())
        .collect()
}

fn check_pair(pair: &Json) {
    let (a, doc) = check_pair_but_quant_mix(pair);
    // Quant mix of both.
    for (side, want) in [("a", &pair["quant_mix_a"]), ("b", &pair["quant_mix_b"])] {
        let got = doc[side]["quant_mix"].as_array().unwrap();
        let want = want.as_array().unwrap();
        assert_eq!(got.len(), want.len(), "{a}: quant mix {side}");
        for (g, w) in got.iter().zip(want) {
            for field in ["type", "tensors", "elements", "bytes"] {
                assert_eq!(g[field], w[field], "{a}: quant mix {side} {field}");
            }
            assert_close(&g["byte_share"], &w["byte_share"], 1e-12, 0.0, "byte_share");
        }
    }
}

/// Runs `diff --json --values` on the pair and checks all but the quant mix; returns A's path
/// and the document.
fn check_pair_but_quant_mix(pair: &Json) -> (&str, Json) {
    let (a, b) = (pair["a"].as_str().unwrap(), pair["b"].as_str().unwrap());
    let doc = run_json(&["diff", a, b, "--json", "--values"], 1);
    assert_eq!(doc["identical"], false);

    // Summary fields, in order.
    let fields = doc["summary"].as_array().unwrap();
    let want_fields = pair["summary"].as_array().unwrap();
    assert_eq!(fields.len(), want_fields.len());
    for (got, want) in fields.iter().zip(want_fields) {
        let what = format!("{a}: summary {}", want["field"]);
        assert_eq!(got["field"], want["field"], "{what}");
        assert_eq!(got["differs"], want["differs"], "{what}");
        if want["field"] == "bits_per_weight" {
            assert_close(&got["a"], &want["a"], 1e-12, 0.0, &what);
            assert_close(&got["b"], &want["b"], 1e-12, 0.0, &what);
        } else {
            assert_eq!((&got["a"], &got["b"]), (&want["a"], &want["b"]), "{what}");
        }
    }

    // Metadata.
    let (m, wm) = (&doc["metadata"], &pair["metadata"]);
    assert_eq!(
        keys(&m["only_a"], "key"),
        wm["only_a"].as_array().unwrap()[..]
    );
    assert_eq!(
        keys(&m["only_b"], "key"),
        wm["only_b"].as_array().unwrap()[..]
    );
    assert_eq!(m["same"], wm["same"]);
    let changed = m["changed"].as_array().unwrap();
    let want_changed = wm["changed"].as_array().unwrap();
    assert_eq!(keys(&m["changed"], "key"), keys(&wm["changed"], "key"));
    for (got, want) in changed.iter().zip(want_changed) {
        for (field, value) in want.as_object().unwrap() {
            assert_eq!(&got[field], value, "{a}: metadata {} {field}", want["key"]);
        }
    }

    check_tensors(&doc, pair, a);

    // Values of every matching tensor.
    assert!(!doc["values"].as_array().unwrap().is_empty());
    check_values(&doc, pair, a);
    (a, doc)
}

/// The tensor diff of a `diff --json` document against the expected pair.
fn check_tensors(doc: &Json, pair: &Json, what: &str) {
    for field in [
        "only_a",
        "only_b",
        "shape_changes",
        "type_changes",
        "transitions",
        "matching",
    ] {
        assert_eq!(
            doc["tensors"][field], pair["tensors"][field],
            "{what}: tensors {field}"
        );
    }
}

/// The value metrics of a `diff --json --values` document against the expected pair.
fn check_values(doc: &Json, pair: &Json, what: &str) {
    assert_eq!(keys(&doc["values"], "name"), keys(&pair["values"], "name"));
    let want_values = pair["values"].as_array().unwrap();
    for (got, want) in doc["values"].as_array().unwrap().iter().zip(want_values) {
        check_metrics(got, want, &format!("{what}: {}", want["name"]));
    }
}

fn check_metrics(got: &Json, want: &Json, what: &str) {
    for field in [
        "type_a",
        "type_b",
        "shape",
        "elements",
        "count",
        "nan_mismatch",
        "inf_mismatch",
    ] {
        assert_eq!(got[field], want[field], "{what} {field}");
    }
    for field in ["rmse", "max_abs", "mean_abs", "rel_rmse", "cosine"] {
        // Exact zeros (identical tensors) must come out exactly zero.
        assert_close(
            &got[field],
            &want[field],
            1e-9,
            0.0,
            &format!("{what} {field}"),
        );
    }
}

#[test]
fn diff_json_values_matches_gguf_py_and_numpy() {
    let expected = expected();
    let pairs = expected["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 2);
    for pair in pairs {
        check_pair(pair);
    }
}

#[test]
fn diff_tensor_option_compares_only_the_named_tensors() {
    let expected = expected();
    let pair = &expected["pairs"][0];
    let (a, b) = (pair["a"].as_str().unwrap(), pair["b"].as_str().unwrap());
    let names = ["blk.1.ffn_down.weight", "token_embd.weight"];
    let args = [
        "diff", a, b, "--json", "--tensor", names[0], "--tensor", names[1],
    ];
    let doc = run_json(&args, 1);
    let values = doc["values"].as_array().unwrap();
    assert_eq!(keys(&doc["values"], "name"), names.map(Json::from));
    for (got, name) in values.iter().zip(names) {
        let want = pair["values"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == name)
            .unwrap();
        check_metrics(got, want, name);
    }
}

#[test]
fn diff_exit_status_is_0_when_identical_1_when_different() {
    let a = "fixtures/sample/tiny-llama-Q4_K_M.gguf";
    let b = "fixtures/sample/tiny-llama-Q8_0.gguf";
    let doc = run_json(&["diff", a, a, "--values", "--json"], 0);
    assert_eq!(doc["identical"], true);
    for v in doc["values"].as_array().unwrap() {
        assert_eq!(v["rmse"], 0.0);
        assert_eq!(v["cosine"], 1.0);
    }
    let text = run(&["diff", a, a]);
    assert_eq!(text.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&text.stdout).contains("identical"));
    let differ = run(&["diff", a, b]);
    assert_eq!(differ.status.code(), Some(1));
    let text = String::from_utf8_lossy(&differ.stdout);
    assert!(text.contains("Q4_K -> Q8_0: 12 tensors"), "{text}");
    assert!(text.contains("files differ"), "{text}");
    assert!(differ.stderr.is_empty());
    // Same headers but values that differ: only --values can tell.
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(root().join(a)).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x55;
    let changed = dir.path().join("changed.gguf");
    std::fs::write(&changed, bytes).unwrap();
    let changed = changed.to_str().unwrap();
    assert_eq!(run(&["diff", a, changed]).status.code(), Some(0));
    let doc = run_json(&["diff", a, changed, "--values", "--json"], 1);
    let differing: Vec<&Json> = doc["values"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["identical"] == false)
        .map(|v| &v["name"])
        .collect();
    assert_eq!(differing.len(), 1, "{differing:?}");
}

fn check_stats(case: &Json) {
    let file = case["file"].as_str().unwrap();
    let tensor = case["tensor"].as_str().unwrap();
    let mut args = vec!["stats", file, tensor, "--json"];
    args.extend(
        case["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap()),
    );
    stats_case::check(case, &run_json(&args, 0));
}

#[test]
fn stats_json_matches_numpy() {
    let expected = expected();
    let cases = expected["stats"].as_array().unwrap();
    assert!(cases.iter().any(|c| c["nan"].as_u64() > Some(0)));
    assert!(cases.iter().any(|c| c["neg_inf"].as_u64() > Some(0)));
    for case in cases {
        check_stats(case);
    }
}

#[test]
fn stats_text_has_counts_and_bars() {
    let output = run(&[
        "stats",
        "fixtures/dequant/F32.gguf",
        "special",
        "--bins",
        "4",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("NaN 7  +Inf 1  -Inf 1"), "{text}");
    assert!(text.contains("histogram (4 bins"), "{text}");
    assert!(text.contains('█'), "{text}");
}

/// Exit 1 with exactly one stderr line starting `error:` that contains every `expect`.
fn assert_fails(args: &[&str], expect: &[&str]) {
    assert_exits(1, args, expect);
}

/// Bad usage: exit 2, the first stderr line `error:` with every `expect` (clap adds its usage).
fn assert_usage(args: &[&str], expect: &[&str]) {
    assert_exits(2, args, expect);
}

fn assert_exits(code: i32, args: &[&str], expect: &[&str]) {
    let output = run(args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(code), "{args:?}: {stderr}");
    let first = stderr.lines().next().unwrap_or("");
    assert!(first.starts_with("error: "), "{args:?}: {stderr}");
    if code == 1 {
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    }
    for e in expect {
        assert!(first.contains(e), "{args:?}: expected {e:?} in {first}");
    }
    assert!(output.stdout.is_empty(), "{args:?}");
}

#[test]
fn bad_input_exits_1_with_a_clear_error() {
    let a = "fixtures/sample/tiny-llama-Q4_K_M.gguf";
    let b = "fixtures/sample/tiny-llama-Q8_0.gguf";
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(root().join(a)).unwrap();
    let truncated = dir.path().join("truncated.gguf");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let truncated = truncated.to_str().unwrap();
    let header_cut = dir.path().join("header-cut.gguf");
    std::fs::write(&header_cut, &bytes[..100]).unwrap();
    let header_cut = header_cut.to_str().unwrap();

    // stats
    assert_fails(
        &["stats", a, "no.such"],
        &[a, "no tensor named \"no.such\""],
    );
    assert_fails(
        &["stats", a, "token_embd.weight", "--rows", "5:999"],
        &[
            a,
            "rows 5..999 are outside tensor token_embd.weight (256 rows)",
        ],
    );
    assert_fails(
        &["stats", a, "token_embd.weight", "--rows", "9:3"],
        &["rows 9..3"],
    );
    assert_usage(
        &["stats", a, "token_embd.weight", "--rows", "x"],
        &["--rows"],
    );
    assert_usage(
        &["stats", a, "token_embd.weight", "--bins", "0"],
        &["--bins"],
    );
    assert_usage(&["stats", a], &["required arguments were not provided"]);
    assert_fails(
        &["stats", truncated, "token_embd.weight"],
        &[truncated, "extends past end of file", "at byte"],
    );
    assert_fails(&["stats", header_cut, "x"], &[header_cut, "at byte"]);
    assert_fails(
        &["stats", "/nonexistent.gguf", "x"],
        &["/nonexistent.gguf", "read failed"],
    );

    // diff
    assert_fails(
        &["diff", a, truncated],
        &[truncated, "extends past end of file", "at byte"],
    );
    assert_fails(&["diff", header_cut, b], &[header_cut, "at byte"]);
    assert_fails(
        &["diff", a, b, "--tensor", "output.weight"],
        &[b, "no tensor named"],
    );
    assert_fails(
        &["diff", b, a, "--tensor", "output.weight"],
        &[b, "no tensor named"],
    );
    assert_fails(
        &[
            "diff",
            "fixtures/diff/arrays-a.gguf",
            "fixtures/diff/arrays-b.gguf",
            "--tensor",
            "s",
        ],
        &["tensor s has shape [4, 8] in A and [8, 4] in B"],
    );
    assert_usage(&["diff", a], &["required arguments were not provided"]);
    assert_usage(
        &["diff", a, b, "--frobnicate"],
        &["unexpected argument '--frobnicate'"],
    );
}

/// A write error on stdout is an error: exit 1 with its `error:` line (the "files differ" 1
/// has nothing on stderr).
#[test]
fn output_write_error_exits_1_with_an_error_line() {
    let Ok(full) = std::fs::File::create("/dev/full") else {
        return; // no /dev/full here
    };
    let a = "fixtures/sample/tiny-llama-Q4_K_M.gguf";
    for args in [
        &["diff", a, "fixtures/sample/tiny-llama-Q8_0.gguf"][..],
        &["stats", a, "token_embd.weight"],
    ] {
        let output = common::gguf_lens_command()
            .current_dir(root())
            .args(args)
            .stdout(full.try_clone().unwrap())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        assert!(String::from_utf8_lossy(&output.stderr).starts_with("error: standard output"));
    }
}

/// Whether a cross-format expected pair is identical: no tensor or metadata difference and every
/// compared value equal.
fn cross_identical(pair: &Json) -> bool {
    let t = &pair["tensors"];
    let empty = |v: &Json| v.as_array().is_some_and(Vec::is_empty);
    let tensors_same = ["only_a", "only_b", "shape_changes", "type_changes"]
        .iter()
        .all(|f| empty(&t[*f]));
    let m = &pair["metadata"];
    let metadata_same = m.is_null()
        || ["only_a", "only_b", "changed"]
            .iter()
            .all(|f| empty(&m[*f]));
    let values_same = pair["values"].as_array().unwrap().iter().all(|v| {
        v["max_abs"].as_f64().unwrap_or(0.0) == 0.0
            && v["nan_mismatch"] == 0
            && v["inf_mismatch"] == 0
    });
    tensors_same && metadata_same && values_same
}

#[test]
fn diff_across_formats_matches_safetensors_gguf_py_and_numpy() {
    let expected = expected();
    let pairs = expected["cross_pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 6);
    assert!(pairs.iter().any(cross_identical));
    assert!(!pairs.iter().all(cross_identical));
    assert!(pairs.iter().any(|p| p["skipped"] != Json::Array(vec![])));
    for pair in pairs {
        let (a, b) = (pair["a"].as_str().unwrap(), pair["b"].as_str().unwrap());
        let identical = cross_identical(pair);
        let mut args = vec!["diff", a, b, "--json", "--values"];
        args.extend(
            pair["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap()),
        );
        let doc = run_json(&args, if identical { 0 } else { 1 });
        assert_eq!(
            keys(&doc["skipped"], "name"),
            pair["skipped"].as_array().unwrap()[..],
            "{a} {b}"
        );
        assert_eq!(doc["identical"], identical, "{a} {b}");
        assert_eq!(doc["a"]["format"], pair["formats"][0], "{a}");
        assert_eq!(doc["b"]["format"], pair["formats"][1], "{b}");
        assert_eq!(doc["metadata"], pair["metadata"], "{a} {b}: metadata");
        assert_eq!(doc["summary"].as_array().map(Vec::len), Some(3));
        for (got, want) in doc["summary"]
            .as_array()
            .unwrap()
            .iter()
            .zip(pair["summary"].as_array().unwrap())
        {
            for field in ["field", "a", "b"] {
                assert_eq!(
                    got[field], want[field],
                    "{a} {b}: summary {}",
                    want["field"]
                );
            }
        }
        let what = format!("{a} {b}");
        check_tensors(&doc, pair, &what);
        check_values(&doc, pair, &what);
    }
}

/// Runs, asserts the exit code and that stdout contains every `want`.
fn assert_text(args: &[&str], code: i32, wants: &[&str]) {
    let output = run(args);
    assert_eq!(output.status.code(), Some(code), "{args:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    for want in wants {
        assert!(text.contains(want), "{want:?} in\n{text}");
    }
}

#[test]
fn diff_across_formats_text_says_what_is_compared() {
    let gguf = "fixtures/diff/arrays-b.gguf";
    let st = "fixtures/diff/arrays-a.safetensors";
    let sample = "fixtures/sample/tiny-llama-Q4_K_M.gguf";
    let hf = "fixtures/diff/sample-hf.safetensors";
    // (arguments, lines expected in the text); all exit 1 (the files differ).
    let cases: [(&[&str], &[&str]); 3] = [
        (
            &["diff", st, gguf, "--tensor", "w"],
            &[
                "A: fixtures/diff/arrays-a.safetensors (safetensors)",
                "B: fixtures/diff/arrays-b.gguf (gguf)",
                "metadata: not compared",
                "logical row-major shapes",
                "shape      s [4, 8] -> [8, 4]",
                "type       F16 -> F32: 1 tensors",
                "  w ",
                "files differ",
            ],
        ),
        (
            &["diff", st, "fixtures/diff/arrays-b.safetensors"],
            &[
                "metadata (__metadata__): 1 same, 1 changed, 1 only in A, 1 only in B",
                "changed    source: \"arrays-a\" -> \"arrays-b\"",
            ],
        ),
        // --llama-names: GGUF names, Q/K skipped with the reason.
        (
            &["diff", hf, sample, "--llama-names", "--values"],
            &[
                "only in A  model.layers.0.self_attn.rotary_emb.inv_freq F32 [4]",
                "  blk.0.attn_v.weight              F16/Q6_K",
                "skipped    blk.0.attn_k.weight: llama.cpp permutes its rows",
            ],
        ),
    ];
    for (args, wants) in cases {
        assert_text(args, 1, wants);
    }
    let doc = run_json(&["diff", hf, sample, "--llama-names", "--json"], 1);
    assert_eq!(doc["tensors"]["matching"], 3);
    assert_eq!(
        doc["tensors"]["type_changes"][0]["name"],
        "blk.0.attn_k.weight"
    );
    // A shard index against its single-file twin.
    let single = "fixtures/gptq/b4_g32_v1/model.safetensors";
    let sharded = "fixtures/gptq/sharded/model.safetensors.index.json";
    let doc = run_json(&["diff", single, sharded, "--values", "--json"], 0);
    assert_eq!(doc["tensors"]["matching"], 5);
    assert_eq!(doc["values"].as_array().unwrap().len(), 5);
}

#[test]
fn stats_on_safetensors_matches_numpy_and_torch() {
    let expected = expected();
    let cases = expected["st_stats"].as_array().unwrap();
    assert!(cases.iter().any(|c| c["type"] == "GPTQ-4bit"));
    assert!(cases.iter().any(|c| c["histogram"].is_null()));
    for case in cases {
        check_stats(case);
    }
    let doc = run_json(
        &["stats", "fixtures/diff/arrays-a.safetensors", "w", "--json"],
        0,
    );
    assert_eq!(doc["format"], "safetensors");
    let doc = run_json(&["stats", "fixtures/diff/arrays-a.gguf", "w", "--json"], 0);
    assert_eq!(doc["format"], "gguf");
}

#[test]
fn safetensors_errors_exit_1_with_one_line() {
    let st = "fixtures/diff/arrays-a.safetensors";
    let gptq = "fixtures/gptq/b4_g32_v1/model.safetensors";
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(root().join(st)).unwrap();
    let truncated = dir.path().join("truncated.safetensors");
    std::fs::write(&truncated, &bytes[..bytes.len() - 100]).unwrap();
    let truncated = truncated.to_str().unwrap();

    assert_fails(&["stats", st, "nope"], &[st, "no tensor named \"nope\""]);
    assert_fails(&["stats", truncated, "w"], &[truncated]);
    assert_fails(
        &[
            "stats",
            gptq,
            "model.layers.0.self_attn.q_proj",
            "--rows",
            "5:33",
        ],
        &[gptq, "rows 5..33 are outside", "(32 rows)"],
    );
    assert_fails(&["diff", st, truncated], &[truncated]);
    assert_fails(
        &["diff", truncated, "fixtures/diff/arrays-b.gguf"],
        &[truncated],
    );
    assert_fails(
        &["diff", st, "fixtures/diff/arrays-b.gguf", "--tensor", "s"],
        &[
            "tensor s has shape [4, 8] in A and [8, 4] in B",
            "row-major",
        ],
    );
    assert_fails(
        &[
            "diff",
            st,
            "fixtures/diff/arrays-b.gguf",
            "--tensor",
            "x_only_a",
        ],
        &[
            "fixtures/diff/arrays-b.gguf",
            "no tensor named \"x_only_a\"",
        ],
    );
    assert_fails(
        &[
            "diff",
            "fixtures/diff/arrays-b.gguf",
            st,
            "--tensor",
            "y_only_b",
        ],
        &[st, "no tensor named \"y_only_b\""],
    );
}

/// A dtype without an f32 conversion: `diff --values` lists it as skipped, `stats` refuses it.
#[test]
fn unconvertible_dtypes_are_skipped_by_diff_and_refused_by_stats() {
    let header = br#"{"c":{"dtype":"C64","shape":[2],"data_offsets":[0,16]},"x":{"dtype":"F32","shape":[2],"data_offsets":[16,24]}}"#;
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header);
    bytes.extend((0..24u8).map(|i| i * 7));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c64.safetensors");
    std::fs::write(&path, bytes).unwrap();
    let path = path.to_str().unwrap();
    let doc = run_json(&["diff", path, path, "--values", "--json"], 0);
    assert_eq!(keys(&doc["values"], "name"), ["x"]);
    assert_eq!(doc["skipped"][0]["name"], "c");
    assert_eq!(
        doc["skipped"][0]["reason"],
        "dtype C64 has no f32 conversion"
    );
    assert_fails(&["stats", path, "c"], &[path, "C64"]);
}

/// Split models open from any one shard's path (llama.cpp's `-NNNNN-of-MMMMM.gguf` names): the
/// whole diff of two split models (2 and 3 shards) equals what gguf-py's split reader and numpy
/// give (fixtures/make_diff_split.py), as for single files.
#[test]
fn diff_of_split_models_from_one_shard_matches_gguf_py() {
    let text = std::fs::read(root().join("fixtures/diff/expected-split.json")).unwrap();
    let expected: Json = serde_json::from_slice(&text).unwrap();
    let mut pair = expected["pair"].clone();
    // The expectation lists every shard; the CLI is given the last shard of A, the first of B.
    let a = pair["a"].as_array().unwrap().last().unwrap().clone();
    let b = pair["b"].as_array().unwrap()[0].clone();
    pair["a"] = a;
    pair["b"] = b;
    // (make_diff_split.py records no quant mix; the summary's parameters and bits per weight,
    // checked here, cover every shard's tensors.)
    check_pair_but_quant_mix(&pair);
}

/// `inspect` of a split model: every shard's tensors and the summary over all of them.
#[test]
fn inspect_of_a_split_model_lists_every_shard() {
    let text = std::fs::read(root().join("fixtures/diff/expected-split.json")).unwrap();
    let expected: Json = serde_json::from_slice(&text).unwrap();
    let pair = &expected["pair"];
    let summary = pair["summary"].as_array().unwrap();
    let field = |name: &str| summary.iter().find(|f| f["field"] == name).unwrap()["b"].clone();
    let doc = run_json(
        &[
            "inspect",
            "fixtures/diff/split-b-00002-of-00003.gguf",
            "--json",
        ],
        0,
    );
    assert_eq!(doc["shards"].as_array().unwrap().len(), 3);
    assert_eq!(
        Json::from(doc["tensors"].as_array().unwrap().len()),
        field("tensor_count")
    );
    assert_eq!(doc["file_size"], field("file_size"));
    let elements: u64 = doc["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["n_elements"].as_u64().unwrap())
        .sum();
    assert_eq!(Json::from(elements), field("parameters"));
    let shards: Vec<u64> = doc["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["shard"].as_u64().unwrap())
        .collect();
    assert_eq!(shards.first(), Some(&0));
    assert_eq!(shards.last(), Some(&2));
    // A missing shard is one error naming it.
    let dir = tempfile::tempdir().unwrap();
    let lone = dir.path().join("m-00001-of-00002.gguf");
    std::fs::copy(
        root().join("fixtures/diff/split-a-00001-of-00002.gguf"),
        &lone,
    )
    .unwrap();
    let output = run(&["inspect", lone.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_ne!(output.status.code(), Some(0));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("m-00002-of-00002.gguf"), "{stderr}");
}

/// Markdown cell text as the report escapes it (`_`, `|`, `*`, `` ` ``, `[`, `<`, `\`).
fn md(s: &str) -> String {
    s.chars()
        .flat_map(|c| match c {
            '\\' | '`' | '*' | '_' | '[' | '<' | '|' => vec!['\\', c],
            c => vec![c],
        })
        .collect()
}

#[test]
fn diff_formats_render_the_same_facts_as_gguf_py() {
    for pair in expected()["pairs"].as_array().unwrap() {
        let (a, b) = (pair["a"].as_str().unwrap(), pair["b"].as_str().unwrap());
        let json = run(&["diff", a, b, "--json"]);
        let format_json = run(&["diff", a, b, "--format", "json"]);
        assert_eq!(json.stdout, format_json.stdout, "--json is --format json");
        assert_eq!(format_json.status.code(), Some(1));
        let output = run(&["diff", a, b, "--format", "markdown"]);
        assert_eq!(output.status.code(), Some(1), "{a} {b}");
        let text = String::from_utf8(output.stdout).unwrap();
        assert!(
            text.starts_with("# gguf-lens diff: files differ\n"),
            "{text}"
        );
        let m = &pair["metadata"];
        let counts = format!(
            "## Metadata ({} same, {} changed, {} only in A, {} only in B)",
            m["same"],
            m["changed"].as_array().unwrap().len(),
            m["only_a"].as_array().unwrap().len(),
            m["only_b"].as_array().unwrap().len()
        );
        assert!(text.contains(&counts), "{counts} in\n{text}");
        for c in m["changed"].as_array().unwrap() {
            let row = format!("\n| {} | ", md(c["key"].as_str().unwrap()));
            assert!(text.contains(&row), "{row} in\n{text}");
        }
        for f in pair["summary"].as_array().unwrap() {
            let name = md(f["field"].as_str().unwrap());
            let flagged = text
                .lines()
                .find(|l| l.starts_with(&format!("| {name} |")))
                .unwrap_or_else(|| panic!("{name} row in\n{text}"))
                .ends_with("| ≠ |");
            assert_eq!(Json::from(flagged), f["differs"], "{name}");
        }
        let t = &pair["tensors"];
        let matching = format!(
            "## Tensors ({} matching by name and shape)",
            t["matching"]
                .as_array()
                .map_or(t["matching"].clone(), |v| Json::from(v.len()))
        );
        assert!(text.contains(&matching), "{matching} in\n{text}");
        for name in t["only_a"].as_array().unwrap() {
            let name = name.as_str().or(name["name"].as_str()).unwrap();
            assert!(text.contains(&format!("\n| {} | ", md(name))), "{name}");
        }
    }
    let bad = run(&["diff", "a", "b", "--format", "html"]);
    assert_eq!(bad.status.code(), Some(2));
}
