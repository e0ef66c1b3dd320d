//! `compareReport`: the diff report of two compare sides rendered by the library's
//! `diff_report` (the renderer of `gguf-lens diff`), with the value metrics JS computed.

use serde::Deserialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsValue;

use super::compare_js::MetricsJs;
use super::CompareSide;
use crate::diff_report::{DiffReport, Format, Input, Values};

/// One compared tensor: its name and `ValueDiff.result()`'s metrics.
#[derive(Deserialize)]
struct ValueJs {
    name: String,
    #[serde(flatten)]
    metrics: MetricsJs,
}

#[derive(Deserialize, Default)]
struct OptionsJs {
    format: Option<String>,
    paths: Option<[String; 2]>,
    /// Present (even empty) when values were compared, as `diff --values`.
    values: Option<Vec<ValueJs>>,
}

impl CompareSide {
    fn input<'a>(&'a self, path: &'a str) -> Result<Input<'a>, JsError> {
        Ok(Input {
            path,
            model: self.model()?,
            renames: Default::default(),
        })
    }
}

/// The report of `a` vs `b` as `options.format` (`text`, `json` or `markdown`; default
/// markdown), `options.paths` shown for the files (default `A`, `B`), `options.values` the
/// metrics of the tensors compared (`[{ name, ...ValueMetrics }]`).
#[wasm_bindgen(js_name = compareReport)]
pub fn compare_report(
    a: &CompareSide,
    b: &CompareSide,
    options: JsValue,
) -> Result<String, JsError> {
    let options: OptionsJs = if options.is_undefined() || options.is_null() {
        OptionsJs::default()
    } else {
        serde_wasm_bindgen::from_value(options)
            .map_err(|e| JsError::new(&format!("compareReport options: {e}")))?
    };
    let name = options.format.as_deref().unwrap_or("markdown");
    let format = Format::from_name(name).ok_or_else(|| {
        JsError::new(&format!(
            "compareReport: unknown format {name:?} (text, json or markdown)"
        ))
    })?;
    let [pa, pb] = options.paths.unwrap_or_else(|| ["A".into(), "B".into()]);
    let values = Values {
        requested: options.values.is_some(),
        compared: options
            .values
            .unwrap_or_default()
            .into_iter()
            .map(|v| (v.name, v.metrics.to_metrics()))
            .collect(),
        skipped: Vec::new(),
    };
    let report = DiffReport::build(&a.input(&pa)?, &b.input(&pb)?, values);
    Ok(report.render(format))
}
