//! `diff A B [--values] [--tensor NAME]... [--json]`: formats the core's `compare` results.
//! Exit 0 when identical, 1 when the files differ, 2 on any error.

use std::fmt::Write;

use gguf_lens::compare::{
    compare_tensor, CompareError, FieldValue, HeaderDiff, KeyChange, Layout, MetadataDiff,
    ModelView, Side, TensorSource,
};
use gguf_lens::gguf::Value;
use gguf_lens::model::GgufModel;
use gguf_lens::summary::file_type_label;
use gguf_lens::{GgufFile, Kernel};
use serde_json::{json, Value as Json};

use crate::diff_render::{
    finish, metadata_line, metrics_json, tensors_line, values_text, verdict_text, Compared, Options,
};
use crate::model::Model;
use crate::CHUNK_ELEMENTS;
use crate::{diff_cross, json_line, Failure};
use crate::{fatal, json::value_json, text::preview};

/// What changed between two models (with --values, in their values too).
///
/// Summary, metadata (arrays in full), tensors and quant mix; with --values, the values of
/// every tensor both have (RMSE, max and mean |a-b|, RMSE/RMS(a), cosine, NaN/Inf mismatches).
///
/// Exit 0 when identical, 1 when the files differ, 2 on any error (as cmp does).
///
///   gguf-lens diff model-Q4_K_M.gguf model-Q8_0.gguf --values --tensor blk.0.attn_q.weight
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// First model: a .gguf (a split model by its first shard), a .safetensors or a
    /// model.safetensors.index.json
    pub a: String,
    /// Second model, as A
    pub b: String,
    /// Also compare the values of every tensor with the same name and shape, in row chunks
    #[arg(long)]
    pub values: bool,
    /// With --values: only this tensor (repeatable)
    #[arg(long = "tensor", value_name = "NAME")]
    pub tensors: Vec<String>,
    /// One JSON document on stdout
    #[arg(long)]
    pub json: bool,
    /// One GGUF and one checkpoint: read Hugging Face llama names as GGUF names
    /// (model.layers.N.self_attn.q_proj.weight -> blk.N.attn_q.weight; attn_q/attn_k skipped)
    #[arg(long)]
    pub llama_names: bool,
}

impl<'a> Options<'a> {
    fn of(args: &'a Args) -> Options<'a> {
        Options {
            a: &args.a,
            b: &args.b,
            values: args.values,
            tensors: args.tensors.iter().map(String::as_str).collect(),
            json: args.json,
            llama_names: args.llama_names,
        }
    }
}

pub fn run(args: &Args) -> Result<(), Failure> {
    let opts = Options::of(args);
    let model_a = Model::open(opts.a)?;
    let model_b = Model::open(opts.b)?;
    let (mut ra, ma, mut rb, mb) = match (model_a, model_b) {
        (
            Model::Gguf {
                readers: ra,
                model: ma,
                ..
            },
            Model::Gguf {
                readers: rb,
                model: mb,
                ..
            },
        ) => (ra, ma, rb, mb),
        (model_a, model_b) => return diff_cross::run(&opts, model_a, model_b),
    };
    if opts.llama_names {
        return Err(diff_cross::llama_names_usage());
    }
    let header = HeaderDiff::between(
        &ModelView::gguf(&shards_of(&ma), Layout::Gguf),
        &ModelView::gguf(&shards_of(&mb), Layout::Gguf),
    );
    let names: Vec<&str> = if !opts.tensors.is_empty() {
        opts.tensors.clone()
    } else if opts.values {
        header.tensors.matching.iter().map(String::as_str).collect()
    } else {
        Vec::new()
    };
    let mut compared = Vec::new();
    if !names.is_empty() {
        let kernel = Kernel::auto().map_err(|e| Failure::Fatal(e.to_string()))?;
        for name in names {
            let (sa, ta) = ma.tensor(name).map_err(fatal(opts.a))?;
            let (sb, tb) = mb.tensor(name).map_err(fatal(opts.b))?;
            let metrics = compare_tensor(
                TensorSource {
                    reader: &mut ra[sa],
                    file: &ma.shards()[sa],
                    tensor: ta,
                },
                TensorSource {
                    reader: &mut rb[sb],
                    file: &mb.shards()[sb],
                    tensor: tb,
                },
                kernel,
                CHUNK_ELEMENTS,
            )
            .map_err(|e: CompareError| match e.side {
                Some(Side::A) => fatal(opts.a)(e.error),
                Some(Side::B) => fatal(opts.b)(e.error),
                None => Failure::Fatal(format!("{} vs {}: {}", opts.a, opts.b, e.error)),
            })?;
            compared.push(Compared {
                name: name.to_string(),
                type_a: ta.ggml_type().name().to_string(),
                type_b: tb.ggml_type().name().to_string(),
                shape: ta.shape(),
                metrics,
            });
        }
    }
    let identical = header.is_identical() && compared.iter().all(|c| c.metrics.is_identical());
    let metadata = header.metadata.clone().unwrap_or_default();
    let report = Report {
        opts: &opts,
        ma: &ma,
        mb: &mb,
        fa: ma.first(),
        fb: mb.first(),
        header: &header,
        metadata: &metadata,
        compared: &compared,
        identical,
    };
    let text = if opts.json {
        let mut warnings = Vec::new();
        let text = json_line(&report.json(&mut warnings));
        for warning in warnings {
            eprintln!("warning: {warning}");
        }
        text
    } else {
        report.text()
    };
    finish(&text, identical)
}

struct Report<'a> {
    opts: &'a Options<'a>,
    ma: &'a GgufModel,
    mb: &'a GgufModel,
    /// The shards whose metadata describes each model.
    fa: &'a GgufFile,
    fb: &'a GgufFile,
    header: &'a HeaderDiff,
    /// The header's metadata diff (two GGUF files: always compared).
    metadata: &'a MetadataDiff,
    compared: &'a [Compared],
    identical: bool,
}

fn field_json(v: &FieldValue) -> Json {
    match v {
        FieldValue::Absent => Json::Null,
        FieldValue::Text(s) => Json::from(s.as_str()),
        FieldValue::Int(n) => Json::from(*n),
        FieldValue::Float(x) => Json::from(*x),
    }
}

fn field_text(name: &str, v: &FieldValue) -> String {
    match v {
        FieldValue::Absent => "-".to_string(),
        FieldValue::Text(s) => s.clone(),
        FieldValue::Int(n) if name == "file_type" => match file_type_label(*n) {
            Some(label) => format!("{n} ({label})"),
            None => n.to_string(),
        },
        FieldValue::Int(n) => n.to_string(),
        FieldValue::Float(x) => format!("{x:.4}"),
    }
}

/// The shards of `model`, as the core's views take them.
fn shards_of(model: &GgufModel) -> Vec<&GgufFile> {
    model.shards().iter().collect()
}

fn mix_json(model: &GgufModel) -> Json {
    model
        .summary()
        .quant_mix
        .iter()
        .map(|m| {
            json!({
                "type": m.ggml_type.name(),
                "tensors": m.tensors,
                "elements": m.elements,
                "bytes": m.bytes,
                "byte_share": m.byte_share,
            })
        })
        .collect()
}

fn tensor_ref_json(model: &GgufModel, name: &str) -> Json {
    match model.tensor(name) {
        Ok((_, t)) => json!({"name": name, "type": t.ggml_type().name(), "shape": t.shape()}),
        Err(_) => json!({ "name": name }),
    }
}

/// Item `i` of the array under `key`, if there is one.
fn item<'f>(file: &'f GgufFile, key: &str, i: Option<u64>) -> Option<Value<'f>> {
    let i = usize::try_from(i?).ok()?;
    file.get(key)?.as_array()?.get(i)
}

impl Report<'_> {
    fn json(&self, warnings: &mut Vec<String>) -> Json {
        let (fa, fb) = (self.fa, self.fb);
        let h = self.header;
        let entry = |file: &GgufFile, key: &str, warnings: &mut Vec<String>| {
            let value = file.get(key);
            json!({
                "key": key,
                "type": value.as_ref().map(|v| v.value_type().name()),
                "value": value.map(|v| value_json(&v, warnings)),
            })
        };
        let mut only = [(&self.metadata.only_a, fa), (&self.metadata.only_b, fb)].map(
            |(keys, file)| -> Vec<Json> { keys.iter().map(|k| entry(file, k, warnings)).collect() },
        );
        let changed: Vec<Json> = self
            .metadata
            .changed
            .iter()
            .map(|c| self.change_json(c, warnings))
            .collect();
        let t = &h.tensors;
        let mut doc = json!({
            "a": {"path": self.opts.a, "quant_mix": mix_json(self.ma)},
            "b": {"path": self.opts.b, "quant_mix": mix_json(self.mb)},
            "identical": self.identical,
            "summary": h.summary.iter().map(|f| json!({
                "field": f.name,
                "a": field_json(&f.a),
                "b": field_json(&f.b),
                "differs": f.differs(),
            })).collect::<Vec<_>>(),
            "metadata": {
                "only_a": std::mem::take(&mut only[0]),
                "only_b": std::mem::take(&mut only[1]),
                "changed": changed,
                "same": self.metadata.same,
            },
            "tensors": {
                "only_a": t.only_a.iter().map(|n| tensor_ref_json(self.ma, n)).collect::<Vec<_>>(),
                "only_b": t.only_b.iter().map(|n| tensor_ref_json(self.mb, n)).collect::<Vec<_>>(),
                "shape_changes": t.shape_changes.iter().map(|s| json!({
                    "name": s.name, "a": s.a, "b": s.b,
                })).collect::<Vec<_>>(),
                "type_changes": t.type_changes.iter().map(|c| json!({
                    "name": c.name, "a": c.a.name(), "b": c.b.name(),
                })).collect::<Vec<_>>(),
                "transitions": t.transitions.iter().map(|c| json!({
                    "a": c.a.name(), "b": c.b.name(), "tensors": c.tensors,
                })).collect::<Vec<_>>(),
                "matching": t.matching.len(),
            },
        });
        if !self.compared.is_empty() || self.opts.values {
            doc["values"] = self.compared.iter().map(metrics_json).collect();
        }
        doc
    }

    fn change_json(&self, c: &KeyChange, warnings: &mut Vec<String>) -> Json {
        let mut out = json!({
            "key": c.key,
            "type_a": c.type_a.name(),
            "type_b": c.type_b.name(),
        });
        match &c.array {
            None => {
                let value =
                    |f: &GgufFile, w: &mut Vec<String>| f.get(&c.key).map(|v| value_json(&v, w));
                out["a"] = value(self.fa, warnings).into();
                out["b"] = value(self.fb, warnings).into();
            }
            Some(a) => {
                out["item_type_a"] = a.item_type_a.name().into();
                out["item_type_b"] = a.item_type_b.name().into();
                out["len_a"] = a.len_a.into();
                out["len_b"] = a.len_b.into();
                out["differing_items"] = a.differing_items.into();
                out["first_difference"] = a.first_difference.into();
                let at = |f: &GgufFile, w: &mut Vec<String>| {
                    item(f, &c.key, a.first_difference).map(|v| value_json(&v, w))
                };
                out["item_a"] = at(self.fa, warnings).into();
                out["item_b"] = at(self.fb, warnings).into();
            }
        }
        out
    }

    fn text(&self) -> String {
        let (fa, fb) = (self.fa, self.fb);
        let h = self.header;
        let mut out = String::new();
        let _ = writeln!(out, "A: {}\nB: {}", self.opts.a, self.opts.b);
        let _ = writeln!(out, "\nsummary (* differs):");
        for f in &h.summary {
            let mark = if f.differs() { '*' } else { ' ' };
            let _ = writeln!(
                out,
                "{mark} {:<18} {:<30} {}",
                f.name,
                field_text(f.name, &f.a),
                field_text(f.name, &f.b)
            );
        }
        let m = self.metadata;
        let counts = [m.changed.len(), m.only_a.len(), m.only_b.len()];
        metadata_line(&mut out, "metadata", m.same, counts);
        for key in &m.only_a {
            let shown = fa.get(key).map(|v| preview(&v)).unwrap_or_default();
            let _ = writeln!(out, "  only in A  {key} = {shown}");
        }
        for key in &m.only_b {
            let shown = fb.get(key).map(|v| preview(&v)).unwrap_or_default();
            let _ = writeln!(out, "  only in B  {key} = {shown}");
        }
        for c in &m.changed {
            let _ = writeln!(out, "  changed    {}", self.change_text(c));
        }
        let t = &h.tensors;
        let counts = [&t.matching, &t.only_a, &t.only_b].map(Vec::len);
        let changes = [t.shape_changes.len(), t.type_changes.len()];
        tensors_line(&mut out, "tensors", counts, changes);
        for (label, names, model) in [
            ("only in A", &t.only_a, self.ma),
            ("only in B", &t.only_b, self.mb),
        ] {
            for name in names {
                let _ = writeln!(out, "  {label}  {}", tensor_text(model, name));
            }
        }
        for s in &t.shape_changes {
            let _ = writeln!(out, "  shape      {} {:?} -> {:?}", s.name, s.a, s.b);
        }
        for c in &t.transitions {
            let _ = writeln!(
                out,
                "  type       {} -> {}: {} tensors",
                c.a.name(),
                c.b.name(),
                c.tensors
            );
        }
        let _ = writeln!(out, "\nquant mix:");
        for (label, model) in [("A", self.ma), ("B", self.mb)] {
            let s = model.summary();
            let mix: Vec<String> = s
                .quant_mix
                .iter()
                .map(|m| {
                    format!(
                        "{} {} ({:.1}%)",
                        m.ggml_type.name(),
                        m.tensors,
                        100.0 * m.byte_share
                    )
                })
                .collect();
            let _ = writeln!(out, "  {label}  {}", mix.join(", "));
        }
        values_text(&mut out, self.compared);
        verdict_text(&mut out, self.identical);
        out
    }

    fn change_text(&self, c: &KeyChange) -> String {
        let Some(a) = &c.array else {
            let shown = |f: &GgufFile| f.get(&c.key).map(|v| preview(&v)).unwrap_or_default();
            if c.type_a != c.type_b {
                return format!(
                    "{}: {} {} -> {} {}",
                    c.key,
                    c.type_a.name(),
                    shown(self.fa),
                    c.type_b.name(),
                    shown(self.fb)
                );
            }
            return format!("{}: {} -> {}", c.key, shown(self.fa), shown(self.fb));
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
            let at =
                |f: &GgufFile| item(f, &c.key, Some(i)).map_or("-".to_string(), |v| preview(&v));
            let _ = write!(
                text,
                ", items differing: {n}, first at index {i}: {} -> {}",
                at(self.fa),
                at(self.fb)
            );
        }
        text
    }
}

fn tensor_text(model: &GgufModel, name: &str) -> String {
    match model.tensor(name) {
        Ok((_, t)) => format!("{name} {} {:?}", t.ggml_type().name(), t.shape()),
        Err(_) => name.to_string(),
    }
}
