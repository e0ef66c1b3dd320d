//! `gguf-lens memory` on the planner's oracle fixtures: the JSON fields against llama.cpp's log
//! (fixtures/plan/expected.json), the command line, the GPU inverse, and refusals (exit 1).
// Runs the CLI binary, which the WASI test runner cannot spawn.
#![cfg(not(target_os = "wasi"))]

mod common;

fn memory(args: &[&str]) -> (i32, String, String) {
    // Through GGUF_LENS_TEST_RUNNER (qemu for the aarch64 build) when set.
    let out = common::gguf_lens_command()
        .arg("memory")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

const MIB: f64 = 1024.0 * 1024.0;

#[test]
fn json_matches_llama_cpp_for_gemma3() {
    // llama.cpp: n_ctx 4096, 2 slots, K q8_0, V q4_0, flash attention (fixtures/plan/expected.json)
    let (code, out, err) = memory(&[
        "fixtures/plan/gemma3.gguf",
        "--ctx",
        "4096",
        "--parallel",
        "2",
        "--cache-type-k",
        "q8_0",
        "--cache-type-v",
        "q4_0",
        "--flash-attn",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let caches = v["kv_cache"]["caches"].as_array().unwrap();
    assert_eq!(caches.len(), 2);
    assert_eq!(caches[0]["cells"], 2048);
    assert_eq!(caches[1]["cells"], 1024);
    assert_eq!(caches[1]["swa"], true);
    let kv = v["kv_cache_bytes"].as_u64().unwrap() as f64 / MIB;
    assert!((kv - (0.2 + 0.61)).abs() <= 0.011, "{kv}");
    let swa = v["kv_cache"]["swa_bytes"].as_u64().unwrap() as f64 / MIB;
    assert!((swa - 0.61).abs() <= 0.0051, "{swa}");
    assert!((v["weights_bytes"].as_u64().unwrap() as f64 / MIB - 0.11).abs() <= 0.0051);
    assert_eq!(
        v["total_bytes"].as_u64(),
        Some(
            v["weights_bytes"].as_u64().unwrap()
                + v["kv_cache_bytes"].as_u64().unwrap()
                + v["compute_bytes"].as_u64().unwrap()
        )
    );
    assert_eq!(v["max_ctx"], serde_json::Value::Null);
    assert_eq!(
        v["command"],
        "llama-server -m fixtures/plan/gemma3.gguf -c 4096 -ngl 0 --cache-type-k q8_0 \
         --cache-type-v q4_0 -fa on -np 2 --no-kv-unified"
    );
}

#[test]
fn default_context_is_the_training_one_and_text_output_works() {
    let (code, out, _) = memory(&["fixtures/plan/llama.gguf"]);
    assert_eq!(code, 0);
    assert!(out.contains("context 4096"), "{out}");
    assert!(
        out.contains("llama-server -m fixtures/plan/llama.gguf -c 4096"),
        "{out}"
    );
}

#[test]
fn gpu_budget_picks_layers_and_the_largest_context() {
    let (code, out, err) = memory(&[
        "fixtures/plan/llama.gguf",
        "--gpu-mem",
        "5MiB",
        "--ctx",
        "512",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    // 4 layers + output: weights, KV and the GPU's compute buffer (about 4 MiB) fit in 5 MiB
    // at 512 cells
    assert_eq!(v["ngl"], 5);
    assert!(v["gpu_bytes"].as_u64().unwrap() <= 5 << 20);
    assert!(v["compute"]["gpu_bytes"].as_u64().unwrap() > 0);
    let max = v["max_ctx"].as_u64().unwrap();
    assert!(max >= 512 && max % 256 == 0, "{max}");
    // the largest context fits, one more block of 256 does not
    let fits = |ctx: u64| {
        let (_, out, _) = memory(&[
            "fixtures/plan/llama.gguf",
            "--ngl",
            "5",
            "--ctx",
            &ctx.to_string(),
            "--json",
        ]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v["gpu_bytes"].as_u64().unwrap() <= 5 << 20
    };
    assert!(fits(max));
    assert!(!fits(max + 256));
}

#[test]
fn the_largest_context_is_not_capped_at_the_training_context() {
    // a budget roomy enough for several times the training context of fixtures/plan/llama.gguf
    let json = |args: &[&str]| -> serde_json::Value {
        let (code, out, err) = memory(args);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap()
    };
    let base = json(&["fixtures/plan/llama.gguf", "--json"]);
    let train = base["n_ctx_train"].as_u64().unwrap();
    let v = json(&["fixtures/plan/llama.gguf", "--gpu-mem", "64MiB", "--json"]);
    let max = v["max_ctx"].as_u64().unwrap();
    assert!(max > train, "max_ctx {max}, trained {train}");
    let gpu = |ctx: u64| {
        let v = json(&[
            "fixtures/plan/llama.gguf",
            "--ngl",
            &v["ngl"].to_string(),
            "--ctx",
            &ctx.to_string(),
            "--json",
        ]);
        v["gpu_bytes"].as_u64().unwrap()
    };
    assert!(gpu(max) <= 64 << 20);
    assert!(gpu(max + 256) > 64 << 20);
}

#[test]
fn a_tied_output_offloaded_is_a_gpu_copy_of_the_token_embedding() {
    let json = |ngl: &str| -> serde_json::Value {
        let (code, out, err) = memory(&["fixtures/plan/llama-tied.gguf", "--ngl", ngl, "--json"]);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap()
    };
    let (cpu, gpu) = (json("0"), json("1"));
    assert_eq!(cpu["tied_output_copy_bytes"], 0);
    let copy = gpu["tied_output_copy_bytes"].as_u64().unwrap();
    assert!(copy > 0);
    // the copy is on top of the CPU's weights: the total grows by exactly it plus the output norm
    let grown = gpu["weights_bytes"].as_u64().unwrap() - cpu["weights_bytes"].as_u64().unwrap();
    assert!(
        grown >= copy && grown - copy < 4096,
        "grown {grown}, copy {copy}"
    );
    let untied = {
        let (_, out, _) = memory(&["fixtures/plan/llama.gguf", "--ngl", "1", "--json"]);
        serde_json::from_str::<serde_json::Value>(&out).unwrap()
    };
    assert_eq!(untied["tied_output_copy_bytes"], 0);
}

#[test]
fn refusals_are_llama_cpps() {
    let (code, _, err) = memory(&["fixtures/plan/llama.gguf", "--cache-type-v", "q8_0"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("quantized V cache requires flash_attn to be enabled"),
        "{err}"
    );
    let (code, _, err) = memory(&["fixtures/plan/llama.gguf", "--cache-type-k", "q4_K"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, _) = memory(&["fixtures/plan/llama.gguf", "--gpu-mem", "lots"]);
    assert_eq!(code, 2);
    let (code, _, err) = memory(&["Cargo.toml"]);
    assert_eq!(code, 1, "{err}");
}

#[test]
fn a_split_model_is_planned_as_one_from_any_shard() {
    let (code, out, err) = memory(&["fixtures/plan/llama-split-00002-of-00003.gguf", "--json"]);
    assert_eq!(code, 0, "{err}");
    let split: serde_json::Value = serde_json::from_str(&out).unwrap();
    let (_, out, _) = memory(&["fixtures/plan/llama.gguf", "--json"]);
    let single: serde_json::Value = serde_json::from_str(&out).unwrap();
    // the same model in three files: the same KV cache; llama.cpp maps each file (three buffers,
    // 0.04 + 0.03 + 0.01 MiB in its log)
    assert_eq!(split["kv_cache"], single["kv_cache"]);
    assert_eq!(split["n_layer"], 4);
    let w = split["weights_bytes"].as_u64().unwrap() as f64 / MIB;
    assert!((0.065..0.085).contains(&w), "{w}");
}
