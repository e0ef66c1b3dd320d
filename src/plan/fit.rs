//! `llama-fit-params` (llama.cpp's `common_fit_params`, common/fit.cpp of the pinned llama.cpp)
//! from the header alone: given each GPU's free memory and a margin per device, the `-c`,
//! `-ngl`, `-ts` and `-ot` it chooses. Its steps, in its order:
//!
//! 1. plan with every layer offloaded, split over the GPUs by free memory; done if each GPU
//!    keeps its margin;
//! 2. with no `-c` given, shrink the context: interpolate linearly between the training context
//!    and the minimum (4096) towards the total budget, rounded down to 256 (on several GPUs the
//!    budget is first lowered by `(nd + 1) · model_per_layer / (2, or 6 for a MoE)`); one GPU:
//!    done when that fits;
//! 3. fill the GPUs back to front with layers (a MoE: with its expert tensors on the CPU),
//!    by false position on the memory per layer;
//! 4. a MoE whose dense part fits: turn the expert-less layers into full ones front to back,
//!    then try part of one more layer (`up`, then `gate`, else `attn` overflowing).
//!
//! llama.cpp measures each candidate by building the model without allocating; here each is
//! this planner's plan (weights and KV exact, the compute buffers the estimate of
//! [`super::compute`], the buffer of the device running the layers from the first of its own
//! to the output; on several GPUs with every layer offloaded and no override, llama.cpp's
//! pipelining keeps four copies of each input a GPU takes from another device).

use super::graph;
use super::hparams::HParams;
use super::weights::{layer_of, n_vocab};
use super::{compute, kv, plan_with, refused, Options};
use crate::error::Error;
use crate::model::GgufModel;
use std::collections::HashMap;

const MIB: i64 = 1024 * 1024;

/// The fit's inputs besides the model.
#[derive(Debug, Clone, PartialEq)]
pub struct FitOptions {
    /// Free memory of each GPU, bytes.
    pub gpu_free: Vec<u64>,
    /// Memory to leave free on each GPU (`-fitt`), bytes; one value is used for every GPU.
    pub margins: Vec<u64>,
    /// The context (`-c`) when the user sets it (then never reduced); None: the training one.
    pub ctx: Option<u64>,
    /// `-fitc`: the smallest context the fit reduces to.
    pub n_ctx_min: u64,
    /// Cache types, flash attention, `-ub`, `-np` (its `ngl` is the fit's to choose).
    pub plan: Options,
    /// The buffer name of each GPU in `-ot` (llama.cpp's, e.g. `CUDA1`); empty: `CUDA<i>`.
    pub buffer_names: Vec<String>,
}

impl Default for FitOptions {
    fn default() -> FitOptions {
        FitOptions {
            gpu_free: Vec::new(),
            margins: vec![1024 * MIB as u64],
            ctx: None,
            n_ctx_min: 4096,
            plan: Options::default(),
            buffer_names: Vec::new(),
        }
    }
}

/// Which part of a partial layer's tensors leaves the device (llama.cpp's
/// `common_layer_fraction_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fraction {
    /// The whole feed-forward: only attention stays.
    Attn,
    /// Feed-forward but `up`.
    Up,
    /// `down` only.
    Gate,
    /// The expert tensors only.
    Moe,
}

impl Fraction {
    /// The `-ot` regex llama.cpp writes for layer `il`.
    fn pattern(self, il: u32) -> String {
        match self {
            Fraction::Attn => format!("blk\\.{il}\\.ffn_(gate|up|gate_up|down).*"),
            Fraction::Up => format!("blk\\.{il}\\.ffn_(gate|gate_up|down).*"),
            Fraction::Gate => format!("blk\\.{il}\\.ffn_down.*"),
            Fraction::Moe => format!("blk\\.{il}\\.ffn_(up|down|gate_up|gate)_(ch|)exps"),
        }
    }

    /// Whether tensor `rest` (its name after `blk.N.`) matches [`Fraction::pattern`] (which
    /// llama.cpp applies with `regex_search`; the layer prefix is checked by the caller).
    fn matches(self, rest: &str) -> bool {
        let Some(ffn) = rest.strip_prefix("ffn_") else {
            return false;
        };
        let any = |names: &[&str]| names.iter().any(|n| ffn.starts_with(n));
        match self {
            Fraction::Attn => any(&["gate", "up", "down"]),
            Fraction::Up => any(&["gate", "down"]),
            Fraction::Gate => any(&["down"]),
            Fraction::Moe => ["up_", "down_", "gate_up_", "gate_"].iter().any(|p| {
                ffn.strip_prefix(p)
                    .is_some_and(|e| e.starts_with("exps") || e.starts_with("chexps"))
            }),
        }
    }
}

/// The layers one GPU holds (llama.cpp's `ngl_t`): `n_layer` in all, the last `n_part` of them
/// partial (the first partial one losing `overflow`, the others their experts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuLayers {
    pub n_layer: u32,
    pub n_part: u32,
    pub overflow: Fraction,
    /// Where the first partial layer's tensors go: None the CPU, Some(i) GPU `i`.
    pub overflow_to: Option<usize>,
}

impl Default for GpuLayers {
    fn default() -> GpuLayers {
        GpuLayers {
            n_layer: 0,
            n_part: 0,
            overflow: Fraction::Moe,
            overflow_to: None,
        }
    }
}

impl GpuLayers {
    /// llama.cpp's `uint32_t` arithmetic: `n_part` wraps past 0 when its fit moves the output
    /// layer off the last GPU (see [`overrides`]).
    fn n_full(&self) -> u32 {
        self.n_layer.wrapping_sub(self.n_part)
    }
}

/// The partial layers as llama.cpp's `set_ngl_tensor_split_tbo` lays them out: (layer, what
/// leaves, to which GPU (None: the CPU)), in its order. Its sums are `uint32_t` and wrap: when
/// step 4 takes the last GPU's one (output) layer while that GPU has no partial layer left,
/// its `n_part` wraps to 2^32 - 1, that GPU then emits no override, and the layer it gave away
/// becomes the first partial layer of the GPU that took it (for the output layer, a pattern
/// that matches no tensor: every layer then sits on that GPU, `-ts` ends in a 0 that is not
/// printed, and the `-ot` names the next GPU).
fn overrides(hp: &HParams, layers: &[GpuLayers]) -> Vec<(u32, Fraction, Option<usize>)> {
    let ngl = layers.iter().fold(0u32, |a, l| a.wrapping_add(l.n_layer));
    let mut il0 = (hp.n_layer + 1).wrapping_sub(ngl);
    let mut out = Vec::new();
    for l in layers {
        il0 = il0.wrapping_add(l.n_full());
        let end = il0.wrapping_add(l.n_part);
        for il in il0..end {
            if il == il0 {
                out.push((il, l.overflow, l.overflow_to));
            } else {
                out.push((il, Fraction::Moe, None));
            }
        }
        il0 = end;
    }
    out
}

/// One device's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeviceUse {
    pub weights: u64,
    pub kv: u64,
    pub compute: u64,
}

impl DeviceUse {
    pub fn total(&self) -> u64 {
        self.weights
            .saturating_add(self.kv)
            .saturating_add(self.compute)
    }
}

/// The fit: the flags and the plan they give.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    pub n_ctx: u64,
    pub ngl: u32,
    /// `-ts`: layers per GPU (empty with one GPU).
    pub tensor_split: Vec<u32>,
    /// `-ot`: (pattern, buffer) in llama.cpp's order; the buffer `CPU` or `GPU<i>`.
    pub overrides: Vec<(String, String)>,
    pub layers: Vec<GpuLayers>,
    pub gpus: Vec<DeviceUse>,
    pub cpu: DeviceUse,
    /// Whether every GPU keeps its margin (llama.cpp also succeeds when it cannot, keeping the
    /// best it found).
    pub fits: bool,
    /// llama.cpp kept its default layers (all of them, split by free memory): it prints
    /// `-ngl -1` and no `-ts`.
    pub default_layers: bool,
    /// The compute buffers come from the graph (see [`super::Plan::compute_derived`]); else
    /// they are an estimate.
    pub compute_derived: bool,
}

impl Fit {
    /// The line `llama-fit-params` prints.
    pub fn flags(&self) -> String {
        if self.default_layers {
            return format!("-c {} -ngl -1", self.n_ctx);
        }
        let mut s = format!("-c {} -ngl {}", self.n_ctx, self.ngl);
        // llama-fit-params drops trailing zeros, and prints a split of more than one GPU only
        let mut split = self.tensor_split.as_slice();
        while let [rest @ .., 0] = split {
            split = rest;
        }
        if split.len() > 1 {
            let ts: Vec<String> = split.iter().map(|n| n.to_string()).collect();
            s.push_str(&format!(" -ts {}", ts.join(",")));
        }
        if !self.overrides.is_empty() {
            let ot: Vec<String> = self
                .overrides
                .iter()
                .map(|(p, b)| format!("{p}={b}"))
                .collect();
            s.push_str(&format!(" -ot \"{}\"", ot.join(",")));
        }
        s
    }
}

/// What one candidate placement costs: the model's tensors by layer, each layer's KV.
struct Costs<'a> {
    model: &'a GgufModel,
    hp: HParams,
    n_gpu: usize,
}

impl Costs<'_> {
    /// Whether the compute buffers are derived from the graph ([`graph`]) for these options.
    fn derived(&self, o: &Options) -> bool {
        graph::supported(self.model, &self.hp, o)
    }
}

/// The layers of GPU `id`: `from..to` over `0..=n_layer` (n_layer: the output layer).
fn ranges(hp: &HParams, layers: &[GpuLayers]) -> Vec<(u32, u32)> {
    let total = layers.iter().fold(0u32, |a, l| a.wrapping_add(l.n_layer));
    let mut il0 = (hp.n_layer + 1).saturating_sub(total);
    layers
        .iter()
        .map(|l| {
            let r = (il0, il0.saturating_add(l.n_layer));
            il0 = r.1;
            r
        })
        .collect()
}

impl Costs<'_> {
    /// Bytes on each GPU and the CPU for `layers` at context `ctx`.
    fn measure(
        &self,
        o: &Options,
        layers: &[GpuLayers],
    ) -> Result<(Vec<DeviceUse>, DeviceUse), Error> {
        let hp = &self.hp;
        let ranges = ranges(hp, layers);
        let parts = overrides(hp, layers);
        let ngl = layers.iter().fold(0u32, |a, l| a.wrapping_add(l.n_layer));
        let mut gpus = vec![DeviceUse::default(); self.n_gpu];
        let mut cpu = DeviceUse::default();
        let device_of = |il: u32| ranges.iter().position(|&(a, b)| il >= a && il < b);
        let derived = self.derived(o);
        let mut placed: HashMap<&str, Option<usize>> = HashMap::new();
        for (_, t) in self.model.tensors() {
            let Some(il) = layer_of(t, hp) else {
                cpu.weights = cpu.weights.saturating_add(t.n_bytes());
                if derived {
                    placed.insert(t.name(), None);
                }
                continue;
            };
            let il = il.min(u64::from(hp.n_layer)) as u32;
            let mut dev = device_of(il);
            // the first override whose pattern the name matches (each names one `blk.N.`)
            if let Some(rest) = t.name().strip_prefix(&format!("blk.{il}.")) {
                if let Some(&(_, _, to)) =
                    parts.iter().find(|(l, f, _)| *l == il && f.matches(rest))
                {
                    dev = to;
                }
            }
            if derived {
                placed.insert(t.name(), dev);
            }
            match dev {
                Some(id) => gpus[id].weights = gpus[id].weights.saturating_add(t.n_bytes()),
                None => cpu.weights = cpu.weights.saturating_add(t.n_bytes()),
            }
        }
        if ngl >= 1 && self.model.tensor("output.weight").is_err() {
            if let (Ok((_, t)), Some(last)) =
                (self.model.tensor("token_embd.weight"), gpus.last_mut())
            {
                last.weights = last.weights.saturating_add(t.n_bytes());
            }
        }
        // the KV of layer il: what offloading it adds to the GPU's share
        let base = plan_with(
            self.model,
            hp,
            &Options {
                ngl: 0,
                ..o.clone()
            },
        )?;
        let (n_ctx_seq, n_seq, n_ubatch) =
            (base.n_ctx_seq, u64::from(base.n_seq_max), base.n_ubatch);
        let kv_gpu = |k: u32| -> Result<u64, Error> {
            Ok(kv::plan(hp, o, n_ctx_seq, n_seq, n_ubatch, k)?.gpu)
        };
        // with `-ngl k` the repeating layers from n_layer + 1 - k are offloaded: the k-th adds
        // layer n_layer + 1 - k (the first, k = 1, the output layer, which has no cache)
        let mut prev = kv_gpu(1)?;
        for k in 2..=hp.n_layer + 1 {
            let now = kv_gpu(k)?;
            let il = hp.n_layer + 1 - k;
            let bytes = now.saturating_sub(prev);
            prev = now;
            match device_of(il) {
                Some(id) => gpus[id].kv = gpus[id].kv.saturating_add(bytes),
                None => cpu.kv = cpu.kv.saturating_add(bytes),
            }
        }
        cpu.kv = cpu.kv.saturating_add(base.kv.total().saturating_sub(prev));
        // compute: each GPU's buffer as if it ran from its first layer to the output
        // llama.cpp pipelines several devices when every layer is offloaded and no tensor is
        // overridden (llama_context: split mode layer, KV offloaded, devices with async compute
        // and events, as CUDA's and RPC's): the scheduler then keeps GGML_SCHED_MAX_COPIES (4)
        // copies of each input a device takes from another, never freed, instead of one
        let pipelined = self.n_gpu > 1 && ngl > hp.n_layer && parts.is_empty();
        if derived {
            let layer = |il: u32| device_of(il);
            let tensor = |name: &str| placed.get(name).copied().flatten();
            let place = graph::Placement {
                layer: &layer,
                tensor: &tensor,
                n_gpu: self.n_gpu,
                pipelined,
            };
            let c = graph::compute(self.model, hp, o, &base.kv, n_ubatch, &place);
            for (id, g) in gpus.iter_mut().enumerate() {
                g.compute = c[id];
            }
            cpu.compute = c[self.n_gpu];
            return Ok((gpus, cpu));
        }
        for (id, &(a, b)) in ranges.iter().enumerate() {
            if b > a {
                let c = compute::estimate(hp, o, &base.kv, n_ubatch, hp.n_layer + 1 - a);
                gpus[id].compute = c.gpu;
                if pipelined {
                    let copies = 3 * 4 * n_ubatch * cross_device_inputs(hp, o, &base.kv, a, b);
                    gpus[id].compute = gpus[id].compute.saturating_add(copies);
                }
            }
        }
        cpu.compute = compute::estimate(hp, o, &base.kv, n_ubatch, ngl).cpu;
        Ok((gpus, cpu))
    }

    fn totals(&self, o: &Options, layers: &[GpuLayers]) -> Result<Vec<i64>, Error> {
        let (gpus, _) = self.measure(o, layers)?;
        Ok(gpus.iter().map(|d| d.total() as i64).collect())
    }
}

/// What a GPU running layers `a..b` (b = n_layer + 1: with the output) takes from other
/// devices per token of the ubatch, in f32 values: the residual stream entering its first layer
/// (the token embeddings, from the CPU, for the first), and the masks of the caches its
/// attention layers use (f16 with flash attention).
fn cross_device_inputs(hp: &HParams, o: &Options, kv: &kv::KvPlan, a: u32, b: u32) -> u64 {
    let layers = a as usize..(b.min(hp.n_layer)) as usize;
    let mut masks = 0u64;
    for c in &kv.caches {
        let used = layers
            .clone()
            .any(|il| hp.has_kv.get(il) == Some(&true) && hp.is_swa.get(il) == Some(&c.swa));
        if used {
            masks = masks.saturating_add(c.cells);
        }
    }
    let masks = if o.flash_attn { masks / 2 } else { masks };
    hp.n_embd.saturating_add(masks)
}

/// Each GPU's and the CPU's bytes for a placement given as the fit gives it: `layers` per GPU
/// (`-ngl` their sum, `-ts` their `n_layer`, `-ot` their partial layers, as [`Fit::flags`]
/// prints them) at context `opts.ctx` (None: the training context) with `opts.plan`'s cache
/// options. Only `opts.ctx` and `opts.plan` are read.
pub fn measure(
    model: &GgufModel,
    opts: &FitOptions,
    layers: &[GpuLayers],
) -> Result<(Vec<DeviceUse>, DeviceUse), Error> {
    if layers.is_empty() || layers.len() > 16 {
        return Err(refused(format!("1 to 16 GPUs, got {}", layers.len())));
    }
    let hp = HParams::read(model.first(), n_vocab(model)?)?;
    let costs = Costs {
        model,
        hp,
        n_gpu: layers.len(),
    };
    let mut o = opts.plan.clone();
    o.ctx = Some(opts.ctx.unwrap_or(costs.hp.n_ctx_train));
    costs.measure(&o, layers)
}

/// Chooses the flags `llama-fit-params` would for `model` on GPUs `opts.gpu_free`.
pub fn fit(model: &GgufModel, opts: &FitOptions) -> Result<Fit, Error> {
    let nd = opts.gpu_free.len();
    if nd == 0 {
        return Err(refused("fit needs at least one GPU".to_string()));
    }
    if nd > 16 {
        return Err(refused(format!("at most 16 GPUs, got {nd}")));
    }
    let margins: Vec<i64> = match opts.margins.len() {
        1 => vec![opts.margins[0].min(i64::MAX as u64) as i64; nd],
        n if n == nd => opts
            .margins
            .iter()
            .map(|&m| m.min(i64::MAX as u64) as i64)
            .collect(),
        n => return Err(refused(format!("{n} margins for {nd} GPUs"))),
    };
    let free: Vec<i64> = opts
        .gpu_free
        .iter()
        .map(|&f| f.min(i64::MAX as u64 / 4) as i64)
        .collect();
    let hp = HParams::read(model.first(), n_vocab(model)?)?;
    let hp_ngl = hp.n_layer;
    let has_experts = model
        .tensors()
        .any(|(_, t)| t.name().contains("_exps") || t.name().contains("_chexps"));
    let n_streams = u64::from(opts.plan.parallel.max(1));
    let costs = Costs {
        model,
        hp,
        n_gpu: nd,
    };
    let hp = &costs.hp;
    let mut o = opts.plan.clone();
    let n_ctx_max = hp
        .n_ctx_train
        .saturating_mul(n_streams)
        .min(u64::from(u32::MAX));
    let n_ctx_min_total = opts
        .n_ctx_min
        .saturating_mul(n_streams)
        .min(u64::from(u32::MAX));
    o.ctx = Some(opts.ctx.unwrap_or(n_ctx_max));

    // step 1: every layer offloaded, split by free memory
    let mut default_split = vec![GpuLayers::default(); nd];
    {
        let sum: f64 = free.iter().map(|&f| f as f64).sum::<f64>().max(1.0);
        let mut cum = 0.0f32;
        let splits: Vec<f32> = free
            .iter()
            .map(|&f| {
                cum += (f as f64 / sum) as f32;
                cum
            })
            .collect();
        let act = hp_ngl + 1;
        for il in 0..act {
            let x = il as f32 / act as f32;
            let id = splits.iter().position(|&s| s > x).unwrap_or(nd - 1);
            default_split[id].n_layer += 1;
        }
    }
    let full = costs.totals(&o, &default_split)?;
    let projected_free: Vec<i64> = full.iter().zip(&free).map(|(u, f)| f - u).collect();
    let finish = |o: &Options, layers: Vec<GpuLayers>, default_layers: bool| {
        finish(
            &costs,
            o,
            layers,
            &free,
            &margins,
            &opts.buffer_names,
            default_layers,
        )
    };
    let done = |o: &Options, layers: Vec<GpuLayers>| finish(o, layers, false);
    if projected_free.iter().zip(&margins).all(|(p, m)| p >= m) {
        return finish(&o, default_split, true);
    }

    // step 2: a smaller context
    let sum_free: i64 = free.iter().sum();
    let sum_used: i64 = full.iter().sum();
    let sum_margin: i64 = margins.iter().sum();
    if sum_free - sum_used - sum_margin < 0 && opts.ctx.is_none() && n_ctx_max > n_ctx_min_total {
        let mut target = sum_free - sum_margin;
        if nd > 1 {
            let (gpus, _) = costs.measure(&o, &default_split)?;
            let model_sum: i64 = gpus.iter().map(|d| d.weights as i64).sum();
            let per_layer = model_sum / i64::from(hp_ngl.max(1));
            target -= (nd as i64 + 1) * per_layer / if has_experts { 6 } else { 2 };
        }
        o.ctx = Some(n_ctx_min_total);
        let used_min: i64 = costs.totals(&o, &default_split)?.iter().sum();
        if target > used_min {
            let span = (n_ctx_max - n_ctx_min_total) as i128;
            let step = span * (target - used_min) as i128 / ((sum_used - used_min) as i128).max(1);
            let mut n_ctx = n_ctx_min_total + step.max(0) as u64;
            let align = 256 * n_streams;
            n_ctx = (n_ctx - n_ctx % align).max(n_ctx_min_total);
            o.ctx = Some(n_ctx);
            if nd == 1 {
                return finish(&o, default_split, true);
            }
        }
    }

    // step 3: fill back to front (a MoE: experts on the CPU)
    let targets: Vec<i64> = free.iter().zip(&margins).map(|(f, m)| f - m).collect();
    let mut ngl = vec![GpuLayers::default(); nd];
    let mut mem = costs.totals(&o, &ngl)?;
    let mut surplus_cpu_moe = 0i64;
    if has_experts {
        let all_moe: Vec<GpuLayers> = (0..nd)
            .map(|id| {
                let n = default_split[id].n_layer;
                let is_last = id == nd - 1;
                GpuLayers {
                    n_layer: n,
                    n_part: if is_last { n.saturating_sub(1) } else { n },
                    ..GpuLayers::default()
                }
            })
            .collect();
        let m = costs.totals(&o, &all_moe)?;
        for id in 0..nd {
            surplus_cpu_moe += free[id] - m[id] - margins[id];
        }
    }
    for id in (0..nd).rev() {
        let assigned: u32 = ngl[id + 1..].iter().map(|l| l.n_layer).sum();
        let n_unassigned = hp_ngl + 1 - assigned;
        let mut high = ngl.clone();
        high[id].n_layer = n_unassigned;
        if has_experts {
            high[id].n_part = if id < nd - 1 {
                n_unassigned
            } else {
                n_unassigned.saturating_sub(1)
            };
        }
        if high[id].n_layer == 0 {
            continue;
        }
        let mut mem_high = costs.totals(&o, &high)?;
        if mem_high[id] > targets[id] {
            let mut delta = high[id].n_layer - ngl[id].n_layer;
            while delta > 1 {
                let step = false_position(delta, targets[id] - mem[id], mem_high[id] - mem[id]);
                let mut test = ngl.clone();
                test[id].n_layer += step;
                if has_experts {
                    test[id].n_part += if id == nd - 1 && test[id].n_part == 0 {
                        step - 1
                    } else {
                        step
                    };
                }
                let mem_test = costs.totals(&o, &test)?;
                if mem_test[id] <= targets[id] {
                    ngl = test;
                    mem = mem_test;
                } else {
                    high = test;
                    mem_high = mem_test;
                }
                delta = high[id].n_layer - ngl[id].n_layer;
            }
        } else {
            ngl = high;
            mem = mem_high;
        }
    }
    if !has_experts || surplus_cpu_moe <= 0 {
        return done(&o, ngl);
    }

    // step 4: experts back onto the GPUs, front to back
    let mut dense_start = nd;
    for id in (0..nd).rev() {
        if ngl[id].n_layer > 0 {
            dense_start = id;
        } else {
            break;
        }
    }
    if dense_start >= nd {
        return done(&o, ngl);
    }
    let mut id = 0;
    while id <= dense_start && dense_start < nd {
        let mut high = ngl.clone();
        for jd in dense_start..nd {
            let moved = if jd < nd - 1 {
                high[jd].n_layer
            } else {
                high[jd].n_layer.wrapping_sub(1)
            };
            high[id].n_layer = high[id].n_layer.wrapping_add(moved);
            high[jd].n_layer = high[jd].n_layer.wrapping_sub(moved);
            high[jd].n_part = 0;
        }
        let dense_start_high = nd - 1;
        let mut mem_high = costs.totals(&o, &high)?;
        if mem_high[id] > targets[id] {
            let mut delta = high[id].n_full().saturating_sub(ngl[id].n_full());
            while delta > 1 {
                let step = false_position(delta, targets[id] - mem[id], mem_high[id] - mem[id]);
                let mut test = ngl.clone();
                let mut ds = dense_start;
                let mut converted = 0;
                while ds < nd {
                    let n = (step - converted).min(test[ds].n_part);
                    test[ds].n_layer = test[ds].n_layer.wrapping_sub(n);
                    test[ds].n_part -= n;
                    test[id].n_layer = test[id].n_layer.wrapping_add(n);
                    converted += n;
                    if test[ds].n_part > 0 {
                        break;
                    }
                    ds += 1;
                }
                let mem_test = costs.totals(&o, &test)?;
                if mem_test[id] <= targets[id] {
                    ngl = test;
                    mem = mem_test;
                    dense_start = ds;
                } else {
                    high = test;
                    mem_high = mem_test;
                }
                let next = high[id].n_full().saturating_sub(ngl[id].n_full());
                if next >= delta {
                    break; // no progress: llama.cpp asserts it cannot happen
                }
                delta = next;
            }
        } else {
            ngl = high;
            mem = mem_high;
            dense_start = dense_start_high;
        }
        // part of one more layer (with llama.cpp's wrapping: a GPU left with no partial layer
        // gives its last one all the same, see `overrides`)
        if dense_start < nd && ngl[dense_start].n_layer > u32::from(id == nd - 1) {
            let mut test = ngl.clone();
            let mut ds = dense_start;
            test[ds].n_layer -= 1;
            test[ds].n_part = test[ds].n_part.wrapping_sub(1);
            test[id].n_layer += 1;
            test[id].n_part = test[id].n_part.wrapping_add(1);
            if test[ds].n_part == 0 {
                ds += 1;
            }
            test[id].overflow = Fraction::Up;
            if id < nd - 1 {
                test[id].overflow_to = Some(id + 1);
            }
            let fits =
                |m: &[i64]| m[id] < targets[id] && (id + 1 == nd || m[id + 1] < targets[id + 1]);
            let m = costs.totals(&o, &test)?;
            if fits(&m) {
                ngl = test.clone();
                mem = m;
                dense_start = ds;
                test[id].overflow = Fraction::Gate;
                let m = costs.totals(&o, &test)?;
                if fits(&m) {
                    ngl = test;
                    mem = m;
                }
            } else {
                test[id].overflow = Fraction::Attn;
                let m = costs.totals(&o, &test)?;
                if fits(&m) {
                    ngl = test;
                    mem = m;
                    dense_start = ds;
                }
            }
        }
        id += 1;
    }
    let _ = mem;
    done(&o, ngl)
}

/// llama.cpp's false-position step: `delta · have / span`, kept within `1..delta`.
fn false_position(delta: u32, have: i64, span: i64) -> u32 {
    let raw = i64::from(delta).saturating_mul(have) / span.max(1);
    // llama.cpp casts to uint32_t: a negative guess wraps to a large one, then clamps to delta - 1
    let step = if raw < 0 {
        u32::MAX
    } else {
        raw.min(i64::from(u32::MAX)) as u32
    };
    step.max(1).min(delta - 1)
}

fn finish(
    costs: &Costs<'_>,
    o: &Options,
    layers: Vec<GpuLayers>,
    free: &[i64],
    margins: &[i64],
    names: &[String],
    default_layers: bool,
) -> Result<Fit, Error> {
    let hp = &costs.hp;
    let nd = layers.len();
    let (gpus, cpu) = costs.measure(o, &layers)?;
    let name = |d: usize| names.get(d).cloned().unwrap_or_else(|| format!("CUDA{d}"));
    let ngl = layers.iter().fold(0u32, |a, l| a.wrapping_add(l.n_layer));
    let overrides = overrides(hp, &layers)
        .into_iter()
        .map(|(il, f, to)| (f.pattern(il), to.map_or_else(|| "CPU".to_string(), name)))
        .collect();
    let fits = gpus
        .iter()
        .zip(free.iter().zip(margins))
        .all(|(g, (f, m))| f - g.total() as i64 >= *m);
    Ok(Fit {
        n_ctx: o.ctx.unwrap_or(hp.n_ctx_train),
        ngl,
        tensor_split: if nd > 1 {
            layers.iter().map(|l| l.n_layer).collect()
        } else {
            Vec::new()
        },
        overrides,
        layers,
        gpus,
        cpu,
        fits,
        default_layers,
        compute_derived: costs.derived(o),
    })
}
