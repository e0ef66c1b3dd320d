//! `dequant` and `stats` on several threads and chunk sizes give the same bytes and numbers as
//! one thread, and those equal llama.cpp's ggml (fixtures/dequant, fixtures/generate.py) and
//! numpy (fixtures/diff/expected.json); outputs are never left half-written.
// Spawns the gguf-lens binary, which WASI cannot do.
#![cfg(not(target_os = "wasi"))]

mod common;

use std::path::Path;

use serde_json::Value as Json;

use common::root;

use common::run_in_root as run;

fn manifest() -> Vec<Json> {
    let text = std::fs::read(root().join("fixtures/dequant/manifest.json")).unwrap();
    serde_json::from_slice::<Json>(&text)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn dequant_is_ggml_for_any_thread_count_and_chunk_size() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for e in manifest() {
        let (file, tensor) = (e["file"].as_str().unwrap(), e["tensor"].as_str().unwrap());
        let rows = e["shape"].as_array().unwrap()[1..]
            .iter()
            .map(|d| d.as_u64().unwrap())
            .product::<u64>();
        if rows < 3 {
            continue;
        }
        checked += 1;
        let want = std::fs::read(
            root()
                .join("fixtures/dequant")
                .join(e["expected"].as_str().unwrap()),
        )
        .unwrap();
        let row_len = e["shape"][0].as_u64().unwrap();
        let input = format!("fixtures/dequant/{file}");
        let mut first: Option<Vec<u8>> = None;
        for (threads, chunk) in [
            ("1", row_len),
            ("2", row_len),
            ("3", 2 * row_len),
            ("4", 1 << 22),
        ] {
            let out = dir.path().join(format!("{file}.{tensor}.{threads}.f32"));
            let output = run(&[
                "dequant",
                &input,
                tensor,
                "-o",
                out.to_str().unwrap(),
                "--threads",
                threads,
                "--chunk-elements",
                &chunk.to_string(),
            ]);
            assert!(
                output.status.success(),
                "{}",
                String::from_utf8_lossy(&output.stderr)
            );
            let got = std::fs::read(&out).unwrap();
            assert_eq!(got.len(), want.len());
            // ggml's bits, but for the fresh NaN of an invalid operation on aarch64 (see
            // tests/oracle_dequant.rs); and the same bytes for every thread count and chunk.
            let same = got.chunks_exact(4).zip(want.chunks_exact(4)).all(|(g, w)| {
                let g = u32::from_le_bytes([g[0], g[1], g[2], g[3]]);
                let w = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
                g == w || common::is_arch_default_nan(g, w)
            });
            assert!(
                same,
                "{file} {tensor}: {threads} threads, chunks of {chunk}"
            );
            match &first {
                None => first = Some(got),
                Some(one) => assert!(*one == got, "{file} {tensor}: {threads} threads differ"),
            }
        }
    }
    assert!(checked >= 20, "{checked}");
    // No temporary file is left beside the outputs.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| n.ends_with(".f32") && !n.starts_with('.')),
        "{names:?}"
    );
}

/// `gguf-lens stats --json` of `tensor` on one thread, after checking that every (threads,
/// chunk elements) split in `splits` prints the same bytes.
fn stats_on_any_split(sample: &str, tensor: &str, splits: &[(&str, &str)]) -> Vec<u8> {
    let one = run(&["stats", sample, tensor, "--json", "--threads", "1"]);
    assert!(one.status.success());
    for &(threads, chunk) in splits {
        let many = run(&[
            "stats",
            sample,
            tensor,
            "--json",
            "--threads",
            threads,
            "--chunk-elements",
            chunk,
        ]);
        assert_eq!(
            String::from_utf8_lossy(&many.stdout),
            String::from_utf8_lossy(&one.stdout),
            "{tensor}: {threads} threads, chunks of {chunk}"
        );
    }
    one.stdout
}

#[test]
fn stats_are_the_same_bits_for_any_thread_count_and_chunk_size() {
    let sample = "fixtures/sample/tiny-llama-Q4_K_M.gguf";
    for tensor in ["token_embd.weight", "blk.1.ffn_down.weight"] {
        let splits = [("2", "256"), ("3", "65536"), ("5", "300"), ("1", "1")];
        stats_on_any_split(sample, tensor, &splits);
    }
}

#[test]
fn q8_0_stats_from_blocks_equal_the_scalar_reference_on_any_thread_count() {
    // Q8_0 takes its own path (counts per scale and code); the scalar kernel keeps the
    // per-value one, the reference: the same numbers but mean and std (to rounding).
    let sample = "fixtures/sample/tiny-llama-Q8_0.gguf";
    for tensor in ["token_embd.weight", "blk.1.ffn_down.weight"] {
        let one = stats_on_any_split(
            sample,
            tensor,
            &[("2", "256"), ("3", "65536"), ("5", "300")],
        );
        let scalar = common::gguf_lens_command()
            .current_dir(root())
            .env("GGUF_LENS_KERNEL", "scalar")
            .args(["stats", sample, tensor, "--json"])
            .output()
            .unwrap();
        let mut a: Json = serde_json::from_slice(&one).unwrap();
        let mut b: Json = serde_json::from_slice(&scalar.stdout).unwrap();
        for key in ["mean", "std"] {
            let (x, y) = (a[key].as_f64().unwrap(), b[key].as_f64().unwrap());
            assert!((x - y).abs() <= 1e-12 * y.abs().max(1e-3), "{key} {x} {y}");
            a[key] = Json::Null;
            b[key] = Json::Null;
        }
        assert_eq!(a, b, "{tensor}");
    }
}

#[test]
fn a_failed_dequant_leaves_the_old_output_and_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.f32");
    std::fs::write(&out, b"previous").unwrap();
    let sample = "fixtures/sample/tiny-llama-Q4_K_M.gguf";
    let failed = run(&[
        "dequant",
        sample,
        "token_embd.weight",
        "-o",
        out.to_str().unwrap(),
        "--rows",
        "0:100000",
    ]);
    assert_eq!(failed.status.code(), Some(1));
    assert_eq!(std::fs::read(&out).unwrap(), b"previous");
    let ok = run(&[
        "dequant",
        sample,
        "token_embd.weight",
        "-o",
        out.to_str().unwrap(),
        "--rows",
        "0:2",
    ]);
    assert!(ok.status.success());
    assert_eq!(std::fs::read(&out).unwrap().len(), 2 * 256 * 4);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    // An output that is not a regular file is written in place (never renamed over).
    if Path::new("/dev/null").exists() {
        let null = run(&["dequant", sample, "token_embd.weight", "-o", "/dev/null"]);
        assert!(
            null.status.success(),
            "{}",
            String::from_utf8_lossy(&null.stderr)
        );
    }
}
