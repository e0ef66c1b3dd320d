//! Comparing two models: the summary fields side by side, the metadata and tensor differences
//! of their headers, and numeric metrics over two dequantized tensors fed chunk by chunk. Plain
//! Rust (no I/O but through the row readers it is handed), so the CLI and the wasm binding can
//! share it.
//!
//! A model is described by a [`ModelView`], whatever its format: a GGUF file or split model
//! (metadata of the first shard, tensors of every shard), or a safetensors checkpoint
//! (`__metadata__`; plain tensors and GPTQ layers as `<layer>.weight`). [`HeaderDiff::between`]
//! compares two views; [`HeaderDiff::of`] two GGUF files as stored.
//!
//! Definitions:
//! - Metadata values are equal when they have the same type and the same value; floats are
//!   compared by their bits (NaN equals the same NaN, 0 differs from -0), strings by their bytes,
//!   arrays item by item in full (same item type and length, every item equal); a safetensors
//!   `__metadata__` value is a string.
//! - For a changed array with the same item type in both files, `differing_items` counts the
//!   indices below the shorter length whose items differ, and `first_difference` is the first
//!   such index, or the shorter length when the common part matches but the lengths differ.
//! - Tensors match when they have the same name and shape; a type change is reported whatever
//!   the shapes. Shapes are row-major, outermost first, for every format (a GGUF tensor's
//!   `ne` reversed). Two GGUF models compare ggml types ([`Layout::Gguf`]); other pairs type
//!   names ([`Layout::Logical`]).
//! - Numeric metrics ([`ValueDiff`]): over the pairs where both values are finite, with the f32
//!   values widened to f64 and every sum in f64: RMSE, max |a−b|, mean |a−b|, RMSE / RMS(a) and
//!   the cosine similarity Σab / √(Σa²·Σb²); over all pairs, NaN mismatches (NaN in one only)
//!   and Inf mismatches (an infinity in either and a ≠ b).

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::error::{Error, ErrorKind, Result};
use crate::gguf::{row_chunks, ArrayView, GgufFile, Value, ValueType};
use crate::model::{gguf_tensors, Checkpoint, Model, Rows, Summary};
pub use crate::model::{Layout, TensorEntry, TensorType};

/// One summary field of both files.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryField {
    /// Field name, snake_case (`architecture`, `parameters`, `file_type`, ...).
    pub name: &'static str,
    pub a: FieldValue,
    pub b: FieldValue,
    /// Whether a difference in this field counts (makes the models differ): for two GGUF
    /// models every field; for a pair with a safetensors checkpoint none (shown only, as `gguf-lens
    /// diff`: the tensors decide).
    pub counts: bool,
}

impl SummaryField {
    /// Whether the two files differ on this field and the difference counts.
    pub fn differs(&self) -> bool {
        self.counts && self.a != self.b
    }
}

/// A summary field's value in one file.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldValue {
    /// The file does not say (its key is absent).
    Absent,
    Text(String),
    Int(u64),
    Float(f64),
}

impl From<Option<String>> for FieldValue {
    fn from(v: Option<String>) -> FieldValue {
        v.map_or(FieldValue::Absent, FieldValue::Text)
    }
}

impl From<Option<u64>> for FieldValue {
    fn from(v: Option<u64>) -> FieldValue {
        v.map_or(FieldValue::Absent, FieldValue::Int)
    }
}

/// A metadata key present in both files with another value.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyChange {
    pub key: String,
    pub type_a: ValueType,
    pub type_b: ValueType,
    /// When both values are arrays.
    pub array: Option<ArrayChange>,
}

/// How two arrays under the same key differ.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayChange {
    pub item_type_a: ValueType,
    pub item_type_b: ValueType,
    pub len_a: u64,
    pub len_b: u64,
    /// Indices below the shorter length whose items differ (None when the item types differ).
    pub differing_items: Option<u64>,
    /// The first differing index, or the shorter length when only the lengths differ (None
    /// when the item types differ).
    pub first_difference: Option<u64>,
}

/// Metadata differences, keys in file order (A's, then B's for `only_b`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetadataDiff {
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
    pub changed: Vec<KeyChange>,
    /// Keys with the same value in both.
    pub same: u64,
}

impl MetadataDiff {
    /// No key only in one file or changed.
    pub fn is_identical(&self) -> bool {
        self.only_a.is_empty() && self.only_b.is_empty() && self.changed.is_empty()
    }
}

/// Why [`HeaderDiff::metadata`] is None: a GGUF model's key-values and a safetensors
/// checkpoint's `__metadata__` are different vocabularies.
pub const METADATA_NOT_COMPARED: &str =
    "Metadata is not compared between a GGUF file and a safetensors checkpoint (different key sets).";

/// A tensor whose shape differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeChange {
    pub name: String,
    pub a: Vec<u64>,
    pub b: Vec<u64>,
}

/// A tensor whose type differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeChange {
    pub name: String,
    pub a: TensorType,
    pub b: TensorType,
}

/// How many tensors went from type `a` to type `b`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    pub a: TensorType,
    pub b: TensorType,
    pub tensors: u64,
}

/// Tensor differences, in model order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TensorDiff {
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
    pub shape_changes: Vec<ShapeChange>,
    pub type_changes: Vec<TypeChange>,
    /// Type changes counted per (A type, B type), in type order (ggml type id, else name).
    pub transitions: Vec<Transition>,
    /// Tensors in both with the same shape (the ones whose values can be compared), A's order.
    pub matching: Vec<String>,
}

/// Everything that differs between two headers.
#[derive(Debug, Clone, PartialEq)]
pub struct HeaderDiff {
    pub summary: Vec<SummaryField>,
    /// None when the models have different formats (not compared: [`METADATA_NOT_COMPARED`]).
    pub metadata: Option<MetadataDiff>,
    pub tensors: TensorDiff,
}

/// A metadata value as compared: a GGUF value, or a safetensors `__metadata__` string (equal
/// to a GGUF string of the same bytes).
#[derive(Debug, Clone)]
pub enum MetaValue<'a> {
    Gguf(Value<'a>),
    Text(&'a str),
}

impl MetaValue<'_> {
    pub fn value_type(&self) -> ValueType {
        match self {
            MetaValue::Gguf(v) => v.value_type(),
            MetaValue::Text(_) => ValueType::String,
        }
    }

    fn text_bytes(&self) -> Option<&[u8]> {
        match self {
            MetaValue::Gguf(Value::String(s)) => Some(s.as_bytes()),
            MetaValue::Text(s) => Some(s.as_bytes()),
            MetaValue::Gguf(_) => None,
        }
    }

    /// Same type and value ([`values_equal`]; strings by bytes whatever their format).
    pub fn equals(&self, other: &MetaValue<'_>) -> bool {
        match (self, other) {
            (MetaValue::Gguf(x), MetaValue::Gguf(y)) => values_equal(x, y),
            _ => self.text_bytes().is_some() && self.text_bytes() == other.text_bytes(),
        }
    }
}

/// What [`HeaderDiff::between`] compares of a model, whatever its format: summary fields,
/// metadata entries and tensors.
#[derive(Debug, Clone)]
pub struct ModelView<'a> {
    /// `gguf` or `safetensors`.
    pub format: &'static str,
    /// Summary fields in display order.
    pub summary: Vec<(&'static str, FieldValue)>,
    /// Metadata entries in file order.
    pub metadata: Vec<(&'a str, MetaValue<'a>)>,
    pub tensors: Vec<TensorEntry>,
}

impl<'a> ModelView<'a> {
    /// A model of any format (see [`ModelView::gguf`], [`ModelView::checkpoint`]).
    pub fn of(model: &'a Model, layout: Layout) -> ModelView<'a> {
        match model {
            Model::Gguf(m) => {
                let shards: Vec<&GgufFile> = m.shards().iter().collect();
                ModelView::gguf(&shards, layout)
            }
            Model::Safetensors(c) => ModelView::checkpoint(c),
        }
    }

    /// A GGUF model: one file, or the shards of a split model in order. Metadata is the first
    /// shard's (as llama.cpp's split convention reads it: `split.*` keys included); tensors
    /// come from every shard; summary fields are the first shard's [`Summary`] but parameters,
    /// bits per weight, file size and tensor count, which cover every shard.
    pub fn gguf(shards: &[&'a GgufFile], layout: Layout) -> ModelView<'a> {
        let Some(first) = shards.first() else {
            return ModelView {
                format: "gguf",
                summary: Vec::new(),
                metadata: Vec::new(),
                tensors: Vec::new(),
            };
        };
        let s = Summary::of_gguf_shards(shards);
        let d = s.gguf().cloned().unwrap_or_default();
        // Saturating, as `Summary` sums the tensors: the sizes come from the files.
        let size = shards.iter().skip(1).fold(first.file_size(), |size, f| {
            size.zip(f.file_size()).map(|(x, y)| x.saturating_add(y))
        });
        let tensors = gguf_tensors(shards, layout);
        let summary = vec![
            ("architecture", d.architecture.into()),
            ("name", d.name.into()),
            ("parameters", FieldValue::Int(s.parameter_count)),
            ("file_type", d.file_type.into()),
            ("bits_per_weight", FieldValue::Float(s.bits_per_weight)),
            ("file_size", size.into()),
            ("context_length", d.context_length.into()),
            ("block_count", d.block_count.into()),
            ("embedding_length", d.embedding_length.into()),
            ("vocab_size", d.vocab_size.into()),
            ("tensor_count", FieldValue::Int(tensors.len() as u64)),
        ];
        ModelView {
            format: "gguf",
            summary,
            metadata: first
                .metadata()
                .map(|(k, v)| (k, MetaValue::Gguf(v)))
                .collect(),
            tensors,
        }
    }

    /// A safetensors checkpoint: one file or its shards in order, with the GPTQ layers the core
    /// found in it. Metadata is `__metadata__` (shards in order, a key's first value kept); tensors
    /// are [`Checkpoint::logical_tensors`]; summary fields are parameters (elements of the listed
    /// tensors), file size and tensor count.
    pub fn checkpoint(c: &'a Checkpoint) -> ModelView<'a> {
        let shards = c.shards();
        let tensors = c.logical_tensors();
        let mut metadata: Vec<(&'a str, MetaValue<'a>)> = Vec::new();
        for (key, value) in shards.iter().flat_map(|s| s.metadata()) {
            if !metadata.iter().any(|(k, _)| k == key) {
                metadata.push((key.as_str(), MetaValue::Text(value.as_str())));
            }
        }
        let size = shards
            .iter()
            .try_fold(0u64, |sum, s| s.file_size().map(|n| sum.saturating_add(n)));
        ModelView {
            format: "safetensors",
            summary: vec![
                ("parameters", FieldValue::Int(c.summary().parameter_count)),
                ("file_size", size.into()),
                ("tensor_count", FieldValue::Int(tensors.len() as u64)),
            ],
            metadata,
            tensors,
        }
    }

    /// The tensor named `name`.
    pub fn tensor(&self, name: &str) -> Option<&TensorEntry> {
        self.tensors.iter().find(|t| t.name == name)
    }
}

impl HeaderDiff {
    /// Compares two parsed GGUF headers (ggml types, dims as stored).
    pub fn of(a: &GgufFile, b: &GgufFile) -> HeaderDiff {
        HeaderDiff::between(
            &ModelView::gguf(&[a], Layout::Gguf),
            &ModelView::gguf(&[b], Layout::Gguf),
        )
    }

    /// Compares two models of any format: summary fields by name (a `format` field first when
    /// the formats differ, then A's order, then B's others; absent where a model has no such
    /// field; counting only for two GGUF models), metadata (only when both have one format) and
    /// tensors.
    pub fn between(a: &ModelView<'_>, b: &ModelView<'_>) -> HeaderDiff {
        let counts = a.format == "gguf" && b.format == "gguf";
        let mixed = a.format != b.format;
        let mut summary = Vec::new();
        if mixed {
            summary.push(SummaryField {
                name: "format",
                a: FieldValue::Text(a.format.to_string()),
                b: FieldValue::Text(b.format.to_string()),
                counts,
            });
        }
        summary.extend(a.summary.iter().map(|(name, va)| SummaryField {
            name,
            a: va.clone(),
            b: field(&b.summary, name),
            counts,
        }));
        for (name, vb) in &b.summary {
            if !a.summary.iter().any(|(n, _)| n == name) {
                summary.push(SummaryField {
                    name,
                    a: FieldValue::Absent,
                    b: vb.clone(),
                    counts,
                });
            }
        }
        HeaderDiff {
            summary,
            metadata: (!mixed).then(|| metadata_diff_of(&a.metadata, &b.metadata)),
            tensors: tensor_diff_of(&a.tensors, &b.tensors),
        }
    }

    /// No counting summary field, metadata key (when compared) or tensor info differs.
    pub fn is_identical(&self) -> bool {
        let t = &self.tensors;
        !self.summary.iter().any(SummaryField::differs)
            && self
                .metadata
                .as_ref()
                .map_or(true, MetadataDiff::is_identical)
            && t.only_a.is_empty()
            && t.only_b.is_empty()
            && t.shape_changes.is_empty()
            && t.type_changes.is_empty()
    }
}

fn field(fields: &[(&'static str, FieldValue)], name: &str) -> FieldValue {
    fields
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(FieldValue::Absent, |(_, v)| v.clone())
}

/// The metadata keys only in A, only in B, and changed.
pub fn metadata_diff_of(a: &[(&str, MetaValue<'_>)], b: &[(&str, MetaValue<'_>)]) -> MetadataDiff {
    let mut index: HashMap<&str, &MetaValue<'_>> = HashMap::new();
    for (k, v) in b {
        index.entry(*k).or_insert(v);
    }
    let in_a: HashSet<&str> = a.iter().map(|(k, _)| *k).collect();
    let mut diff = MetadataDiff::default();
    for (key, va) in a {
        let Some(vb) = index.get(key) else {
            diff.only_a.push(key.to_string());
            continue;
        };
        if va.equals(vb) {
            diff.same += 1;
            continue;
        }
        let array = match (va, vb) {
            (MetaValue::Gguf(Value::Array(x)), MetaValue::Gguf(Value::Array(y))) => {
                Some(array_change(x, y))
            }
            _ => None,
        };
        diff.changed.push(KeyChange {
            key: key.to_string(),
            type_a: va.value_type(),
            type_b: vb.value_type(),
            array,
        });
    }
    diff.only_b = b
        .iter()
        .filter(|(key, _)| !in_a.contains(key))
        .map(|(key, _)| key.to_string())
        .collect();
    diff
}

fn array_change(x: &ArrayView<'_>, y: &ArrayView<'_>) -> ArrayChange {
    let (item_type_a, item_type_b) = (x.item_type(), y.item_type());
    let mut change = ArrayChange {
        item_type_a,
        item_type_b,
        len_a: x.len() as u64,
        len_b: y.len() as u64,
        differing_items: None,
        first_difference: None,
    };
    if item_type_a != item_type_b {
        return change;
    }
    let mut differing = 0u64;
    let mut first = None;
    for (i, (p, q)) in x.iter().zip(y.iter()).enumerate() {
        if !values_equal(&p, &q) {
            differing += 1;
            first.get_or_insert(i as u64);
        }
    }
    change.differing_items = Some(differing);
    change.first_difference =
        first.or_else(|| (change.len_a != change.len_b).then_some(change.len_a.min(change.len_b)));
    change
}

/// Same type and value; floats by bits, strings by bytes, arrays in full.
pub fn values_equal(a: &Value<'_>, b: &Value<'_>) -> bool {
    match (a, b) {
        (Value::U8(x), Value::U8(y)) => x == y,
        (Value::I8(x), Value::I8(y)) => x == y,
        (Value::U16(x), Value::U16(y)) => x == y,
        (Value::I16(x), Value::I16(y)) => x == y,
        (Value::U32(x), Value::U32(y)) => x == y,
        (Value::I32(x), Value::I32(y)) => x == y,
        (Value::U64(x), Value::U64(y)) => x == y,
        (Value::I64(x), Value::I64(y)) => x == y,
        (Value::F32(x), Value::F32(y)) => x.to_bits() == y.to_bits(),
        (Value::F64(x), Value::F64(y)) => x.to_bits() == y.to_bits(),
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::String(x), Value::String(y)) => x.as_bytes() == y.as_bytes(),
        (Value::Array(x), Value::Array(y)) => {
            x.item_type() == y.item_type()
                && x.len() == y.len()
                && x.iter().zip(y.iter()).all(|(p, q)| values_equal(&p, &q))
        }
        _ => false,
    }
}

/// The tensors only in A, only in B, with another shape or type. Tensors match when they have
/// the same name and shape; a type change is reported whatever the shapes.
pub fn tensor_diff_of(a: &[TensorEntry], b: &[TensorEntry]) -> TensorDiff {
    let mut index: HashMap<&str, &TensorEntry> = HashMap::new();
    for t in b {
        index.entry(t.name.as_str()).or_insert(t);
    }
    let in_a: HashSet<&str> = a.iter().map(|t| t.name.as_str()).collect();
    let mut diff = TensorDiff::default();
    let mut transitions: BTreeMap<(TensorType, TensorType), u64> = BTreeMap::new();
    for x in a {
        let Some(y) = index.get(x.name.as_str()) else {
            diff.only_a.push(x.name.clone());
            continue;
        };
        if x.shape == y.shape {
            diff.matching.push(x.name.clone());
        } else {
            diff.shape_changes.push(ShapeChange {
                name: x.name.clone(),
                a: x.shape.clone(),
                b: y.shape.clone(),
            });
        }
        if x.ty != y.ty {
            diff.type_changes.push(TypeChange {
                name: x.name.clone(),
                a: x.ty.clone(),
                b: y.ty.clone(),
            });
            *transitions.entry((x.ty.clone(), y.ty.clone())).or_default() += 1;
        }
    }
    diff.only_b = b
        .iter()
        .filter(|y| !in_a.contains(y.name.as_str()))
        .map(|y| y.name.clone())
        .collect();
    diff.transitions = transitions
        .into_iter()
        .map(|((a, b), tensors)| Transition { a, b, tensors })
        .collect();
    diff
}

/// Accumulates the numeric comparison of two tensors fed as aligned chunks.
#[derive(Debug, Clone, Default)]
pub struct ValueDiff {
    elements: u64,
    count: u64,
    sum_sq: f64,
    sum_abs: f64,
    max_abs: f64,
    sum_aa: f64,
    sum_bb: f64,
    sum_ab: f64,
    nan_mismatch: u64,
    inf_mismatch: u64,
}

/// Pairs per block of [`ValueDiff::add`]'s fast path.
const LANES: usize = 8;

/// Partial sums of [`ValueDiff::add`], one per lane.
#[derive(Default)]
struct Lanes {
    sum_sq: [f64; LANES],
    sum_abs: [f64; LANES],
    max_abs: [f64; LANES],
    sum_aa: [f64; LANES],
    sum_bb: [f64; LANES],
    sum_ab: [f64; LANES],
}

impl Lanes {
    #[inline(always)]
    fn add(&mut self, k: usize, x: f64, y: f64) {
        let d = x - y;
        self.sum_sq[k] += d * d;
        self.sum_abs[k] += d.abs();
        self.max_abs[k] = self.max_abs[k].max(d.abs());
        self.sum_aa[k] += x * x;
        self.sum_bb[k] += y * y;
        self.sum_ab[k] += x * y;
    }
}

/// The metrics of a [`ValueDiff`]. Metrics over finite pairs are None when there is none.
#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    /// Pairs seen.
    pub elements: u64,
    /// Pairs where both values are finite.
    pub count: u64,
    pub rmse: Option<f64>,
    pub max_abs: Option<f64>,
    pub mean_abs: Option<f64>,
    /// RMSE / RMS(a): 0 when RMSE is 0, None when RMS(a) is 0 and RMSE is not.
    pub rel_rmse: Option<f64>,
    /// Σab / √(Σa²·Σb²): 1 when both are all zeros (they are equal), 0 when only one is.
    pub cosine: Option<f64>,
    /// Pairs with a NaN in one value only.
    pub nan_mismatch: u64,
    /// Pairs with an infinity in either value and a ≠ b.
    pub inf_mismatch: u64,
}

impl Metrics {
    /// Every finite pair equal (max |a−b| = 0) and no NaN or Inf mismatch.
    pub fn is_identical(&self) -> bool {
        self.nan_mismatch == 0 && self.inf_mismatch == 0 && self.max_abs.unwrap_or(0.0) == 0.0
    }
}

impl ValueDiff {
    /// An empty accumulator.
    pub fn new() -> ValueDiff {
        ValueDiff::default()
    }

    /// Adds aligned chunks of both tensors: `a[i]` is compared with `b[i]`.
    pub fn add(&mut self, a: &[f32], b: &[f32]) -> Result<()> {
        if a.len() != b.len() {
            return Err(Error::new(ErrorKind::BadLength {
                what: "second chunk compared".to_string(),
                len: b.len() as u64,
                expected: a.len() as u64,
            }));
        }
        self.elements += a.len() as u64;
        // `LANES` independent partial sums per quantity (instruction-level parallelism) over
        // blocks of `LANES` pairs that are all finite; other blocks go pair by pair.
        let mut lanes = Lanes::default();
        let blocks_a = a.chunks_exact(LANES);
        let blocks_b = b.chunks_exact(LANES);
        let (rest_a, rest_b) = (blocks_a.remainder(), blocks_b.remainder());
        for (pa, pb) in blocks_a.zip(blocks_b) {
            let all_finite = pa.iter().chain(pb).all(|v| v.is_finite());
            if all_finite {
                for k in 0..LANES {
                    lanes.add(k, f64::from(pa[k]), f64::from(pb[k]));
                }
                self.count += LANES as u64;
            } else {
                self.add_pairs(pa, pb);
            }
        }
        self.add_pairs(rest_a, rest_b);
        self.sum_sq += lanes.sum_sq.iter().sum::<f64>();
        self.sum_abs += lanes.sum_abs.iter().sum::<f64>();
        self.max_abs = lanes.max_abs.iter().fold(self.max_abs, |m, &x| m.max(x));
        self.sum_aa += lanes.sum_aa.iter().sum::<f64>();
        self.sum_bb += lanes.sum_bb.iter().sum::<f64>();
        self.sum_ab += lanes.sum_ab.iter().sum::<f64>();
        Ok(())
    }

    /// Pair by pair, any values.
    fn add_pairs(&mut self, a: &[f32], b: &[f32]) {
        for (&p, &q) in a.iter().zip(b) {
            if p.is_finite() && q.is_finite() {
                let (x, y) = (f64::from(p), f64::from(q));
                let d = x - y;
                let ad = d.abs();
                self.count += 1;
                self.sum_sq += d * d;
                self.sum_abs += ad;
                self.max_abs = self.max_abs.max(ad);
                self.sum_aa += x * x;
                self.sum_bb += y * y;
                self.sum_ab += x * y;
                continue;
            }
            if p.is_nan() != q.is_nan() {
                self.nan_mismatch += 1;
            }
            if (p.is_infinite() || q.is_infinite()) && p != q {
                self.inf_mismatch += 1;
            }
        }
    }

    /// The metrics of everything added so far.
    pub fn metrics(&self) -> Metrics {
        let n = self.count as f64;
        let finite = |v: f64| (self.count > 0).then_some(v);
        let rmse = (self.sum_sq / n).sqrt();
        let rms_a = (self.sum_aa / n).sqrt();
        let rel_rmse = if rmse == 0.0 {
            Some(0.0)
        } else if rms_a > 0.0 {
            Some(rmse / rms_a)
        } else {
            None
        };
        let cosine = match (self.sum_aa > 0.0, self.sum_bb > 0.0) {
            (true, true) => self.sum_ab / (self.sum_aa * self.sum_bb).sqrt(),
            (false, false) => 1.0,
            _ => 0.0,
        };
        Metrics {
            elements: self.elements,
            count: self.count,
            rmse: finite(rmse),
            max_abs: finite(self.max_abs),
            mean_abs: finite(self.sum_abs / n),
            rel_rmse: rel_rmse.filter(|_| self.count > 0),
            cosine: finite(cosine),
            nan_mismatch: self.nan_mismatch,
            inf_mismatch: self.inf_mismatch,
        }
    }
}

/// Which file of the two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

impl Side {
    /// `"A"` or `"B"`: the file an error of [`compare_rows`] names
    /// ([`ErrorKind::InFile`]).
    pub fn name(self) -> &'static str {
        match self {
            Side::A => "A",
            Side::B => "B",
        }
    }

    /// The side an error of [`compare_rows`] concerns, if it concerns one: then also the
    /// error of that file alone.
    pub fn of(err: &Error) -> Option<(Side, &Error)> {
        match &err.kind {
            ErrorKind::InFile { file, error } if file == "A" => Some((Side::A, error)),
            ErrorKind::InFile { file, error } if file == "B" => Some((Side::B, error)),
            _ => None,
        }
    }
}

/// Compares the values of two tensors of any storage with the same logical shape, reading
/// both in row chunks of at most `chunk_elements` values each (at least one row): memory stays
/// two chunks. A read error names its side ([`Side::of`]).
pub fn compare_rows(
    name: &str,
    a: &mut Rows<'_>,
    b: &mut Rows<'_>,
    chunk_elements: u64,
) -> Result<Metrics> {
    if a.shape() != b.shape() {
        return Err(Error::new(ErrorKind::ShapesDiffer {
            name: name.to_string(),
            a: a.shape(),
            b: b.shape(),
        }));
    }
    let tag = |side: Side| move |error| Error::in_file(side.name(), error);
    let mut diff = ValueDiff::new();
    for chunk in row_chunks(0..a.n_rows(), a.rows_per_chunk(chunk_elements)) {
        let va = a.read(chunk.clone()).map_err(tag(Side::A))?;
        let vb = b.read(chunk).map_err(tag(Side::B))?;
        diff.add(va, vb).map_err(tag(Side::B))?;
    }
    Ok(diff.metrics())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn safetensors(header: &str, data_len: usize) -> crate::safetensors::SafetensorsFile {
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header.as_bytes());
        bytes.resize(bytes.len() + data_len, 0);
        match crate::safetensors::parse(&bytes, Some(bytes.len() as u64)).unwrap() {
            crate::safetensors::ParseStatus::Complete(f) => f,
            _ => panic!("incomplete"),
        }
    }

    #[test]
    fn safetensors_view_lists_gptq_layers_as_weight_and_sorts_by_name() {
        let st = safetensors(
            r#"{"__metadata__":{"format":"pt","k":"v"},
                "z":{"dtype":"F16","shape":[2,3],"data_offsets":[0,12]},
                "l.qweight":{"dtype":"I32","shape":[1,8],"data_offsets":[12,44]},
                "l.scales":{"dtype":"F16","shape":[1,8],"data_offsets":[44,60]},
                "a":{"dtype":"F32","shape":[1],"data_offsets":[60,64]},
                "l.qzeros":{"dtype":"I32","shape":[1,1],"data_offsets":[64,68]}}"#,
            68,
        );
        let config = crate::gptq::QuantConfig {
            bits: Some(4),
            group_size: None,
            desc_act: None,
            sym: None,
            checkpoint_format: crate::gptq::CheckpointFormat::V1,
        };
        let st = Checkpoint::new(vec![st], Some(config));
        let layer = crate::gptq::GptqLayer {
            name: "l".into(),
            bits: 4,
            in_features: 8,
            out_features: 8,
            n_groups: 1,
            group_size: 8,
            has_g_idx: false,
            scales_dtype: crate::safetensors::Dtype::F16,
        };
        assert_eq!(st.layers(), [layer]);
        let view = ModelView::checkpoint(&st);
        let listed: Vec<_> = view
            .tensors
            .iter()
            .map(|t| (t.name.as_str(), t.ty.name(), t.shape.clone()))
            .collect();
        assert_eq!(
            listed,
            [
                ("a", "F32", vec![1]),
                ("l.weight", "GPTQ-4bit", vec![8, 8]),
                ("z", "F16", vec![2, 3]),
            ]
        );
        let keys: Vec<_> = view.metadata.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, ["format", "k"]);
        assert_eq!(view.summary[0], ("parameters", FieldValue::Int(71)));

        let other = safetensors(
            r#"{"__metadata__":{"format":"pt","k":"w"},
                "z":{"dtype":"F16","shape":[3,2],"data_offsets":[0,12]}}"#,
            12,
        );
        let other = Checkpoint::new(vec![other], None);
        let d = HeaderDiff::between(&view, &ModelView::checkpoint(&other));
        let m = d.metadata.as_ref().unwrap();
        assert_eq!(m.same, 1);
        assert_eq!(m.changed.len(), 1);
        assert_eq!(m.changed[0].key, "k");
        assert!(d.summary.iter().all(|f| !f.counts && !f.differs()));
        assert_eq!(d.tensors.only_a, ["a", "l.weight"]);
        assert_eq!(d.tensors.shape_changes[0].b, [3, 2]);
        assert!(d.tensors.matching.is_empty());
        assert!(!d.is_identical());
    }

    #[test]
    fn across_formats_metadata_is_not_compared_and_no_summary_field_counts() {
        let view = |format, key| ModelView {
            format,
            summary: vec![("tensor_count", FieldValue::Int(1))],
            metadata: vec![(key, MetaValue::Text("v"))],
            tensors: vec![TensorEntry {
                name: "t".into(),
                ty: TensorType::Named("F32".into()),
                shape: vec![2],
            }],
        };
        let d = HeaderDiff::between(&view("gguf", "general.name"), &view("safetensors", "k"));
        assert_eq!(d.metadata, None);
        let fields: Vec<_> = d.summary.iter().map(|f| (f.name, f.counts)).collect();
        assert_eq!(fields, [("format", false), ("tensor_count", false)]);
        assert!(d.is_identical());
        let same = HeaderDiff::between(&view("gguf", "a"), &view("gguf", "b"));
        assert_eq!(same.metadata.as_ref().map(|m| m.only_a.len()), Some(1));
        assert!(same.summary.iter().all(|f| f.counts));
        assert!(!same.is_identical());
    }

    #[test]
    fn text_metadata_equals_gguf_strings_by_bytes() {
        assert!(MetaValue::Text("x").equals(&MetaValue::Text("x")));
        assert!(!MetaValue::Text("x").equals(&MetaValue::Text("y")));
        assert!(!MetaValue::Text("1").equals(&MetaValue::Gguf(Value::U32(1))));
    }

    fn close(x: Option<f64>, want: f64) -> bool {
        x.is_some_and(|x| (x - want).abs() <= 1e-12 * want.abs().max(1.0))
    }

    #[test]
    fn empty_has_no_finite_metrics() {
        let m = ValueDiff::new().metrics();
        assert_eq!(m.elements, 0);
        assert_eq!(m.count, 0);
        assert_eq!(m.rmse, None);
        assert_eq!(m.max_abs, None);
        assert_eq!(m.mean_abs, None);
        assert_eq!(m.rel_rmse, None);
        assert_eq!(m.cosine, None);
        assert!(m.is_identical());
    }

    #[test]
    fn all_nan_counts_mismatches_only() {
        let mut d = ValueDiff::new();
        d.add(&[f32::NAN, f32::NAN, 1.0], &[f32::NAN, 2.0, f32::NAN])
            .unwrap();
        let m = d.metrics();
        assert_eq!((m.elements, m.count), (3, 0));
        assert_eq!(m.nan_mismatch, 2);
        assert_eq!(m.inf_mismatch, 0);
        assert_eq!(m.rmse, None);
        assert!(!m.is_identical());
        let mut same = ValueDiff::new();
        same.add(&[f32::NAN; 4], &[f32::NAN; 4]).unwrap();
        assert!(same.metrics().is_identical());
    }

    #[test]
    fn infinities_mismatch_unless_equal() {
        let mut d = ValueDiff::new();
        let inf = f32::INFINITY;
        d.add(
            &[inf, inf, -inf, inf, 1.0],
            &[inf, -inf, 3.0, f32::NAN, 1.0],
        )
        .unwrap();
        let m = d.metrics();
        assert_eq!(m.inf_mismatch, 3);
        assert_eq!(m.nan_mismatch, 1);
        assert_eq!(m.count, 1);
        assert_eq!(m.rmse, Some(0.0));
    }

    #[test]
    fn identical_values_give_zero_error_and_cosine_one() {
        let v: Vec<f32> = (0..1000).map(|i| (i as f32 * 0.37).sin()).collect();
        let mut d = ValueDiff::new();
        for c in v.chunks(64) {
            d.add(c, c).unwrap();
        }
        let m = d.metrics();
        assert_eq!(m.rmse, Some(0.0));
        assert_eq!(m.max_abs, Some(0.0));
        assert_eq!(m.rel_rmse, Some(0.0));
        assert!(close(m.cosine, 1.0));
        assert!(m.is_identical());
    }

    #[test]
    fn zero_vectors_have_a_defined_cosine() {
        let mut both = ValueDiff::new();
        both.add(&[0.0, -0.0], &[0.0, 0.0]).unwrap();
        let m = both.metrics();
        assert_eq!(m.cosine, Some(1.0));
        assert_eq!(m.rel_rmse, Some(0.0));
        assert!(m.is_identical());
        let mut one = ValueDiff::new();
        one.add(&[0.0, 0.0], &[3.0, 4.0]).unwrap();
        let m = one.metrics();
        assert_eq!(m.cosine, Some(0.0));
        assert_eq!(m.rel_rmse, None);
        assert!(close(m.rmse, (12.5f64).sqrt()));
    }

    /// The blocked fast path and the pair-by-pair path agree with a plain loop, whatever the
    /// chunking and wherever the non-finite values fall.
    #[test]
    fn blocked_sums_equal_a_plain_loop() {
        let a: Vec<f32> = (0..1003).map(|i| (i as f32 * 0.37).sin()).collect();
        let mut b: Vec<f32> = a.iter().map(|x| x * 0.9 + 0.01).collect();
        b[5] = f32::NAN;
        b[77] = f32::INFINITY;
        b[1001] = f32::NEG_INFINITY;
        let (mut n, mut sq, mut ab, mut mx) = (0u64, 0f64, 0f64, 0f64);
        for (&p, &q) in a.iter().zip(&b) {
            if p.is_finite() && q.is_finite() {
                let d = f64::from(p) - f64::from(q);
                n += 1;
                sq += d * d;
                ab += f64::from(p) * f64::from(q);
                mx = mx.max(d.abs());
            }
        }
        for chunk in [1, 3, 8, 64, 1003] {
            let mut d = ValueDiff::new();
            for (ca, cb) in a.chunks(chunk).zip(b.chunks(chunk)) {
                d.add(ca, cb).unwrap();
            }
            let m = d.metrics();
            assert_eq!((m.count, m.nan_mismatch, m.inf_mismatch), (n, 1, 2));
            assert!(close(m.rmse, (sq / n as f64).sqrt()), "{chunk}");
            assert_eq!(m.max_abs, Some(mx));
            assert!((d.sum_ab - ab).abs() < 1e-12 * ab.abs());
        }
    }

    #[test]
    fn metrics_by_hand() {
        // a = [1, 2, 3], b = [1, 0, 4]: d = [0, 2, -1]
        let mut d = ValueDiff::new();
        d.add(&[1.0, 2.0], &[1.0, 0.0]).unwrap();
        d.add(&[3.0], &[4.0]).unwrap();
        let m = d.metrics();
        assert!(close(m.rmse, (5.0f64 / 3.0).sqrt()));
        assert_eq!(m.max_abs, Some(2.0));
        assert!(close(m.mean_abs, 1.0));
        assert!(close(m.rel_rmse, (5.0f64 / 14.0).sqrt()));
        assert!(close(m.cosine, 13.0 / (14.0f64 * 17.0).sqrt()));
        assert!(d.add(&[1.0], &[]).is_err());
    }
}
