//! The compute buffers, the CPU backend's and (with `-ngl`) the GPU's: an estimate. llama.cpp
//! sizes each by reserving the graph of
//! one `n_ubatch` batch over a full cache; ggml's allocator frees each tensor after its last use
//! and reuses the memory, so the buffer is about the inputs that live through the whole graph
//! plus the largest working set of one step. This planner counts, in f32 values per token of the
//! ubatch (× `4 · n_ubatch` bytes):
//!
//! - through the repeating layers: the attention masks, `n_kv` per token per cache (f16 with
//!   flash attention: half), and the residual stream, `3 · n_embd` with attention layers, else
//!   `2 · n_embd` (fitted: the third row shows at n_embd 4096), plus the largest of
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
//! - or, if larger, the output: the residual, its norm and the logits, `2 · n_embd + n_vocab`
//!   (the masks are freed after the last attention layer, and the logits take their place);
//!
//! where `n_kv` is a cache's cells per stream (the scores use the largest). Within 15% of
//! llama.cpp on every fixed oracle model and setting (tests/oracle_plan.rs); for real models the
//! logits and the scores dominate, and they are exact. On random models and settings
//! (tests/oracle_plan_random.rs) the miss is larger where these terms are not what the
//! allocator keeps: small n_ubatch (32, 64: per-sequence and per-graph tensors this count
//! scales away), recurrent layers, and the split of the ops between CPU and GPU with `-ngl`;
//! that test's tolerances say by how much, per family.
//!
//! With layers offloaded (`-ngl`, checked against llama.cpp's RPC device, a GPU to llama.cpp:
//! tests/oracle_plan_offload.rs) each device has its own buffer for the ops it runs. The inputs
//! (masks included) are always the CPU's, and it computes the token embedding, so the CPU keeps
//! the living terms and the largest step of its own layers; the GPU copies the masks (when it
//! has attention layers), keeps the residual stream and the largest step of its layers and of
//! the output. With the output layer only, the GPU holds the residual's copy and the larger of
//! its norm and the logits. A GPU backend that offloads big CPU matrix products (CUDA's
//! `op_offload` for batches of 32 and more; the RPC device has none) adds copies of CPU weights
//! to its buffer: not planned.

use super::hparams::HParams;
use super::kv::KvPlan;
use super::{Options, PerDevice};

/// The repeating layers `from..to` a device runs.
struct Part {
    from: usize,
    to: usize,
}

/// What a device's layers attend: the masks of the caches they use (f32 values per token; f16
/// with flash attention, half) and the largest cache's cells (the scores).
fn attended(hp: &HParams, o: &Options, kv: &KvPlan, part: &Part) -> (u64, u64) {
    let (mut masks, mut n_kv) = (0u64, 0u64);
    for c in &kv.caches {
        let used = (part.from..part.to)
            .any(|il| hp.has_kv.get(il) == Some(&true) && hp.is_swa.get(il) == Some(&c.swa));
        if used {
            masks = masks.saturating_add(c.cells);
            n_kv = n_kv.max(c.cells);
        }
    }
    (if o.flash_attn { masks / 2 } else { masks }, n_kv)
}

/// Each device's compute buffer with `ngl` layers offloaded (all the CPU's at 0).
pub(super) fn estimate(
    hp: &HParams,
    o: &Options,
    kv: &KvPlan,
    n_ubatch: u64,
    ngl: u32,
) -> PerDevice {
    let n_layer = hp.n_layer as usize;
    let gpu_start = (n_layer + 1).saturating_sub(ngl as usize).min(n_layer);
    let cpu_layers = Part {
        from: 0,
        to: gpu_start,
    };
    let gpu_layers = Part {
        from: gpu_start,
        to: n_layer,
    };
    let all = Part {
        from: 0,
        to: n_layer,
    };
    let bytes = |per_token: u64| 4u64.saturating_mul(n_ubatch).saturating_mul(per_token);
    // the inputs, every mask among them, are the CPU's; the GPU copies those its layers use
    let (input_masks, _) = attended(hp, o, kv, &all);
    // a device running layers: masks, the residual stream (one row more with attention) and
    // the largest step
    let running = |part: &Part, masks: Option<u64>, output: bool| {
        let (used, n_kv) = attended(hp, o, kv, part);
        let step = layer_step(hp, o, n_kv, part);
        let rows = if n_kv > 0 { 3 } else { 2 };
        let layers = masks
            .unwrap_or(used)
            .saturating_add(hp.n_embd.saturating_mul(rows))
            .saturating_add(step);
        // the masks' last use is the last attention layer: the output's logits reuse them
        let logits = if output {
            hp.n_embd.saturating_mul(2).saturating_add(hp.n_vocab)
        } else {
            0
        };
        layers.max(logits)
    };
    if ngl == 0 {
        return PerDevice {
            cpu: bytes(running(&all, None, true)),
            gpu: 0,
        };
    }
    let cpu = if cpu_layers.from < cpu_layers.to {
        running(&cpu_layers, Some(input_masks), false)
    } else {
        // every layer offloaded: the inputs and the embedding (fitted: 2 rows of n_embd, 2.5
        // with an f32 mask)
        let rows = match (input_masks, o.flash_attn) {
            (0, _) | (_, true) => 4,
            _ => 5,
        };
        input_masks.saturating_add(hp.n_embd.saturating_mul(rows) / 2)
    };
    let gpu = if gpu_layers.from < gpu_layers.to {
        running(&gpu_layers, None, true)
    } else {
        // the output layer alone: the residual's copy, then its norm or the logits
        hp.n_embd.saturating_add(hp.n_embd.max(hp.n_vocab))
    };
    PerDevice {
        cpu: bytes(cpu),
        gpu: bytes(gpu),
    }
}

/// Whether `flags` (one per layer) is set for a layer of `part`.
fn any(flags: &[bool], part: &Part) -> bool {
    flags
        .get(part.from..part.to)
        .is_some_and(|f| f.iter().any(|&x| x))
}

/// The largest step of the layers of `part` (0 without one), in f32 values per token.
fn layer_step(hp: &HParams, o: &Options, n_kv: u64, part: &Part) -> u64 {
    if part.from >= part.to {
        return 0;
    }
    let n_head = hp.n_head.iter().copied().max().unwrap_or(0);
    let n_head_kv = hp.n_head_kv.iter().copied().max().unwrap_or(0);
    let (hk, hv) = (hp.n_embd_head_k, hp.n_embd_head_v);

    let mut attn = 0u64;
    if any(&hp.has_kv, part) && n_head > 0 {
        let q = n_head.saturating_mul(hk);
        let kv_rows = n_head_kv.saturating_mul(hk.saturating_add(hv));
        let out = n_head.saturating_mul(hv);
        attn = q.saturating_add(kv_rows).saturating_add(out);
        if !o.flash_attn {
            attn = attn.saturating_add(n_head.saturating_mul(n_kv));
        }
    }
    let ffn = hp.n_ff.saturating_mul(3);
    let ssm = hp
        .recurrent
        .filter(|_| any(&hp.is_recr, part))
        .map_or(0, |r| {
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
    attn.max(ffn).max(ssm)
}
