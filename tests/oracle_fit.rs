//! `plan::fit` against llama.cpp's `llama-fit-params` (fixtures/make_fit_grid.py): synthetic
//! header-only models on loopback RPC devices as GPUs, a grid of budgets, GPU counts and
//! contexts; each case is fitted with the free memory and margins llama.cpp saw and must print
//! the same flags. The models named in `HELD_OUT` were not looked at while the fit was written.
//! Every case is held (90 of 90 since the compute buffers are derived from the graph,
//! src/plan/graph.rs; the context llama.cpp interpolates moves with a few MiB of them).

mod common;

use common::plan_cases::load_model;
use gguf_lens::plan::{fit, FitOptions, Options};
use serde_json::{json, Value};

const MIB: u64 = 1024 * 1024;
const HELD_OUT: [&str; 1] = ["qwen3moe"];

fn cases() -> Vec<Value> {
    let text = std::fs::read_to_string("fixtures/fit/grid.json").unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["cases"].as_array().unwrap().clone()
}

fn ours(case: &Value) -> String {
    let name = case["model"].as_str().unwrap();
    let model = load_model(&json!({
        "file": format!("fixtures/fit/{name}.gguf"),
        "file_size": case["file_size"],
    }));
    let margins: Vec<u64> = case["margin_mib"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_u64().unwrap() * MIB)
        .collect();
    let free = case["free_mib"].as_u64().unwrap() * MIB;
    let n_gpu = margins.len();
    let opts = FitOptions {
        gpu_free: vec![free; n_gpu],
        margins,
        ctx: case["ctx"].as_u64(),
        plan: Options::default(),
        // Each loopback server's one device, named as llama.cpp names RPC buffers.
        buffer_names: case["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| format!("RPC0[{}]", e.as_str().unwrap()))
            .collect(),
        ..FitOptions::default()
    };
    fit(&model, &opts).unwrap().flags()
}

fn check(held_out: bool) {
    let mut checked = 0;
    let mut wrong = Vec::new();
    for case in cases() {
        if case["status"].as_i64() != Some(0) {
            continue;
        }
        if HELD_OUT.contains(&case["model"].as_str().unwrap()) != held_out {
            continue;
        }
        checked += 1;
        let got = ours(&case);
        if got != case["flags"].as_str().unwrap() {
            wrong.push(format!("{case}\n  ours: {got}"));
        }
    }
    assert!(checked >= 30, "only {checked} cases");
    assert!(
        wrong.is_empty(),
        "{} of {checked} differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn fit_matches_llama_fit_params() {
    check(false);
}

#[test]
fn fit_matches_llama_fit_params_held_out() {
    check(true);
}

/// Prints every case, ours beside llama-fit-params' (`cargo test --release --test oracle_fit --
/// --ignored --nocapture print_grid`).
#[test]
#[ignore]
fn print_grid() {
    let (mut n, mut same) = (0, 0);
    for case in cases() {
        if case["status"].as_i64() != Some(0) {
            continue;
        }
        n += 1;
        let (got, want) = (ours(&case), case["flags"].as_str().unwrap().to_string());
        let mark = if got == want { "=" } else { "X" };
        same += usize::from(got == want);
        println!(
            "{mark} {} {} ctx={}\n    llama: {want}\n    ours:  {got}",
            case["model"], case["gpu_mib"], case["ctx"]
        );
    }
    println!("{same} of {n} cases exact");
}
