//! `gguf-lens stats` on every type's fixtures/dequant tensors (random blocks in rows of an odd
//! number of blocks; blocks with f16 edge, zero, subnormal, infinite and NaN scales) against
//! fixtures/stats/expected.json: numpy's statistics of ggml's own `to_float` output
//! (fixtures/make_stats_types.py). Each case runs with the best kernel, with
//! `GGUF_LENS_KERNEL=scalar` (every vector loop off, the per-type shortcuts too) and on several
//! threads in small chunks: all match numpy, and each other.
// Spawns the gguf-lens binary, which WASI cannot do.
#![cfg(not(target_os = "wasi"))]

mod common;
#[path = "common/stats_case.rs"]
mod stats_case;

use serde_json::Value as Json;

use common::{gguf_lens_command, root};

fn stats(case: &Json, kernel: Option<&str>, extra: &[&str]) -> Json {
    let mut command = gguf_lens_command();
    command.current_dir(root()).args([
        "stats",
        case["file"].as_str().unwrap(),
        case["tensor"].as_str().unwrap(),
        "--json",
    ]);
    command.args(
        case["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap()),
    );
    command.args(extra);
    if let Some(k) = kernel {
        command.env("GGUF_LENS_KERNEL", k);
    }
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{case}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `a` and `b` equal but for mean and std, which may differ by rounding (the scalar kernel
/// takes no per-type shortcut).
fn same(a: &Json, b: &Json, what: &str) {
    let strip = |j: &Json| {
        let mut j = j.clone();
        let o = j.as_object_mut().unwrap();
        o.remove("mean");
        o.remove("std");
        j
    };
    assert_eq!(strip(a), strip(b), "{what}");
    let scale = a["mean"]
        .as_f64()
        .unwrap_or(0.0)
        .abs()
        .max(a["std"].as_f64().unwrap_or(0.0));
    stats_case::assert_close(&a["mean"], &b["mean"], 1e-12, scale, what);
    stats_case::assert_close(&a["std"], &b["std"], 1e-12, scale, what);
}

#[test]
fn every_type_matches_numpy_on_every_kernel_and_thread_count() {
    let text = std::fs::read(root().join("fixtures/stats/expected.json")).unwrap();
    let doc: Json = serde_json::from_slice(&text).unwrap();
    let cases = doc["stats"].as_array().unwrap();
    let types: std::collections::BTreeSet<&str> =
        cases.iter().map(|c| c["type"].as_str().unwrap()).collect();
    assert!(types.len() >= 30, "{types:?}");
    assert!(cases.iter().any(|c| c["nan"].as_u64() > Some(0)));
    assert!(cases.iter().any(|c| c["pos_inf"].as_u64() > Some(0)));
    for case in cases {
        let what = format!("{} {} {}", case["file"], case["tensor"], case["args"]);
        let best = stats(case, None, &[]);
        stats_case::check(case, &best);
        let scalar = stats(case, Some("scalar"), &[]);
        stats_case::check(case, &scalar);
        same(&best, &scalar, &what);
        let split = stats(case, None, &["--threads", "3", "--chunk-elements", "100"]);
        assert_eq!(split, best, "{what}: 3 threads, small chunks");
    }
}
