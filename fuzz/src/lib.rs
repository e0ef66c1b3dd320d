//! Helpers the fuzz targets share: a small GGUF writer (for structured inputs that reach past
//! the parser), an owned form of metadata values (to compare a value before and after an edit),
//! and the sectioned input format the multi-file targets use.

use arbitrary::Arbitrary;
use gguf_lens::edit::NewValue;
use gguf_lens::gguf::{Value, ValueType};
use gguf_lens::GgmlType;

/// Separates the files of one input (`compare`: A and B; `safetensors`: config and shards).
/// In the targets' `-dict` so mutations keep or add it.
pub const SECTION: &[u8] = b"\n--8<--\n";

/// `data` cut at each [`SECTION`], at most `max` pieces (the last keeps the rest).
pub fn sections(data: &[u8], max: usize) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = data;
    while out.len() + 1 < max {
        match rest.windows(SECTION.len()).position(|w| w == SECTION) {
            Some(i) => {
                out.push(&rest[..i]);
                rest = &rest[i + SECTION.len()..];
            }
            None => break,
        }
    }
    out.push(rest);
    out
}

/// A metadata value to write; arrays hold items of their one item type.
#[derive(Debug, Clone, PartialEq)]
pub enum Meta {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    F32(f32),
    Bool(bool),
    Str(Vec<u8>),
    Array(ValueType, Vec<Meta>),
    U64(u64),
    I64(i64),
    F64(f64),
}

impl Meta {
    pub fn value_type(&self) -> ValueType {
        match self {
            Meta::U8(_) => ValueType::U8,
            Meta::I8(_) => ValueType::I8,
            Meta::U16(_) => ValueType::U16,
            Meta::I16(_) => ValueType::I16,
            Meta::U32(_) => ValueType::U32,
            Meta::I32(_) => ValueType::I32,
            Meta::F32(_) => ValueType::F32,
            Meta::Bool(_) => ValueType::Bool,
            Meta::Str(_) => ValueType::String,
            Meta::Array(..) => ValueType::Array,
            Meta::U64(_) => ValueType::U64,
            Meta::I64(_) => ValueType::I64,
            Meta::F64(_) => ValueType::F64,
        }
    }

    /// The value as the parser returned it (strings by their bytes, floats by their bits).
    pub fn of(v: &Value<'_>) -> Meta {
        match v {
            Value::U8(x) => Meta::U8(*x),
            Value::I8(x) => Meta::I8(*x),
            Value::U16(x) => Meta::U16(*x),
            Value::I16(x) => Meta::I16(*x),
            Value::U32(x) => Meta::U32(*x),
            Value::I32(x) => Meta::I32(*x),
            Value::F32(x) => Meta::F32(*x),
            Value::Bool(x) => Meta::Bool(*x),
            Value::String(s) => Meta::Str(s.as_bytes().to_vec()),
            Value::Array(a) => Meta::Array(a.item_type(), a.iter().map(|i| Meta::of(&i)).collect()),
            Value::U64(x) => Meta::U64(*x),
            Value::I64(x) => Meta::I64(*x),
            Value::F64(x) => Meta::F64(*x),
        }
    }

    /// The value an edit asked for.
    pub fn of_new(v: &NewValue) -> Meta {
        match v {
            NewValue::U8(x) => Meta::U8(*x),
            NewValue::I8(x) => Meta::I8(*x),
            NewValue::U16(x) => Meta::U16(*x),
            NewValue::I16(x) => Meta::I16(*x),
            NewValue::U32(x) => Meta::U32(*x),
            NewValue::I32(x) => Meta::I32(*x),
            NewValue::F32(x) => Meta::F32(*x),
            NewValue::Bool(x) => Meta::Bool(*x),
            NewValue::String(s) => Meta::Str(s.as_bytes().to_vec()),
            NewValue::Array(t, items) => Meta::Array(*t, items.iter().map(Meta::of_new).collect()),
            NewValue::U64(x) => Meta::U64(*x),
            NewValue::I64(x) => Meta::I64(*x),
            NewValue::F64(x) => Meta::F64(*x),
        }
    }

    /// Equal as stored: floats compare by their bits (NaN payloads included).
    pub fn same(&self, other: &Meta) -> bool {
        match (self, other) {
            (Meta::F32(a), Meta::F32(b)) => a.to_bits() == b.to_bits(),
            (Meta::F64(a), Meta::F64(b)) => a.to_bits() == b.to_bits(),
            (Meta::Array(ta, a), Meta::Array(tb, b)) => {
                ta == tb && a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same(y))
            }
            (a, b) => a == b,
        }
    }
}

/// One tensor info to write.
#[derive(Debug, Clone)]
pub struct TensorSpec {
    pub name: String,
    /// Innermost first, as GGUF stores them.
    pub dims: Vec<u64>,
    pub type_id: u32,
}

/// A little-endian GGUF v3 file: header, and (when `with_data`) zeroed tensor data laid out
/// at 32-byte alignment. Tensors of an unknown type or size get offset 0.
pub fn gguf(kvs: &[(String, Meta)], tensors: &[TensorSpec], with_data: bool) -> Vec<u8> {
    fn put_str(out: &mut Vec<u8>, s: &[u8]) {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s);
    }
    fn put(out: &mut Vec<u8>, v: &Meta) {
        match v {
            Meta::U8(x) => out.push(*x),
            Meta::I8(x) => out.push(*x as u8),
            Meta::U16(x) => out.extend_from_slice(&x.to_le_bytes()),
            Meta::I16(x) => out.extend_from_slice(&x.to_le_bytes()),
            Meta::U32(x) => out.extend_from_slice(&x.to_le_bytes()),
            Meta::I32(x) => out.extend_from_slice(&x.to_le_bytes()),
            Meta::F32(x) => out.extend_from_slice(&x.to_le_bytes()),
            Meta::Bool(x) => out.push(u8::from(*x)),
            Meta::Str(s) => put_str(out, s),
            Meta::Array(t, items) => {
                out.extend_from_slice(&(*t as u32).to_le_bytes());
                out.extend_from_slice(&(items.len() as u64).to_le_bytes());
                for i in items {
                    put(out, i);
                }
            }
            Meta::U64(x) => out.extend_from_slice(&x.to_le_bytes()),
            Meta::I64(x) => out.extend_from_slice(&x.to_le_bytes()),
            Meta::F64(x) => out.extend_from_slice(&x.to_le_bytes()),
        }
    }
    let mut out = b"GGUF".to_vec();
    out.extend_from_slice(&3u32.to_le_bytes());
    out.extend_from_slice(&(tensors.len() as u64).to_le_bytes());
    out.extend_from_slice(&(kvs.len() as u64).to_le_bytes());
    for (k, v) in kvs {
        put_str(&mut out, k.as_bytes());
        out.extend_from_slice(&(v.value_type() as u32).to_le_bytes());
        put(&mut out, v);
    }
    let mut at = 0u64;
    for t in tensors {
        put_str(&mut out, t.name.as_bytes());
        out.extend_from_slice(&(t.dims.len() as u32).to_le_bytes());
        for d in &t.dims {
            out.extend_from_slice(&d.to_le_bytes());
        }
        out.extend_from_slice(&t.type_id.to_le_bytes());
        let n: Option<u64> = t.dims.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
        let bytes = GgmlType::from_id(t.type_id)
            .zip(n)
            .and_then(|(ty, n)| ty.bytes_for(n));
        match bytes {
            Some(b) => {
                out.extend_from_slice(&at.to_le_bytes());
                at = at.saturating_add(b.next_multiple_of(32));
            }
            None => out.extend_from_slice(&0u64.to_le_bytes()),
        }
    }
    if with_data && at <= 1 << 20 {
        out.resize(out.len().next_multiple_of(32) + at as usize, 0);
    }
    out
}

/// A metadata value drawn from fuzz input: numbers of every width, strings, flat arrays.
#[derive(Debug, Clone, Arbitrary)]
pub enum ArbValue {
    Small(u8),
    U32(u32),
    I32(i32),
    U64(u64),
    F32(f32),
    Bool(bool),
    Str(String),
    U32s(Vec<u32>),
    I32s(Vec<i32>),
    Bools(Vec<bool>),
    Strs(Vec<String>),
    F32s(Vec<f32>),
    SmallU32s(Vec<u8>),
}

impl ArbValue {
    pub fn meta(&self) -> Meta {
        match self {
            ArbValue::Small(x) => Meta::U32(u32::from(*x)),
            ArbValue::U32(x) => Meta::U32(*x),
            ArbValue::I32(x) => Meta::I32(*x),
            ArbValue::U64(x) => Meta::U64(*x),
            ArbValue::F32(x) => Meta::F32(*x),
            ArbValue::Bool(x) => Meta::Bool(*x),
            ArbValue::Str(s) => Meta::Str(s.as_bytes().to_vec()),
            ArbValue::U32s(v) => {
                Meta::Array(ValueType::U32, v.iter().map(|&x| Meta::U32(x)).collect())
            }
            ArbValue::I32s(v) => {
                Meta::Array(ValueType::I32, v.iter().map(|&x| Meta::I32(x)).collect())
            }
            ArbValue::Bools(v) => {
                Meta::Array(ValueType::Bool, v.iter().map(|&x| Meta::Bool(x)).collect())
            }
            ArbValue::Strs(v) => Meta::Array(
                ValueType::String,
                v.iter().map(|s| Meta::Str(s.as_bytes().to_vec())).collect(),
            ),
            ArbValue::F32s(v) => {
                Meta::Array(ValueType::F32, v.iter().map(|&x| Meta::F32(x)).collect())
            }
            ArbValue::SmallU32s(v) => Meta::Array(
                ValueType::U32,
                v.iter().map(|&x| Meta::U32(u32::from(x))).collect(),
            ),
        }
    }
}
