//! The CPU backend's compute buffer: an estimate. llama.cpp sizes it by reserving the graph of
//! one `n_ubatch` batch over a full cache; ggml's allocator frees each tensor after its last use
//! and reuses the memory, so the buffer is about the inputs that live through the whole graph
//! plus the largest working set of one step. This planner counts, in f32 values per token of the
//! ubatch (× `4 · n_ubatch` bytes):
//!
//! - living through the graph: the attention masks, `n_kv` per token per cache (f16 with flash
//!   attention: half), and the residual stream twice, `2 · n_embd`;
//! - the largest of
//!   - attention: Q, K, V and the output (`n_head · n_embd_head_k + n_head_kv · (n_embd_head_k +
//!     n_embd_head_v) + n_head · n_embd_head_v`), plus without flash attention the scores,
//!     `n_head · n_kv`;
//!   - the feed-forward: gate, up and their product, `3 · n_ff`;
//!   - Mamba: the projected input (x and z), conv, SSM and gate activations,
//!     `5 · d_inner + dt_rank + 2 · d_state`; Mamba 2: the in-projection
//!     (`2 · d_inner + 2 · n_group · d_state + n_head`), the conv over x, B and C twice, y and
//!     the gate (`2 · d_inner`); RWKV 6: `11 · n_embd + 5 · time_mix_extra_dim`, RWKV 7:
//!     `17 · n_embd` (fitted to llama.cpp's buffer on two synthetic models of each); a gated
//!     delta net (Qwen3-Next, Qwen 3.5): `7 · n_embd + 1.5 · (d_inner + 2 · n_group ·
//!     d_state)` (fitted likewise);
//!   - the output: the logits, `n_vocab`;
//!
//! where `n_kv` is a cache's cells per stream (the scores use the largest). Within 15% of
//! llama.cpp on every oracle model and setting (tests/oracle_plan.rs); for real models the
//! logits and the scores dominate, and they are exact.

use super::hparams::HParams;
use super::kv::KvPlan;
use super::Options;

pub(super) fn estimate(hp: &HParams, o: &Options, kv: &KvPlan, n_ubatch: u64) -> u64 {
    let n_kv = kv.caches.iter().map(|c| c.cells).max().unwrap_or(0);
    let masks: u64 = kv
        .caches
        .iter()
        .fold(0u64, |sum, c| sum.saturating_add(c.cells));
    let masks = if o.flash_attn { masks / 2 } else { masks };
    let n_head = hp.n_head.iter().copied().max().unwrap_or(0);
    let n_head_kv = hp.n_head_kv.iter().copied().max().unwrap_or(0);
    let (hk, hv) = (hp.n_embd_head_k, hp.n_embd_head_v);

    let mut attn = 0u64;
    if hp.has_kv.iter().any(|&k| k) && n_head > 0 {
        let q = n_head.saturating_mul(hk);
        let kv_rows = n_head_kv.saturating_mul(hk.saturating_add(hv));
        let out = n_head.saturating_mul(hv);
        attn = q.saturating_add(kv_rows).saturating_add(out);
        if !o.flash_attn {
            attn = attn.saturating_add(n_head.saturating_mul(n_kv));
        }
    }
    let ffn = hp.n_ff.saturating_mul(3);
    let ssm = hp.recurrent.map_or(0, |r| {
        if r.wkv_head_size > 0 {
            // RWKV's time mix: rows of n_embd (11 for RWKV 6, 17 for 7) and RWKV 6's five
            // low-rank mixes
            r.d_inner
                .saturating_mul(r.wkv_rows)
                .saturating_add(r.time_mix_extra.saturating_mul(5))
        } else if r.delta_net {
            // a gated delta net: 7 rows of n_embd and 1.5 of the conv over q, k and v (fitted
            // to llama.cpp's buffer on the synthetic Qwen3-Next and Qwen 3.5)
            let conv = r
                .n_group
                .saturating_mul(r.d_state)
                .saturating_mul(2)
                .saturating_add(r.d_inner);
            r.n_embd
                .saturating_mul(7)
                .saturating_add(conv.saturating_mul(3) / 2)
        } else if r.n_group == 0 {
            r.d_inner
                .saturating_mul(5)
                .saturating_add(r.dt_rank)
                .saturating_add(r.d_state.saturating_mul(2))
        } else {
            // Mamba 2: the in-projection (x, z, B, C, dt), the conv over x, B and C twice
            // (input and output), y and the gate
            let bc = r.n_group.saturating_mul(r.d_state).saturating_mul(2);
            let conv = r.d_inner.saturating_add(bc);
            let in_proj = r.d_inner.saturating_add(conv).saturating_add(r.dt_rank);
            in_proj
                .saturating_add(conv.saturating_mul(2))
                .saturating_add(r.d_inner.saturating_mul(2))
        }
    });
    let step = attn.max(ffn).max(ssm).max(hp.n_vocab);
    let per_token = masks
        .saturating_add(hp.n_embd.saturating_mul(2))
        .saturating_add(step);
    4u64.saturating_mul(n_ubatch).saturating_mul(per_token)
}
