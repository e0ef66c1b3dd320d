//! The memory planner with layers offloaded (`-ngl`) against llama.cpp:
//! `fixtures/make_plan_offload.py` loaded planner models in llama.cpp (llama-cpp-python 0.3.36's,
//! built with its RPC backend: a GPU device to llama.cpp, served on 127.0.0.1) with `-ngl` 0, 1,
//! 2, all repeating layers and all plus the output, and recorded each buffer its log prints per
//! device. Per device, the weights (the CPU's mapped span per file, the GPU's tensors) and the
//! KV cache with the recurrent state must match to the log's precision (0.01 MiB per buffer);
//! each device's compute buffer within 15%, or within 0.6 MiB (the tiny models' buffers of a
//! few MiB, where which of a few `n_embd × n_ubatch` rows ggml's allocator reuses decides; the
//! real-width model is held to 15%).

mod common;

use common::plan_cases::{case_options, close_sum, load_model, logged, planned, MIB};
use gguf_lens::plan::plan;
use serde_json::Value;

#[test]
fn offload_matches_llama_cpp_per_device() {
    let text = std::fs::read_to_string("fixtures/plan/offload.json").unwrap();
    let expected: Value = serde_json::from_str(&text).unwrap();
    let mut checked = 0;
    let mut failures = Vec::new();
    // the largest differences seen (MiB; compute: relative), printed with --nocapture
    let (mut max_weights, mut max_kv, mut max_compute) = (0f64, 0f64, 0f64);
    for (name, m) in expected["models"].as_object().unwrap() {
        let model = load_model(m);
        for case in m["cases"].as_array().unwrap() {
            let o = case_options(case, case["ngl"].as_u64().unwrap() as u32);
            let what = format!(
                "{name} -ngl {} -c {} -np {} {}/{} fa {}",
                o.ngl, case["n_ctx"], o.parallel, case["type_k"], case["type_v"], o.flash_attn
            );
            let Some(p) = planned(plan(&model, &o), case, &what, &mut failures, &mut checked)
            else {
                continue;
            };
            // weights: one mapped CPU buffer per file, the GPU's tensors
            let cpu = logged(&case["weights_mib"], "cpu");
            let per_file = &p.weights.cpu_per_file;
            if cpu.len() != per_file.len()
                || cpu
                    .iter()
                    .zip(per_file)
                    .any(|(w, ours)| !close_sum(*ours, &[*w]))
            {
                failures.push(format!(
                    "{what}: CPU weights {cpu:?} MiB vs ours {per_file:?}"
                ));
            }
            for (w, ours) in cpu.iter().zip(per_file) {
                max_weights = max_weights.max((*ours as f64 / MIB - w).abs());
            }
            let gpu = logged(&case["weights_mib"], "gpu");
            max_weights =
                max_weights.max((p.weights.gpu as f64 / MIB - gpu.iter().sum::<f64>()).abs());
            if !close_sum(p.weights.gpu, &gpu) {
                failures.push(format!(
                    "{what}: GPU weights {gpu:?} MiB vs ours {}",
                    p.weights.gpu
                ));
            }
            // KV cache and recurrent state, per device (a buffer per cache and device)
            for (device, ours) in [("cpu", p.kv.cpu), ("gpu", p.kv.gpu)] {
                let mut buffers = logged(&case["kv_mib"], device);
                buffers.extend(logged(&case["rs_mib"], device));
                max_kv = max_kv.max((ours as f64 / MIB - buffers.iter().sum::<f64>()).abs());
                if !close_sum(ours, &buffers) {
                    failures.push(format!(
                        "{what}: {device} KV {buffers:?} MiB vs ours {:.3}",
                        ours as f64 / MIB
                    ));
                }
            }
            // compute buffers, each within 15%
            for (device, ours) in [("cpu", p.compute.cpu), ("gpu", p.compute.gpu)] {
                let theirs: f64 = logged(&case["compute_mib"], device).iter().sum();
                let ours = ours as f64 / MIB;
                if theirs > 0.0 && name == "wide" {
                    max_compute = max_compute.max((ours / theirs - 1.0).abs());
                }
                if p.compute_derived {
                    if (ours - theirs).abs() > 0.0051 {
                        failures.push(format!(
                            "{what}: {device} compute {theirs} MiB vs ours {ours:.2} (derived)"
                        ));
                    }
                } else if (ours - theirs).abs() > (0.15 * theirs).max(0.6) {
                    failures.push(format!(
                        "{what}: {device} compute {theirs} MiB vs ours {ours:.2} ({:+.1}%)",
                        (ours / theirs - 1.0) * 100.0
                    ));
                }
            }
            checked += 1;
        }
    }
    eprintln!(
        "{checked} cases; max |difference|: weights {max_weights:.4} MiB, KV {max_kv:.4} MiB, \
         compute of the real-width model {:.1}%",
        max_compute * 100.0
    );
    assert!(
        failures.is_empty(),
        "{} of {checked} cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked > 80);
}
