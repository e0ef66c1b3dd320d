//! Serializing a header per the GGUF v2/v3 spec.

use super::bad_edit;
use crate::error::Result;
use crate::gguf::{Endian, GgufFile, Value, ValueType};

use super::Edits;

/// An owned metadata value to write.
#[derive(Debug, Clone, PartialEq)]
pub enum NewValue {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    F32(f32),
    Bool(bool),
    String(String),
    /// Item type and items (all of that type).
    Array(ValueType, Vec<NewValue>),
    U64(u64),
    I64(i64),
    F64(f64),
}

impl NewValue {
    pub fn value_type(&self) -> ValueType {
        match self {
            NewValue::U8(_) => ValueType::U8,
            NewValue::I8(_) => ValueType::I8,
            NewValue::U16(_) => ValueType::U16,
            NewValue::I16(_) => ValueType::I16,
            NewValue::U32(_) => ValueType::U32,
            NewValue::I32(_) => ValueType::I32,
            NewValue::F32(_) => ValueType::F32,
            NewValue::Bool(_) => ValueType::Bool,
            NewValue::String(_) => ValueType::String,
            NewValue::Array(..) => ValueType::Array,
            NewValue::U64(_) => ValueType::U64,
            NewValue::I64(_) => ValueType::I64,
            NewValue::F64(_) => ValueType::F64,
        }
    }
}

/// Writes numbers in the file's byte order.
struct Out {
    bytes: Vec<u8>,
    big: bool,
}

impl Out {
    fn u32(&mut self, v: u32) {
        let b = if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        self.bytes.extend_from_slice(&b);
    }
    fn u64(&mut self, v: u64) {
        let b = if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        self.bytes.extend_from_slice(&b);
    }
    fn str(&mut self, s: &[u8]) {
        self.u64(s.len() as u64);
        self.bytes.extend_from_slice(s);
    }
    fn num<const N: usize>(&mut self, le: [u8; N], be: [u8; N]) {
        self.bytes
            .extend_from_slice(if self.big { &be } else { &le });
    }
    /// The value's payload (no type id), parsed form.
    fn parsed(&mut self, v: &Value) {
        match v {
            Value::U8(x) => self.bytes.push(*x),
            Value::I8(x) => self.bytes.push(*x as u8),
            Value::U16(x) => self.num(x.to_le_bytes(), x.to_be_bytes()),
            Value::I16(x) => self.num(x.to_le_bytes(), x.to_be_bytes()),
            Value::U32(x) => self.u32(*x),
            Value::I32(x) => self.num(x.to_le_bytes(), x.to_be_bytes()),
            Value::F32(x) => self.num(x.to_le_bytes(), x.to_be_bytes()),
            Value::Bool(x) => self.bytes.push(u8::from(*x)),
            Value::String(s) => self.str(s.as_bytes()),
            Value::Array(a) => {
                self.u32(a.item_type() as u32);
                self.u64(a.len() as u64);
                for item in a.iter() {
                    self.parsed(&item);
                }
            }
            Value::U64(x) => self.u64(*x),
            Value::I64(x) => self.num(x.to_le_bytes(), x.to_be_bytes()),
            Value::F64(x) => self.num(x.to_le_bytes(), x.to_be_bytes()),
        }
    }
    /// The value's payload (no type id), new form.
    fn new_value(&mut self, v: &NewValue) -> Result<()> {
        match v {
            NewValue::U8(x) => self.bytes.push(*x),
            NewValue::I8(x) => self.bytes.push(*x as u8),
            NewValue::U16(x) => self.num(x.to_le_bytes(), x.to_be_bytes()),
            NewValue::I16(x) => self.num(x.to_le_bytes(), x.to_be_bytes()),
            NewValue::U32(x) => self.u32(*x),
            NewValue::I32(x) => self.num(x.to_le_bytes(), x.to_be_bytes()),
            NewValue::F32(x) => self.num(x.to_le_bytes(), x.to_be_bytes()),
            NewValue::Bool(x) => self.bytes.push(u8::from(*x)),
            NewValue::String(s) => self.str(s.as_bytes()),
            NewValue::Array(item_type, items) => {
                if let Some(bad) = items.iter().find(|i| i.value_type() != *item_type) {
                    return Err(bad_edit(format!(
                        "array of {} holds a {}",
                        item_type.name(),
                        bad.value_type().name()
                    )));
                }
                self.u32(*item_type as u32);
                self.u64(items.len() as u64);
                for item in items {
                    self.new_value(item)?;
                }
            }
            NewValue::U64(x) => self.u64(*x),
            NewValue::I64(x) => self.num(x.to_le_bytes(), x.to_be_bytes()),
            NewValue::F64(x) => self.num(x.to_le_bytes(), x.to_be_bytes()),
        }
        Ok(())
    }
}

/// The alignment `edits` leave: a `general.alignment` set (a uint32 power of two), 32 when it
/// is removed, else the file's.
pub fn new_alignment(file: &GgufFile, edits: &Edits) -> Result<u64> {
    let key = "general.alignment";
    if let Some((_, value)) = edits.set.iter().rev().find(|(k, _)| k == key) {
        return match value {
            NewValue::U32(a) if a.is_power_of_two() => Ok(u64::from(*a)),
            NewValue::U32(a) => Err(bad_edit(format!("{key}: {a} is not a power of two"))),
            other => Err(bad_edit(format!(
                "{key}: must be a uint32 (ggml reads no other type), not a {}",
                other.value_type().name()
            ))),
        };
    }
    if edits.remove.iter().any(|k| k == key) {
        return Ok(crate::gguf::DEFAULT_ALIGNMENT);
    }
    Ok(file.alignment())
}

/// A tensor info for a header whose tensors change (type, offset): name, dims (GGUF order,
/// innermost first), type, offset relative to the data section.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTensor {
    pub name: String,
    pub dims: Vec<u64>,
    pub ty: crate::types::GgmlType,
    pub offset: u64,
}

/// The new header of `file` with `edits` applied, padded so the data section starts aligned.
/// Tensor infos are copied verbatim (a new alignment goes through [`super::plan`], which lays
/// the tensors out anew). Errors are one line naming the key and the reason.
pub fn build_header(file: &GgufFile, edits: &Edits) -> Result<Vec<u8>> {
    encode_header(file, edits, new_alignment(file, edits)?, None)
}

/// As [`build_header`], with `tensors` written as the tensor infos instead of `file`'s (for a
/// rewrite that changes tensor types, hence sizes and offsets).
pub fn build_header_with_tensors(
    file: &GgufFile,
    edits: &Edits,
    tensors: &[NewTensor],
) -> Result<Vec<u8>> {
    encode_header(file, edits, new_alignment(file, edits)?, Some(tensors))
}

/// The header with `alignment` (already checked) and, when given, `tensors` as the tensor infos.
pub(crate) fn encode_header(
    file: &GgufFile,
    edits: &Edits,
    alignment: u64,
    tensors: Option<&[NewTensor]>,
) -> Result<Vec<u8>> {
    if file.version() < 2 {
        return Err(bad_edit(format!(
            "GGUF version {} files cannot be edited (only 2 and 3)",
            file.version()
        )));
    }
    for key in &edits.remove {
        if file.get(key).is_none() {
            return Err(bad_edit(format!("--remove {key}: no such key")));
        }
    }
    let mut out = Out {
        bytes: Vec::new(),
        big: file.endian() == Endian::Big,
    };
    out.bytes.extend_from_slice(b"GGUF");
    out.u32(file.version());
    out.u64(tensors.map_or(file.tensors().len(), <[NewTensor]>::len) as u64);
    let count_at = out.bytes.len();
    out.u64(0); // key count, filled in below
    let mut count = 0u64;
    let new_value_of = |key: &str| {
        edits
            .set
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    };
    for (key, value) in file.metadata() {
        if edits.remove.iter().any(|k| k == key) {
            continue;
        }
        out.str(key.as_bytes());
        match new_value_of(key) {
            Some(v) => {
                out.u32(v.value_type() as u32);
                out.new_value(v)
                    .map_err(|e| bad_edit(format!("{key}: {e}")))?;
            }
            None => {
                out.u32(value.value_type() as u32);
                out.parsed(&value);
            }
        }
        count += 1;
    }
    let mut added: Vec<&str> = Vec::new();
    for (key, value) in &edits.set {
        // A key both removed and set moves to the end (as ggml's gguf_set_* does).
        let kept = file.get(key).is_some() && !edits.remove.iter().any(|k| k == key);
        if kept || added.contains(&key.as_str()) {
            continue;
        }
        added.push(key);
        let v = new_value_of(key).unwrap_or(value);
        out.str(key.as_bytes());
        out.u32(v.value_type() as u32);
        out.new_value(v)
            .map_err(|e| bad_edit(format!("{key}: {e}")))?;
        count += 1;
    }
    let count_bytes = if out.big {
        count.to_be_bytes()
    } else {
        count.to_le_bytes()
    };
    out.bytes[count_at..count_at + 8].copy_from_slice(&count_bytes);
    if let Some(tensors) = tensors {
        for t in tensors {
            out.str(t.name.as_bytes());
            out.u32(u32::try_from(t.dims.len()).map_err(|e| bad_edit(e.to_string()))?);
            for &d in &t.dims {
                out.u64(d);
            }
            out.u32(t.ty.id());
            out.u64(t.offset);
        }
    } else if let Some(first) = file.tensors().first() {
        // Tensor infos verbatim: their offsets are relative to the data section.
        let start = usize::try_from(first.info_offset()).map_err(|e| bad_edit(e.to_string()))?;
        let infos = file
            .header_bytes()
            .get(start..)
            .ok_or_else(|| bad_edit("tensor infos lie outside the header".to_string()))?;
        out.bytes.extend_from_slice(infos);
    }
    let align = usize::try_from(alignment).map_err(|e| bad_edit(e.to_string()))?;
    let padded = out.bytes.len().div_ceil(align) * align;
    out.bytes.resize(padded, 0);
    Ok(out.bytes)
}
