//! The memory planner as `gguf-lens memory` and npm `planMemory` run it (`plan::Report::new`,
//! with and without a GPU budget, then its JSON and command line). The first byte picks the
//! header: even, `[options 16 bytes][GGUF header]` a fuzzed header (the corpus starts from
//! fixtures/plan); odd, a header built from structured input: one of the planner's
//! architectures, its hyper-parameter keys with values of any type (numbers, per-layer
//! arrays, booleans), tensor infos, and the options.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use gguf_lens::model::GgufModel;
use gguf_lens::plan::{Options, Report, CACHE_TYPES};
use gguf_lens::{parse, ParseStatus};
use gguf_lens_fuzz::{gguf, ArbValue, Meta, TensorSpec};
use libfuzzer_sys::fuzz_target;

const ARCHS: &[&str] = &[
    "llama",
    "qwen2",
    "qwen3",
    "gemma2",
    "gemma3",
    "gemma3n",
    "gemma4",
    "cohere2",
    "olmo2",
    "llama4",
    "exaone4",
    "deepseek2",
    "deepseek32",
    "mamba",
    "mamba2",
    "jamba",
    "granitehybrid",
    "nemotron_h",
    "falcon-h1",
    "qwen3next",
    "qwen35",
    "lfm2",
    "rwkv6",
    "rwkv7",
    "bert",
    "gpt-oss",
    "openelm",
    "afmoe",
    "smallthinker",
    "plamo3",
    "dream",
    "hy_v4",
    "glm-dsa",
    "unknown",
];

/// Hyper-parameter names after `<arch>.`.
const KEYS: &[&str] = &[
    "block_count",
    "context_length",
    "embedding_length",
    "feed_forward_length",
    "attention.head_count",
    "attention.head_count_kv",
    "attention.key_length",
    "attention.value_length",
    "attention.key_length_swa",
    "attention.value_length_swa",
    "attention.key_length_mla",
    "attention.value_length_mla",
    "attention.sliding_window",
    "attention.sliding_window_pattern",
    "attention.recurrent_layers",
    "full_attention_interval",
    "nextn_predict_layers",
    "ssm.conv_kernel",
    "ssm.inner_size",
    "ssm.state_size",
    "ssm.time_step_rank",
    "ssm.group_count",
    "wkv.head_size",
    "time_mix_extra_dim",
    "token_shift_count",
    "rescale_every_n_layers",
    "shortconv.l_cache",
    "vocab_size",
    "expert_count",
    "expert_used_count",
    "attention.layer_norm_rms_epsilon",
];

const TENSORS: &[&str] = &[
    "token_embd.weight",
    "output.weight",
    "output_norm.weight",
    "position_embd.weight",
    "token_types.weight",
    "token_embd_norm.weight",
    "attn_q.weight",
    "attn_k.weight",
    "attn_v.weight",
    "attn_qkv.weight",
    "ffn_up.weight",
    "ffn_down.weight",
    "ssm_in.weight",
];

#[derive(Debug, Arbitrary)]
struct Opts {
    ctx: Option<u64>,
    parallel: u8,
    wide_parallel: Option<u32>,
    type_k: u8,
    type_v: u8,
    flash_attn: bool,
    ngl: Option<u8>,
    gpu_mem: Option<u64>,
}

impl Opts {
    fn options(&self) -> (Options, bool, Option<u64>) {
        let o = Options {
            ctx: self.ctx,
            parallel: self.wide_parallel.unwrap_or(u32::from(self.parallel)),
            type_k: CACHE_TYPES[usize::from(self.type_k) % CACHE_TYPES.len()],
            type_v: CACHE_TYPES[usize::from(self.type_v) % CACHE_TYPES.len()],
            flash_attn: self.flash_attn,
            ngl: self.ngl.map_or(0, u32::from),
            ..Options::default()
        };
        (o, self.ngl.is_none(), self.gpu_mem)
    }
}

#[derive(Debug, Arbitrary)]
struct Tensor {
    name: u8,
    /// Below 255: `blk.<layer>.<name>`.
    layer: u8,
    dims: Vec<u32>,
    ty: u8,
}

#[derive(Debug, Arbitrary)]
struct Header {
    arch: u8,
    keys: Vec<(u8, ArbValue)>,
    tensors: Vec<Tensor>,
    opts: Opts,
}

fn run(model: &GgufModel, opts: &Opts) {
    let (options, pick_ngl, gpu_mem) = opts.options();
    for budget in [None, gpu_mem] {
        if let Ok(report) = Report::new(model, options.clone(), pick_ngl, budget) {
            let command = report.plan.command("m.gguf");
            let _ = serde_json::to_string(&report.document(&command));
            let _ = report.plan.per_device().total();
            let _ = report.plan.total_bytes();
        }
    }
}

fn structured(u: &mut Unstructured<'_>) -> Option<(GgufModel, Opts)> {
    let h = Header::arbitrary(u).ok()?;
    let arch = ARCHS[usize::from(h.arch) % ARCHS.len()];
    let mut kvs = vec![(
        "general.architecture".to_string(),
        Meta::Str(arch.as_bytes().to_vec()),
    )];
    for (k, v) in &h.keys {
        let key = format!("{arch}.{}", KEYS[usize::from(*k) % KEYS.len()]);
        kvs.retain(|(name, _)| *name != key);
        kvs.push((key, v.meta()));
    }
    let mut tensors: Vec<TensorSpec> = Vec::new();
    for t in h.tensors.iter().take(64) {
        let base = TENSORS[usize::from(t.name) % TENSORS.len()];
        let per_layer = ["attn", "ffn", "ssm"].iter().any(|p| base.starts_with(p));
        let name = if per_layer && t.layer != 255 {
            format!("blk.{}.{base}", t.layer)
        } else {
            base.to_string()
        };
        if tensors.iter().any(|x| x.name == name) {
            continue;
        }
        let ty = gguf_lens::GgmlType::ALL[usize::from(t.ty) % gguf_lens::GgmlType::ALL.len()];
        tensors.push(TensorSpec {
            name,
            dims: t.dims.iter().take(4).map(|&d| u64::from(d)).collect(),
            type_id: ty.id(),
        });
    }
    let bytes = gguf(&kvs, &tensors, false);
    let ParseStatus::Complete(file) = parse(&bytes, None).ok()? else {
        return None;
    };
    Some((GgufModel::single(file), h.opts))
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        if rest.len() < 16 {
            return;
        }
        let (head, bytes) = rest.split_at(16);
        let Ok(opts) = Opts::arbitrary(&mut Unstructured::new(head)) else {
            return;
        };
        if let Ok(ParseStatus::Complete(file)) = parse(bytes, None) {
            run(&GgufModel::single(file), &opts);
        }
    } else if let Some((model, opts)) = structured(&mut Unstructured::new(rest)) {
        run(&model, &opts);
    }
});
