//! A plan as the front ends show it (the CLI's `memory --json`, the npm `planMemory`): one JSON
//! definition, with the GPU-budget questions answered.

use serde_json::{json, Value};

use super::{max_ctx, max_ngl, plan, Options, Plan, PlanError};
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
    ) -> Result<Report, PlanError> {
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

    /// The JSON document (`gguf-lens memory --json`), with `command` the line to show.
    pub fn to_json(&self, command: &str) -> Value {
        let p = &self.plan;
        let caches: Vec<Value> =
            p.kv.caches
                .iter()
                .map(|c| {
                    json!({
                        "swa": c.swa, "cells": c.cells, "layers": c.layers, "streams": c.streams,
                        "k_bytes": c.k_bytes, "v_bytes": c.v_bytes,
                    })
                })
                .collect();
        let recurrent = p.kv.recurrent.as_ref();
        let dev = p.per_device();
        json!({
            "architecture": p.architecture,
            "n_layer": p.n_layer,
            "n_ctx_train": p.n_ctx_train,
            "n_ctx": p.n_ctx,
            "n_ctx_seq": p.n_ctx_seq,
            "n_seq_max": p.n_seq_max,
            "ngl": p.options.ngl,
            "cache_type_k": p.options.type_k.name().to_lowercase(),
            "cache_type_v": p.options.type_v.name().to_lowercase(),
            "flash_attn": p.options.flash_attn,
            "weights_bytes": p.weights_bytes(),
            "weights": {"cpu_bytes": p.weights.cpu, "gpu_bytes": p.weights.gpu},
            "kv_cache_bytes": p.kv.total(),
            "kv_cache": {
                "k_bytes": p.kv.k_bytes, "v_bytes": p.kv.v_bytes, "swa_bytes": p.kv.swa_bytes,
                "cpu_bytes": p.kv.cpu, "gpu_bytes": p.kv.gpu, "caches": caches,
                "recurrent_bytes": recurrent.map_or(0, |r| r.r_bytes + r.s_bytes),
                "recurrent": recurrent.map(|r| json!({
                    "cells": r.cells, "layers": r.layers, "r_bytes": r.r_bytes, "s_bytes": r.s_bytes,
                })),
            },
            "compute_bytes": p.compute_bytes,
            "compute": {"cpu_bytes": p.compute.cpu, "gpu_bytes": p.compute.gpu},
            "compute_estimated": true,
            "total_bytes": p.total_bytes(),
            "cpu_bytes": dev.cpu,
            "gpu_bytes": dev.gpu,
            "gpu_mem": self.gpu_mem,
            "max_ctx": self.max_ctx,
            "command": command,
        })
    }
}
