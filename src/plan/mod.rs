//! Memory planner: what llama.cpp allocates to run a GGUF model, from its metadata and tensor
//! infos alone, and the inverse questions (the largest context that fits, how many layers to
//! offload).
//!
//! Conventions are `llama-server`'s defaults (see docs/cli.md, `gguf-lens memory`): a separate
//! KV cache per parallel slot (`kv_unified` off), `swa_full` off, `n_batch` 2048, `n_ubatch` 512
//! (an option),
//! the model memory-mapped, no repacked weight copies. The KV cache and the weights are exact
//! (checked against llama.cpp's own log, tests/oracle_plan.rs); the compute buffers are derived
//! from the graph as llama.cpp's scheduler and allocator size them for Llama, Mistral, Mixtral,
//! Qwen2, Qwen3, Qwen3-MoE, Gemma 2, Gemma 3 and OpenELM (see [`graph`], checked in
//! tests/oracle_compute.rs and tests/oracle_plan_random.rs) and estimated
//! for the other families (see [`compute`]).

mod compute;
mod fit;
mod graph;
mod hparams;
mod kv;
mod report;
mod weights;

use crate::error::{Error, ErrorKind};

use crate::model::GgufModel;
use crate::types::GgmlType;

pub use fit::{fit, measure, DeviceUse, Fit, FitOptions, Fraction, GpuLayers};
pub use hparams::HParams;
pub use hparams::Recurrent;
pub use kv::{CachePlan, KvPlan, RecurrentPlan};
pub use report::{DeviceBytes, Document, KvCacheDoc, Report};
pub use weights::WeightsPlan;

/// A plan that cannot be made: a model the planner cannot read, or a combination llama.cpp
/// refuses (its message).
pub(crate) fn refused(message: String) -> Error {
    Error::new(ErrorKind::PlanRefused { message })
}

/// The KV cache types llama.cpp accepts for `--cache-type-k/-v`.
pub const CACHE_TYPES: [GgmlType; 9] = [
    GgmlType::F32,
    GgmlType::F16,
    GgmlType::BF16,
    GgmlType::Q8_0,
    GgmlType::Q4_0,
    GgmlType::Q4_1,
    GgmlType::IQ4_NL,
    GgmlType::Q5_0,
    GgmlType::Q5_1,
];

/// A cache type by llama.cpp's spelling (`f16`, `q8_0`, … any case).
pub fn cache_type(name: &str) -> Option<GgmlType> {
    GgmlType::from_name(name).filter(|t| CACHE_TYPES.contains(t))
}

/// What to plan for: `llama-server -c ctx -np parallel -ngl ngl --cache-type-k/-v -fa`.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// `-c`: the total context over every slot; None or 0: the training context.
    pub ctx: Option<u64>,
    /// `-np`: parallel slots (sequences), each with its own cache.
    pub parallel: u32,
    pub type_k: GgmlType,
    pub type_v: GgmlType,
    /// `-fa on` (else off).
    pub flash_attn: bool,
    /// `-ngl`: layers offloaded to the GPU (the output layer counts as one, as llama.cpp).
    pub ngl: u32,
    /// `-ub`: the micro-batch the compute buffers are sized for (at most the batch, 2048 or the
    /// context if smaller); 0: the batch.
    pub n_ubatch: u32,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            ctx: None,
            parallel: 1,
            type_k: GgmlType::F16,
            type_v: GgmlType::F16,
            flash_attn: false,
            ngl: 0,
            n_ubatch: 512,
        }
    }
}

/// Bytes on each device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PerDevice {
    pub cpu: u64,
    pub gpu: u64,
}

impl PerDevice {
    pub fn total(&self) -> u64 {
        self.cpu.saturating_add(self.gpu)
    }
}

/// The plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub architecture: String,
    pub n_layer: u32,
    pub n_ctx_train: u64,
    /// The context llama.cpp uses (padded to 256, a multiple of the slots).
    pub n_ctx: u64,
    /// Cells per slot.
    pub n_ctx_seq: u64,
    pub n_seq_max: u32,
    pub n_ubatch: u64,
    pub weights: WeightsPlan,
    pub kv: KvPlan,
    /// The compute buffers, both devices.
    pub compute_bytes: u64,
    /// The compute buffer of each device (without `-ngl` all the CPU's).
    pub compute: PerDevice,
    /// The compute buffers come from the graph, allocated as llama.cpp does (the families of
    /// [`graph`]); else they are an estimate ([`compute`]).
    pub compute_derived: bool,
    pub options: Options,
}

impl Plan {
    pub fn weights_bytes(&self) -> u64 {
        self.weights.total()
    }

    pub fn total_bytes(&self) -> u64 {
        self.weights_bytes()
            .saturating_add(self.kv.total())
            .saturating_add(self.compute_bytes)
    }

    /// Bytes per device: weights, KV and compute buffers split by layer placement.
    pub fn per_device(&self) -> PerDevice {
        PerDevice {
            cpu: self
                .weights
                .cpu
                .saturating_add(self.kv.cpu)
                .saturating_add(self.compute.cpu),
            gpu: self
                .weights
                .gpu
                .saturating_add(self.kv.gpu)
                .saturating_add(self.compute.gpu),
        }
    }

    /// The `llama-server` line that runs this plan, for model file `file`.
    pub fn command(&self, file: &str) -> String {
        let o = &self.options;
        let mut cmd = format!("llama-server -m {} -c {}", shell_quote(file), self.n_ctx);
        cmd.push_str(&format!(" -ngl {}", o.ngl));
        if o.type_k != GgmlType::F16 {
            cmd.push_str(&format!(
                " --cache-type-k {}",
                o.type_k.name().to_lowercase()
            ));
        }
        if o.type_v != GgmlType::F16 {
            cmd.push_str(&format!(
                " --cache-type-v {}",
                o.type_v.name().to_lowercase()
            ));
        }
        cmd.push_str(if o.flash_attn { " -fa on" } else { " -fa off" });
        cmd.push_str(&format!(" -np {}", self.n_seq_max));
        cmd.push_str(" --no-kv-unified");
        cmd
    }
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:+,@%".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn pad(x: u64, n: u64) -> u64 {
    x.div_ceil(n).saturating_mul(n)
}

/// Plans `model` with `options`.
pub fn plan(model: &GgufModel, options: &Options) -> Result<Plan, Error> {
    let n_vocab = weights::n_vocab(model)?;
    let hp = HParams::read(model.first(), n_vocab)?;
    plan_with(model, &hp, options)
}

/// Plans with hyper-parameters already read (the inverse searches call this many times).
pub fn plan_with(model: &GgufModel, hp: &HParams, options: &Options) -> Result<Plan, Error> {
    refusals(hp, options)?;
    let n_seq = u64::from(options.parallel.max(1));
    if n_seq > 256 {
        return Err(refused(format!("n_seq_max must be <= 256, got {n_seq}")));
    }
    // llama_context: n_ctx (0: training), padded to 256; per slot n_ctx / n_seq padded to 256
    let asked = match options.ctx {
        None | Some(0) => hp.n_ctx_train,
        Some(c) => c,
    };
    if asked == 0 || asked > u64::from(u32::MAX) {
        return Err(refused(format!("context {asked} is out of range")));
    }
    let n_batch = asked.min(2048);
    let n_ubatch = match options.n_ubatch {
        0 => n_batch,
        u => n_batch.min(u64::from(u)),
    };
    let n_ctx = pad(asked, 256);
    let n_ctx_seq = pad(n_ctx / n_seq, 256);
    if n_ctx_seq == 0 {
        return Err(refused("n_ctx_seq == 0".to_string()));
    }
    let n_ctx = n_ctx_seq * n_seq;
    let ngl = options.ngl.min(hp.n_layer + 1);
    let weights = weights::plan(model, hp, ngl)?;
    let kv = kv::plan(hp, options, n_ctx_seq, n_seq, n_ubatch, ngl)?;
    let compute_derived = graph::supported(model, hp, options);
    let compute = if compute_derived {
        // one GPU holding the layers from gpu_start (the output layer n_layer among them)
        let gpu_start = (hp.n_layer + 1).saturating_sub(ngl);
        let layer = |il: u32| (il >= gpu_start).then_some(0);
        let tensor = |name: &str| {
            let il = model
                .tensor(name)
                .ok()
                .and_then(|(_, t)| weights::layer_of(t, hp))?;
            (il >= u64::from(gpu_start)).then_some(0)
        };
        let place = graph::Placement {
            layer: &layer,
            tensor: &tensor,
            n_gpu: 1,
            pipelined: false,
        };
        let c = graph::compute(model, hp, options, &kv, n_ubatch, &place);
        PerDevice {
            gpu: c[0],
            cpu: c[1],
        }
    } else {
        compute::estimate(hp, options, &kv, n_ubatch, ngl)
    };
    Ok(Plan {
        architecture: hp.arch.clone(),
        n_layer: hp.n_layer,
        n_ctx_train: hp.n_ctx_train,
        n_ctx,
        n_ctx_seq,
        n_seq_max: n_seq as u32,
        n_ubatch,
        weights,
        kv,
        compute_bytes: compute.total(),
        compute,
        compute_derived,
        options: Options {
            ngl,
            ..options.clone()
        },
    })
}

/// The combinations llama.cpp's `llama_init_from_model` refuses, with its messages.
fn refusals(hp: &HParams, o: &Options) -> Result<(), Error> {
    for t in [o.type_k, o.type_v] {
        if !CACHE_TYPES.contains(&t) {
            return Err(refused(format!(
                "unsupported cache type {}",
                t.name().to_lowercase()
            )));
        }
    }
    let quantized = |t: GgmlType| !t.is_plain();
    let name = |t: GgmlType| t.name().to_lowercase();
    if hp.mla && o.type_k != o.type_v {
        return Err(refused(format!(
            "model does not support different K ({}) and V ({}) cache types",
            name(o.type_k),
            name(o.type_v)
        )));
    }
    if quantized(o.type_v) && !o.flash_attn {
        return Err(refused(
            "quantized V cache requires flash_attn to be enabled".to_string(),
        ));
    }
    if o.flash_attn {
        for (t, what, heads) in [
            (o.type_k, "K", [hp.n_embd_head_k, hp.n_embd_head_k_swa]),
            (o.type_v, "V", [hp.n_embd_head_v, hp.n_embd_head_v_swa]),
        ] {
            let block = u64::from(t.block_size());
            if quantized(t) {
                for swa in &hp.is_swa {
                    let head = if *swa { heads[1] } else { heads[0] };
                    if head % block != 0 {
                        return Err(refused(format!(
                            "{what} cache type {} with block size {block} does not divide n_embd_head_{}={head}",
                            name(t),
                            what.to_lowercase()
                        )));
                    }
                }
            }
        }
    }
    Ok(())
}

/// The largest context (a multiple of 256 per slot, at most what llama.cpp's u32 `n_ctx` holds)
/// whose plan fits `budget` bytes on the device `device` picks from the plan (e.g. the CPU, the
/// GPU, the total); None when not even 256 per slot fits. Not capped at the training context:
/// llama.cpp runs longer ones (with a warning), and a plan the user asks for at such a context
/// must not fit while the largest context shown is smaller.
pub fn max_ctx(
    model: &GgufModel,
    options: &Options,
    budget: u64,
    device: impl Fn(&Plan) -> u64,
) -> Result<Option<u64>, Error> {
    let n_vocab = weights::n_vocab(model)?;
    let hp = HParams::read(model.first(), n_vocab)?;
    let n_seq = u64::from(options.parallel.max(1));
    let fits = |cells: u64| -> Result<bool, Error> {
        let o = Options {
            ctx: Some(cells * n_seq),
            ..options.clone()
        };
        Ok(device(&plan_with(model, &hp, &o)?) <= budget)
    };
    // at most what llama.cpp's u32 n_ctx can hold
    let top = (u64::from(u32::MAX) / n_seq / 256).max(1);
    if !fits(256)? {
        return Ok(None);
    }
    // bisection over multiples of 256 cells per slot: memory grows with the context
    let (mut lo, mut hi) = (1u64, top);
    if fits(hi * 256)? {
        return Ok(Some(hi * 256 * n_seq));
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid * 256)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(Some(lo * 256 * n_seq))
}

/// The most layers to offload (`-ngl`, 0 to n_layer + 1) whose GPU share (weights and KV of
/// the offloaded layers, the GPU's compute buffer) fits `gpu_budget` bytes.
pub fn max_ngl(model: &GgufModel, options: &Options, gpu_budget: u64) -> Result<u32, Error> {
    let n_vocab = weights::n_vocab(model)?;
    let hp = HParams::read(model.first(), n_vocab)?;
    let mut best = 0;
    for ngl in 0..=hp.n_layer + 1 {
        let o = Options {
            ngl,
            ..options.clone()
        };
        if plan_with(model, &hp, &o)?.per_device().gpu <= gpu_budget {
            best = ngl;
        } else {
            break;
        }
    }
    Ok(best)
}
