//! The `gguf-lens` binary as users run it: exit codes, the one-line `error:` message, JSON shape,
//! and `dequant --rows`.
// Spawns the gguf-lens binary, which WASI cannot do.
#![cfg(not(target_os = "wasi"))]

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

use common::{valid_file, Builder};

fn bin() -> Command {
    common::gguf_lens_command()
}

fn write_temp(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

/// Asserts exit 1 with exactly one stderr line, `error: ... at byte N`.
fn assert_clean_error(output: &Output, expect: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "stderr: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(stderr.contains(expect), "expected {expect:?} in {stderr}");
    assert!(output.stdout.is_empty());
}

#[test]
fn malformed_files_exit_1_with_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut bad_magic = valid_file();
    bad_magic[0] = b'X';
    let mut huge_count = Builder::new(3);
    huge_count.header(1 << 62, 0);
    let mut removed_type = Builder::new(3);
    removed_type
        .header(1, 0)
        .tensor("w", &[32], 5, 0)
        .data(32, 32);
    let valid = valid_file();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty", vec![], "at byte 0"),
        ("bad_magic", bad_magic, "not a GGUF file"),
        ("truncated", valid[..50].to_vec(), "at byte"),
        ("huge_count", huge_count.build(), "at byte 8"),
        ("removed_type", removed_type.build(), "Q4_3"),
        (
            "no_data",
            valid[..valid.len() - 1].to_vec(),
            "extends past end of file",
        ),
    ];
    for (name, bytes, expect) in cases {
        let path = write_temp(&dir, name, &bytes);
        for json in [false, true] {
            let mut args = vec!["inspect", path.to_str().unwrap()];
            if json {
                args.push("--json");
            }
            assert_clean_error(&run(&args), expect);
        }
    }
}

#[test]
fn missing_file_is_an_error_not_a_panic() {
    let output = run(&["inspect", "/nonexistent/model.gguf"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("error: /nonexistent/model.gguf: read failed"),
        "{stderr}"
    );
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &[][..],
        &["frobnicate"],
        &["inspect"],
        &["inspect", "a", "--yaml"],
        &["dequant", "f"],
    ] {
        let output = run(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn json_has_the_documented_shape() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_temp(&dir, "ok.gguf", &valid_file());
    let output = run(&["inspect", path.to_str().unwrap(), "--json"]);
    assert!(output.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(doc["version"], 3);
    assert_eq!(doc["endian"], "little");
    assert_eq!(doc["alignment"], 32);
    assert_eq!(doc["data_offset"], 224);
    assert_eq!(doc["file_size"], valid_file().len());
    assert_eq!(doc["metadata"][0]["key"], "general.alignment");
    assert_eq!(doc["metadata"][0]["type"], "uint32");
    assert_eq!(doc["metadata"][1]["item_type"], "string");
    assert_eq!(doc["metadata"][1]["len"], 3);
    assert_eq!(
        doc["metadata"][1]["value"],
        serde_json::json!(["a", "bc", ""])
    );
    let y = &doc["tensors"][1];
    assert_eq!(y["name"], "y");
    assert_eq!(y["type"], "F32");
    assert_eq!(y["type_id"], 0);
    // Written with ne = [4, 2] (4 per row, 2 rows): the shape is outermost first, ne as stored.
    assert_eq!(y["shape"], serde_json::json!([2, 4]));
    assert_eq!(y["ne"], serde_json::json!([4, 2]));
    assert_eq!(y["offset"], 32);
    assert_eq!(y["n_elements"], 8);
    assert_eq!(y["n_bytes"], 32);
}

#[test]
fn readable_inspect_names_tensors_and_mix() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_temp(&dir, "ok.gguf", &valid_file());
    let output = run(&["inspect", path.to_str().unwrap()]);
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("GGUF v3"), "{text}");
    assert!(text.contains("tokens"), "{text}");
    assert!(text.contains("quant mix"), "{text}");
}

#[test]
fn dequant_rows_writes_exactly_those_rows() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = valid_file();
    // Tensor y (F32, 4 x 2) holds 0..8 as floats.
    let y_start = 224 + 32;
    for i in 0..8u32 {
        let at = y_start + 4 * i as usize;
        bytes[at..at + 4].copy_from_slice(&(i as f32).to_le_bytes());
    }
    let path = write_temp(&dir, "ok.gguf", &bytes);
    let out = dir.path().join("rows.f32");
    let args = [
        "dequant",
        path.to_str().unwrap(),
        "y",
        "-o",
        out.to_str().unwrap(),
    ];
    let output = bin().args(args).args(["--rows", "1:2"]).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let values: Vec<f32> = std::fs::read(&out)
        .unwrap()
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(values, [4.0, 5.0, 6.0, 7.0]);

    let output = bin().args(args).output().unwrap();
    assert!(output.status.success());
    assert_eq!(std::fs::read(&out).unwrap().len(), 32);

    assert_clean_error(
        &bin().args(args).args(["--rows", "1:3"]).output().unwrap(),
        "rows 1..3",
    );
    assert_clean_error(
        &run(&[
            "dequant",
            path.to_str().unwrap(),
            "zz",
            "-o",
            out.to_str().unwrap(),
        ]),
        "no tensor named",
    );
    let output = bin().args(args).args(["--rows", "x"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn unavailable_kernel_is_a_clean_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_temp(&dir, "ok.gguf", &valid_file());
    let out = dir.path().join("o.f32");
    let output = bin()
        .env("GGUF_LENS_KERNEL", "no-such-isa")
        .args([
            "dequant",
            path.to_str().unwrap(),
            "y",
            "-o",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no-such-isa"));
}

/// The whole path a user takes: the CLI parses each oracle fixture, finds the tensor, reads only
/// the requested rows and dequantizes them; the output equals ggml's for those rows.
#[test]
fn dequant_of_every_fixture_type_matches_ggml_rows() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/dequant");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("manifest.json")).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.f32");
    let mut checked = std::collections::BTreeSet::new();
    for entry in manifest.as_array().unwrap() {
        let shape: Vec<u64> = entry["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap())
            .collect();
        let (row_len, n_rows) = (shape[0] as usize, shape.iter().skip(1).product::<u64>());
        // The last row only, when there are several: proves the row offsets are right.
        let rows = if n_rows > 1 { n_rows - 1..n_rows } else { 0..1 };
        let gguf = root.join(entry["file"].as_str().unwrap());
        let output = bin()
            .args([
                "dequant",
                gguf.to_str().unwrap(),
                entry["tensor"].as_str().unwrap(),
            ])
            .args([
                "-o",
                out.to_str().unwrap(),
                "--rows",
                &format!("{}:{}", rows.start, rows.end),
            ])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{entry}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let expected = std::fs::read(root.join(entry["expected"].as_str().unwrap())).unwrap();
        let start = rows.start as usize * row_len * 4;
        let want = &expected[start..start + row_len * 4];
        assert_eq!(
            std::fs::read(&out).unwrap(),
            want,
            "{} {}",
            entry["type"],
            entry["tensor"]
        );
        checked.insert(entry["type"].as_str().unwrap().to_string());
    }
    assert_eq!(checked.len(), 35, "every live type: {checked:?}");
}

/// Every subcommand teaches: `--help` exits 0 on stdout with a usage line, an example and the
/// documented exit codes; the subcommands are listed by the top-level help.
#[test]
fn every_subcommand_has_help_with_exit_codes() {
    let top = run(&["--help"]);
    assert!(top.status.success());
    let top = String::from_utf8(top.stdout).unwrap();
    let commands: Vec<&str> = top
        .lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .collect();
    for expected in ["inspect", "dequant", "stats", "diff"] {
        assert!(commands.contains(&expected), "{expected} missing in {top}");
    }
    for command in commands {
        let output = run(&[command, "--help"]);
        assert!(output.status.success(), "{command}");
        let text = String::from_utf8(output.stdout).unwrap();
        assert!(
            text.contains(&format!("Usage: gguf-lens {command}")),
            "{text}"
        );
        assert!(text.contains("Exit codes:"), "{command}: {text}");
        assert!(
            text.contains(&format!("gguf-lens {command} ")),
            "{command}: no example in {text}"
        );
    }
}
