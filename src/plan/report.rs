//! A plan as the front ends show it (the CLI's `memory --json`, the npm `planMemory`): one typed
//! document, with the GPU-budget questions answered.

use serde::Serialize;

use super::{max_ctx, max_ngl, plan, Options, Plan};
use crate::error::Error;
use crate::model::GgufModel;

/// A plan and, for a GPU budget, the layers and the largest context that fit it.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub plan: Plan,
    /// The largest context whose GPU share fits `gpu_mem` (None without a budget, or when not
    /// even 256 cells per slot fit).
    pub max_ctx: Option<u64>,
    pub gpu_mem: Option<u64>,
}

impl Report {
    /// Plans `options`; with `gpu_mem`, first picks `-ngl` (when `pick_ngl`: the most layers
    /// whose weights, KV and compute buffer fit the GPU at this context), then the largest context that fits.
    pub fn new(
        model: &GgufModel,
        mut options: Options,
        pick_ngl: bool,
        gpu_mem: Option<u64>,
    ) -> Result<Report, Error> {
        let mut max_context = None;
        if let Some(budget) = gpu_mem {
            if pick_ngl {
                options.ngl = max_ngl(model, &options, budget)?;
            }
            max_context = max_ctx(model, &options, budget, |p: &Plan| p.per_device().gpu)?;
        }
        Ok(Report {
            plan: plan(model, &options)?,
            max_ctx: max_context,
            gpu_mem,
        })
    }

    /// Every figure the front ends show (`gguf-lens memory --json`, the npm `planMemory`), with
    /// `command` the line to show. Field names are plain Rust (snake_case); each front end
    /// names them in its own language.
    pub fn document(&self, command: &str) -> Document {
        let p = &self.plan;
        let recurrent = p.kv.recurrent.as_ref();
        let dev = p.per_device();
        Document {
            architecture: p.architecture.clone(),
            n_layer: p.n_layer,
            n_ctx_train: p.n_ctx_train,
            n_ctx: p.n_ctx,
            n_ctx_seq: p.n_ctx_seq,
            n_seq_max: p.n_seq_max,
            ngl: p.options.ngl,
            cache_type_k: p.options.type_k.name().to_lowercase(),
            cache_type_v: p.options.type_v.name().to_lowercase(),
            flash_attn: p.options.flash_attn,
            weights_bytes: p.weights_bytes(),
            weights: DeviceBytes::of(p.weights.cpu, p.weights.gpu),
            tied_output_copy_bytes: p.weights.tied_output_copy,
            kv_cache_bytes: p.kv.total(),
            kv_cache: KvCacheDoc {
                k_bytes: p.kv.k_bytes,
                v_bytes: p.kv.v_bytes,
                swa_bytes: p.kv.swa_bytes,
                cpu_bytes: p.kv.cpu,
                gpu_bytes: p.kv.gpu,
                caches: p.kv.caches.clone(),
                recurrent_bytes: recurrent.map_or(0, |r| r.r_bytes + r.s_bytes),
                recurrent: recurrent.copied(),
            },
            compute_bytes: p.compute_bytes,
            compute: DeviceBytes::of(p.compute.cpu, p.compute.gpu),
            compute_estimated: !p.compute_derived,
            total_bytes: p.total_bytes(),
            cpu_bytes: dev.cpu,
            gpu_bytes: dev.gpu,
            gpu_mem: self.gpu_mem,
            max_ctx: self.max_ctx,
            command: command.to_string(),
        }
    }
}

/// A plan's figures as the front ends show them (see [`Report::document`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Document {
    pub architecture: String,
    pub n_layer: u32,
    pub n_ctx_train: u64,
    pub n_ctx: u64,
    pub n_ctx_seq: u64,
    pub n_seq_max: u32,
    pub ngl: u32,
    /// Lower case, as llama.cpp's `--cache-type-k` takes it.
    pub cache_type_k: String,
    pub cache_type_v: String,
    pub flash_attn: bool,
    pub weights_bytes: u64,
    pub weights: DeviceBytes,
    /// Of `weights.gpu_bytes`: the GPU copy of `token_embd` a tied output reads when the output
    /// layer is offloaded (0 when the output has its own tensor or stays on the CPU).
    pub tied_output_copy_bytes: u64,
    pub kv_cache_bytes: u64,
    pub kv_cache: KvCacheDoc,
    pub compute_bytes: u64,
    pub compute: DeviceBytes,
    /// The compute buffers are an estimate (false: derived from the graph, see
    /// [`super::Plan::compute_derived`]).
    pub compute_estimated: bool,
    pub total_bytes: u64,
    pub cpu_bytes: u64,
    pub gpu_bytes: u64,
    pub gpu_mem: Option<u64>,
    pub max_ctx: Option<u64>,
    /// The llama.cpp command line the plan is for.
    pub command: String,
}

/// Bytes on the CPU and on the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DeviceBytes {
    pub cpu_bytes: u64,
    pub gpu_bytes: u64,
}

impl DeviceBytes {
    fn of(cpu_bytes: u64, gpu_bytes: u64) -> DeviceBytes {
        DeviceBytes {
            cpu_bytes,
            gpu_bytes,
        }
    }
}

/// The KV cache: its totals, each cache (full and sliding-window) and the recurrent state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KvCacheDoc {
    pub k_bytes: u64,
    pub v_bytes: u64,
    pub swa_bytes: u64,
    pub cpu_bytes: u64,
    pub gpu_bytes: u64,
    pub caches: Vec<super::CachePlan>,
    pub recurrent_bytes: u64,
    pub recurrent: Option<super::RecurrentPlan>,
}
