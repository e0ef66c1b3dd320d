//! The diff report: what `compare` found between two models, with the values it shows, built
//! once and rendered as text, JSON or Markdown ([`DiffReport::render`]). `gguf-lens diff` and
//! the npm package's `compareReport` both render through here, so a diff reads the same in the
//! terminal, in a script and in the viewer's export.
//!
//! Two GGUF models compare ggml types, every summary field and their metadata key-values
//! (values in full in JSON, previewed in text); their quant mixes are listed. Any pair with a
//! safetensors checkpoint compares logical (row-major) shapes and type names; its summary is
//! format, tensor count and parameters; metadata only when both are checkpoints
//! (`__metadata__` strings); tensors whose values cannot be compared are listed as skipped.

mod json;
mod markdown;
mod text;

use std::collections::HashMap;

use serde_json::Value as Json;

use crate::compare::{
    ArrayChange, FieldValue, HeaderDiff, Layout, MetaValue, Metrics, ModelView, ShapeChange,
    SummaryField,
};
use crate::gguf::Value;
use crate::model::{GgufModel, Model};
use crate::value_show::{preview, value_json};

/// How a report is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Markdown,
}

impl Format {
    /// `text`, `json` or `markdown` (also `md`).
    pub fn from_name(name: &str) -> Option<Format> {
        match name {
            "text" => Some(Format::Text),
            "json" => Some(Format::Json),
            "markdown" | "md" => Some(Format::Markdown),
            _ => None,
        }
    }
}

/// One side of the comparison: where it came from and what it is.
pub struct Input<'a> {
    /// The path (or label) shown for it.
    pub path: &'a str,
    pub model: &'a Model,
    /// Tensor names read as other names (`diff --llama-names`): file name → name compared.
    pub renames: HashMap<String, String>,
}

/// A file of the pair.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    pub path: String,
    pub format: &'static str,
    /// Two GGUF models only.
    pub quant_mix: Option<Vec<MixRow>>,
}

/// One ggml type's share of a GGUF model.
#[derive(Debug, Clone, PartialEq)]
pub struct MixRow {
    pub type_name: String,
    pub tensors: u64,
    pub elements: u64,
    pub bytes: u64,
    pub byte_share: f64,
}

/// A metadata value as shown: complete (JSON) and previewed (one line).
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    pub type_name: &'static str,
    pub json: Json,
    pub preview: String,
}

/// A GGUF key present in one file only.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyEntry {
    pub key: String,
    pub value: Option<Shown>,
}

/// A GGUF key with another value: whole values for scalars, the first differing item of arrays.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyChange {
    pub key: String,
    pub type_a: &'static str,
    pub type_b: &'static str,
    /// Scalars (arrays: None).
    pub a: Option<Shown>,
    pub b: Option<Shown>,
    pub array: Option<ArrayChange>,
    /// Arrays: the items at `first_difference`, when both have one there.
    pub item_a: Option<Shown>,
    pub item_b: Option<Shown>,
}

/// The metadata part.
#[derive(Debug, Clone, PartialEq)]
pub enum Metadata {
    /// Two GGUF models: key-values.
    Gguf {
        same: u64,
        only_a: Vec<KeyEntry>,
        only_b: Vec<KeyEntry>,
        changed: Vec<KeyChange>,
    },
    /// Two checkpoints: `__metadata__` strings as (key, value) and (key, A, B).
    Strings {
        same: u64,
        only_a: Vec<(String, String)>,
        only_b: Vec<(String, String)>,
        changed: Vec<(String, String, String)>,
    },
    /// A GGUF model and a checkpoint: not compared.
    NotCompared,
}

/// A tensor in one model only.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorRow {
    pub name: String,
    pub type_name: String,
    /// Row-major, outermost first.
    pub shape: Vec<u64>,
    /// The name in the file when it was read as another (`renames`).
    pub file_name: Option<String>,
}

/// The tensor part.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Tensors {
    pub only_a: Vec<TensorRow>,
    pub only_b: Vec<TensorRow>,
    pub shape_changes: Vec<ShapeChange>,
    /// Name, A's type, B's type.
    pub type_changes: Vec<(String, String, String)>,
    /// A's type, B's type, tensors.
    pub transitions: Vec<(String, String, u64)>,
    /// Same name and shape in both, A's order.
    pub matching: Vec<String>,
}

/// The values of one tensor both models have.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueRow {
    pub name: String,
    pub type_a: String,
    pub type_b: String,
    pub shape: Vec<u64>,
    pub metrics: Metrics,
}

/// Everything a diff shows.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffReport {
    pub a: Side,
    pub b: Side,
    /// Not two GGUF models: shapes are logical, types by name, skipped tensors listed.
    pub logical: bool,
    pub identical: bool,
    pub summary: Vec<SummaryField>,
    pub metadata: Metadata,
    pub tensors: Tensors,
    /// None when values were neither asked for nor compared.
    pub values: Option<Vec<ValueRow>>,
    /// Tensors whose values were not compared, and why.
    pub skipped: Vec<(String, String)>,
    /// Strings that are not UTF-8, shown lossily.
    pub warnings: Vec<String>,
}

/// What was compared of the values.
#[derive(Default)]
pub struct Values {
    /// Whether values were asked for (an empty list is then still shown).
    pub requested: bool,
    /// Tensor name (as compared) and its metrics.
    pub compared: Vec<(String, Metrics)>,
    pub skipped: Vec<(String, String)>,
}

fn mix_of(model: &GgufModel) -> Vec<MixRow> {
    model
        .summary()
        .type_mix
        .iter()
        .map(|m| MixRow {
            type_name: m.ty.name().to_string(),
            tensors: m.tensors,
            elements: m.elements,
            bytes: m.bytes,
            byte_share: m.byte_share,
        })
        .collect()
}

fn shown(v: &Value<'_>, warnings: &mut Vec<String>) -> Shown {
    Shown {
        type_name: v.value_type().name(),
        json: value_json(v, warnings),
        preview: preview(v),
    }
}

fn gguf_value<'v>(view: &'v ModelView<'_>, key: &str) -> Option<&'v Value<'v>> {
    view.metadata.iter().find_map(|(k, v)| match v {
        MetaValue::Gguf(v) if *k == key => Some(v),
        _ => None,
    })
}

fn text_value(view: &ModelView<'_>, key: &str) -> String {
    view.metadata
        .iter()
        .find_map(|(k, v)| match v {
            MetaValue::Text(t) if *k == key => Some(t.to_string()),
            _ => None,
        })
        .unwrap_or_default()
}

/// Item `i` of an array value.
fn item<'v>(v: Option<&Value<'v>>, i: Option<u64>) -> Option<Value<'v>> {
    let i = usize::try_from(i?).ok()?;
    match v? {
        Value::Array(a) => a.get(i),
        _ => None,
    }
}

impl DiffReport {
    /// Compares the headers of `a` and `b` and gathers what the report shows, with the values
    /// already compared (`values.compared`: type and shape are looked up by name).
    pub fn build(a: &Input<'_>, b: &Input<'_>, values: Values) -> DiffReport {
        let both_gguf = matches!((a.model, b.model), (Model::Gguf(_), Model::Gguf(_)));
        let layout = if both_gguf {
            Layout::Gguf
        } else {
            Layout::Logical
        };
        let mut va = ModelView::of(a.model, layout);
        let mut vb = ModelView::of(b.model, layout);
        for (view, input) in [(&mut va, a), (&mut vb, b)] {
            for t in &mut view.tensors {
                if let Some(name) = input.renames.get(&t.name) {
                    t.name.clone_from(name);
                }
            }
        }
        let header = HeaderDiff::between(&va, &vb);
        let mut warnings = Vec::new();
        let metadata = match &header.metadata {
            None => Metadata::NotCompared,
            Some(m) if both_gguf => {
                let entry = |view: &ModelView<'_>, key: &String, w: &mut Vec<String>| KeyEntry {
                    key: key.clone(),
                    value: gguf_value(view, key).map(|v| shown(v, w)),
                };
                let only_a = m
                    .only_a
                    .iter()
                    .map(|k| entry(&va, k, &mut warnings))
                    .collect();
                let only_b = m
                    .only_b
                    .iter()
                    .map(|k| entry(&vb, k, &mut warnings))
                    .collect();
                let changed = m
                    .changed
                    .iter()
                    .map(|c| {
                        let (xa, xb) = (gguf_value(&va, &c.key), gguf_value(&vb, &c.key));
                        let mut out = KeyChange {
                            key: c.key.clone(),
                            type_a: c.type_a.name(),
                            type_b: c.type_b.name(),
                            a: None,
                            b: None,
                            array: c.array.clone(),
                            item_a: None,
                            item_b: None,
                        };
                        match &c.array {
                            None => {
                                out.a = xa.map(|v| shown(v, &mut warnings));
                                out.b = xb.map(|v| shown(v, &mut warnings));
                            }
                            Some(arr) => {
                                let at = arr.first_difference;
                                out.item_a = item(xa, at).map(|v| shown(&v, &mut warnings));
                                out.item_b = item(xb, at).map(|v| shown(&v, &mut warnings));
                            }
                        }
                        out
                    })
                    .collect();
                Metadata::Gguf {
                    same: m.same,
                    only_a,
                    only_b,
                    changed,
                }
            }
            Some(m) => Metadata::Strings {
                same: m.same,
                only_a: m
                    .only_a
                    .iter()
                    .map(|k| (k.clone(), text_value(&va, k)))
                    .collect(),
                only_b: m
                    .only_b
                    .iter()
                    .map(|k| (k.clone(), text_value(&vb, k)))
                    .collect(),
                changed: m
                    .changed
                    .iter()
                    .map(|c| {
                        (
                            c.key.clone(),
                            text_value(&va, &c.key),
                            text_value(&vb, &c.key),
                        )
                    })
                    .collect(),
            },
        };
        let t = &header.tensors;
        let rows = |view: &ModelView<'_>, input: &Input<'_>, names: &[String]| -> Vec<TensorRow> {
            let file_name = |name: &str| {
                input
                    .renames
                    .iter()
                    .find(|(_, to)| *to == name)
                    .map(|(from, _)| from.clone())
            };
            names
                .iter()
                .filter_map(|n| view.tensor(n))
                .map(|e| TensorRow {
                    name: e.name.clone(),
                    type_name: e.ty.name().to_string(),
                    shape: e.shape.clone(),
                    file_name: file_name(&e.name),
                })
                .collect()
        };
        let tensors = Tensors {
            only_a: rows(&va, a, &t.only_a),
            only_b: rows(&vb, b, &t.only_b),
            shape_changes: t.shape_changes.clone(),
            type_changes: t
                .type_changes
                .iter()
                .map(|c| (c.name.clone(), c.a.name().into(), c.b.name().into()))
                .collect(),
            transitions: t
                .transitions
                .iter()
                .map(|c| (c.a.name().into(), c.b.name().into(), c.tensors))
                .collect(),
            matching: t.matching.clone(),
        };
        let value_rows: Vec<ValueRow> = values
            .compared
            .into_iter()
            .map(|(name, metrics)| {
                let (ea, eb) = (va.tensor(&name), vb.tensor(&name));
                ValueRow {
                    type_a: ea.map_or_else(String::new, |e| e.ty.name().to_string()),
                    type_b: eb.map_or_else(String::new, |e| e.ty.name().to_string()),
                    shape: ea.map_or_else(Vec::new, |e| e.shape.clone()),
                    name,
                    metrics,
                }
            })
            .collect();
        let identical = header.is_identical();
        let summary = if both_gguf {
            header.summary
        } else {
            // Shown, not counted: the tensors decide (a GGUF model and a checkpoint always
            // differ in their other fields).
            let field = |name, x: u64, y: u64| SummaryField {
                name,
                a: FieldValue::Int(x),
                b: FieldValue::Int(y),
                counts: true,
            };
            let params = |v: &ModelView<'_>| {
                v.tensors
                    .iter()
                    .map(|e| e.shape.iter().product::<u64>())
                    .sum()
            };
            vec![
                SummaryField {
                    name: "format",
                    a: FieldValue::Text(va.format.into()),
                    b: FieldValue::Text(vb.format.into()),
                    counts: true,
                },
                field(
                    "tensor_count",
                    va.tensors.len() as u64,
                    vb.tensors.len() as u64,
                ),
                field("parameters", params(&va), params(&vb)),
            ]
        };
        let side = |input: &Input<'_>, view: &ModelView<'_>| Side {
            path: input.path.to_string(),
            format: view.format,
            quant_mix: match input.model {
                Model::Gguf(m) if both_gguf => Some(mix_of(m)),
                _ => None,
            },
        };
        DiffReport {
            a: side(a, &va),
            b: side(b, &vb),
            logical: !both_gguf,
            identical,
            summary,
            metadata,
            tensors,
            values: None,
            skipped: Vec::new(),
            warnings,
        }
        .with_values(value_rows, values.requested, values.skipped)
    }

    /// The report with the values compared (a report built without values): `identical`
    /// also asks every compared tensor to be identical.
    pub fn with_values(
        mut self,
        rows: Vec<ValueRow>,
        requested: bool,
        skipped: Vec<(String, String)>,
    ) -> DiffReport {
        self.identical = self.identical && rows.iter().all(|v| v.metrics.is_identical());
        self.values = (requested || !rows.is_empty()).then_some(rows);
        self.skipped = skipped;
        self
    }

    /// The report as `format`: text for a terminal, one JSON document (one line, with a
    /// newline), or Markdown.
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Text => text::render(self),
            Format::Json => {
                let mut line = json::render(self).to_string();
                line.push('\n');
                line
            }
            Format::Markdown => markdown::render(self),
        }
    }
}

/// A summary value as text: `file_type` with its label, floats with 4 decimals, `-` if absent.
pub(crate) fn field_text(name: &str, v: &FieldValue) -> String {
    match v {
        FieldValue::Absent => "-".to_string(),
        FieldValue::Text(s) => s.clone(),
        FieldValue::Int(n) if name == "file_type" => match crate::model::file_type_label(*n) {
            Some(label) => format!("{n} ({label})"),
            None => n.to_string(),
        },
        FieldValue::Int(n) => n.to_string(),
        FieldValue::Float(x) => format!("{x:.4}"),
    }
}

/// A tensor in one model: `name [(in the file: other)] TYPE [shape]`.
pub(crate) fn tensor_text(t: &TensorRow) -> String {
    let renamed = t
        .file_name
        .as_ref()
        .map_or(String::new(), |n| format!(" (in the file: {n})"));
    format!("{}{renamed} {} {:?}", t.name, t.type_name, t.shape)
}

/// A changed key in one line: `key: A -> B`, with types when they differ; arrays with their
/// lengths, differing items and the first differing pair.
pub(crate) fn change_text(c: &KeyChange) -> String {
    let show = |s: &Option<Shown>| s.as_ref().map_or_else(String::new, |s| s.preview.clone());
    let Some(a) = &c.array else {
        if c.type_a != c.type_b {
            return format!(
                "{}: {} {} -> {} {}",
                c.key,
                c.type_a,
                show(&c.a),
                c.type_b,
                show(&c.b)
            );
        }
        return format!("{}: {} -> {}", c.key, show(&c.a), show(&c.b));
    };
    let mut text = format!(
        "{}: {}[{}] -> {}[{}]",
        c.key,
        a.item_type_a.name(),
        a.len_a,
        a.item_type_b.name(),
        a.len_b
    );
    if let (Some(n), Some(i)) = (a.differing_items, a.first_difference) {
        let at = |s: &Option<Shown>| s.as_ref().map_or("-".to_string(), |s| s.preview.clone());
        text.push_str(&format!(
            ", items differing: {n}, first at index {i}: {} -> {}",
            at(&c.item_a),
            at(&c.item_b)
        ));
    }
    text
}
