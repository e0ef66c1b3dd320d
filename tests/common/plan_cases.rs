//! What the planner oracles (tests/oracle_plan.rs, tests/oracle_plan_offload.rs) share: a model
//! of the fixture, a case's options, and llama.cpp's refusals.

use gguf_lens::gguf::{parse, GgufFile, ParseStatus};
use gguf_lens::model::{split_paths, GgufModel};
use gguf_lens::plan::{cache_type, Options, Plan};
use serde_json::Value;

/// The fixture's model: every shard of a split model (as llama.cpp loads it from the first), or
/// a header whose data region is not committed (`file_size`: a sparse file in llama.cpp).
pub fn load_model(m: &Value) -> GgufModel {
    let file = m["file"].as_str().unwrap();
    if let Some(size) = m["file_size"].as_u64() {
        let bytes = std::fs::read(file).unwrap();
        return match parse(&bytes, Some(size)).unwrap() {
            ParseStatus::Complete(f) => GgufModel::single(f),
            _ => panic!("{file}: incomplete header"),
        };
    }
    let paths = split_paths(file)
        .unwrap()
        .unwrap_or_else(|| vec![file.to_string()]);
    let shards = paths
        .iter()
        .map(|p| GgufFile::from_bytes(&std::fs::read(p).unwrap()).unwrap())
        .collect();
    GgufModel::from_shards(shards).unwrap()
}

/// The options llama.cpp ran `case` with (`ngl` layers offloaded).
pub fn case_options(case: &Value, ngl: u32) -> Options {
    Options {
        ctx: Some(case["n_ctx"].as_u64().unwrap()),
        parallel: case["n_seq_max"].as_u64().unwrap() as u32,
        type_k: cache_type(case["type_k"].as_str().unwrap()).unwrap(),
        type_v: cache_type(case["type_v"].as_str().unwrap()).unwrap(),
        flash_attn: case["flash_attn"].as_bool().unwrap(),
        ngl,
        // (the fixtures without it ran llama-server's default)
        n_ubatch: case["n_ubatch"].as_u64().unwrap_or(512) as u32,
    }
}

/// The plan to check against `case`, or None when there is nothing more to check: llama.cpp
/// refused the case (then we must refuse too: counted as checked) or we failed to plan it
/// (a failure).
pub fn planned<E: std::fmt::Display>(
    result: Result<Plan, E>,
    case: &Value,
    what: &str,
    failures: &mut Vec<String>,
    checked: &mut usize,
) -> Option<Plan> {
    if case["refused"].as_bool() == Some(true) {
        if result.is_ok() {
            failures.push(format!("{what}: llama.cpp refused, we planned"));
        }
        *checked += 1;
        return None;
    }
    match result {
        Ok(p) => Some(p),
        Err(e) => {
            failures.push(format!("{what}: {e}"));
            None
        }
    }
}

pub const MIB: f64 = 1024.0 * 1024.0;

/// The MiB values llama.cpp's log printed for `device` (each rounded to 0.01).
pub fn logged(v: &Value, device: &str) -> Vec<f64> {
    v.get(device)
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|x| x.as_f64().unwrap()).collect())
        .unwrap_or_default()
}

/// `ours` bytes against the sum of `n` buffers each printed to 0.01 MiB.
pub fn close_sum(ours: u64, logged: &[f64]) -> bool {
    let slack = 0.0051 * logged.len().max(1) as f64;
    (ours as f64 / MIB - logged.iter().sum::<f64>()).abs() <= slack
}
