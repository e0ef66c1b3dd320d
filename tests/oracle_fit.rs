//! `plan::fit` against llama.cpp's `llama-fit-params` (fixtures/make_fit_grid.py): synthetic
//! header-only models on loopback RPC devices as GPUs, a grid of budgets, GPU counts and
//! contexts; each case is fitted with the free memory and margins llama.cpp saw and must print
//! the same flags. The models named in `HELD_OUT` were not looked at while the fit was written.

mod common;

use common::plan_cases::load_model;
use gguf_lens::plan::{fit, FitOptions, Options};
use serde_json::{json, Value};

const MIB: u64 = 1024 * 1024;
const HELD_OUT: [&str; 1] = ["qwen3moe"];

/// The cases where our flags differ from llama-fit-params' today (model, GPU budgets in MiB,
/// context asked), kept apart so that every other case is held exactly: each is a context
/// chosen 1.5–4 % larger than llama.cpp's when it interpolates one (our compute estimate at the
/// contexts measured is not the buffer llama.cpp measures), and in two the split that follows
/// (`-ngl -1` where llama.cpp needs `-ts 9,8`). 77 of the 90 cases match, 26 of the held-out
/// model's 30. (The two-GPU cases where llama.cpp keeps
/// every layer on the first GPU — `-ot …=RPC0[…]`, no `-ts` — follow from its `uint32_t`
/// arithmetic in common/fit.cpp, which `plan::fit` mirrors; no constant is tuned to the grid.)
const KNOWN_MISSES: &[(&str, &[u64], Option<u64>)] = &[
    ("qwen3moe", &[8192], None),
    ("qwen3moe", &[2048, 8192], None),
    ("qwen3moe", &[6144, 2048], None),
    ("qwen3moe", &[6144, 4096], None),
    ("dense", &[4096], None),
    ("dense", &[2048, 2048], None),
    ("dense", &[2048, 4096], None),
    ("dense", &[6144, 2048], None),
    ("dense", &[6144, 4096], None),
    ("dense", &[12288, 4096], None),
    ("mixtral", &[12288], None),
    ("mixtral", &[6144, 8192], None),
    ("mixtral", &[12288, 2048], None),
];

fn known_miss(case: &Value) -> bool {
    let budgets: Vec<u64> = case["gpu_mib"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_u64().unwrap())
        .collect();
    KNOWN_MISSES
        .iter()
        .any(|(m, b, c)| case["model"] == *m && budgets == *b && case["ctx"].as_u64() == *c)
}

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
        if case["status"].as_i64() != Some(0) || known_miss(&case) {
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
    assert!(checked > 0, "no cases");
    assert!(
        wrong.is_empty(),
        "{} of {checked} differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// The known misses whose flags past `-c` differ too (the rest hold llama.cpp's `-ngl`, `-ts`
/// and `-ot` at our context: on two GPUs that needs llama.cpp's pipelined compute buffers).
const SPLIT_MISSES: &[(&str, &[u64], Option<u64>)] = &[
    ("dense", &[6144, 4096], None),
    ("dense", &[12288, 4096], None),
];

#[test]
fn known_misses_are_the_context_and_still_miss() {
    let past_ctx = |flags: &str| {
        flags
            .split_whitespace()
            .skip(2)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut n = 0;
    for case in cases() {
        if !known_miss(&case) {
            continue;
        }
        n += 1;
        let (got, want) = (ours(&case), case["flags"].as_str().unwrap().to_string());
        assert_ne!(got, want, "{case} now matches: take it off KNOWN_MISSES");
        let split_miss = SPLIT_MISSES.iter().any(|(m, b, c)| {
            case["model"] == *m
                && case["gpu_mib"] == serde_json::json!(b)
                && case["ctx"].as_u64() == *c
        });
        if !split_miss {
            assert_eq!(past_ctx(&got), past_ctx(&want), "{case}");
        }
    }
    assert_eq!(n, KNOWN_MISSES.len());
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
