//! The compute buffers derived from the graph (src/plan/graph.rs) against llama.cpp's own, per
//! device (fixtures/make_compute_graph.py: `llama-fit-params -fitt 0` on loopback RPC GPUs with
//! the placement given as `-ngl`, `-ts` and `-ot`, its log's `compute buffer size`). Six models
//! (three of them with shapes the graph was not written from: head size 256 over 16 heads, 64
//! experts with 6 used, 3 of 4 used), contexts, `-ub`, flash attention on and off, 1 to 3 GPUs,
//! partial `-ngl`, `-ngl 0`, experts kept on the CPU. llama.cpp prints MiB with two decimals:
//! each buffer must round to the same value.

mod common;

use common::plan_cases::load_model;
use gguf_lens::plan::{measure, FitOptions, Fraction, GpuLayers, Options};
use serde_json::{json, Value};

fn cases() -> Vec<Value> {
    let text = std::fs::read_to_string("fixtures/compute/cases.json").unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["cases"].as_array().unwrap().clone()
}

/// Ours for `case`: each GPU's compute buffer, then the CPU's, in MiB.
fn ours(case: &Value) -> Vec<f64> {
    let name = case["model"].as_str().unwrap();
    let dir = case["dir"].as_str().unwrap();
    let model = load_model(&json!({
        "file": format!("fixtures/{dir}/{name}.gguf"),
        "file_size": case["file_size"],
    }));
    let layers: Vec<GpuLayers> = case["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| GpuLayers {
            n_layer: l[0].as_u64().unwrap() as u32,
            n_part: l[1].as_u64().unwrap() as u32,
            overflow: Fraction::Moe,
            overflow_to: None,
        })
        .collect();
    let opts = FitOptions {
        ctx: case["ctx"].as_u64(),
        plan: Options {
            flash_attn: case["fa"].as_bool().unwrap(),
            n_ubatch: case["ub"].as_u64().unwrap() as u32,
            ..Options::default()
        },
        ..FitOptions::default()
    };
    let (gpus, cpu) = measure(&model, &opts, &layers).unwrap();
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    gpus.iter()
        .map(|g| mib(g.compute))
        .chain([mib(cpu.compute)])
        .collect()
}

/// llama.cpp's for `case` in the same order (a GPU without a buffer: 0).
fn theirs(case: &Value) -> Vec<f64> {
    let c = &case["compute_mib"];
    c["gpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g.as_f64().unwrap_or(0.0))
        .chain([c["cpu"].as_f64().unwrap()])
        .collect()
}

fn same(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| format!("{x:.2}") == format!("{y:.2}"))
}

#[test]
fn compute_buffers_match_llama_cpp_per_device() {
    let mut wrong = Vec::new();
    let mut n = 0;
    for case in cases() {
        assert_eq!(case["status"].as_i64(), Some(0), "{case}");
        n += 1;
        let (got, want) = (ours(&case), theirs(&case));
        if !same(&got, &want) {
            wrong.push(format!(
                "{} {} {}: ours {got:.2?}, llama.cpp {want:.2?}",
                case["model"], case["args"], case["ctx"]
            ));
        }
    }
    assert!(n >= 78, "only {n} cases");
    assert!(
        wrong.is_empty(),
        "{} of {n} differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// Every case, ours beside llama.cpp's (`cargo test --release --test oracle_compute --
/// --ignored --nocapture print_cases`).
#[test]
#[ignore]
fn print_cases() {
    for case in cases() {
        let (got, want) = (ours(&case), theirs(&case));
        let mark = if same(&got, &want) { "=" } else { "X" };
        println!(
            "{mark} {:14} {:40} c={:6} ub={:4} fa={:5} llama {want:.2?} ours {got:.2?}",
            case["model"].as_str().unwrap(),
            case["args"]
                .as_str()
                .unwrap()
                .chars()
                .take(40)
                .collect::<String>(),
            case["ctx"],
            case["ub"],
            case["fa"]
        );
    }
}
