//! The JavaScript API (wasm-bindgen). The only file that knows about JS: it turns the core's
//! results into JS values and errors into `Error`s carrying the core's one-line message.
//! The hand-written ESM wrapper in `js/` builds the user-facing API on top of this.
// wasm-bindgen's macros expand to code for its own MSRV (1.81); the core keeps 1.75.
#![allow(clippy::incompatible_msrv)]

#[cfg(feature = "wasm-full")]
use std::ops::Range;

use js_sys::{Array, BigInt, Float64Array, Object, Reflect, Uint32Array, Uint8Array};
use wasm_bindgen::prelude::*;

#[cfg(feature = "wasm-full")]
use crate::compare::{self, Layout, ModelView};
#[cfg(feature = "wasm-full")]
use crate::gguf::row_chunks;
use crate::gguf::{ArrayView, GgufFile, ParseStatus, Value};
use crate::model::{GgufModel, Model};
use crate::quant::Kernel;

#[cfg(feature = "wasm-full")]
mod checkpoint_js;
#[cfg(feature = "wasm-full")]
mod compare_js;
#[cfg(feature = "wasm-full")]
mod edit_js;
#[cfg(feature = "wasm-full")]
mod lint_js;
mod plan_js;
#[cfg(feature = "wasm-full")]
mod quant_error;
#[cfg(feature = "wasm-full")]
mod read_js;
#[cfg(feature = "wasm-full")]
mod report_js;
#[cfg(feature = "wasm-full")]
mod safetensors_js;
#[cfg(feature = "wasm-full")]
mod stats;
mod summary;
#[cfg(feature = "wasm-full")]
mod tokenizer_js;

#[cfg(feature = "wasm-full")]
/// Values per file dequantized at a time by `ValueDiff::add_rows` (at least one row).
const SLICE_ELEMENTS: u64 = 1 << 16;

/// Numbers per tensor in `ModelHeader::tensor_columns`.
const TENSOR_FIELDS: usize = 13;

fn js_error(err: crate::Error) -> JsError {
    JsError::new(&err.to_string())
}

/// A serde value as a plain JS value: structs and maps as objects, None as null. Only plain
/// data reaches here (strings, numbers, bools, arrays, maps): serializing cannot fail.
fn to_js(value: &impl serde::Serialize) -> JsValue {
    let serializer = serde_wasm_bindgen::Serializer::new()
        .serialize_maps_as_objects(true)
        .serialize_missing_as_null(true);
    value.serialize(&serializer).unwrap_or(JsValue::NULL)
}

fn set(target: &Object, key: &str, value: impl Into<JsValue>) {
    // Setting a property on a plain fresh object cannot fail.
    let _ = Reflect::set(target, &JsValue::from_str(key), &value.into());
}

/// Parses a header from `prefix`, the first bytes of a file of `file_size` bytes (undefined
/// when unknown). Returns a `ModelHeader`, or `{ needMore, estimate }` when the header goes on
/// past the prefix: `needMore` is the least prefix length that can hold it, `estimate` a guess
/// at its whole length. Throws on a malformed file.
#[wasm_bindgen(js_name = parseHeader)]
pub fn parse_header(prefix: Vec<u8>, file_size: Option<f64>) -> Result<JsValue, JsError> {
    let file_size = file_size.map(|size| size as u64);
    // By value: wasm-bindgen copies the JS bytes into wasm memory either way, and owning that
    // copy lets the header keep it, where a borrowed slice would be copied a second time.
    match crate::gguf::parse_owned(prefix, file_size).map_err(js_error)? {
        ParseStatus::Complete(file) => Ok(ModelHeader::of_gguf(file).into()),
        ParseStatus::NeedMore { at_least, estimate } => {
            let result = Object::new();
            set(&result, "needMore", at_least as f64);
            set(&result, "estimate", estimate as f64);
            Ok(result.into())
        }
    }
}

/// The kernel dequantization uses: "simd128" in a +simd128 build, else "scalar".
#[wasm_bindgen(js_name = kernelName)]
pub fn kernel_name() -> String {
    Kernel::best().name().to_string()
}

/// A parsed model header of either format, over the core's one `Model`: the same handle for a
/// GGUF file (`parseHeader`) and a safetensors checkpoint (`parseSafetensors`). What every
/// format has (`format`, `headerLength`, `dataOffset`, `metadata`, `rowsRange`, `summary`) works
/// on both; a format's own methods (GGUF arrays, tensor columns, tokenizer, plan, edit; a
/// checkpoint's shards, configs and quantized layers) throw on the other, naming it.
#[wasm_bindgen]
pub struct ModelHeader {
    model: Model,
}

impl ModelHeader {
    /// The handle of one GGUF file (a split model's shards are one handle each, and one more
    /// over all of them from [`ShardJoin`]).
    fn of_gguf(file: GgufFile) -> ModelHeader {
        ModelHeader {
            model: Model::Gguf(GgufModel::single(file)),
        }
    }

    /// The GGUF model (every shard of a joined handle), or an error naming the format the
    /// handle holds.
    pub(super) fn gguf_model(&self) -> Result<&GgufModel, JsError> {
        match &self.model {
            Model::Gguf(m) => Ok(m),
            Model::Safetensors(_) => Err(JsError::new(
                "a safetensors model has no GGUF header (metadata arrays, tokenizer, plan, edit)",
            )),
        }
    }

    /// The (first) GGUF file, or an error naming the format the handle holds.
    pub(super) fn gguf(&self) -> Result<&GgufFile, JsError> {
        self.gguf_model().map(GgufModel::first)
    }

    /// The array under `key`, or an error naming the key.
    fn array(&self, key: &str) -> Result<ArrayView<'_>, JsError> {
        let value = self
            .gguf()?
            .get(key)
            .ok_or_else(|| JsError::new(&format!("no metadata key {key}")))?;
        value
            .as_array()
            .cloned()
            .ok_or_else(|| JsError::new(&format!("metadata key {key} is not an array")))
    }
}

/// A split GGUF model's one handle, from its shards' handles in order: `add` each, then
/// `finish()` gives a handle over all of them, checked as the core's `GgufModel` checks a split
/// (split.no, split.count, split.tensors.count, no tensor twice). Its summary, lint, memory plan
/// and fit cover every shard; its metadata and arrays are the first shard's.
#[wasm_bindgen]
#[derive(Default)]
pub struct ShardJoin {
    shards: Vec<GgufFile>,
}

#[wasm_bindgen]
impl ShardJoin {
    #[wasm_bindgen(constructor)]
    pub fn new() -> ShardJoin {
        ShardJoin::default()
    }

    /// Adds the next shard (its header is copied; the shard's own handle stays usable).
    pub fn add(&mut self, shard: &ModelHeader) -> Result<(), JsError> {
        self.shards.push(shard.gguf()?.clone());
        Ok(())
    }

    /// The handle over every shard added; throws when they are not one whole model.
    pub fn finish(&mut self) -> Result<ModelHeader, JsError> {
        let model = GgufModel::from_shards(std::mem::take(&mut self.shards)).map_err(js_error)?;
        Ok(ModelHeader {
            model: Model::Gguf(model),
        })
    }
}

#[wasm_bindgen]
impl ModelHeader {
    /// "gguf" or "safetensors".
    #[wasm_bindgen(getter)]
    pub fn format(&self) -> String {
        self.model.format().name().to_string()
    }

    /// The GGUF version.
    #[wasm_bindgen(getter)]
    pub fn version(&self) -> Result<u32, JsError> {
        Ok(self.gguf()?.version())
    }

    /// "little" or "big" (GGUF).
    #[wasm_bindgen(getter)]
    pub fn endian(&self) -> Result<String, JsError> {
        Ok(self.gguf()?.endian().name().to_string())
    }

    /// The data alignment (GGUF).
    #[wasm_bindgen(getter)]
    pub fn alignment(&self) -> Result<f64, JsError> {
        Ok(self.gguf()?.alignment() as f64)
    }

    /// Where a GGUF header's last tensor info ends; a safetensors file's JSON header length N
    /// (the data section starts at 8 + N).
    #[wasm_bindgen(getter, js_name = headerLength)]
    pub fn header_length(&self) -> f64 {
        (match &self.model {
            Model::Gguf(m) => m.first().header_len(),
            Model::Safetensors(c) => c.shards()[0].header_len(),
        }) as f64
    }

    /// The GGUF header's bytes (a copy): what the full module parses again when a feature the
    /// core module lacks is first used.
    #[wasm_bindgen(js_name = headerBytes)]
    pub fn header_bytes(&self) -> Result<Uint8Array, JsError> {
        Ok(Uint8Array::from(self.gguf()?.header_bytes()))
    }

    /// The module this header lives in: "core" (the header path alone) or "full".
    #[wasm_bindgen(getter)]
    pub fn module(&self) -> String {
        if cfg!(feature = "wasm-full") {
            "full"
        } else {
            "core"
        }
        .to_string()
    }

    /// Absolute offset of the data section (of this file: a checkpoint's first shard).
    #[wasm_bindgen(getter, js_name = dataOffset)]
    pub fn data_offset(&self) -> f64 {
        (match &self.model {
            Model::Gguf(m) => m.first().data_offset(),
            Model::Safetensors(c) => c.shards()[0].data_offset(),
        }) as f64
    }

    /// Metadata in file order. GGUF: `{ key, type, value }`, arrays as `{ key, type: "array",
    /// itemType, len }` (elements through `arrayItems`), 64-bit integers as BigInts.
    /// Safetensors: `__metadata__` in header order, as `[{ key, value }]` (both strings).
    pub fn metadata(&self) -> JsValue {
        let file = match &self.model {
            Model::Gguf(m) => m.first(),
            #[cfg(feature = "wasm-full")]
            Model::Safetensors(c) => return safetensors_js::metadata_to_js(&c.shards()[0]),
            // The core module parses no safetensors header (`parseSafetensors` is full-only).
            #[cfg(not(feature = "wasm-full"))]
            Model::Safetensors(_) => return Array::new().into(),
        };
        let entries: Array = file
            .metadata()
            .map(|(key, value)| {
                let entry = Object::new();
                set(&entry, "key", key);
                set(&entry, "type", value.value_type().name());
                match &value {
                    Value::Array(array) => {
                        set(&entry, "itemType", array.item_type().name());
                        set(&entry, "len", array.len() as f64);
                    }
                    scalar => set(&entry, "value", value_to_js(scalar)),
                }
                JsValue::from(entry)
            })
            .collect();
        entries.into()
    }

    /// Elements `start..end` (clamped to the length) of the array under `key`. Nested arrays
    /// come whole as `{ itemType, len, value }`.
    #[wasm_bindgen(js_name = arrayItems)]
    pub fn array_items(&self, key: &str, start: f64, end: f64) -> Result<Array, JsError> {
        let array = self.array(key)?;
        let end = (end.max(0.0) as usize).min(array.len());
        let start = (start.max(0.0) as usize).min(end);
        Ok((start..end)
            .filter_map(|i| array.get(i))
            .map(|v| value_to_js(&v))
            .collect())
    }

    /// Indices (from `start`, at most `limit`) of the string items of the array under `key` that
    /// contain `needle`, ASCII case folded, searched in place (see `ArrayView::find_text`).
    #[wasm_bindgen(js_name = arrayFindText)]
    pub fn array_find_text(
        &self,
        key: &str,
        needle: &str,
        start: f64,
        limit: f64,
    ) -> Result<Vec<u32>, JsError> {
        let array = self.array(key)?;
        let found = array.find_text(needle, start.max(0.0) as usize, limit.max(0.0) as usize);
        // Indices fit u32: a header holds at most 2^31 bytes, each item at least one.
        Ok(found
            .into_iter()
            .filter_map(|i| u32::try_from(i).ok())
            .collect())
    }

    /// The whole array under `key` as bytes, for comparing arrays of any length without one JS
    /// value per item: `{ bytes, ends }`, every item's canonical bytes concatenated (numbers
    /// little-endian whatever the file's byte order, bools as 0/1, strings raw, nested arrays
    /// as item type id, length and length-prefixed items), `ends[i]` where item `i` ends in
    /// `bytes`; `ends` is null for fixed-size items (each `bytes.length / len` long).
    #[wasm_bindgen(js_name = arrayPacked)]
    pub fn array_packed(&self, key: &str) -> Result<Object, JsError> {
        let array = self.array(key)?;
        let fixed = array.item_type().fixed_size().is_some();
        let mut bytes = Vec::new();
        let mut ends = Vec::with_capacity(if fixed { 0 } else { array.len() });
        for item in array.iter() {
            pack_item(&item, &mut bytes);
            if !fixed {
                // The header is at most 2 GiB and packing never grows it: offsets fit in u32.
                ends.push(u32::try_from(bytes.len()).map_err(|_| JsError::new("array too large"))?);
            }
        }
        let out = Object::new();
        set(&out, "bytes", Uint8Array::from(&bytes[..]));
        set(
            &out,
            "ends",
            if fixed {
                JsValue::NULL
            } else {
                Uint32Array::from(&ends[..]).into()
            },
        );
        Ok(out)
    }

    /// Tensor infos in file order, as columns (the wrapper makes the objects: building 300+
    /// objects field by field across the wasm boundary costs more than the parse):
    /// `[names, typeNames, numbers]`, `numbers` holding per tensor [`TENSOR_FIELDS`] values:
    /// typeId, nDims, dims[0..4] (innermost first, 0 past nDims), nElements, offset (absolute),
    /// relativeOffset, nBytes, rowLength, nRows, rowBytes.
    #[wasm_bindgen(js_name = tensorColumns)]
    pub fn tensor_columns(&self) -> Result<Array, JsError> {
        let file = self.gguf()?;
        let tensors = file.tensors();
        let names: Array = tensors
            .iter()
            .map(|t| JsValue::from_str(t.name()))
            .collect();
        let types: Array = tensors
            .iter()
            .map(|t| JsValue::from_str(t.ggml_type().name()))
            .collect();
        let mut numbers = Vec::with_capacity(tensors.len() * TENSOR_FIELDS);
        for t in tensors {
            let dims = t.dims();
            numbers.push(f64::from(t.ggml_type().id()));
            numbers.push(dims.len() as f64);
            numbers.extend((0..4).map(|i| dims.get(i).map_or(0.0, |&d| d as f64)));
            numbers.extend(
                [
                    t.n_elements(),
                    file.tensor_range(t).start,
                    t.offset(),
                    t.n_bytes(),
                    t.row_len(),
                    t.n_rows(),
                    t.row_bytes(),
                ]
                .map(|v| v as f64),
            );
        }
        Ok([
            JsValue::from(names),
            JsValue::from(types),
            Float64Array::from(numbers.as_slice()).into(),
        ]
        .into_iter()
        .collect())
    }

    /// Every special-token id the metadata names (`tokenizer.ggml.*_token_id`):
    /// `[{ name, key, id, recognized }]` in llama.cpp's order (`recognized`: llama.cpp reads it).
    #[wasm_bindgen(js_name = specialTokens)]
    pub fn special_tokens(&self) -> Result<JsValue, JsError> {
        let tokens = crate::special_tokens::special_tokens(self.gguf()?);
        serde_wasm_bindgen::to_value(&tokens).map_err(|e| JsError::new(&e.to_string()))
    }

    /// The core's one summary, for either format (`Summary`): parameter count, tensor
    /// bytes, quant mix, bits per weight; a GGUF model's architecture, file type label and
    /// hyper-parameters (null when absent); a checkpoint's `dtypeMix` and quantization configs
    /// (`gptq.configSource` as given).
    pub fn summary(&self, config_source: Option<String>) -> JsValue {
        let summary = match &self.model {
            Model::Gguf(m) => m.summary(),
            #[cfg(feature = "wasm-full")]
            Model::Safetensors(c) => c.summary(),
            // The core module parses no checkpoint: its summary code stays out of that module.
            #[cfg(not(feature = "wasm-full"))]
            Model::Safetensors(_) => return JsValue::NULL,
        };
        summary::summary_to_js(&summary, config_source)
    }

    /// Absolute byte range `[start, end]` of rows `first..end` of tensor `name` of this file
    /// (a checkpoint's first shard).
    #[wasm_bindgen(js_name = rowsRange)]
    pub fn rows_range(&self, name: &str, first: f64, end: f64) -> Result<Float64Array, JsError> {
        let rows = first as u64..end as u64;
        let range = match &self.model {
            Model::Gguf(m) => {
                let file = m.first();
                let tensor = file.tensor(name).map_err(js_error)?;
                file.rows_range(tensor, rows).map_err(js_error)?
            }
            Model::Safetensors(c) => {
                let file = &c.shards()[0];
                let tensor = file.tensor(name).map_err(js_error)?;
                file.rows_range(tensor, rows).map_err(js_error)?
            }
        };
        Ok(Float64Array::from(
            &[range.start as f64, range.end as f64][..],
        ))
    }
}

#[cfg(feature = "wasm-full")]
impl ModelHeader {
    /// Dequantizes rows `rows` of `bytes` (whole rows of `tensor`) into `out`, resized to them.
    fn dequantize_slice(
        &self,
        tensor: &crate::TensorInfo,
        bytes: &[u8],
        rows: Range<u64>,
        out: &mut Vec<f32>,
    ) -> Result<(), JsError> {
        let row_bytes = tensor.row_bytes();
        let n = (rows.end - rows.start).saturating_mul(tensor.row_len());
        let n = crate::cursor::to_usize(n, "row chunk elements", 0).map_err(js_error)?;
        let start = usize::try_from(rows.start.saturating_mul(row_bytes));
        let end = usize::try_from(rows.end.saturating_mul(row_bytes));
        let bytes = match (start, end) {
            (Ok(start), Ok(end)) => bytes.get(start..end),
            _ => None,
        }
        .ok_or_else(|| JsError::new(&format!("rows {rows:?} are not in the bytes given")))?;
        out.resize(n, 0.0);
        self.dequantize_to(tensor, bytes, out)
    }

    fn dequantize_to(
        &self,
        tensor: &crate::TensorInfo,
        bytes: &[u8],
        out: &mut [f32],
    ) -> Result<(), JsError> {
        self.gguf()?
            .dequantize_rows_with(Kernel::best(), tensor, bytes, out)
            .map_err(js_error)
    }
}

#[cfg(feature = "wasm-full")]
fn whole_rows(name: &str, row_bytes: u64, len: usize) -> Result<u64, JsError> {
    let len = len as u64;
    if row_bytes == 0 || len % row_bytes != 0 {
        return Err(JsError::new(&format!(
            "{len} bytes are not whole rows of {name} ({row_bytes} bytes per row)"
        )));
    }
    Ok(len / row_bytes)
}

fn value_to_js(value: &Value<'_>) -> JsValue {
    match value {
        Value::U8(v) => (*v).into(),
        Value::I8(v) => (*v).into(),
        Value::U16(v) => (*v).into(),
        Value::I16(v) => (*v).into(),
        Value::U32(v) => (*v).into(),
        Value::I32(v) => (*v).into(),
        Value::U64(v) => BigInt::from(*v).into(),
        Value::I64(v) => BigInt::from(*v).into(),
        Value::F32(v) => (*v).into(),
        Value::F64(v) => (*v).into(),
        Value::Bool(v) => (*v).into(),
        Value::String(s) => s.to_string_lossy().as_ref().into(),
        Value::Array(array) => nested_array_to_js(array),
    }
}

/// One item's canonical bytes for `ModelHeader::array_packed`.
fn pack_item(value: &Value<'_>, out: &mut Vec<u8>) {
    match value {
        Value::U8(v) => out.push(*v),
        Value::I8(v) => out.extend(v.to_le_bytes()),
        Value::U16(v) => out.extend(v.to_le_bytes()),
        Value::I16(v) => out.extend(v.to_le_bytes()),
        Value::U32(v) => out.extend(v.to_le_bytes()),
        Value::I32(v) => out.extend(v.to_le_bytes()),
        Value::U64(v) => out.extend(v.to_le_bytes()),
        Value::I64(v) => out.extend(v.to_le_bytes()),
        Value::F32(v) => out.extend(v.to_le_bytes()),
        Value::F64(v) => out.extend(v.to_le_bytes()),
        Value::Bool(v) => out.push(u8::from(*v)),
        Value::String(s) => out.extend_from_slice(s.as_bytes()),
        Value::Array(array) => {
            out.extend((array.item_type() as u32).to_le_bytes());
            out.extend((array.len() as u64).to_le_bytes());
            for item in array.iter() {
                let mut one = Vec::new();
                pack_item(&item, &mut one);
                out.extend((one.len() as u64).to_le_bytes());
                out.extend(one);
            }
        }
    }
}

fn nested_array_to_js(array: &ArrayView<'_>) -> JsValue {
    let entry = Object::new();
    set(&entry, "itemType", array.item_type().name());
    set(&entry, "len", array.len() as f64);
    let items: Array = array.iter().map(|v| value_to_js(&v)).collect();
    set(&entry, "value", items);
    entry.into()
}

/// One model to compare: the shards of a GGUF model, or a safetensors checkpoint (one format
/// per side).
#[cfg(feature = "wasm-full")]
#[wasm_bindgen]
#[derive(Default)]
pub struct CompareSide {
    model: Option<Model>,
}

#[cfg(feature = "wasm-full")]
#[wasm_bindgen]
impl CompareSide {
    #[wasm_bindgen(constructor)]
    pub fn new() -> CompareSide {
        CompareSide::default()
    }

    /// Adds a model's header (a copy): a GGUF model's next shard, or a checkpoint (its first
    /// shard's handle, which holds every shard and the layers found across them).
    pub fn add(&mut self, header: &ModelHeader) -> Result<(), JsError> {
        match (&mut self.model, &header.model) {
            (None, Model::Gguf(m)) => {
                self.model = Some(Model::Gguf(GgufModel::single(m.first().clone())))
            }
            (Some(Model::Gguf(side)), Model::Gguf(m)) => side.push_shard(m.first().clone()),
            (None, Model::Safetensors(c)) => self.model = Some(Model::Safetensors(c.clone())),
            _ => return Err(JsError::new("a compare side holds one model of one format")),
        }
        Ok(())
    }
}

#[cfg(feature = "wasm-full")]
impl CompareSide {
    /// What is compared of the side (nothing yet: an empty GGUF model).
    fn view(&self, layout: Layout) -> ModelView<'_> {
        match &self.model {
            Some(m) => ModelView::of(m, layout),
            None => ModelView::gguf(&[], layout),
        }
    }

    /// The model, once a shard or a checkpoint was given.
    fn model(&self) -> Result<&Model, JsError> {
        self.model
            .as_ref()
            .ok_or_else(|| JsError::new("a compare side holds no model yet"))
    }
}

/// The differences between two models of any format (the core's `compare` module and its
/// definitions, as `gguf-lens diff` finds them): `{ formats: [a, b], layout, summary: [{ name,
/// a, b, counts, differs }], metadata: { onlyA: [key], onlyB: [key], changed: [{ key, typeA,
/// typeB, array }], same } (null across formats), metadataNotCompared (why metadata is null,
/// else null), tensors: { onlyA: [{ name, type, shape }], onlyB, shapeChanges: [{ name,
/// a, b }], typeChanges: [{ name, a, b }], transitions: [{ a, b, tensors }], matching: [{ name,
/// typeA, typeB, shape, nElements }] } }`. Shapes are row-major, outermost first, for every
/// pairing. `layout` is `gguf` for two GGUF models (ggml types), else `logical` (type names; a
/// GPTQ layer is `<layer>.weight` `[out, in]` of type `GPTQ-<bits>bit`). `array` (both values arrays, else null) is `{ itemTypeA, itemTypeB,
/// lenA, lenB, differingItems, firstDifference }`, the last two null when the item types
/// differ. Summary values are null when absent (a field the other format has); `counts` says
/// whether a field's difference counts (two GGUF models only, as `gguf-lens diff`), `differs`
/// is a counting field's difference; a `format` field comes first when the formats differ.
#[cfg(feature = "wasm-full")]
#[wasm_bindgen(js_name = compareSides)]
pub fn compare_sides(a: &CompareSide, b: &CompareSide) -> JsValue {
    let gguf = |side: &CompareSide| matches!(side.model, Some(Model::Gguf(_)));
    let both_gguf = gguf(a) && gguf(b);
    let layout = if both_gguf {
        Layout::Gguf
    } else {
        Layout::Logical
    };
    compare_js::diff_to_js(&a.view(layout), &b.view(layout))
}

/// The numeric comparison of two tensors fed as aligned chunks (the core's `ValueDiff`): feed
/// with `add` (or `addRows`, which dequantizes in wasm), read with `result`.
#[cfg(feature = "wasm-full")]
#[wasm_bindgen]
pub struct ValueDiff {
    diff: compare::ValueDiff,
    a: Vec<f32>,
    b: Vec<f32>,
}

#[cfg(feature = "wasm-full")]
#[wasm_bindgen]
impl ValueDiff {
    #[wasm_bindgen(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> ValueDiff {
        ValueDiff {
            diff: compare::ValueDiff::new(),
            a: Vec::new(),
            b: Vec::new(),
        }
    }

    /// Adds aligned chunks: `a[i]` is compared with `b[i]` (throws when the lengths differ).
    pub fn add(&mut self, a: &[f32], b: &[f32]) -> Result<(), JsError> {
        self.diff.add(a, b).map_err(js_error)
    }

    /// Dequantizes `bytes_a`, whole rows of tensor `name` of `header_a`, and `bytes_b`, the same
    /// rows of `name` in `header_b`, and adds them: no values cross into JS.
    #[wasm_bindgen(js_name = addRows)]
    pub fn add_rows(
        &mut self,
        name: &str,
        header_a: &ModelHeader,
        bytes_a: &[u8],
        header_b: &ModelHeader,
        bytes_b: &[u8],
    ) -> Result<(), JsError> {
        let ta = header_a.gguf()?.tensor(name).map_err(js_error)?;
        let tb = header_b.gguf()?.tensor(name).map_err(js_error)?;
        let rows = whole_rows(name, ta.row_bytes(), bytes_a.len())?;
        if ta.row_len() != tb.row_len() || whole_rows(name, tb.row_bytes(), bytes_b.len())? != rows
        {
            return Err(JsError::new(&format!(
                "{name}: the chunks of A and B hold other rows"
            )));
        }
        // A slice at a time: the buffers stay small (in cache) whatever the chunk read.
        let step = (SLICE_ELEMENTS / ta.row_len().max(1)).max(1);
        for slice in row_chunks(0..rows, step) {
            header_a.dequantize_slice(ta, bytes_a, slice.clone(), &mut self.a)?;
            header_b.dequantize_slice(tb, bytes_b, slice, &mut self.b)?;
            self.diff.add(&self.a, &self.b).map_err(js_error)?;
        }
        Ok(())
    }

    /// `{ elements, count, rmse, maxAbs, meanAbs, relRmse, cosine, nanMismatch, infMismatch,
    /// identical }`: metrics over the finite pairs (null when there is none; `relRmse` also null
    /// when RMS(a) is 0 and RMSE is not; `cosine` 1 for two zero vectors, 0 for one), NaN and
    /// Inf mismatches over all pairs, `identical` when nothing differs.
    pub fn result(&self) -> JsValue {
        compare_js::metrics_to_js(&self.diff.metrics())
    }
}
