//! `gguf-lens fit`: the flags line and the per-device plan, on the planner's fixture models.
//! (The flags against llama-fit-params: tests/oracle_fit.rs.)
// Runs the CLI binary, which the WASI test runner cannot spawn.
#![cfg(not(target_os = "wasi"))]

mod common;

use serde_json::Value;

fn run(cmd: &str, args: &[&str]) -> (i32, String, String) {
    let out = common::gguf_lens_command()
        .arg(cmd)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn json(cmd: &str, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let (code, out, err) = run(cmd, &all);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

const MODELS: [&str; 4] = [
    "fixtures/plan/llama.gguf",
    "fixtures/plan/deepseek2.gguf",
    "fixtures/plan/gemma3.gguf",
    "fixtures/plan/qwen3.gguf",
];

#[test]
fn a_large_gpu_takes_every_layer_at_the_training_context() {
    for m in MODELS {
        let mem = json("memory", &[m]);
        let n_layer = mem["n_layer"].as_u64().unwrap();
        let ctx = mem["n_ctx_train"].as_u64().unwrap();
        let f = json("fit", &[m, "--gpu", "100000"]);
        assert_eq!(f["ngl"].as_u64(), Some(n_layer + 1), "{m}");
        assert_eq!(f["n_ctx"].as_u64(), Some(ctx), "{m}");
        // Everything fits with llama.cpp's defaults: it keeps `-ngl -1`.
        assert_eq!(f["flags"], format!("-c {ctx} -ngl -1"), "{m}");
        assert_eq!(f["default_layers"], true, "{m}");
        assert_eq!(f["fits"], true, "{m}");
        // every weight is on the GPU but the token embedding (llama.cpp keeps the input layer)
        let gpu_w = f["gpus"][0]["weights_bytes"].as_u64().unwrap();
        let cpu_w = f["cpu"]["weights_bytes"].as_u64().unwrap();
        assert!(gpu_w > 0 && cpu_w > 0, "{m}");
    }
}

#[test]
fn the_last_line_is_the_json_flags_and_each_gpu_keeps_its_margin() {
    for m in MODELS {
        for (gpus, margin) in [
            ("1030", "1024"),
            ("1100,1040", "1024"),
            ("1040,1040,1200", "1024,1030,1100"),
        ] {
            let (code, out, err) = run("fit", &[m, "--gpu", gpus, "--margin", margin]);
            assert_eq!(code, 0, "{err}");
            let f = json("fit", &[m, "--gpu", gpus, "--margin", margin]);
            assert_eq!(out.lines().last(), f["flags"].as_str(), "{m} {gpus}");
            let free: Vec<u64> = gpus.split(',').map(|x| x.parse().unwrap()).collect();
            let margins: Vec<u64> = margin.split(',').map(|x| x.parse().unwrap()).collect();
            let layers: u64 = f["gpus"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| g["layers"].as_u64().unwrap())
                .sum();
            assert_eq!(Some(layers), f["ngl"].as_u64(), "{m} {gpus}");
            if f["fits"] == true {
                for (i, g) in f["gpus"].as_array().unwrap().iter().enumerate() {
                    let used = g["total_bytes"].as_u64().unwrap();
                    let m_i = margins[i.min(margins.len() - 1)];
                    assert!(
                        used <= (free[i] - m_i) << 20,
                        "{m} {gpus}: GPU{i} uses {used}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_set_context_is_kept() {
    let f = json(
        "fit",
        &["fixtures/plan/llama.gguf", "--gpu", "1030", "--ctx", "2048"],
    );
    assert_eq!(f["n_ctx"].as_u64(), Some(2048));
    assert!(f["flags"].as_str().unwrap().starts_with("-c 2048 "));
}

#[test]
fn margins_must_be_one_or_one_per_gpu() {
    let (code, _, err) = run(
        "fit",
        &[
            "fixtures/plan/llama.gguf",
            "--gpu",
            "8000,8000,8000",
            "--margin",
            "1,2",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--margin"), "{err}");
}

#[test]
fn memory_gpu_mem_still_works() {
    let v = json("memory", &["fixtures/plan/llama.gguf", "--gpu-mem", "24G"]);
    assert!(v["max_ctx"].as_u64().is_some());
}
