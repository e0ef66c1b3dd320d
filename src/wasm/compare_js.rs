//! The comparison results as JS sees them (`compareSides`, `ValueDiff.result`): serde types with
//! the field names of `js/types.js` (`ModelDiff`, `ValueMetrics`). Counts and sizes are JS
//! numbers (f64), as every JS number is.

use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;

use super::to_js;

use crate::compare::{self, FieldValue, HeaderDiff, Metrics, ModelView};

/// A summary field's value: null, a string or a number.
#[derive(Serialize)]
#[serde(untagged)]
enum FieldJs<'a> {
    Text(&'a str),
    Number(f64),
}

fn field(v: &FieldValue) -> Option<FieldJs<'_>> {
    match v {
        FieldValue::Absent => None,
        FieldValue::Text(s) => Some(FieldJs::Text(s)),
        FieldValue::Int(n) => Some(FieldJs::Number(*n as f64)),
        FieldValue::Float(x) => Some(FieldJs::Number(*x)),
    }
}

fn numbers(values: &[u64]) -> Vec<f64> {
    values.iter().map(|&v| v as f64).collect()
}

#[derive(Serialize)]
struct SummaryFieldJs<'a> {
    name: &'a str,
    a: Option<FieldJs<'a>>,
    b: Option<FieldJs<'a>>,
    counts: bool,
    differs: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArrayChangeJs {
    item_type_a: &'static str,
    item_type_b: &'static str,
    len_a: f64,
    len_b: f64,
    differing_items: Option<f64>,
    first_difference: Option<f64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct KeyChangeJs<'a> {
    key: &'a str,
    type_a: &'static str,
    type_b: &'static str,
    array: Option<ArrayChangeJs>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MetadataJs<'a> {
    only_a: &'a [String],
    only_b: &'a [String],
    changed: Vec<KeyChangeJs<'a>>,
    same: f64,
}

#[derive(Serialize)]
struct TensorJs<'a> {
    name: &'a str,
    #[serde(rename = "type")]
    type_name: String,
    shape: Vec<f64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct MatchingJs<'a> {
    name: &'a str,
    type_a: String,
    type_b: String,
    shape: Vec<f64>,
    n_elements: f64,
}

#[derive(Serialize)]
struct ShapeChangeJs<'a> {
    name: &'a str,
    a: Vec<f64>,
    b: Vec<f64>,
}

#[derive(Serialize)]
struct TypeChangeJs<'a> {
    name: &'a str,
    a: String,
    b: String,
}

#[derive(Serialize)]
struct TransitionJs {
    a: String,
    b: String,
    tensors: f64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TensorsJs<'a> {
    only_a: Vec<TensorJs<'a>>,
    only_b: Vec<TensorJs<'a>>,
    shape_changes: Vec<ShapeChangeJs<'a>>,
    type_changes: Vec<TypeChangeJs<'a>>,
    transitions: Vec<TransitionJs>,
    matching: Vec<MatchingJs<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DiffJs<'a> {
    formats: [&'static str; 2],
    layout: &'static str,
    summary: Vec<SummaryFieldJs<'a>>,
    metadata: Option<MetadataJs<'a>>,
    metadata_not_compared: Option<&'static str>,
    tensors: TensorsJs<'a>,
}

/// The tensors named `names` as `view` lists them.
fn infos<'v>(view: &'v ModelView<'_>, names: &[String]) -> Vec<TensorJs<'v>> {
    names
        .iter()
        .filter_map(|n| view.tensor(n))
        .map(|x| TensorJs {
            name: &x.name,
            type_name: x.ty.name().to_string(),
            shape: numbers(&x.shape),
        })
        .collect()
}

/// The differences between two models (see `compareSides`).
pub(super) fn diff_to_js(va: &ModelView<'_>, vb: &ModelView<'_>) -> JsValue {
    let d = HeaderDiff::between(va, vb);
    let t = &d.tensors;
    let both_gguf = va.format == "gguf" && vb.format == "gguf";
    let value = DiffJs {
        formats: [va.format, vb.format],
        layout: if both_gguf { "gguf" } else { "logical" },
        summary: d
            .summary
            .iter()
            .map(|f| SummaryFieldJs {
                name: f.name,
                a: field(&f.a),
                b: field(&f.b),
                counts: f.counts,
                differs: f.differs(),
            })
            .collect(),
        metadata: d.metadata.as_ref().map(|m| MetadataJs {
            only_a: &m.only_a,
            only_b: &m.only_b,
            changed: m
                .changed
                .iter()
                .map(|c| KeyChangeJs {
                    key: &c.key,
                    type_a: c.type_a.name(),
                    type_b: c.type_b.name(),
                    array: c.array.as_ref().map(|x| ArrayChangeJs {
                        item_type_a: x.item_type_a.name(),
                        item_type_b: x.item_type_b.name(),
                        len_a: x.len_a as f64,
                        len_b: x.len_b as f64,
                        differing_items: x.differing_items.map(|n| n as f64),
                        first_difference: x.first_difference.map(|n| n as f64),
                    }),
                })
                .collect(),
            same: m.same as f64,
        }),
        metadata_not_compared: d
            .metadata
            .is_none()
            .then_some(compare::METADATA_NOT_COMPARED),
        tensors: TensorsJs {
            only_a: infos(va, &t.only_a),
            only_b: infos(vb, &t.only_b),
            shape_changes: t
                .shape_changes
                .iter()
                .map(|c| ShapeChangeJs {
                    name: &c.name,
                    a: numbers(&c.a),
                    b: numbers(&c.b),
                })
                .collect(),
            type_changes: t
                .type_changes
                .iter()
                .map(|c| TypeChangeJs {
                    name: &c.name,
                    a: c.a.name().to_string(),
                    b: c.b.name().to_string(),
                })
                .collect(),
            transitions: t
                .transitions
                .iter()
                .map(|c| TransitionJs {
                    a: c.a.name().to_string(),
                    b: c.b.name().to_string(),
                    tensors: c.tensors as f64,
                })
                .collect(),
            matching: t
                .matching
                .iter()
                .filter_map(|n| Some((va.tensor(n)?, vb.tensor(n)?)))
                .map(|(x, y)| MatchingJs {
                    name: &x.name,
                    type_a: x.ty.name().to_string(),
                    type_b: y.ty.name().to_string(),
                    shape: numbers(&x.shape),
                    n_elements: x.shape.iter().product::<u64>() as f64,
                })
                .collect(),
        },
    };
    to_js(&value)
}

/// One tensor's value metrics as JS sees them (`ValueDiff.result()`), both ways: to JS here, and
/// back from JS in `compareReport`'s `values` (counts are f64 there, as JS numbers are).
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct MetricsJs {
    elements: f64,
    count: f64,
    rmse: Option<f64>,
    max_abs: Option<f64>,
    mean_abs: Option<f64>,
    rel_rmse: Option<f64>,
    cosine: Option<f64>,
    nan_mismatch: f64,
    inf_mismatch: f64,
    /// Derived from the others: ignored when read back.
    #[serde(default)]
    identical: bool,
}

impl MetricsJs {
    fn of(m: &Metrics) -> MetricsJs {
        MetricsJs {
            elements: m.elements as f64,
            count: m.count as f64,
            rmse: m.rmse,
            max_abs: m.max_abs,
            mean_abs: m.mean_abs,
            rel_rmse: m.rel_rmse,
            cosine: m.cosine,
            nan_mismatch: m.nan_mismatch as f64,
            inf_mismatch: m.inf_mismatch as f64,
            identical: m.is_identical(),
        }
    }

    /// The metrics JS handed back: counts as the integers they were.
    pub(super) fn to_metrics(&self) -> Metrics {
        let count = |x: f64| {
            if x.is_finite() && x >= 0.0 {
                x as u64
            } else {
                0
            }
        };
        Metrics {
            elements: count(self.elements),
            count: count(self.count),
            rmse: self.rmse,
            max_abs: self.max_abs,
            mean_abs: self.mean_abs,
            rel_rmse: self.rel_rmse,
            cosine: self.cosine,
            nan_mismatch: count(self.nan_mismatch),
            inf_mismatch: count(self.inf_mismatch),
        }
    }
}

/// One tensor's value metrics (see `ValueDiff.result`).
pub(super) fn metrics_to_js(m: &Metrics) -> JsValue {
    to_js(&MetricsJs::of(m))
}
