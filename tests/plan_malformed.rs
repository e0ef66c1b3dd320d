//! The planner on untrusted metadata: absurd or missing values give an error or a plan, never a
//! panic, a hang or a huge allocation.

mod common;

use common::Builder;
use gguf_lens::model::GgufModel;
use gguf_lens::plan::{max_ctx, max_ngl, plan, Options};
use gguf_lens::GgufFile;

/// A llama header with `kvs` (u32 values) and a token embedding of 64 x 32 F32.
fn model(kvs: &[(&str, u32)]) -> GgufModel {
    let mut b = Builder::new(3);
    b.header(1, kvs.len() as u64 + 1)
        .kv_str("general.architecture", b"llama");
    for (k, v) in kvs {
        b.kv_u32(k, *v);
    }
    b.tensor("token_embd.weight", &[64, 32], 0, 0);
    b.data(32, 64 * 32 * 4);
    GgufModel::single(GgufFile::from_bytes(&b.build()).unwrap())
}

const GOOD: [(&str, u32); 5] = [
    ("llama.block_count", 2),
    ("llama.context_length", 1024),
    ("llama.embedding_length", 64),
    ("llama.attention.head_count", 2),
    ("llama.attention.head_count_kv", 1),
];

fn with(key: &str, value: u32) -> Vec<(&str, u32)> {
    let mut kvs: Vec<(&str, u32)> = GOOD.iter().filter(|(k, _)| *k != key).copied().collect();
    kvs.push((key, value));
    kvs
}

fn exercise(m: &GgufModel) {
    for o in [
        Options::default(),
        Options {
            ctx: Some(u64::MAX),
            parallel: u32::MAX,
            ngl: u32::MAX,
            flash_attn: true,
            ..Options::default()
        },
        Options {
            ctx: Some(1),
            parallel: 256,
            ..Options::default()
        },
    ] {
        let _ = plan(m, &o);
        let _ = max_ctx(m, &o, u64::MAX, |p| p.total_bytes());
        let _ = max_ctx(m, &o, 0, |p| p.total_bytes());
        let _ = max_ngl(m, &o, u64::MAX);
    }
}

#[test]
fn a_good_header_plans() {
    let m = model(&GOOD);
    let p = plan(&m, &Options::default()).unwrap();
    // 2 layers x 1024 cells x (32 K + 32 V) f16
    assert_eq!(p.kv.total(), 2 * 1024 * 64 * 2);
    // an unlimited budget: llama.cpp's u32 n_ctx is the limit, not the training context
    assert_eq!(
        max_ctx(&m, &Options::default(), u64::MAX, |p| p.total_bytes()).unwrap(),
        Some(u64::from(u32::MAX) / 256 * 256)
    );
    exercise(&m);
}

#[test]
fn absurd_values_never_panic() {
    for key in GOOD.map(|(k, _)| k) {
        for value in [0, 1, 3, 31, 257, 513, 1 << 20, u32::MAX] {
            exercise(&model(&with(key, value)));
        }
    }
    for (key, value) in [
        ("llama.attention.key_length", u32::MAX),
        ("llama.attention.value_length", 0),
        ("llama.attention.sliding_window", u32::MAX),
    ] {
        let mut kvs = GOOD.to_vec();
        kvs.push((key, value));
        exercise(&model(&kvs));
    }
    // missing keys
    for skip in 0..GOOD.len() {
        let kvs: Vec<_> = GOOD
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != skip)
            .map(|(_, kv)| *kv)
            .collect();
        exercise(&model(&kvs));
    }
    assert!(plan(&model(&with("llama.block_count", 0)), &Options::default()).is_err());
    assert!(plan(&model(&with("llama.block_count", 513)), &Options::default()).is_err());
}

/// A header of architecture `arch` with the GOOD values under its prefix, plus `extra`.
fn model_of(arch: &str, extra: &[(&str, u32)]) -> GgufModel {
    let kvs: Vec<(String, u32)> = GOOD
        .iter()
        .map(|(k, v)| (k.replacen("llama", arch, 1), *v))
        .chain(extra.iter().map(|(k, v)| (format!("{arch}.{k}"), *v)))
        .collect();
    let mut b = Builder::new(3);
    b.header(1, kvs.len() as u64 + 1)
        .kv_str("general.architecture", arch.as_bytes());
    for (k, v) in &kvs {
        b.kv_u32(k, *v);
    }
    b.tensor("token_embd.weight", &[64, 32], 0, 0);
    b.data(32, 64 * 32 * 4);
    GgufModel::single(GgufFile::from_bytes(&b.build()).unwrap())
}

#[test]
fn architectures_llama_cpp_sizes_by_other_rules() {
    let o = Options::default();
    // encoders have no KV cache in llama.cpp
    assert_eq!(plan(&model_of("bert", &[]), &o).unwrap().kv.total(), 0);
    // gpt-oss: every other layer slides (pattern 2), window + ubatch cells
    let p = plan(
        &model_of("gpt-oss", &[("attention.sliding_window", 128)]),
        &o,
    )
    .unwrap();
    assert_eq!(p.kv.caches.len(), 2);
    assert_eq!((p.kv.caches[1].cells, p.kv.caches[1].layers), (768, 1));
    // not planned yet, rather than planned wrong
    for (arch, extra) in [
        ("llama4", vec![]),
        ("gemma3n", vec![]),
        ("cohere2moe", vec![("attention.sliding_window", 512)]),
        ("deepseek32", vec![]),
        ("arwkv7", vec![("wkv.head_size", 64)]),
        ("rwkv6qwen2", vec![("wkv.head_size", 64)]),
        ("nemotron_h_moe", vec![("ssm.state_size", 16)]),
        ("plamo2", vec![("ssm.state_size", 16)]),
        (
            "lfm2",
            vec![("shortconv.l_cache", 3), ("attention.sliding_window", 128)],
        ),
    ] {
        let err = plan(&model_of(arch, &extra), &o).unwrap_err();
        assert!(err.to_string().contains("not planned yet"), "{arch}: {err}");
    }
    // Jamba without its SSM sizes: one line naming the key
    let err = plan(&model_of("jamba", &[("ssm.state_size", 16)]), &o).unwrap_err();
    assert!(err.to_string().contains("no jamba.ssm."), "{err}");
    // Qwen3-Next's attention interval 0 is an error, not a division by zero
    let ssm = [
        ("ssm.conv_kernel", 4),
        ("ssm.inner_size", 64),
        ("ssm.state_size", 16),
        ("ssm.time_step_rank", 2),
        ("ssm.group_count", 1),
    ];
    let mut zero = ssm.to_vec();
    zero.push(("full_attention_interval", 0));
    let err = plan(&model_of("qwen3next", &zero), &o).unwrap_err();
    assert!(
        err.to_string().contains("full_attention_interval is 0"),
        "{err}"
    );
    let mut mtp = ssm.to_vec();
    mtp.push(("nextn_predict_layers", 1));
    let err = plan(&model_of("qwen3next", &mtp), &o).unwrap_err();
    assert!(err.to_string().contains("not planned yet"), "{err}");
    // llama4 with sliding_window 0 is plain attention
    assert!(plan(&model_of("llama4", &[("attention.sliding_window", 0)]), &o).is_ok());
}

/// `model_of` with u64 values (what a file may hold where u32 is usual).
fn model_u64(arch: &str, kvs: &[(String, u64)]) -> GgufModel {
    let mut b = Builder::new(3);
    b.header(1, kvs.len() as u64 + 1)
        .kv_str("general.architecture", arch.as_bytes());
    for (k, v) in kvs {
        b.string(k.as_bytes()).u32(10).u64(*v);
    }
    b.tensor("token_embd.weight", &[64, 32], 0, 0);
    b.data(32, 64 * 32 * 4);
    GgufModel::single(GgufFile::from_bytes(&b.build()).unwrap())
}

#[test]
fn huge_u64_hyper_parameters_never_panic_or_run_long() {
    let keys = [
        "block_count",
        "context_length",
        "embedding_length",
        "attention.head_count",
        "attention.head_count_kv",
        "attention.key_length",
        "attention.value_length",
        "attention.key_length_mla",
        "attention.value_length_mla",
        "attention.sliding_window",
        "feed_forward_length",
        "full_attention_interval",
        "ssm.conv_kernel",
        "ssm.inner_size",
        "ssm.state_size",
        "ssm.time_step_rank",
        "ssm.group_count",
        "wkv.head_size",
        "shortconv.l_cache",
        "rescale_every",
        "token_shift_count",
        "time_mix_extra_dim",
        "nextn_predict_layers",
    ];
    for arch in [
        "llama",
        "mamba",
        "rwkv6",
        "lfm2",
        "jamba",
        "qwen3next",
        "deepseek2",
        "gemma3",
    ] {
        for key in keys {
            for value in [u64::MAX, 1 << 63, 1 << 32, (1 << 32) + 1, 1 << 40] {
                let kvs: Vec<(String, u64)> = GOOD
                    .iter()
                    .map(|(k, v)| (k.replacen("llama", arch, 1), u64::from(*v)))
                    .filter(|(k, _)| *k != format!("{arch}.{key}"))
                    .chain([(format!("{arch}.{key}"), value)])
                    .collect();
                exercise(&model_u64(arch, &kvs));
            }
        }
    }
}
