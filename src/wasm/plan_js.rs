//! The memory planner for JS (`model.planMemory(options)`): the core's report (the same fields
//! as `gguf-lens memory --json`, camelCased, every count a JS number).

use serde::Deserialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::{to_js, GgufHeader};
use crate::gguf::GgufFile;
use crate::model::GgufModel;
use crate::plan::{cache_type, Options, Report};

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

/// snake_case keys to camelCase, integers to JS numbers.
fn camel(v: Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    let mut out = String::new();
                    let mut up = false;
                    for c in k.chars() {
                        if c == '_' {
                            up = true;
                        } else if up {
                            out.extend(c.to_uppercase());
                            up = false;
                        } else {
                            out.push(c);
                        }
                    }
                    (out, camel(v))
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(camel).collect()),
        Value::Number(n) => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        other => other,
    }
}

/// Plans a model over its shards (added in order, as `SplitSummary`).
#[wasm_bindgen]
#[derive(Default)]
pub struct MemoryPlanner {
    shards: Vec<GgufFile>,
}

#[wasm_bindgen]
impl MemoryPlanner {
    #[wasm_bindgen(constructor)]
    pub fn new() -> MemoryPlanner {
        MemoryPlanner::default()
    }

    /// Adds the next shard.
    pub fn add(&mut self, shard: &GgufHeader) {
        self.shards.push(shard.file.clone());
    }

    /// `options`: `{ctx, parallel, cacheTypeK, cacheTypeV, flashAttn, ngl, gpuMem, file}`, all
    /// optional. Throws llama.cpp's refusal (or why the model cannot be planned) as one line.
    pub fn plan(&self, options: JsValue) -> Result<JsValue, JsError> {
        let given: OptionsJs = if options.is_undefined() || options.is_null() {
            OptionsJs::default()
        } else {
            serde_wasm_bindgen::from_value(options)
                .map_err(|e| JsError::new(&format!("options: {e}")))?
        };
        let model = GgufModel::from_shards(self.shards.clone()).map_err(super::js_error)?;
        let ty = |name: &str, v: &Option<String>| {
            match v {
            None => Ok(crate::GgmlType::F16),
            Some(t) => cache_type(t).ok_or_else(|| {
                JsError::new(&format!(
                    "{name}: {t:?} is not a KV cache type (f32 f16 bf16 q8_0 q4_0 q4_1 iq4_nl q5_0 q5_1)"
                ))
            }),
        }
        };
        let parallel = count("parallel", given.parallel)?.unwrap_or(1);
        let ngl = count("ngl", given.ngl)?;
        let opts = Options {
            ctx: count("ctx", given.ctx)?,
            parallel: u32::try_from(parallel).map_err(|_| JsError::new("parallel is too large"))?,
            type_k: ty("cacheTypeK", &given.cache_type_k)?,
            type_v: ty("cacheTypeV", &given.cache_type_v)?,
            flash_attn: given.flash_attn,
            ngl: u32::try_from(ngl.unwrap_or(0)).unwrap_or(u32::MAX),
        };
        let gpu_mem = count("gpuMem", given.gpu_mem)?;
        let report = Report::new(&model, opts, ngl.is_none(), gpu_mem)
            .map_err(|e| JsError::new(&e.to_string()))?;
        let file = given.file.as_deref().unwrap_or("model.gguf");
        Ok(to_js(&camel(report.to_json(&report.plan.command(file)))))
    }
}
