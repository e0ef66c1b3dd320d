//! The memory planner for JS (`model.planMemory(options)`): the core's report (the same fields
//! as `gguf-lens memory --json`, camelCase here, every count a JS number); and the fit
//! (`model.fit(options)`, the fields of `gguf-lens fit --json`, camelCase).

use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

use super::{to_js, ModelHeader};
use crate::plan::{
    cache_type, fit, DeviceBytes, DeviceUse, Document, Fit, FitOptions, Options, Report,
};
use crate::GgmlType;

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct OptionsJs {
    ctx: Option<f64>,
    parallel: Option<f64>,
    cache_type_k: Option<String>,
    cache_type_v: Option<String>,
    flash_attn: bool,
    ngl: Option<f64>,
    gpu_mem: Option<f64>,
    /// The model path shown in the command (default `model.gguf`).
    file: Option<String>,
}

/// The fit's options (bytes, as `gpuMem`): each GPU's free memory, the margin (`-fitt`, one for
/// every GPU or one each; default 1 GiB), the cache options of `planMemory`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct FitOptionsJs {
    gpus: Vec<f64>,
    margin: Option<MarginJs>,
    ctx: Option<f64>,
    n_ctx_min: Option<f64>,
    parallel: Option<f64>,
    cache_type_k: Option<String>,
    cache_type_v: Option<String>,
    flash_attn: bool,
    gpu_names: Vec<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum MarginJs {
    One(f64),
    Each(Vec<f64>),
}

/// A KV cache type from JS (default f16).
fn cache(name: &str, v: &Option<String>) -> Result<GgmlType, JsError> {
    match v {
        None => Ok(GgmlType::F16),
        Some(t) => cache_type(t).ok_or_else(|| {
            JsError::new(&format!(
                "{name}: {t:?} is not a KV cache type (f32 f16 bf16 q8_0 q4_0 q4_1 iq4_nl q5_0 q5_1)"
            ))
        }),
    }
}

/// `options` as `T`; undefined or null: the defaults.
fn options<T: serde::de::DeserializeOwned + Default>(options: JsValue) -> Result<T, JsError> {
    if options.is_undefined() || options.is_null() {
        return Ok(T::default());
    }
    serde_wasm_bindgen::from_value(options).map_err(|e| JsError::new(&format!("options: {e}")))
}

/// A count from JS: a finite non-negative whole number.
fn count(name: &str, v: Option<f64>) -> Result<Option<u64>, JsError> {
    match v {
        None => Ok(None),
        Some(x)
            if x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x < 9.007_199_254_740_992e15 =>
        {
            Ok(Some(x as u64))
        }
        Some(x) => Err(JsError::new(&format!(
            "{name} must be a whole number >= 0, got {x}"
        ))),
    }
}

/// The core's [`Document`] as JS sees it: camelCase names, every count a JS number (a `u64`
/// above 2^53 would not be one).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DocumentJs {
    architecture: String,
    n_layer: u32,
    n_ctx_train: f64,
    n_ctx: f64,
    n_ctx_seq: f64,
    n_seq_max: u32,
    ngl: u32,
    cache_type_k: String,
    cache_type_v: String,
    flash_attn: bool,
    weights_bytes: f64,
    weights: DeviceBytesJs,
    tied_output_copy_bytes: f64,
    kv_cache_bytes: f64,
    kv_cache: KvCacheJs,
    compute_bytes: f64,
    compute: DeviceBytesJs,
    compute_estimated: bool,
    total_bytes: f64,
    cpu_bytes: f64,
    gpu_bytes: f64,
    gpu_mem: Option<f64>,
    max_ctx: Option<f64>,
    command: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DeviceBytesJs {
    cpu_bytes: f64,
    gpu_bytes: f64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct KvCacheJs {
    k_bytes: f64,
    v_bytes: f64,
    swa_bytes: f64,
    cpu_bytes: f64,
    gpu_bytes: f64,
    caches: Vec<CacheJs>,
    recurrent_bytes: f64,
    recurrent: Option<RecurrentJs>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CacheJs {
    swa: bool,
    cells: f64,
    layers: u32,
    streams: f64,
    k_bytes: f64,
    v_bytes: f64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RecurrentJs {
    cells: f64,
    layers: u32,
    r_bytes: f64,
    s_bytes: f64,
}

fn device(d: &DeviceBytes) -> DeviceBytesJs {
    DeviceBytesJs {
        cpu_bytes: d.cpu_bytes as f64,
        gpu_bytes: d.gpu_bytes as f64,
    }
}

impl From<Document> for DocumentJs {
    fn from(d: Document) -> DocumentJs {
        let kv = &d.kv_cache;
        DocumentJs {
            n_layer: d.n_layer,
            n_ctx_train: d.n_ctx_train as f64,
            n_ctx: d.n_ctx as f64,
            n_ctx_seq: d.n_ctx_seq as f64,
            n_seq_max: d.n_seq_max,
            ngl: d.ngl,
            flash_attn: d.flash_attn,
            weights_bytes: d.weights_bytes as f64,
            weights: device(&d.weights),
            tied_output_copy_bytes: d.tied_output_copy_bytes as f64,
            kv_cache_bytes: d.kv_cache_bytes as f64,
            kv_cache: KvCacheJs {
                k_bytes: kv.k_bytes as f64,
                v_bytes: kv.v_bytes as f64,
                swa_bytes: kv.swa_bytes as f64,
                cpu_bytes: kv.cpu_bytes as f64,
                gpu_bytes: kv.gpu_bytes as f64,
                caches: kv
                    .caches
                    .iter()
                    .map(|c| CacheJs {
                        swa: c.swa,
                        cells: c.cells as f64,
                        layers: c.layers,
                        streams: c.streams as f64,
                        k_bytes: c.k_bytes as f64,
                        v_bytes: c.v_bytes as f64,
                    })
                    .collect(),
                recurrent_bytes: kv.recurrent_bytes as f64,
                recurrent: kv.recurrent.map(|r| RecurrentJs {
                    cells: r.cells as f64,
                    layers: r.layers,
                    r_bytes: r.r_bytes as f64,
                    s_bytes: r.s_bytes as f64,
                }),
            },
            compute_bytes: d.compute_bytes as f64,
            compute: device(&d.compute),
            compute_estimated: d.compute_estimated,
            total_bytes: d.total_bytes as f64,
            cpu_bytes: d.cpu_bytes as f64,
            gpu_bytes: d.gpu_bytes as f64,
            gpu_mem: d.gpu_mem.map(|b| b as f64),
            max_ctx: d.max_ctx.map(|c| c as f64),
            architecture: d.architecture,
            cache_type_k: d.cache_type_k,
            cache_type_v: d.cache_type_v,
            command: d.command,
        }
    }
}

#[wasm_bindgen]
impl ModelHeader {
    /// `options`: `{ctx, parallel, cacheTypeK, cacheTypeV, flashAttn, ngl, gpuMem, file}`, all
    /// optional. Throws llama.cpp's refusal (or why the model cannot be planned) as one line.
    /// The plan covers every shard of a joined handle.
    #[wasm_bindgen(js_name = planMemory)]
    pub fn plan_memory(&self, options: JsValue) -> Result<JsValue, JsError> {
        let given: OptionsJs = self::options(options)?;
        let model = self.gguf_model()?;
        let parallel = count("parallel", given.parallel)?.unwrap_or(1);
        let ngl = count("ngl", given.ngl)?;
        let opts = Options {
            ctx: count("ctx", given.ctx)?,
            parallel: u32::try_from(parallel).map_err(|_| JsError::new("parallel is too large"))?,
            type_k: cache("cacheTypeK", &given.cache_type_k)?,
            type_v: cache("cacheTypeV", &given.cache_type_v)?,
            flash_attn: given.flash_attn,
            ngl: u32::try_from(ngl.unwrap_or(0)).unwrap_or(u32::MAX),
            ..Options::default()
        };
        let gpu_mem = count("gpuMem", given.gpu_mem)?;
        let report = Report::new(model, opts, ngl.is_none(), gpu_mem)
            .map_err(|e| JsError::new(&e.to_string()))?;
        let file = given.file.as_deref().unwrap_or("model.gguf");
        Ok(to_js(&DocumentJs::from(
            report.document(&report.plan.command(file)),
        )))
    }
}

/// One device of the fit: `gguf-lens fit --json`'s `gpus[i]` / `cpu`, camelCase.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DeviceUseJs {
    #[serde(skip_serializing_if = "Option::is_none")]
    layers: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    partial_layers: Option<u32>,
    weights_bytes: f64,
    kv_cache_bytes: f64,
    compute_bytes: f64,
    total_bytes: f64,
}

#[derive(Serialize)]
struct OverrideJs {
    pattern: String,
    buffer: String,
}

/// `gguf-lens fit --json`, camelCase.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FitJs {
    n_ctx: f64,
    ngl: u32,
    tensor_split: Vec<u32>,
    overrides: Vec<OverrideJs>,
    gpus: Vec<DeviceUseJs>,
    cpu: DeviceUseJs,
    fits: bool,
    default_layers: bool,
    compute_estimated: bool,
    flags: String,
}

fn device_use(d: &DeviceUse, layers: Option<(u32, u32)>) -> DeviceUseJs {
    DeviceUseJs {
        layers: layers.map(|l| l.0),
        partial_layers: layers.map(|l| l.1),
        weights_bytes: d.weights as f64,
        kv_cache_bytes: d.kv as f64,
        compute_bytes: d.compute as f64,
        total_bytes: d.total() as f64,
    }
}

impl From<&Fit> for FitJs {
    fn from(f: &Fit) -> FitJs {
        FitJs {
            n_ctx: f.n_ctx as f64,
            ngl: f.ngl,
            tensor_split: f.tensor_split.clone(),
            overrides: f
                .overrides
                .iter()
                .map(|(p, b)| OverrideJs {
                    pattern: p.clone(),
                    buffer: b.clone(),
                })
                .collect(),
            gpus: f
                .gpus
                .iter()
                .zip(&f.layers)
                .map(|(d, l)| device_use(d, Some((l.n_layer, l.n_part))))
                .collect(),
            cpu: device_use(&f.cpu, None),
            fits: f.fits,
            default_layers: f.default_layers,
            compute_estimated: !f.compute_derived,
            flags: f.flags(),
        }
    }
}

#[wasm_bindgen]
impl ModelHeader {
    /// `options`: `{gpus, margin, ctx, nCtxMin, parallel, cacheTypeK, cacheTypeV, flashAttn,
    /// gpuNames}` (bytes); what llama-fit-params chooses, as `gguf-lens fit --json`.
    pub fn fit(&self, options: JsValue) -> Result<JsValue, JsError> {
        let given: FitOptionsJs = self::options(options)?;
        let bytes =
            |name: &str, v: f64| -> Result<u64, JsError> { Ok(count(name, Some(v))?.unwrap_or(0)) };
        let gpu_free = given
            .gpus
            .iter()
            .map(|&g| bytes("gpus[i]", g))
            .collect::<Result<Vec<u64>, JsError>>()?;
        let defaults = FitOptions::default();
        let margins = match &given.margin {
            None => defaults.margins.clone(),
            Some(MarginJs::One(m)) => vec![bytes("margin", *m)?],
            Some(MarginJs::Each(ms)) => ms
                .iter()
                .map(|&m| bytes("margin[i]", m))
                .collect::<Result<Vec<u64>, JsError>>()?,
        };
        let parallel = count("parallel", given.parallel)?.unwrap_or(1);
        let opts = FitOptions {
            gpu_free,
            margins,
            ctx: count("ctx", given.ctx)?,
            n_ctx_min: count("nCtxMin", given.n_ctx_min)?.unwrap_or(defaults.n_ctx_min),
            plan: Options {
                parallel: u32::try_from(parallel)
                    .map_err(|_| JsError::new("parallel is too large"))?,
                type_k: cache("cacheTypeK", &given.cache_type_k)?,
                type_v: cache("cacheTypeV", &given.cache_type_v)?,
                flash_attn: given.flash_attn,
                ..Options::default()
            },
            buffer_names: given.gpu_names,
        };
        let f = fit(self.gguf_model()?, &opts).map_err(|e| JsError::new(&e.to_string()))?;
        Ok(to_js(&FitJs::from(&f)))
    }
}
