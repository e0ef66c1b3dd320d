//! The memory planner against llama.cpp: `fixtures/make_plan.py` loaded each synthetic model of
//! fixtures/plan/ in llama.cpp (llama-cpp-python 0.3.36) on a grid of contexts, parallel slots,
//! cache types and flash attention, and recorded what its log says it allocated. The KV cache
//! (per cache, K and V) and the recurrent state (R and S) must match to the log's precision (0.01 MiB), the mapped weights too, the
//! compute buffer exactly where it is derived from the graph (Llama, Mistral, Mixtral, Qwen2/3,
//! Qwen3-MoE, Gemma 2/3, OpenELM) and within 15% where it is estimated, and the combinations llama.cpp refused must
//! be refused.

mod common;

use common::plan_cases::{case_options, load_model, planned};
use gguf_lens::plan::plan;

const MIB: f64 = 1024.0 * 1024.0;

fn close(ours: u64, logged: f64) -> bool {
    // the log prints MiB with two decimals
    (ours as f64 / MIB - logged).abs() <= 0.0051
}

#[test]
fn plans_match_llama_cpp() {
    let text = std::fs::read_to_string("fixtures/plan/expected.json").unwrap();
    let expected: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut checked = 0;
    let mut derived = 0;
    let mut failures = Vec::new();
    for (name, m) in expected["models"].as_object().unwrap() {
        let model = load_model(m);
        for case in m["cases"].as_array().unwrap() {
            let o = case_options(case, 0);
            let what = format!("{name} {case}");
            let Some(p) = planned(plan(&model, &o), case, &what, &mut failures, &mut checked)
            else {
                continue;
            };
            let caches = case["caches"].as_array().unwrap();
            if caches.len() != p.kv.caches.len() {
                failures.push(format!(
                    "{what}: {} caches, ours {:?}",
                    caches.len(),
                    p.kv.caches
                ));
                continue;
            }
            for (c, ours) in caches.iter().zip(&p.kv.caches) {
                let ok = c["cells"].as_u64() == Some(ours.cells)
                    && c["layers"].as_u64() == Some(u64::from(ours.layers))
                    && c["streams"].as_u64() == Some(ours.streams)
                    && close(ours.k_bytes, c["k_mib"].as_f64().unwrap())
                    && close(ours.v_bytes, c["v_mib"].as_f64().unwrap())
                    && close(ours.k_bytes + ours.v_bytes, c["mib"].as_f64().unwrap());
                if !ok {
                    failures.push(format!("{what}: cache {c} vs ours {ours:?}"));
                }
            }
            match (&case["recurrent"], &p.kv.recurrent) {
                (serde_json::Value::Null, None) => {}
                // (the log's "layers" is n_layer, a hybrid's attention layers included)
                (r, Some(ours))
                    if r["cells"].as_u64() == Some(ours.cells)
                        && r["layers"].as_u64() == Some(u64::from(p.n_layer))
                        && close(ours.r_bytes, r["r_mib"].as_f64().unwrap())
                        && close(ours.s_bytes, r["s_mib"].as_f64().unwrap())
                        && close(ours.r_bytes + ours.s_bytes, r["mib"].as_f64().unwrap()) => {}
                (r, ours) => failures.push(format!("{what}: recurrent {r} vs ours {ours:?}")),
            }
            // one mapped buffer per file
            let weights: Vec<f64> = case["weights_mib"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w.as_f64().unwrap())
                .collect();
            let per_file = &p.weights.cpu_per_file;
            if weights.len() != per_file.len()
                || weights
                    .iter()
                    .zip(per_file)
                    .any(|(w, ours)| !close(*ours, *w))
                || p.weights.gpu != 0
            {
                failures.push(format!(
                    "{what}: weights {weights:?} MiB vs ours {:?}",
                    p.weights
                ));
            }
            let compute = case["compute_mib"][0].as_f64().unwrap();
            let ours = p.compute_bytes as f64 / MIB;
            if p.compute_derived {
                derived += 1;
                if !close(p.compute_bytes, compute) {
                    failures.push(format!(
                        "{what}: compute {compute} MiB vs ours {ours:.2} (derived)"
                    ));
                }
            } else if (ours - compute).abs() > 0.15 * compute {
                failures.push(format!("{what}: compute {compute} MiB vs ours {ours:.2}"));
            }
            checked += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked > 100);
    eprintln!("{derived} of {checked} compute buffers derived from the graph (exact)");
}
