//! The CPU backend's compute buffer: an estimate. llama.cpp sizes it by reserving the graph of
//! one `n_ubatch` batch over a full cache and letting ggml's allocator reuse memory; this
//! planner counts the tensors that dominate that peak:
//!
//! - always: the logits, the hidden state and the queries,
//!   `4 · n_ubatch · (n_vocab + n_embd + max(n_embd, n_head · n_embd_head_k))` bytes (with a fused
//!   QKV projection, `(n_head + 2 · n_head_kv) · n_embd_head_k` for the queries);
//! - without flash attention: the f32 attention scores `n_kv · n_ubatch · n_head` plus the f32
//!   mask `n_kv · n_ubatch`, i.e. `4 · n_kv · n_ubatch · (n_head + 1)`;
//! - with flash attention: only the f16 mask, `2 · n_kv · n_ubatch`;
//!
//! - for Mamba, the projected input, conv and SSM activations,
//!   `4 · n_ubatch · (3 · d_inner + dt_rank + 2 · d_state)`;
//! - with MLA, the absorbed queries once more, `4 · n_ubatch · n_head · n_embd_head_k`;
//!
//! where `n_kv` is the largest cache's cells per stream; a sliding-window cache adds its own mask
//! (`4 ·` or, with flash attention, `2 · n_kv_swa · n_ubatch`). Within 15% of llama.cpp on the oracle
//! models (tests/oracle_plan.rs).

use super::hparams::HParams;
use super::kv::KvPlan;
use super::Options;

pub(super) fn estimate(hp: &HParams, o: &Options, kv: &KvPlan, n_ubatch: u64) -> u64 {
    let n_kv = kv.caches.iter().map(|c| c.cells).max().unwrap_or(0);
    let n_kv_swa = kv
        .caches
        .iter()
        .filter(|c| c.swa)
        .map(|c| c.cells)
        .max()
        .unwrap_or(0);
    let mask = if o.flash_attn { 2u64 } else { 4 };
    let swa_mask = mask.saturating_mul(n_kv_swa).saturating_mul(n_ubatch);
    let n_head = hp.n_head.iter().copied().max().unwrap_or(0);
    let n_head_kv = hp.n_head_kv.iter().copied().max().unwrap_or(0);
    let q_rows = if hp.fused_qkv {
        n_head.saturating_add(n_head_kv.saturating_mul(2))
    } else {
        n_head
    };
    let base = 4u64.saturating_mul(n_ubatch).saturating_mul(
        hp.n_vocab
            .saturating_add(hp.n_embd)
            .saturating_add(hp.n_embd.max(q_rows.saturating_mul(hp.n_embd_head_k))),
    );
    let attn = if o.flash_attn {
        2u64.saturating_mul(n_kv).saturating_mul(n_ubatch)
    } else {
        4u64.saturating_mul(n_kv)
            .saturating_mul(n_ubatch)
            .saturating_mul(n_head.saturating_add(1))
    };
    let mla = if hp.mla {
        4u64.saturating_mul(n_ubatch)
            .saturating_mul(n_head)
            .saturating_mul(hp.n_embd_head_k)
    } else {
        0
    };
    let ssm = hp.recurrent.map_or(0, |r| {
        4u64.saturating_mul(n_ubatch).saturating_mul(
            r.d_inner
                .saturating_mul(3)
                .saturating_add(r.dt_rank)
                .saturating_add(r.d_state.saturating_mul(2)),
        )
    });
    let attn = if hp.recurrent.is_some() { 0 } else { attn };
    base.saturating_add(attn)
        .saturating_add(ssm)
        .saturating_add(swa_mask)
        .saturating_add(mla)
}
