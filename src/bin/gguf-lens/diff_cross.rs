//! `diff` when one file or both are safetensors checkpoints (GGUF vs GGUF is `diff.rs`'s).
//!
//! What is compared:
//! - summary: format, tensor count and parameters (elements of the listed tensors) of both,
//!   shown but not counted as differences (the tensors below are);
//! - metadata: only when both are safetensors: the `__metadata__` strings (shards in order, a
//!   key's first value), by key, strings by bytes. GGUF key-values and safetensors
//!   `__metadata__` have nothing in common, so the core's `HeaderDiff::between` does not
//!   compare metadata across formats and a GGUF vs safetensors diff has no metadata part;
//! - tensors: by exact name, with logical row-major shapes (GGUF dims reversed, see
//!   `model.rs`), a GPTQ layer as `<layer>.weight` `[out, in]`; a type change compares type
//!   names (ggml's F32/F16/BF16/F64/I8..I64 are spelled as the safetensors dtypes);
//! - `--values`: the tensors with the same name and logical shape, row chunk by row chunk, both
//!   dequantized to f32, with the core's `ValueDiff` (the metrics of GGUF vs GGUF);
//! - `--llama-names` (one GGUF file, one checkpoint): the checkpoint's Hugging Face llama names
//!   are read as their GGUF names (`llama_names.rs`) before matching; `attn_q` / `attn_k` are
//!   listed as skipped instead of compared (llama.cpp permutes their rows);
//! - skipped too: tensors of a safetensors dtype without an f32 conversion (F4, F6, F8_E8M0,
//!   C64). Skipped tensors are listed with the reason and do not count as differences.

use std::collections::BTreeMap;
use std::fmt::Write;

use gguf_lens::compare::{
    tensor_diff_of, HeaderDiff, MetadataDiff as CoreMetadataDiff, TensorEntry, TensorType,
    ValueDiff,
};
use gguf_lens::gguf::row_chunks;
use gguf_lens::safetensors::Dtype;
use gguf_lens::{Error, ErrorKind, Kernel};
use serde_json::{json, Value as Json};

use crate::diff_render::{
    finish, metadata_line, metrics_json, tensors_line, values_text, verdict_text, Compared, Options,
};
use crate::llama_names::{gguf_name, rows_permuted};
use crate::model::{Entry, Model};
use crate::{fatal, json_line, Failure, CHUNK_ELEMENTS};

/// `__metadata__` differences, keys in A's order (B's for `only_b`).
#[derive(Default)]
struct MetadataDiff {
    only_a: Vec<(String, String)>,
    only_b: Vec<(String, String)>,
    /// Key, A's value, B's value.
    changed: Vec<(String, String, String)>,
    same: u64,
}

impl MetadataDiff {
    /// The core's metadata diff `d` of `a` and `b` (strings by bytes), with the values shown.
    fn of(d: CoreMetadataDiff, a: &[(String, String)], b: &[(String, String)]) -> MetadataDiff {
        let value = |m: &[(String, String)], key: &str| {
            m.iter()
                .find(|(k, _)| k == key)
                .map_or_else(String::new, |(_, v)| v.clone())
        };
        MetadataDiff {
            only_a: d
                .only_a
                .into_iter()
                .map(|k| {
                    let v = value(a, &k);
                    (k, v)
                })
                .collect(),
            only_b: d
                .only_b
                .into_iter()
                .map(|k| {
                    let v = value(b, &k);
                    (k, v)
                })
                .collect(),
            changed: d
                .changed
                .into_iter()
                .map(|c| {
                    let (va, vb) = (value(a, &c.key), value(b, &c.key));
                    (c.key, va, vb)
                })
                .collect(),
            same: d.same,
        }
    }

    fn is_identical(&self) -> bool {
        self.only_a.is_empty() && self.only_b.is_empty() && self.changed.is_empty()
    }
}

/// Tensor differences by name, logical shapes.
#[derive(Default)]
struct TensorDiff {
    only_a: Vec<Entry>,
    only_b: Vec<Entry>,
    /// Name, A's shape, B's shape.
    shape_changes: Vec<(String, Vec<u64>, Vec<u64>)>,
    /// Name, A's type, B's type.
    type_changes: Vec<(String, String, String)>,
    /// Type changes per (A type, B type), by name.
    transitions: BTreeMap<(String, String), u64>,
    /// Same name and logical shape, A's order.
    matching: Vec<String>,
}

impl TensorDiff {
    /// The core's tensor diff (types by name), with the entries shown.
    fn of(a: &[Entry], b: &[Entry]) -> TensorDiff {
        let entries = |list: &[Entry]| -> Vec<TensorEntry> {
            list.iter()
                .map(|e| TensorEntry {
                    name: e.name.clone(),
                    ty: TensorType::Named(e.type_name.clone()),
                    shape: e.shape.clone(),
                })
                .collect()
        };
        let find = |list: &[Entry], name: &str| list.iter().find(|e| e.name == name).cloned();
        let d = tensor_diff_of(&entries(a), &entries(b));
        TensorDiff {
            only_a: d.only_a.iter().filter_map(|n| find(a, n)).collect(),
            only_b: d.only_b.iter().filter_map(|n| find(b, n)).collect(),
            shape_changes: d
                .shape_changes
                .into_iter()
                .map(|c| (c.name, c.a, c.b))
                .collect(),
            type_changes: d
                .type_changes
                .into_iter()
                .map(|c| (c.name, c.a.name().to_string(), c.b.name().to_string()))
                .collect(),
            transitions: d
                .transitions
                .into_iter()
                .map(|t| ((t.a.name().to_string(), t.b.name().to_string()), t.tensors))
                .collect(),
            matching: d.matching,
        }
    }

    fn is_identical(&self) -> bool {
        self.only_a.is_empty()
            && self.only_b.is_empty()
            && self.shape_changes.is_empty()
            && self.type_changes.is_empty()
    }
}

/// The name of `name` in the file (another with `--llama-names`).
fn file_name<'e>(entries: &'e [Entry], name: &'e str) -> &'e str {
    entries
        .iter()
        .find(|e| e.name == name)
        .and_then(|e| e.file_name.as_deref())
        .unwrap_or(name)
}

pub fn llama_names_usage() -> Failure {
    Failure::Usage("--llama-names needs one GGUF file and one safetensors checkpoint".into())
}

/// Renames Hugging Face llama names to GGUF names, keeping the file's name.
fn rename_llama(entries: &mut [Entry]) {
    for e in entries {
        if let Some(name) = gguf_name(&e.name) {
            e.file_name = Some(std::mem::replace(&mut e.name, name));
        }
    }
}

/// Why the values of `name` are not compared, when they are not: rows permuted by llama.cpp
/// (`--llama-names`' attn_q / attn_k), or a safetensors dtype without an f32 conversion.
fn skip_reason(opts: &Options, name: &str, lists: [&[Entry]; 2]) -> Option<String> {
    if opts.llama_names && rows_permuted(name) {
        return Some(
            "llama.cpp permutes its rows per head, values not comparable elementwise".to_string(),
        );
    }
    lists
        .iter()
        .flat_map(|list| list.iter().find(|e| e.name == name))
        .find(|e| Dtype::from_name(&e.type_name).is_some_and(|d| !d.is_plain()))
        .map(|e| format!("dtype {} has no f32 conversion", e.type_name))
}

/// Compares the values of `name` in both, row chunk by row chunk.
fn compare_values(
    opts: &Options,
    (ma, ta): (&mut Model, &[Entry]),
    (mb, tb): (&mut Model, &[Entry]),
    name: &str,
    kernel: Kernel,
) -> Result<Compared, Failure> {
    let mut ra = ma
        .rows(file_name(ta, name), kernel)
        .map_err(fatal(opts.a))?;
    let mut rb = mb
        .rows(file_name(tb, name), kernel)
        .map_err(fatal(opts.b))?;
    let shape = ra.shape();
    if shape != rb.shape() {
        let error = Error::new(ErrorKind::ShapesDiffer {
            name: name.to_string(),
            a: shape,
            b: rb.shape(),
        });
        return Err(Failure::Fatal(format!(
            "{} vs {}: {error} (logical row-major shapes)",
            opts.a, opts.b
        )));
    }
    let mut diff = ValueDiff::new();
    for chunk in row_chunks(0..ra.n_rows(), ra.rows_per_chunk(CHUNK_ELEMENTS)) {
        let va = ra.read(chunk.clone()).map_err(fatal(opts.a))?;
        let vb = rb.read(chunk).map_err(fatal(opts.b))?;
        diff.add(va, vb).map_err(fatal(opts.b))?;
    }
    Ok(Compared {
        name: name.to_string(),
        type_a: ra.type_name(),
        type_b: rb.type_name(),
        shape,
        metrics: diff.metrics(),
    })
}

pub fn run(opts: &Options, mut ma: Model, mut mb: Model) -> Result<(), Failure> {
    let (mut ta, mut tb) = (ma.tensors(), mb.tensors());
    if opts.llama_names {
        match (ma.format(), mb.format()) {
            ("gguf", "safetensors") => rename_llama(&mut tb),
            ("safetensors", "gguf") => rename_llama(&mut ta),
            _ => return Err(llama_names_usage()),
        }
    }
    let tensors = TensorDiff::of(&ta, &tb);
    // The core decides whether metadata is compared (not across formats).
    let compared_meta = HeaderDiff::between(&ma.view(), &mb.view()).metadata;
    let metadata = match (compared_meta, ma.st_metadata(), mb.st_metadata()) {
        (Some(d), Some(a), Some(b)) => Some(MetadataDiff::of(d, &a, &b)),
        _ => None,
    };
    let names: Vec<&str> = if !opts.tensors.is_empty() {
        opts.tensors.clone()
    } else if opts.values {
        tensors.matching.iter().map(String::as_str).collect()
    } else {
        Vec::new()
    };
    let mut skipped = Vec::new();
    let names: Vec<&str> = names
        .into_iter()
        .filter(|&name| match skip_reason(opts, name, [&ta, &tb]) {
            Some(reason) => {
                skipped.push((name.to_string(), reason));
                false
            }
            None => true,
        })
        .collect();
    let mut compared = Vec::new();
    if !names.is_empty() {
        let kernel = Kernel::auto().map_err(|e| Failure::Fatal(e.to_string()))?;
        for name in names {
            let a = (&mut ma, &ta[..]);
            let b = (&mut mb, &tb[..]);
            compared.push(compare_values(opts, a, b, name, kernel)?);
        }
    }
    let identical = tensors.is_identical()
        && metadata.as_ref().map_or(true, MetadataDiff::is_identical)
        && compared.iter().all(|c| c.metrics.is_identical());
    let summary = [(&ma, &ta), (&mb, &tb)].map(|(m, t)| Side {
        format: m.format(),
        tensors: t.len() as u64,
        parameters: t.iter().map(|e| e.shape.iter().product::<u64>()).sum(),
    });
    let report = Report {
        opts,
        summary,
        metadata: metadata.as_ref(),
        tensors: &tensors,
        compared: &compared,
        skipped: &skipped,
        identical,
    };
    let text = if opts.json {
        json_line(&report.json())
    } else {
        report.text()
    };
    finish(&text, identical)
}

/// Summary fields of one file.
struct Side {
    format: &'static str,
    tensors: u64,
    parameters: u64,
}

struct Report<'a> {
    opts: &'a Options<'a>,
    summary: [Side; 2],
    metadata: Option<&'a MetadataDiff>,
    tensors: &'a TensorDiff,
    compared: &'a [Compared],
    /// Not compared, and why.
    skipped: &'a [(String, String)],
    identical: bool,
}

fn entry_json(e: &Entry) -> Json {
    let mut out = json!({"name": e.name, "type": e.type_name, "shape": e.shape});
    if let Some(name) = &e.file_name {
        out["file_name"] = name.as_str().into();
    }
    out
}

fn entry_text(e: &Entry) -> String {
    let renamed = e
        .file_name
        .as_ref()
        .map_or(String::new(), |n| format!(" (in the file: {n})"));
    format!("{}{renamed} {} {:?}", e.name, e.type_name, e.shape)
}

impl Report<'_> {
    /// (field, A, B) of the summary.
    fn summary_fields(&self) -> [(&'static str, Json); 3] {
        let [a, b] = &self.summary;
        [
            ("format", json!([a.format, b.format])),
            ("tensor_count", json!([a.tensors, b.tensors])),
            ("parameters", json!([a.parameters, b.parameters])),
        ]
    }

    fn json(&self) -> Json {
        let t = self.tensors;
        let metadata = self.metadata.map(|m| {
            let kv = |list: &[(String, String)]| -> Vec<Json> {
                list.iter()
                    .map(|(k, v)| json!({"key": k, "value": v}))
                    .collect()
            };
            json!({
                "only_a": kv(&m.only_a),
                "only_b": kv(&m.only_b),
                "changed": m.changed.iter().map(|(k, a, b)| json!({
                    "key": k, "a": a, "b": b,
                })).collect::<Vec<_>>(),
                "same": m.same,
            })
        });
        let mut doc = json!({
            "a": {"path": self.opts.a, "format": self.summary[0].format},
            "b": {"path": self.opts.b, "format": self.summary[1].format},
            "identical": self.identical,
            "shapes": "logical",
            "summary": self.summary_fields().iter().map(|(f, v)| json!({
                "field": f, "a": v[0], "b": v[1], "differs": v[0] != v[1],
            })).collect::<Vec<_>>(),
            "metadata": metadata,
            "tensors": {
                "only_a": t.only_a.iter().map(entry_json).collect::<Vec<_>>(),
                "only_b": t.only_b.iter().map(entry_json).collect::<Vec<_>>(),
                "shape_changes": t.shape_changes.iter().map(|(n, a, b)| json!({
                    "name": n, "a": a, "b": b,
                })).collect::<Vec<_>>(),
                "type_changes": t.type_changes.iter().map(|(n, a, b)| json!({
                    "name": n, "a": a, "b": b,
                })).collect::<Vec<_>>(),
                "transitions": t.transitions.iter().map(|((a, b), n)| json!({
                    "a": a, "b": b, "tensors": n,
                })).collect::<Vec<_>>(),
                "matching": t.matching.len(),
            },
        });
        if !self.compared.is_empty() || self.opts.values {
            doc["values"] = self.compared.iter().map(metrics_json).collect();
        }
        doc["skipped"] = self
            .skipped
            .iter()
            .map(|(name, reason)| json!({"name": name, "reason": reason}))
            .collect();
        doc
    }

    fn text(&self) -> String {
        let mut out = String::new();
        let [a, b] = &self.summary;
        let _ = writeln!(out, "A: {} ({})", self.opts.a, a.format);
        let _ = writeln!(out, "B: {} ({})", self.opts.b, b.format);
        let _ = writeln!(out, "\nsummary (* differs):");
        for (field, v) in self.summary_fields() {
            let mark = if v[0] != v[1] { '*' } else { ' ' };
            let show = |v: &Json| v.as_str().map_or_else(|| v.to_string(), str::to_string);
            let _ = writeln!(
                out,
                "{mark} {field:<18} {:<30} {}",
                show(&v[0]),
                show(&v[1])
            );
        }
        match self.metadata {
            None => {
                let _ = writeln!(
                    out,
                    "\nmetadata: not compared (GGUF key-values and safetensors __metadata__ differ in kind)"
                );
            }
            Some(m) => {
                let counts = [m.changed.len(), m.only_a.len(), m.only_b.len()];
                metadata_line(&mut out, "metadata (__metadata__)", m.same, counts);
                for (k, v) in &m.only_a {
                    let _ = writeln!(out, "  only in A  {k} = {v:?}");
                }
                for (k, v) in &m.only_b {
                    let _ = writeln!(out, "  only in B  {k} = {v:?}");
                }
                for (k, va, vb) in &m.changed {
                    let _ = writeln!(out, "  changed    {k}: {va:?} -> {vb:?}");
                }
            }
        }
        let t = self.tensors;
        let counts = [t.matching.len(), t.only_a.len(), t.only_b.len()];
        let changes = [t.shape_changes.len(), t.type_changes.len()];
        let heading = "tensors (by name; logical row-major shapes, GGUF dims reversed)";
        tensors_line(&mut out, heading, counts, changes);
        for (label, list) in [("only in A", &t.only_a), ("only in B", &t.only_b)] {
            for e in list {
                let _ = writeln!(out, "  {label}  {}", entry_text(e));
            }
        }
        for (name, a, b) in &t.shape_changes {
            let _ = writeln!(out, "  shape      {name} {a:?} -> {b:?}");
        }
        for ((a, b), n) in &t.transitions {
            let _ = writeln!(out, "  type       {a} -> {b}: {n} tensors");
        }
        values_text(&mut out, self.compared);
        for (name, reason) in self.skipped {
            let _ = writeln!(out, "  skipped    {name}: {reason}");
        }
        verdict_text(&mut out, self.identical);
        out
    }
}
