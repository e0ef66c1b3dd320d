//! The KV cache as llama.cpp's `llama_kv_cache` allocates it: per layer a K tensor
//! `[n_embd_k_gqa, cells, streams]` and a V tensor `[n_embd_v_gqa, cells, streams]` of the cache
//! types; without flash attention V is stored transposed and every layer's V row is padded to the
//! largest (`n_embd_v_gqa_max`). Sliding-window layers get their own cache of
//! `pad(min(cells, n_swa + n_ubatch), 256)` cells (`swa_full` off, not unified); MLA caches only
//! K (the compressed KV plus the rope part). One stream per parallel slot.

use super::hparams::HParams;
use super::{refused, Options};
use crate::error::Error;
use crate::types::GgmlType;
use serde::Serialize;

/// One cache (llama.cpp logs one `llama_kv_cache: size = …` line for each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CachePlan {
    /// The sliding-window cache (else the full-context one).
    pub swa: bool,
    /// Cells per stream.
    pub cells: u64,
    pub layers: u32,
    pub streams: u64,
    pub k_bytes: u64,
    pub v_bytes: u64,
}

/// The recurrent state (llama.cpp's `llama_memory_recurrent`): per recurrent layer an f32 R
/// (conv) and S (SSM) row per sequence, `max(1, n_seq_max)` cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RecurrentPlan {
    pub cells: u64,
    pub layers: u32,
    pub r_bytes: u64,
    pub s_bytes: u64,
}

/// Every cache, with totals.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KvPlan {
    /// The full-context cache first, then the SWA one, as llama.cpp creates them.
    pub caches: Vec<CachePlan>,
    pub k_bytes: u64,
    pub v_bytes: u64,
    /// K + V of the SWA cache.
    pub swa_bytes: u64,
    /// Recurrent state (counted in the total).
    pub recurrent: Option<RecurrentPlan>,
    /// On the CPU and on the GPU (offloaded layers).
    pub cpu: u64,
    pub gpu: u64,
}

impl KvPlan {
    /// K, V and the recurrent state.
    pub fn total(&self) -> u64 {
        let rs = self
            .recurrent
            .as_ref()
            .map_or(0, |r| r.r_bytes.saturating_add(r.s_bytes));
        self.k_bytes.saturating_add(self.v_bytes).saturating_add(rs)
    }
}

/// `ggml_row_size`: bytes of `n` elements of `t`; an error when `n` is not whole blocks (ggml
/// would abort).
fn row(t: GgmlType, n: u64, what: &str) -> Result<u64, Error> {
    t.bytes_for(n).ok_or_else(|| {
        refused(format!(
            "{what} cache type {} with block size {} does not divide the row of {n}",
            t.name().to_lowercase(),
            t.block_size()
        ))
    })
}

pub(super) fn plan(
    hp: &HParams,
    o: &Options,
    n_ctx_seq: u64,
    n_seq: u64,
    n_ubatch: u64,
    ngl: u32,
) -> Result<KvPlan, Error> {
    let n_swa_cells = if hp.n_swa > 0 {
        super::pad(n_ctx_seq.min(hp.n_swa.saturating_add(n_ubatch)), 256)
    } else {
        0
    };
    let v_trans = !o.flash_attn;
    let gpu_start = u64::from(hp.n_layer + 1).saturating_sub(u64::from(ngl));
    let mut kv = KvPlan::default();
    if hp.no_kv {
        return Ok(kv);
    }
    if let Some(rec) = hp.recurrent {
        // the recurrent layers' state; the other layers (a hybrid's) have a KV cache below
        let cells = n_seq.max(1);
        let mut rp = RecurrentPlan {
            cells,
            layers: 0,
            r_bytes: 0,
            s_bytes: 0,
        };
        for il in 0..u64::from(hp.n_layer) {
            if !hp.is_recr[il as usize] {
                continue;
            }
            rp.layers += 1;
            let r = rec.n_embd_r.saturating_mul(4).saturating_mul(cells);
            let s = rec.n_embd_s.saturating_mul(4).saturating_mul(cells);
            rp.r_bytes = rp.r_bytes.saturating_add(r);
            rp.s_bytes = rp.s_bytes.saturating_add(s);
            if il >= gpu_start {
                kv.gpu = kv.gpu.saturating_add(r).saturating_add(s);
            } else {
                kv.cpu = kv.cpu.saturating_add(r).saturating_add(s);
            }
        }
        kv.recurrent = Some(rp);
    }
    let has_swa = hp.is_swa.iter().any(|&s| s);
    for swa in [false, true] {
        if swa && !has_swa {
            break;
        }
        let cells = if swa { n_swa_cells } else { n_ctx_seq };
        let mut cache = CachePlan {
            swa,
            cells,
            layers: 0,
            streams: n_seq,
            k_bytes: 0,
            v_bytes: 0,
        };
        for il in 0..hp.n_layer as usize {
            if hp.is_swa[il] != swa || !hp.has_kv[il] {
                continue;
            }
            let k_row = row(o.type_k, hp.n_embd_k_gqa(il), "K")?;
            let v_row = if hp.mla {
                0
            } else if v_trans {
                row(o.type_v, hp.n_embd_v_gqa_max(), "V")?
            } else {
                row(o.type_v, hp.n_embd_v_gqa(il), "V")?
            };
            let per_cell = cells.saturating_mul(n_seq);
            let k = k_row.saturating_mul(per_cell);
            let v = v_row.saturating_mul(per_cell);
            cache.layers += 1;
            cache.k_bytes = cache.k_bytes.saturating_add(k);
            cache.v_bytes = cache.v_bytes.saturating_add(v);
            if il as u64 >= gpu_start {
                kv.gpu = kv.gpu.saturating_add(k).saturating_add(v);
            } else {
                kv.cpu = kv.cpu.saturating_add(k).saturating_add(v);
            }
        }
        kv.k_bytes = kv.k_bytes.saturating_add(cache.k_bytes);
        kv.v_bytes = kv.v_bytes.saturating_add(cache.v_bytes);
        if swa {
            kv.swa_bytes = cache.k_bytes.saturating_add(cache.v_bytes);
        }
        if cache.layers > 0 {
            kv.caches.push(cache);
        }
    }
    Ok(kv)
}
