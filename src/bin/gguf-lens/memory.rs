//! `gguf-lens memory`: what llama.cpp allocates to run a model (weights, KV cache, compute
//! buffer) per device, the largest context and the -ngl that fit a GPU, and the command line.

use gguf_lens::plan::{cache_type, Options, Plan, Report};
use gguf_lens::GgmlType;

use crate::Failure;
use gguf_lens::model::open;

/// Plan the memory llama.cpp needs for a GGUF model, as `llama-server` runs it by default: a
/// separate KV cache per parallel slot, swa_full off, n_batch 2048, n_ubatch 512, the model
/// memory-mapped. The KV cache and the weights are llama.cpp's to the byte; the compute buffers
/// are derived from the graph as llama.cpp allocates them for Llama, Mistral, Mixtral, Qwen2,
/// Qwen3, Qwen3-MoE, Gemma 2, Gemma 3 and OpenELM, and estimated for the other families. A split model is planned as one (name any
/// shard).
///
/// With --gpu-mem: without --ngl, the most layers that fit the GPU at this context; max_ctx is
/// the largest context whose GPU share fits with those layers offloaded.
///
/// Refused as llama.cpp refuses them (exit 1): a quantized V cache without --flash-attn,
/// different K and V types on an MLA model (DeepSeek 2/3), a quantized type whose block does not
/// divide the head size.
///
/// Example: gguf-lens memory model.gguf --ctx 32768 --cache-type-k q8_0 --cache-type-v q8_0
///   --flash-attn --gpu-mem 24GiB
#[derive(clap::Args, Debug)]
pub struct Args {
    /// GGUF file (any shard of a split model).
    file: String,
    /// Context (-c), over every slot; default: the model's training context.
    #[arg(long, value_name = "N")]
    ctx: Option<u64>,
    #[command(flatten)]
    cache: CacheArgs,
    /// Layers to offload (-ngl; n_layer + 1 offloads the output layer too).
    #[arg(long, value_name = "N")]
    ngl: Option<u32>,
    /// GPU memory: bytes, or with a binary suffix (K, M, G, T; KiB, MiB, GiB, TiB; 24G = 24 GiB).
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
    gpu_mem: Option<u64>,
    /// One JSON object: {"weights_bytes", "kv_cache_bytes", "kv_cache": {"k_bytes", "v_bytes",
    /// "swa_bytes", "caches"}, "compute_bytes", "total_bytes", "max_ctx", "command", …}.
    #[arg(long)]
    json: bool,
}

/// The options `memory` and `fit` share: slots, cache types, flash attention.
#[derive(clap::Args, Debug)]
pub struct CacheArgs {
    /// Parallel slots (-np), each with its own KV cache.
    #[arg(long, value_name = "N", default_value_t = 1)]
    parallel: u32,
    /// K cache type: f32 f16 bf16 q8_0 q4_0 q4_1 iq4_nl q5_0 q5_1.
    #[arg(long, value_name = "T", default_value = "f16", value_parser = parse_type)]
    cache_type_k: GgmlType,
    /// V cache type (quantized types need --flash-attn).
    #[arg(long, value_name = "T", default_value = "f16", value_parser = parse_type)]
    cache_type_v: GgmlType,
    /// Flash attention on (-fa on); without it the plan is for -fa off.
    #[arg(long)]
    flash_attn: bool,
}

impl CacheArgs {
    /// The planner's options with these set (the rest llama-server's defaults).
    pub fn options(&self) -> Options {
        Options {
            parallel: self.parallel,
            type_k: self.cache_type_k,
            type_v: self.cache_type_v,
            flash_attn: self.flash_attn,
            ..Options::default()
        }
    }
}

fn parse_type(text: &str) -> Result<GgmlType, String> {
    cache_type(text).ok_or_else(|| {
        format!("{text:?} is not a KV cache type (f32 f16 bf16 q8_0 q4_0 q4_1 iq4_nl q5_0 q5_1)")
    })
}

/// `123`, `24G`, `24GiB`, `512MiB`, `1.5G` (binary multiples).
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" | "kb" => 10,
        "m" | "mib" | "mb" => 20,
        "g" | "gib" | "gb" => 30,
        "t" | "tib" | "tb" => 40,
        _ => {
            return Err(format!(
                "{text:?} is not a byte count (e.g. 8589934592, 8G, 8GiB)"
            ))
        }
    };
    let bad = || format!("{text:?} is not a byte count (e.g. 8589934592, 8G, 8GiB)");
    if shift == 0 {
        return num.parse().map_err(|_| bad());
    }
    let value: f64 = num.parse().map_err(|_| bad())?;
    let bytes = value * (1u64 << shift) as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes >= u64::MAX as f64 {
        return Err(bad());
    }
    Ok(bytes as u64)
}

pub fn run(args: &Args) -> Result<(), Failure> {
    let opened = open(&args.file)?;
    let Some(model) = opened.model.gguf() else {
        return Err(format!("{}: not a GGUF file", args.file).into());
    };
    let err = |e: gguf_lens::Error| format!("{}: {e}", args.file);
    let options = Options {
        ctx: args.ctx,
        ngl: args.ngl.unwrap_or(0),
        ..args.cache.options()
    };
    let report = Report::new(model, options, args.ngl.is_none(), args.gpu_mem).map_err(err)?;
    let command = report.plan.command(&args.file);
    let out = if args.json {
        crate::json_line(
            &serde_json::to_value(report.document(&command)).map_err(|e| e.to_string())?,
        )
    } else {
        text(&report.plan, report.max_ctx, &command, args.gpu_mem)
    };
    crate::write_stdout(out.as_bytes())?;
    Ok(())
}

fn mib(bytes: u64) -> String {
    format!("{:.2} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn text(p: &Plan, max_context: Option<u64>, command: &str, gpu_mem: Option<u64>) -> String {
    let mut s = String::new();
    let o = &p.options;
    s.push_str(&format!(
        "{}: {} layers, training context {}\n",
        p.architecture, p.n_layer, p.n_ctx_train
    ));
    s.push_str(&format!(
        "context {} ({} per slot × {}), K {} V {}, flash attention {}, -ngl {}\n\n",
        p.n_ctx,
        p.n_ctx_seq,
        p.n_seq_max,
        o.type_k.name().to_lowercase(),
        o.type_v.name().to_lowercase(),
        if o.flash_attn { "on" } else { "off" },
        o.ngl
    ));
    s.push_str(&format!(
        "weights   {:>14}  (CPU {}, GPU {})\n",
        mib(p.weights_bytes()),
        mib(p.weights.cpu),
        mib(p.weights.gpu)
    ));
    s.push_str(&format!(
        "KV cache  {:>14}  (K {}, V {}; CPU {}, GPU {})\n",
        mib(p.kv.total()),
        mib(p.kv.k_bytes),
        mib(p.kv.v_bytes),
        mib(p.kv.cpu),
        mib(p.kv.gpu)
    ));
    for c in &p.kv.caches {
        s.push_str(&format!(
            "  {} cache: {} cells × {} slots, {} layers, {}\n",
            if c.swa { "SWA " } else { "full" },
            c.cells,
            c.streams,
            c.layers,
            mib(c.k_bytes + c.v_bytes)
        ));
    }
    if let Some(r) = &p.kv.recurrent {
        s.push_str(&format!(
            "  recurrent state: {} cells, {} layers, R {}, S {}\n",
            r.cells,
            r.layers,
            mib(r.r_bytes),
            mib(r.s_bytes)
        ));
    }
    let how = if p.compute_derived {
        "derived"
    } else {
        "estimate"
    };
    if p.compute.gpu > 0 {
        s.push_str(&format!(
            "compute   {:>14}  ({how}: CPU {}, GPU {})\n",
            mib(p.compute_bytes),
            mib(p.compute.cpu),
            mib(p.compute.gpu)
        ));
    } else {
        s.push_str(&format!(
            "compute   {:>14}  (CPU backend, {how})\n",
            mib(p.compute_bytes)
        ));
    }
    let dev = p.per_device();
    s.push_str(&format!(
        "total     {:>14}  (CPU {}, GPU {})\n",
        mib(p.total_bytes()),
        mib(dev.cpu),
        mib(dev.gpu)
    ));
    if let Some(budget) = gpu_mem {
        s.push_str(&format!(
            "\nGPU {}: -ngl {} fits; largest context: {}\n",
            mib(budget),
            o.ngl,
            max_context.map_or("none".to_string(), |c| c.to_string())
        ));
    }
    s.push_str(&format!("\n{command}\n"));
    s
}
