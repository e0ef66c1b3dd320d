//! Model weights per device, as llama.cpp places them: the token embedding (input layer) always
//! on the CPU, layer `il` on the GPU when `il >= n_layer + 1 - ngl`, the output layer (`output`,
//! `output_norm`, every other tensor outside `blk.N.`) on the GPU when `ngl >= 1`; a tied output
//! (no `output.weight`) offloaded is a GPU copy of the token embedding. The CPU tensors are
//! memory-mapped: llama.cpp's `CPU_Mapped` buffer of each file spans from its first CPU
//! tensor's start to its last one's end (padding between tensors included). A GPU buffer is the
//! sum of its tensors.

use super::hparams::HParams;
use super::refused;
use crate::error::Error;
use crate::gguf::TensorInfo;
use crate::model::GgufModel;

/// Weight bytes per device.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WeightsPlan {
    /// The mapped CPU buffers (one per file, summed).
    pub cpu: u64,
    /// Each file's mapped CPU buffer (llama.cpp logs one `CPU_Mapped model buffer size` each;
    /// a file with no CPU tensor has none, and no entry here).
    pub cpu_per_file: Vec<u64>,
    /// Offloaded tensors.
    pub gpu: u64,
    /// Of `gpu`: the GPU copy of the token embedding a tied output (no `output.weight`) uses
    /// once the output layer is offloaded (the embedding itself stays on the CPU); else 0.
    pub tied_output_copy: u64,
}

impl WeightsPlan {
    pub fn total(&self) -> u64 {
        self.cpu.saturating_add(self.gpu)
    }
}

/// The vocabulary size llama.cpp uses for the shapes: the token embedding's rows.
pub(super) fn n_vocab(model: &GgufModel) -> Result<u64, Error> {
    let (_, t) = model
        .tensor("token_embd.weight")
        .map_err(|_| refused("no token_embd.weight tensor".to_string()))?;
    Ok(t.dims().get(1).copied().unwrap_or(1))
}

/// The layer a tensor belongs to: Some(il) for `blk.il.*`, None for the input layer, Some(n)
/// (the output layer) for the rest.
pub(super) fn layer_of(t: &TensorInfo, hp: &HParams) -> Option<u64> {
    let n_layer = hp.n_layer;
    let name = t.name();
    if let Some(rest) = name.strip_prefix("blk.") {
        if let Some((n, _)) = rest.split_once('.') {
            if let Ok(il) = n.parse::<u64>() {
                return Some(il);
            }
        }
    }
    const INPUT: [&str; 3] = ["token_embd.", "token_types.", "position_embd."];
    if name.starts_with("token_embd_norm.") {
        // LFM2's output norm carries the name `token_embd_norm` (llama.cpp's OUTPUT_NORM_LFM2);
        // elsewhere (RWKV, BERT, BLOOM) llama.cpp creates the embedding norm with the first
        // layer's tensors, on that layer's device
        return Some(if hp.arch == "lfm2" {
            u64::from(n_layer)
        } else {
            0
        });
    }
    if INPUT.iter().any(|p| name.starts_with(p)) {
        return None;
    }
    Some(u64::from(n_layer))
}

pub(super) fn plan(model: &GgufModel, hp: &HParams, ngl: u32) -> Result<WeightsPlan, Error> {
    let gpu_start = u64::from(hp.n_layer + 1).saturating_sub(u64::from(ngl));
    let mut w = WeightsPlan::default();
    for shard in model.shards() {
        let mut range: Option<(u64, u64)> = None;
        for t in shard.tensors() {
            let on_gpu = layer_of(t, hp).is_some_and(|il| il >= gpu_start);
            if on_gpu {
                w.gpu = w.gpu.saturating_add(t.n_bytes());
                continue;
            }
            let start = shard.data_offset().saturating_add(t.offset());
            let end = start.saturating_add(t.n_bytes());
            range = Some(match range {
                None => (start, end),
                Some((a, b)) => (a.min(start), b.max(end)),
            });
        }
        if let Some((a, b)) = range {
            w.cpu = w.cpu.saturating_add(b - a);
            w.cpu_per_file.push(b - a);
        }
    }
    let tied = model.tensor("output.weight").is_err();
    if tied && ngl >= 1 {
        if let Ok((_, t)) = model.tensor("token_embd.weight") {
            w.gpu = w.gpu.saturating_add(t.n_bytes());
            w.tied_output_copy = t.n_bytes();
        }
    }
    Ok(w)
}
