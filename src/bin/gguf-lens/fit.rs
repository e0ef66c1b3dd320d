//! `gguf-lens fit`: the flags llama.cpp's `llama-fit-params` chooses for the GPUs named, from
//! the header alone, and the per-device plan they give.

use gguf_lens::plan::{fit, DeviceUse, Fit, FitOptions};
use serde_json::json;

use crate::memory::CacheArgs;
use crate::Failure;
use gguf_lens::model::open;

/// Choose `-c`, `-ngl`, `-ts` and `-ot` as llama.cpp's `llama-fit-params` (`common_fit_params`)
/// does for GPUs with the free memory given: all layers offloaded if they fit, else the context
/// reduced (to 4096 at least, when --ctx is not given), then layers filled back to front (a MoE:
/// its experts first kept on the CPU, then moved back front to back). The last line is the
/// flags as llama-fit-params prints them; above it each GPU's and the CPU's weights, KV cache
/// and compute buffer (weights and KV exact; compute derived from the graph for Llama, Mistral,
/// Mixtral, Qwen2, Qwen3, Qwen3-MoE, Gemma 2, Gemma 3 and OpenELM, else an estimate).
///
/// Example: gguf-lens fit model.gguf --gpu 24576,12288 --margin 1024
#[derive(clap::Args, Debug)]
pub struct Args {
    /// GGUF file (any shard of a split model).
    file: String,
    /// Free memory of each GPU in MiB, comma-separated (one value per GPU).
    #[arg(
        long,
        value_name = "MiB[,MiB...]",
        value_delimiter = ',',
        required = true
    )]
    gpu: Vec<u64>,
    /// Memory to leave free per GPU in MiB (llama.cpp's -fitt); one value applies to every GPU.
    #[arg(
        long,
        value_name = "MiB[,MiB...]",
        value_delimiter = ',',
        default_value = "1024"
    )]
    margin: Vec<u64>,
    /// Context (-c) set by the user: never reduced. Default: the training context, reduced to fit.
    #[arg(long, value_name = "N")]
    ctx: Option<u64>,
    #[command(flatten)]
    cache: CacheArgs,
    /// The buffer name of each GPU in -ot (as llama.cpp names them: CUDA0, CUDA1, ...).
    #[arg(long, value_name = "NAME[,NAME...]", value_delimiter = ',')]
    gpu_names: Vec<String>,
    /// One JSON object: {"n_ctx", "ngl", "tensor_split", "overrides", "gpus", "cpu", "fits",
    /// "default_layers", "compute_estimated", "flags"}.
    #[arg(long)]
    json: bool,
}

const MIB: u64 = 1024 * 1024;

fn mib(text: &str, what: &str, v: u64) -> Result<u64, Failure> {
    v.checked_mul(MIB)
        .ok_or_else(|| Failure::Usage(format!("{text}: {what} {v} MiB is out of range")))
}

pub fn run(args: &Args) -> Result<(), Failure> {
    let opened = open(&args.file)?;
    let Some(model) = opened.model.gguf() else {
        return Err(format!("{}: not a GGUF file", args.file).into());
    };
    if args.margin.len() != 1 && args.margin.len() != args.gpu.len() {
        return Err(Failure::Usage(format!(
            "--margin: {} values for {} GPUs (give one, or one per GPU)",
            args.margin.len(),
            args.gpu.len()
        )));
    }
    let to_bytes = |vs: &[u64], what: &str| -> Result<Vec<u64>, Failure> {
        vs.iter().map(|&v| mib(&args.file, what, v)).collect()
    };
    let opts = FitOptions {
        gpu_free: to_bytes(&args.gpu, "--gpu")?,
        margins: to_bytes(&args.margin, "--margin")?,
        ctx: args.ctx,
        plan: args.cache.options(),
        buffer_names: args.gpu_names.clone(),
        ..FitOptions::default()
    };
    let f = fit(model, &opts).map_err(|e| format!("{}: {e}", args.file))?;
    let out = if args.json {
        crate::json_line(&document(&f))
    } else {
        text(&f, &args.gpu)
    };
    crate::write_stdout(out.as_bytes())?;
    Ok(())
}

fn device(d: &DeviceUse) -> serde_json::Value {
    json!({
        "weights_bytes": d.weights,
        "kv_cache_bytes": d.kv,
        "compute_bytes": d.compute,
        "total_bytes": d.total(),
    })
}

fn document(f: &Fit) -> serde_json::Value {
    json!({
        "n_ctx": f.n_ctx,
        "ngl": f.ngl,
        "tensor_split": f.tensor_split,
        "overrides": f.overrides.iter().map(|(p, b)| json!({"pattern": p, "buffer": b})).collect::<Vec<_>>(),
        "gpus": f.gpus.iter().zip(&f.layers).map(|(d, l)| {
            let mut v = device(d);
            v["layers"] = json!(l.n_layer);
            v["partial_layers"] = json!(l.n_part);
            v
        }).collect::<Vec<_>>(),
        "cpu": device(&f.cpu),
        "fits": f.fits,
        "default_layers": f.default_layers,
        "compute_estimated": !f.compute_derived,
        "flags": f.flags(),
    })
}

fn text(f: &Fit, free: &[u64]) -> String {
    let m = |b: u64| format!("{:.2} MiB", b as f64 / MIB as f64);
    let how = if f.compute_derived {
        "derived"
    } else {
        "estimate"
    };
    let mut s = String::new();
    for (i, (d, l)) in f.gpus.iter().zip(&f.layers).enumerate() {
        s.push_str(&format!(
            "GPU{i} ({} MiB free): {} layers ({} partial), weights {}, KV {}, compute {} ({how}), total {}\n",
            free.get(i).copied().unwrap_or(0),
            l.n_layer,
            l.n_part,
            m(d.weights),
            m(d.kv),
            m(d.compute),
            m(d.total())
        ));
    }
    let c = &f.cpu;
    s.push_str(&format!(
        "CPU: weights {}, KV {}, compute {} ({how}), total {}\n",
        m(c.weights),
        m(c.kv),
        m(c.compute),
        m(c.total())
    ));
    if !f.fits {
        s.push_str("does not keep every margin: the closest llama.cpp finds\n");
    }
    s.push_str(&f.flags());
    s.push('\n');
    s
}
