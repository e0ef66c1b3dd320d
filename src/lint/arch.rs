//! The tensors llama.cpp requires for common architectures, with the shapes it checks
//! (`src/models/<arch>.cpp`'s `load_arch_tensors`, ggml `ne` order, trailing 1s ignored).
//!
//! Hyper-parameters as llama.cpp derives them (`llama-model.cpp`, `LLAMA_LOAD_LOCALS`): n_embd
//! = `{arch}.embedding_length`; n_head, n_head_kv (default n_head) and n_ff from their keys, the
//! first layer's value when the key is a per-layer array; head dims = `attention.key_length` /
//! `value_length`, default n_embd / n_head; n_vocab = the token list's length. A dimension whose
//! inputs are missing is not checked. MoE files (`expert_count` > 0) skip the feed-forward.

use super::meta::block_of;
use super::{architecture, Finding, View};
use crate::gguf::{GgufFile, Value};

/// A dimension of an expected shape.
#[derive(Clone, Copy)]
enum D {
    Embd,
    Vocab,
    /// n_embd_head_k · n_head (the query width)
    Q,
    /// n_embd_head_k · n_head_kv
    KGqa,
    /// n_embd_head_v · n_head_kv
    VGqa,
    HeadK,
    Ff,
    /// 2 · n_ff (phi3's fused gate and up)
    Ff2,
    /// Q + KGqa + VGqa (a fused `attn_qkv`)
    Qkv,
    /// n_embd + 2 · VGqa (qwen2's and phi3's fused `attn_qkv`)
    QkvEmbd,
}

/// When a tensor must be present.
#[derive(Clone, Copy, PartialEq)]
enum Need {
    Required,
    /// Checked only when present (e.g. `output.weight` when it is not tied to `token_embd`).
    Optional,
    /// Required unless the layer has a fused `attn_qkv.weight` (`create_tensor_qkv`).
    UnlessQkv,
    /// Feed-forward: required unless the model is a mixture of experts.
    Dense,
}

struct Spec {
    /// Tensor name; `{}` is the block index.
    name: &'static str,
    ne: &'static [D],
    need: Need,
}

const fn s(name: &'static str, ne: &'static [D], need: Need) -> Spec {
    Spec { name, ne, need }
}

use Need::*;
use D::*;

const GLOBAL_TIED: &[Spec] = &[
    s("token_embd.weight", &[Embd, Vocab], Required),
    s("output_norm.weight", &[Embd], Required),
    s("output.weight", &[Embd, Vocab], Optional),
];
/// gemma and gemma2 always reuse `token_embd` for the output.
const GLOBAL_GEMMA: &[Spec] = &[
    s("token_embd.weight", &[Embd, Vocab], Required),
    s("output_norm.weight", &[Embd], Required),
];
const ATTN: &[Spec] = &[
    s("blk.{}.attn_norm.weight", &[Embd], Required),
    s("blk.{}.attn_qkv.weight", &[Embd, Qkv], Optional),
    s("blk.{}.attn_q.weight", &[Embd, Q], UnlessQkv),
    s("blk.{}.attn_k.weight", &[Embd, KGqa], UnlessQkv),
    s("blk.{}.attn_v.weight", &[Embd, VGqa], UnlessQkv),
    s("blk.{}.attn_output.weight", &[Q, Embd], Required),
];
/// qwen2 and phi3 size K and V by n_embd_v_gqa and Q/output by n_embd.
const ATTN_QWEN2: &[Spec] = &[
    s("blk.{}.attn_norm.weight", &[Embd], Required),
    s("blk.{}.attn_qkv.weight", &[Embd, QkvEmbd], Optional),
    s("blk.{}.attn_q.weight", &[Embd, Embd], UnlessQkv),
    s("blk.{}.attn_k.weight", &[Embd, VGqa], UnlessQkv),
    s("blk.{}.attn_v.weight", &[Embd, VGqa], UnlessQkv),
    s("blk.{}.attn_output.weight", &[Embd, Embd], Required),
];
/// phi3 creates Q/K/V as not required, but crashes without them and without `attn_qkv`
/// (llama.cpp through llama-cpp-python 0.3.36: fixtures/make_lint_arch.py): the same rule as
/// the others.
const ATTN_PHI3: &[Spec] = ATTN_QWEN2;
const QK_NORM: &[Spec] = &[
    s("blk.{}.attn_k_norm.weight", &[HeadK], Required),
    s("blk.{}.attn_q_norm.weight", &[HeadK], Required),
];
const POST_NORMS: &[Spec] = &[
    s("blk.{}.post_attention_norm.weight", &[Embd], Required),
    s("blk.{}.post_ffw_norm.weight", &[Embd], Required),
];
const FFN: &[Spec] = &[
    s("blk.{}.ffn_norm.weight", &[Embd], Required),
    s("blk.{}.ffn_gate.weight", &[Embd, Ff], Dense),
    s("blk.{}.ffn_down.weight", &[Ff, Embd], Dense),
    s("blk.{}.ffn_up.weight", &[Embd, Ff], Dense),
];
const FFN_PHI3: &[Spec] = &[
    s("blk.{}.ffn_norm.weight", &[Embd], Required),
    s("blk.{}.ffn_down.weight", &[Ff, Embd], Required),
    s("blk.{}.ffn_up.weight", &[Embd, Ff2], Required),
];

/// The spec groups of each architecture checked (`general.architecture`).
fn specs_of(arch: &str) -> Option<&'static [&'static [Spec]]> {
    Some(match arch {
        "llama" | "mistral3" => &[GLOBAL_TIED, ATTN, FFN],
        "qwen2" => &[GLOBAL_TIED, ATTN_QWEN2, FFN],
        "qwen3" => &[GLOBAL_TIED, ATTN, QK_NORM, FFN],
        "phi3" => &[GLOBAL_TIED, ATTN_PHI3, FFN_PHI3],
        "gemma" => &[GLOBAL_GEMMA, ATTN, FFN],
        "gemma2" => &[GLOBAL_GEMMA, ATTN, POST_NORMS, FFN],
        "gemma3" => &[GLOBAL_TIED, ATTN, QK_NORM, POST_NORMS, FFN],
        _ => return None,
    })
}

/// The hyper-parameters shapes are made of (None when not derivable from the file).
struct Hparams {
    embd: Option<u64>,
    vocab: Option<u64>,
    head: Option<u64>,
    head_kv: Option<u64>,
    head_k: Option<u64>,
    head_v: Option<u64>,
    ff: Option<u64>,
    moe: bool,
}

/// An integer, or the first element of a per-layer integer array.
fn first_u64(value: Value) -> Option<u64> {
    match value {
        Value::Array(a) => a.get(0).and_then(|v| v.as_u64()),
        other => other.as_u64(),
    }
}

impl Hparams {
    fn of(file: &GgufFile, arch: &str) -> Hparams {
        let get = |suffix: &str| file.get(&format!("{arch}.{suffix}")).and_then(first_u64);
        let embd = get("embedding_length");
        let head = get("attention.head_count");
        let per_head = embd.zip(head).and_then(|(e, h)| e.checked_div(h));
        Hparams {
            embd,
            // The token list's length; without one (tokenizer "none") llama.cpp makes
            // `{arch}.vocab_size` dummy tokens.
            vocab: file
                .get("tokenizer.ggml.tokens")
                .and_then(|v| v.as_array().map(|a| a.len() as u64))
                .or_else(|| get("vocab_size")),
            head,
            head_kv: get("attention.head_count_kv").or(head),
            head_k: get("attention.key_length").or(per_head),
            head_v: get("attention.value_length").or(per_head),
            ff: get("feed_forward_length"),
            moe: get("expert_count").is_some_and(|n| n > 0),
        }
    }

    /// How dimension `d` was derived, e.g. `n_head_kv 2 × head dim 64`.
    fn explain(&self, d: D) -> String {
        let v = |name: &str, v: Option<u64>| match v {
            Some(v) => format!("{name} {v}"),
            None => format!("{name} ?"),
        };
        match d {
            Embd => v("n_embd", self.embd),
            Vocab => v("n_vocab", self.vocab),
            Q => format!(
                "{} × {}",
                v("n_head", self.head),
                v("head dim", self.head_k)
            ),
            KGqa => format!(
                "{} × {}",
                v("n_head_kv", self.head_kv),
                v("head dim", self.head_k)
            ),
            VGqa => format!(
                "{} × {}",
                v("n_head_kv", self.head_kv),
                v("value dim", self.head_v)
            ),
            HeadK => v("head dim", self.head_k),
            Ff => v("n_ff", self.ff),
            Ff2 => format!("2 × {}", v("n_ff", self.ff)),
            Qkv => format!(
                "q {} + k {} + v {}",
                self.dim(Q).unwrap_or(0),
                self.dim(KGqa).unwrap_or(0),
                self.dim(VGqa).unwrap_or(0)
            ),
            QkvEmbd => format!("n_embd + 2 × {}", self.dim(VGqa).unwrap_or(0)),
        }
    }

    fn dim(&self, d: D) -> Option<u64> {
        match d {
            Embd => self.embd,
            Vocab => self.vocab,
            Q => self.head_k?.checked_mul(self.head?),
            KGqa => self.head_k?.checked_mul(self.head_kv?),
            VGqa => self.head_v?.checked_mul(self.head_kv?),
            HeadK => self.head_k,
            Ff => self.ff,
            Ff2 => self.ff?.checked_mul(2),
            Qkv => self
                .dim(Q)?
                .checked_add(self.dim(KGqa)?)?
                .checked_add(self.dim(VGqa)?),
            QkvEmbd => self.embd?.checked_add(self.dim(VGqa)?.checked_mul(2)?),
        }
    }
}

pub(super) fn check(view: &View, findings: &mut Vec<Finding>) {
    let file = view.meta;
    if view.tensors.is_empty() || !view.complete || view.adapter {
        return; // a vocabulary-only file, or one shard of several
    }
    let Some(arch) = architecture(file) else {
        return;
    };
    let Some(groups) = specs_of(&arch) else {
        return;
    };
    let hp = Hparams::of(file, &arch);
    let n_layer = file
        .get(&format!("{arch}.block_count"))
        .and_then(|v| v.as_u64())
        // A count the tensors cannot back is block_count's finding, not one per tensor.
        .map(|n| {
            let max_block = file
                .tensors()
                .iter()
                .filter_map(|t| block_of(t.name()))
                .max();
            n.min(max_block.map_or(0, |b| b + 1).max(1))
        })
        .unwrap_or(0);
    // Required by llama.cpp's load_hparams for every architecture.
    for suffix in ["context_length", "embedding_length"] {
        let key = format!("{arch}.{suffix}");
        if file.get(&key).is_none() {
            findings.push(
                Finding::error(
                    "hparam-missing",
                    format!("{key} is missing: llama.cpp requires it"),
                )
                .key(&key),
            );
        }
    }
    // llama.cpp refuses a llama whose rotary dimensions are not the head dimension
    // ("invalid n_rot" in llama-model.cpp's load_hparams).
    let rot_key = format!("{arch}.rope.dimension_count");
    let n_rot = file.get(&rot_key).and_then(|v| v.as_u64());
    if let (true, Some(n_rot), Some(head_k)) = (arch == "llama", n_rot, hp.head_k) {
        if n_rot != head_k {
            findings.push(
                Finding::error(
                    "hparam-invalid",
                    format!(
                        "{rot_key} is {n_rot}, llama.cpp requires the head dimension {head_k} \
                         for llama"
                    ),
                )
                .key(&rot_key)
                .at(file.value_offset(&rot_key)),
            );
        }
    }
    for group in groups {
        for spec in group.iter() {
            if spec.name.contains("{}") {
                for block in 0..n_layer {
                    let name = spec.name.replace("{}", &block.to_string());
                    let qkv = format!("blk.{block}.attn_qkv.weight");
                    check_one(view, &hp, spec, &name, &qkv, &arch, findings);
                }
            } else {
                check_one(view, &hp, spec, spec.name, "", &arch, findings);
            }
        }
    }
}

fn check_one(
    view: &View,
    hp: &Hparams,
    spec: &Spec,
    name: &str,
    qkv: &str,
    arch: &str,
    findings: &mut Vec<Finding>,
) {
    let need = match spec.need {
        Required => true,
        Optional => false,
        UnlessQkv => view.tensor(qkv).is_none(),
        Dense => !hp.moe,
    };
    let Some(tensor) = view.tensor(name) else {
        if need {
            let or_fused = if spec.need == UnlessQkv {
                format!(" (or a fused {qkv})")
            } else {
                String::new()
            };
            findings.push(
                Finding::error(
                    "tensor-missing",
                    format!(
                        "llama.cpp requires this tensor{or_fused} for {arch} and the file has none"
                    ),
                )
                .tensor(name),
            );
        }
        return;
    };
    if spec.need == Dense && hp.moe {
        return;
    }
    let expected: Option<Vec<u64>> = spec.ne.iter().map(|&d| hp.dim(d)).collect();
    let Some(expected) = expected else {
        return;
    };
    let dims = tensor.dims();
    let len = dims.len().max(expected.len());
    let fits = (0..len)
        .all(|i| dims.get(i).copied().unwrap_or(1) == expected.get(i).copied().unwrap_or(1));
    if !fits {
        findings.push(
            Finding::error(
                "tensor-shape",
                format!(
                    "ne {dims:?}, llama.cpp expects ne {expected:?} for {arch} ({})",
                    spec.ne
                        .iter()
                        .map(|&d| hp.explain(d))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
            .tensor(name)
            .at(Some(tensor.info_offset())),
        );
    }
}
