//! The hyper-parameters llama.cpp reads from a GGUF's metadata that decide its memory: layers,
//! heads (a number or one per layer), head sizes, the sliding window and which layers use it,
//! MLA ranks. Every value is checked: a missing or absurd one is an error, never a panic.

use crate::gguf::{ArrayView, GgufFile, Value};

use super::refused;
use crate::error::Error;

/// llama.cpp's `LLAMA_MAX_LAYERS`.
pub const MAX_LAYERS: u64 = 512;

/// The per-model facts the planner needs.
#[derive(Debug, Clone, PartialEq)]
pub struct HParams {
    pub arch: String,
    pub n_layer: u32,
    pub n_ctx_train: u64,
    pub n_embd: u64,
    /// The widest feed-forward layer (`feed_forward_length`, a number or one per layer; 0 when
    /// absent), for the compute estimate.
    pub n_ff: u64,
    pub n_vocab: u64,
    /// Query heads per layer.
    pub n_head: Vec<u64>,
    /// KV heads per layer.
    pub n_head_kv: Vec<u64>,
    pub n_embd_head_k: u64,
    pub n_embd_head_v: u64,
    pub n_embd_head_k_swa: u64,
    pub n_embd_head_v_swa: u64,
    /// Sliding window (tokens); 0 without SWA.
    pub n_swa: u64,
    /// Which layers use the sliding window.
    pub is_swa: Vec<bool>,
    /// MLA (DeepSeek 2/3, Kimi: `key_length_mla` and `value_length_mla` set): only K is cached,
    /// one head of `key_length` = kv_lora_rank + rope dims; there is no V cache.
    pub mla: bool,
    /// Recurrent state of the layers `is_recr` marks (Mamba: every layer; LFM2, a hybrid: its
    /// short-convolution layers, the others having a KV cache).
    pub recurrent: Option<Recurrent>,
    /// Which layers hold recurrent state instead of a KV cache.
    pub is_recr: Vec<bool>,
    /// Which layers have a KV cache (a hybrid's attention layers; Nemotron-H's feed-forward
    /// layers have neither).
    pub has_kv: Vec<bool>,
    /// No KV cache at all (encoders and diffusion models: llama.cpp creates no memory).
    pub no_kv: bool,
    /// Q, K and V in one projection (`attn_qkv`): the compute estimate counts all three.
    pub fused_qkv: bool,
}

/// A recurrent layer's state, in f32 elements per sequence: the conv state (R) and the SSM
/// state (S), as llama.cpp's `n_embd_r()` / `n_embd_s()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recurrent {
    pub n_embd_r: u64,
    pub n_embd_s: u64,
    /// `ssm.inner_size`, for the compute estimate.
    pub d_inner: u64,
    pub d_state: u64,
    pub dt_rank: u64,
    /// Mamba 2's groups of B and C (0 for Mamba 1 and LFM2); a gated delta net's key heads.
    pub n_group: u64,
    /// A gated delta net (Qwen3-Next, Qwen 3.5), for the compute estimate.
    pub delta_net: bool,
    /// n_embd, for the delta net's compute estimate.
    pub n_embd: u64,
    /// RWKV's head size (0 for the others); for the compute estimate, its time mix's rows of
    /// n_embd and low-rank size (RWKV 6).
    pub wkv_head_size: u64,
    pub wkv_rows: u64,
    pub time_mix_extra: u64,
}

fn key<'a>(f: &'a GgufFile, arch: &str, name: &str) -> Option<Value<'a>> {
    f.get(&format!("{arch}.{name}"))
}

fn uint(f: &GgufFile, arch: &str, name: &str) -> Result<Option<u64>, Error> {
    match key(f, arch, name) {
        None => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| refused(format!("{arch}.{name} is not a non-negative integer"))),
    }
}

/// A number or an array of one number per layer (llama.cpp's `get_key_or_arr`).
fn per_layer(
    f: &GgufFile,
    arch: &str,
    name: &str,
    n_layer: u32,
) -> Result<Option<Vec<u64>>, Error> {
    let Some(v) = key(f, arch, name) else {
        return Ok(None);
    };
    if let Some(n) = v.as_u64() {
        return Ok(Some(vec![n; n_layer as usize]));
    }
    let bad = || {
        refused(format!(
            "{arch}.{name} is not a count or one count per layer"
        ))
    };
    let arr = v.as_array().ok_or_else(bad)?;
    if arr.len() != n_layer as usize {
        return Err(refused(format!(
            "{arch}.{name} has {} values for {n_layer} layers",
            arr.len()
        )));
    }
    arr.iter()
        .map(|x| x.as_u64().ok_or_else(bad))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

impl HParams {
    /// Reads the hyper-parameters from the metadata of `first` (the first shard) and the
    /// vocabulary size from `n_vocab` (the token embedding's rows).
    pub fn read(first: &GgufFile, n_vocab: u64) -> Result<HParams, Error> {
        let arch = first
            .get("general.architecture")
            .and_then(|v| v.as_str())
            .ok_or_else(|| refused("no general.architecture".to_string()))?
            .into_owned();
        let a = arch.as_str();
        let need = |name: &str| -> Result<u64, Error> {
            uint(first, a, name)?.ok_or_else(|| refused(format!("no {a}.{name}")))
        };
        // recurrent state other than Mamba 1/2's, Jamba's, Granite 4 hybrid's, Nemotron-H's,
        // Falcon-H1's, Qwen3-Next's, Qwen 3.5's, LFM2's and RWKV 6/7's (the other hybrids, RWKV variants): not planned yet, rather than
        // a wrong answer
        let prefix = format!("{a}.");
        if !matches!(
            a,
            "mamba"
                | "jamba"
                | "mamba2"
                | "granitehybrid"
                | "nemotron_h"
                | "falcon-h1"
                | "qwen3next"
                | "qwen35"
                | "lfm2"
                | "rwkv6"
                | "rwkv7"
        ) && first.metadata().any(|(k, _)| {
            k.strip_prefix(&prefix).is_some_and(|k| {
                k.starts_with("ssm.")
                    || k.starts_with("wkv.")
                    || k.starts_with("rescale_every")
                    || k.starts_with("shortconv.")
            })
        }) {
            return Err(refused(format!(
                "{a} has recurrent layers (ssm/wkv state): not planned yet"
            )));
        }
        let n_layer = need("block_count")?;
        if n_layer == 0 || n_layer > MAX_LAYERS {
            return Err(refused(format!(
                "{a}.block_count is {n_layer}, llama.cpp takes 1 to {MAX_LAYERS}"
            )));
        }
        let n_layer = n_layer as u32;
        let n_ctx_train = need("context_length")?;
        let n_embd = need("embedding_length")?;
        let n_ff = per_layer(first, a, "feed_forward_length", n_layer)?
            .and_then(|v| v.into_iter().max())
            .unwrap_or(0);
        let n_head = per_layer(first, a, "attention.head_count", n_layer)?
            .unwrap_or_else(|| vec![0; n_layer as usize]);
        let n_head_kv =
            per_layer(first, a, "attention.head_count_kv", n_layer)?.unwrap_or(n_head.clone());
        let head0 = n_head[0];
        let per_head = n_embd.checked_div(head0).unwrap_or(0);
        let (mut hk, mut hv) = (per_head, per_head);
        if head0 > 0 {
            hk = uint(first, a, "attention.key_length")?.unwrap_or(hk);
            hv = uint(first, a, "attention.value_length")?.unwrap_or(hv);
        }
        let hk_swa = uint(first, a, "attention.key_length_swa")?.unwrap_or(hk);
        let hv_swa = uint(first, a, "attention.value_length_swa")?.unwrap_or(hv);

        let mut hp = HParams {
            arch: arch.clone(),
            n_layer,
            n_ctx_train,
            n_embd,
            n_ff,
            n_vocab,
            n_head,
            n_head_kv,
            n_embd_head_k: hk,
            n_embd_head_v: hv,
            n_embd_head_k_swa: hk_swa,
            n_embd_head_v_swa: hv_swa,
            n_swa: 0,
            is_swa: vec![false; n_layer as usize],
            mla: false,
            recurrent: None,
            is_recr: vec![false; n_layer as usize],
            has_kv: vec![true; n_layer as usize],
            no_kv: false,
            fused_qkv: first.tensor("blk.0.attn_qkv.weight").is_ok(),
        };
        hp.arch_specific(first)?;
        Ok(hp)
    }

    /// What llama.cpp's per-architecture `load_arch_hparams` changes.
    fn arch_specific(&mut self, f: &GgufFile) -> Result<(), Error> {
        let a = self.arch.clone();
        let window = uint(f, &a, "attention.sliding_window")?;
        match a.as_str() {
            "gemma2" => {
                self.n_swa = window.unwrap_or(4096);
                self.swa_pattern(f, 2, false)?;
            }
            "gemma3" => {
                if let Some(w) = window.filter(|&w| w > 0) {
                    self.n_swa = w;
                    self.swa_pattern(f, 6, false)?;
                }
            }
            "cohere2" => {
                self.n_swa = window.unwrap_or(0);
                self.swa_pattern(f, 4, false)?;
            }
            "gpt-oss" => {
                self.n_swa = window.unwrap_or(0);
                self.swa_pattern(f, 2, false)?;
            }
            "olmo2" => {
                if let Some(w) = window.filter(|&w| w > 0) {
                    self.n_swa = w;
                    self.swa_pattern(f, 4, false)?;
                }
            }
            "bert" | "nomic-bert" | "nomic-bert-moe" | "neo-bert" | "jina-bert-v2"
            | "jina-bert-v3" | "eurobert" | "modern-bert" | "gemma-embedding"
            | "wavtokenizer-dec" | "dream" | "llada" | "llada-moe" | "rnd1" => {
                self.no_kv = true;
            }
            // indexer caches (DSA, MSA) beside the KV cache: not planned yet
            "deepseek32" | "glm-dsa" | "minimax-m3" | "hy_v4" | "dots3note" | "glm5-next" => {
                return Err(refused(format!(
                    "{a}: its indexer key cache is not planned yet"
                )));
            }
            // llama.cpp gives these sliding-window (or chunked, or shared-KV) layers by rules
            // this planner does not follow yet: refuse rather than plan every layer full
            "llama4" | "gemma3n" | "gemma4" | "gemma4-assistant" | "cohere2moe" | "exaone4"
            | "exaone-moe" | "afmoe" | "laguna" | "smallthinker" | "mellum" | "muse-glimmer"
            | "plamo3" | "deepseek4" | "dflash"
                if window.unwrap_or(0) > 0
                    || a == "gemma3n"
                    || a.starts_with("gemma4")
                    || (a == "llama4" && window.is_none())
                    || (a == "exaone4" && self.n_layer == 64) =>
            {
                return Err(refused(format!(
                    "{a}: its sliding-window / shared KV layers are not planned yet"
                )));
            }
            "deepseek2" => {
                let key_mla = uint(f, &a, "attention.key_length_mla")?.unwrap_or(0);
                let value_mla = uint(f, &a, "attention.value_length_mla")?.unwrap_or(0);
                self.mla = key_mla != 0 && value_mla != 0;
            }
            // Mamba 1 and 2, and the hybrids Jamba and Granite 4 (their layers without KV heads
            // are Mamba layers); Mamba 2's conv state also covers B and C of every group
            "mamba" | "jamba" | "mamba2" | "granitehybrid" | "nemotron_h" | "falcon-h1"
            | "qwen3next" | "qwen35" => {
                let need = |name: &str| -> Result<u64, Error> {
                    uint(f, &a, name)?.ok_or_else(|| refused(format!("no {a}.{name}")))
                };
                let d_conv = need("ssm.conv_kernel")?;
                let d_inner = need("ssm.inner_size")?;
                let d_state = need("ssm.state_size")?;
                let dt_rank = need("ssm.time_step_rank")?;
                let n_group = if a != "mamba" && a != "jamba" {
                    need("ssm.group_count")?
                } else {
                    0
                };
                let conv = n_group
                    .saturating_mul(d_state)
                    .saturating_mul(2)
                    .saturating_add(d_inner);
                self.recurrent = Some(Recurrent {
                    n_embd_r: d_conv.saturating_sub(1).saturating_mul(conv),
                    n_embd_s: d_state.saturating_mul(d_inner),
                    d_inner,
                    d_state,
                    dt_rank,
                    n_group,
                    delta_net: a == "qwen3next" || a == "qwen35",
                    n_embd: self.n_embd,
                    wkv_head_size: 0,
                    wkv_rows: 0,
                    time_mix_extra: 0,
                });
                self.is_recr = if a == "mamba" || a == "mamba2" || a == "falcon-h1" {
                    vec![true; self.n_layer as usize]
                } else {
                    self.n_head_kv.iter().map(|&kv| kv == 0).collect()
                };
                if a == "nemotron_h" {
                    // a layer with a feed-forward is neither recurrent nor attention
                    let n_ff = per_layer(f, &a, "feed_forward_length", self.n_layer)?
                        .unwrap_or_else(|| vec![0; self.n_layer as usize]);
                    for (il, &ff) in n_ff.iter().enumerate() {
                        self.is_recr[il] &= ff == 0;
                        self.has_kv[il] = self.n_head_kv[il] > 0 && ff == 0;
                    }
                } else if a == "qwen3next" || a == "qwen35" {
                    // gated delta-net layers (recurrent) and full attention, by a per-layer
                    // array or every `full_attention_interval`-th layer; MTP layers not planned
                    if uint(f, &a, "nextn_predict_layers")?.unwrap_or(0) > 0 {
                        return Err(refused(format!(
                            "{a}: its next-token-prediction layers are not planned yet"
                        )));
                    }
                    let name = format!("{a}.attention.recurrent_layers");
                    let layers = f.get(&name);
                    if let Some(arr) = layers.as_ref().and_then(|v| v.as_array()) {
                        self.is_recr = self.layer_flags(&name, arr)?;
                    } else {
                        let interval = uint(f, &a, "full_attention_interval")?.unwrap_or(4);
                        if interval == 0 {
                            return Err(refused(format!("{a}.full_attention_interval is 0")));
                        }
                        self.is_recr = (0..u64::from(self.n_layer))
                            .map(|il| (il + 1) % interval != 0)
                            .collect();
                    }
                    self.has_kv = self.is_recr.iter().map(|&r| !r).collect();
                } else if a == "falcon-h1" {
                    // every layer both: a Mamba 2 mixer beside attention
                    self.has_kv = vec![true; self.n_layer as usize];
                } else {
                    self.has_kv = self.is_recr.iter().map(|&r| !r).collect();
                }
            }
            // every layer recurrent: the token shift (token_shift_count rows of n_embd) and the
            // WKV state (n_embd · head_size)
            "rwkv6" | "rwkv7" => {
                let head = uint(f, &a, "wkv.head_size")?
                    .ok_or_else(|| refused(format!("no {a}.wkv.head_size")))?;
                let shift = uint(f, &a, "token_shift_count")?.unwrap_or(2);
                self.is_recr = vec![true; self.n_layer as usize];
                self.has_kv = vec![false; self.n_layer as usize];
                self.recurrent = Some(Recurrent {
                    n_embd_r: shift.saturating_mul(self.n_embd),
                    n_embd_s: head.saturating_mul(self.n_embd),
                    d_inner: self.n_embd,
                    d_state: 0,
                    dt_rank: 0,
                    n_group: 0,
                    delta_net: false,
                    n_embd: self.n_embd,
                    wkv_head_size: head,
                    wkv_rows: if a == "rwkv6" { 11 } else { 17 },
                    time_mix_extra: uint(f, &a, "time_mix_extra_dim")?.unwrap_or(0),
                });
            }
            // a hybrid: layers without KV heads are short convolutions whose state is the last
            // l_cache - 1 inputs (llama.cpp's n_embd_r); no SSM state
            "lfm2" => {
                if window.unwrap_or(0) > 0 {
                    return Err(refused(format!(
                        "{a}: its sliding-window layers are not planned yet"
                    )));
                }
                let l_cache = uint(f, &a, "shortconv.l_cache")?
                    .ok_or_else(|| refused(format!("no {a}.shortconv.l_cache")))?;
                self.is_recr = self.n_head_kv.iter().map(|&kv| kv == 0).collect();
                self.has_kv = self.is_recr.iter().map(|&r| !r).collect();
                self.recurrent = Some(Recurrent {
                    n_embd_r: l_cache.saturating_sub(1).saturating_mul(self.n_embd),
                    n_embd_s: 0,
                    d_inner: self.n_embd,
                    d_state: 0,
                    dt_rank: 0,
                    n_group: 0,
                    delta_net: false,
                    n_embd: self.n_embd,
                    wkv_head_size: 0,
                    wkv_rows: 0,
                    time_mix_extra: 0,
                });
            }
            _ => {}
        }
        if self.n_swa == 0 {
            self.is_swa = vec![false; self.n_layer as usize];
        }
        Ok(())
    }

    /// A per-layer flag array (`bool`s or integers, non-zero = set), one value per layer.
    fn layer_flags(&self, name: &str, arr: &ArrayView<'_>) -> Result<Vec<bool>, Error> {
        if arr.len() != self.n_layer as usize {
            return Err(refused(format!(
                "{name} has {} values for {} layers",
                arr.len(),
                self.n_layer
            )));
        }
        arr.iter()
            .map(|x| match x {
                Value::Bool(b) => Ok(b),
                other => other
                    .as_u64()
                    .map(|n| n != 0)
                    .ok_or_else(|| refused(format!("{name} is not booleans"))),
            })
            .collect()
    }

    /// llama.cpp's `load_swa_pattern`: an array of booleans per layer, or a period `n` (every
    /// n-th layer is full attention), `n_default` when the key is absent.
    fn swa_pattern(
        &mut self,
        f: &GgufFile,
        n_default: u64,
        dense_first: bool,
    ) -> Result<(), Error> {
        let name = format!("{}.attention.sliding_window_pattern", self.arch);
        let mut n = n_default;
        if let Some(v) = f.get(&name) {
            if let Some(arr) = v.as_array() {
                self.is_swa = self.layer_flags(&name, arr)?;
                return Ok(());
            }
            n = v
                .as_u64()
                .ok_or_else(|| refused(format!("{name} is not a count")))?;
        }
        self.is_swa = (0..u64::from(self.n_layer))
            .map(|il| {
                if dense_first {
                    n == 0 || il % n != 0
                } else {
                    n == 0 || il % n < n - 1
                }
            })
            .collect();
        Ok(())
    }

    /// K row length (elements) of layer `il`'s cache.
    pub fn n_embd_k_gqa(&self, il: usize) -> u64 {
        let head = if self.is_swa[il] {
            self.n_embd_head_k_swa
        } else {
            self.n_embd_head_k
        };
        head.saturating_mul(self.n_head_kv[il])
    }

    /// V row length of layer `il`'s cache.
    pub fn n_embd_v_gqa(&self, il: usize) -> u64 {
        let head = if self.is_swa[il] {
            self.n_embd_head_v_swa
        } else {
            self.n_embd_head_v
        };
        head.saturating_mul(self.n_head_kv[il])
    }

    /// The largest V row over all layers (the transposed V cache pads every layer to it).
    pub fn n_embd_v_gqa_max(&self) -> u64 {
        (0..self.n_layer as usize)
            .map(|il| self.n_embd_v_gqa(il))
            .max()
            .unwrap_or(0)
    }
}

/// `{arch}.expert_used_count` (None when absent or not a count).
pub(super) fn expert_used(f: &GgufFile, arch: &str) -> Option<u64> {
    key(f, arch, "expert_used_count").and_then(|v| v.as_u64())
}
