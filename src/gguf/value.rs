//! Metadata values. Scalars are decoded at parse time; strings and arrays stay as byte ranges
//! into the retained header and decode on demand, so a 150k-token vocabulary costs one offset
//! per token, not one heap string per token.

use std::borrow::Cow;
use std::fmt;

use crate::cursor::Cursor;
use crate::error::{Error, ErrorKind, Result};

/// The 13 GGUF metadata value types; the discriminant is the id in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum ValueType {
    U8 = 0,
    I8 = 1,
    U16 = 2,
    I16 = 3,
    U32 = 4,
    I32 = 5,
    F32 = 6,
    Bool = 7,
    String = 8,
    Array = 9,
    U64 = 10,
    I64 = 11,
    F64 = 12,
}

impl ValueType {
    /// The type with file id `id`.
    pub fn from_id(id: u32) -> Option<ValueType> {
        use ValueType::*;
        Some(match id {
            0 => U8,
            1 => I8,
            2 => U16,
            3 => I16,
            4 => U32,
            5 => I32,
            6 => F32,
            7 => Bool,
            8 => String,
            9 => Array,
            10 => U64,
            11 => I64,
            12 => F64,
            _ => return None,
        })
    }

    /// The spec's lowercase name (`uint8`, `float32`, `string`, ...).
    pub fn name(self) -> &'static str {
        use ValueType::*;
        match self {
            U8 => "uint8",
            I8 => "int8",
            U16 => "uint16",
            I16 => "int16",
            U32 => "uint32",
            I32 => "int32",
            F32 => "float32",
            Bool => "bool",
            String => "string",
            Array => "array",
            U64 => "uint64",
            I64 => "int64",
            F64 => "float64",
        }
    }

    /// Byte size of a value of a fixed-size type; None for strings and arrays.
    pub fn fixed_size(self) -> Option<u64> {
        use ValueType::*;
        match self {
            U8 | I8 | Bool => Some(1),
            U16 | I16 => Some(2),
            U32 | I32 | F32 => Some(4),
            U64 | I64 | F64 => Some(8),
            String | Array => None,
        }
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A string value: raw bytes (GGUF does not promise UTF-8 for values) and where they are.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GgufStr<'a> {
    bytes: &'a [u8],
    offset: u64,
}

impl<'a> GgufStr<'a> {
    /// The raw bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Absolute file offset of the first byte.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The text, or an error naming the offset when it is not UTF-8.
    pub fn to_str(&self) -> Result<&'a str> {
        std::str::from_utf8(self.bytes).map_err(|e| {
            Error::at(
                ErrorKind::InvalidUtf8 {
                    what: "string value".to_string(),
                },
                self.offset + e.valid_up_to() as u64,
            )
        })
    }

    /// The text with invalid sequences replaced by U+FFFD.
    pub fn to_string_lossy(&self) -> Cow<'a, str> {
        String::from_utf8_lossy(self.bytes)
    }
}

/// One decoded metadata value.
#[derive(Debug, Clone)]
pub enum Value<'a> {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    F32(f32),
    Bool(bool),
    String(GgufStr<'a>),
    Array(ArrayView<'a>),
    U64(u64),
    I64(i64),
    F64(f64),
}

impl<'a> Value<'a> {
    /// The value's type.
    pub fn value_type(&self) -> ValueType {
        match self {
            Value::U8(_) => ValueType::U8,
            Value::I8(_) => ValueType::I8,
            Value::U16(_) => ValueType::U16,
            Value::I16(_) => ValueType::I16,
            Value::U32(_) => ValueType::U32,
            Value::I32(_) => ValueType::I32,
            Value::F32(_) => ValueType::F32,
            Value::Bool(_) => ValueType::Bool,
            Value::String(_) => ValueType::String,
            Value::Array(_) => ValueType::Array,
            Value::U64(_) => ValueType::U64,
            Value::I64(_) => ValueType::I64,
            Value::F64(_) => ValueType::F64,
        }
    }

    /// Any integer type as u64, when it is non-negative.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::U8(v) => Some(v.into()),
            Value::U16(v) => Some(v.into()),
            Value::U32(v) => Some(v.into()),
            Value::U64(v) => Some(v),
            Value::I8(v) => u64::try_from(v).ok(),
            Value::I16(v) => u64::try_from(v).ok(),
            Value::I32(v) => u64::try_from(v).ok(),
            Value::I64(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }

    /// Any number as f64.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::F32(v) => Some(v.into()),
            Value::F64(v) => Some(v),
            Value::I8(v) => Some(v.into()),
            Value::I16(v) => Some(v.into()),
            Value::I32(v) => Some(v.into()),
            Value::I64(v) => Some(v as f64),
            _ => self.as_u64().map(|v| v as f64),
        }
    }

    /// A string value's text (lossy), if it is a string.
    pub fn as_str(&self) -> Option<Cow<'a, str>> {
        match self {
            Value::String(s) => Some(s.to_string_lossy()),
            _ => None,
        }
    }

    /// The array, if it is one.
    pub fn as_array(&self) -> Option<&ArrayView<'a>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
}

/// A value as kept after parsing: scalars decoded, strings and arrays as positions.
#[derive(Debug, Clone)]
pub(crate) enum RawValue {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    F32(f32),
    Bool(bool),
    /// Start and length of the string bytes in the header.
    String {
        start: usize,
        len: usize,
    },
    Array(RawArray),
    U64(u64),
    I64(i64),
    F64(f64),
}

/// An array as kept after parsing.
#[derive(Debug, Clone)]
pub(crate) struct RawArray {
    pub(crate) item_type: ValueType,
    pub(crate) len: usize,
    /// Offset of the first element in the header.
    pub(crate) start: usize,
    /// Offset of each element, for strings and arrays (variable size); empty otherwise.
    pub(crate) index: Vec<u32>,
}

/// Format details that change how values are read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Format {
    /// GGUF v1 stores lengths as u32.
    pub(crate) v1: bool,
    pub(crate) big_endian: bool,
}

impl Format {
    fn length_size(self) -> u64 {
        if self.v1 {
            4
        } else {
            8
        }
    }

    /// The fewest bytes one item of `item_type` can take: a lower bound used to reject counts
    /// the bytes cannot hold before allocating anything for them.
    pub(crate) fn min_item_size(self, item_type: ValueType) -> u64 {
        item_type.fixed_size().unwrap_or(match item_type {
            ValueType::Array => 4 + self.length_size(),
            _ => self.length_size(),
        })
    }

    /// Reads a length field (u32 in v1, u64 after).
    pub(crate) fn read_len(self, cur: &mut Cursor<'_>, what: &str) -> Result<u64> {
        if self.v1 {
            cur.u32(what).map(u64::from)
        } else {
            cur.u64(what)
        }
    }
}

/// Reads one value of `value_type` at the cursor. `limits` bounds what it may claim.
pub(crate) fn read_value(
    cur: &mut Cursor<'_>,
    value_type: ValueType,
    format: Format,
    ctx: &mut ValueContext<'_>,
    depth: u32,
) -> Result<RawValue> {
    Ok(match value_type {
        ValueType::U8 => RawValue::U8(cur.u8("uint8 value")?),
        ValueType::I8 => RawValue::I8(cur.i8("int8 value")?),
        ValueType::U16 => RawValue::U16(cur.u16("uint16 value")?),
        ValueType::I16 => RawValue::I16(cur.i16("int16 value")?),
        ValueType::U32 => RawValue::U32(cur.u32("uint32 value")?),
        ValueType::I32 => RawValue::I32(cur.i32("int32 value")?),
        ValueType::F32 => RawValue::F32(cur.f32("float32 value")?),
        ValueType::Bool => RawValue::Bool(cur.u8("bool value")? != 0),
        ValueType::U64 => RawValue::U64(cur.u64("uint64 value")?),
        ValueType::I64 => RawValue::I64(cur.i64("int64 value")?),
        ValueType::F64 => RawValue::F64(cur.f64("float64 value")?),
        ValueType::String => {
            let (start, bytes) = read_string_span(cur, format, ctx.limits, "string value")?;
            RawValue::String {
                start,
                len: bytes.len(),
            }
        }
        ValueType::Array => RawValue::Array(read_array(cur, format, ctx, depth + 1)?),
    })
}

/// Caps and bookkeeping shared by value reads.
pub(crate) struct ValueContext<'k> {
    pub(crate) limits: &'k super::Limits,
    pub(crate) key: &'k str,
    /// Progress inside the outermost array being read, for "need more bytes" estimates.
    pub(crate) progress: Option<ArrayProgress>,
}

/// The vocabulary key: llama.cpp writes its per-token arrays (types, scores) and merges after it.
const MERGES_KEY: &str = "tokenizer.ggml.merges";
pub(crate) const VOCAB_KEY: &str = "tokenizer.ggml.tokens";

/// Where the outermost array read stands: used to predict how many bytes it still needs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ArrayProgress {
    pub(crate) start: u64,
    pub(crate) len: u64,
    pub(crate) done: u64,
    pub(crate) min_item: u64,
    /// True for `tokenizer.ggml.tokens`, whose length predicts the arrays that follow it.
    pub(crate) is_vocab: bool,
    /// True for `tokenizer.ggml.merges`, which comes in rank order like the tokens.
    pub(crate) is_merges: bool,
}

/// Reads a string's length and bytes; returns where the bytes start, and the bytes.
pub(crate) fn read_string_span<'a>(
    cur: &mut Cursor<'a>,
    format: Format,
    limits: &super::Limits,
    what: &str,
) -> Result<(usize, &'a [u8])> {
    let at = cur.pos();
    let len = format.read_len(cur, what)?;
    if len > limits.max_string_len {
        return Err(Error::at(
            ErrorKind::StringTooLong {
                what: what.to_string(),
                len,
                limit: limits.max_string_len,
            },
            at,
        ));
    }
    limits.check_fits(cur, len, what, at)?;
    let start = cur.pos_usize();
    Ok((start, cur.take(len, what)?))
}

fn read_array(
    cur: &mut Cursor<'_>,
    format: Format,
    ctx: &mut ValueContext<'_>,
    depth: u32,
) -> Result<RawArray> {
    let at = cur.pos();
    if depth > ctx.limits.max_depth {
        return Err(Error::at(
            ErrorKind::NestingTooDeep {
                key: ctx.key.to_string(),
                limit: ctx.limits.max_depth,
            },
            at,
        ));
    }
    let type_id = cur.u32("array item type")?;
    let item_type = ValueType::from_id(type_id).ok_or_else(|| {
        Error::at(
            ErrorKind::UnknownValueType {
                key: ctx.key.to_string(),
                type_id,
            },
            at,
        )
    })?;
    let len_at = cur.pos();
    let len = format.read_len(cur, "array length")?;
    let min_item = format.min_item_size(item_type);
    let min_bytes = len.checked_mul(min_item).ok_or_else(|| {
        Error::at(
            ErrorKind::TooMany {
                what: "array length".to_string(),
                count: len,
                limit: u64::MAX / min_item,
            },
            len_at,
        )
    })?;
    ctx.limits.check_fits(cur, min_bytes, "array", len_at)?;
    let len_usize = crate::cursor::to_usize(len, "array length", len_at)?;
    let start = cur.pos_usize();
    let outermost = ctx.progress.is_none();
    if outermost {
        ctx.progress = Some(ArrayProgress {
            start: cur.pos(),
            len,
            done: 0,
            min_item,
            is_vocab: ctx.key == VOCAB_KEY,
            is_merges: ctx.key == MERGES_KEY,
        });
    }
    let mut index = Vec::new();
    match item_type.fixed_size() {
        Some(_) => cur.skip(min_bytes, "array elements")?,
        None => {
            // check_fits proved len * min_item bytes exist (or may exist), so this reservation
            // is bounded by bytes the caller has or has declared.
            index.reserve(len_usize.min(cur.remaining() as usize / min_item as usize + 1));
            for i in 0..len {
                let element_at = cur.pos();
                let offset = u32::try_from(element_at).map_err(|_| {
                    Error::at(
                        ErrorKind::HeaderTooLarge {
                            needed: element_at,
                            limit: u32::MAX.into(),
                        },
                        element_at,
                    )
                })?;
                index.push(offset);
                if item_type == ValueType::String {
                    read_string_span(cur, format, ctx.limits, "string in array")?;
                } else {
                    read_value(cur, item_type, format, ctx, depth)?;
                }
                if outermost {
                    if let Some(p) = ctx.progress.as_mut() {
                        p.done = i + 1;
                    }
                }
            }
        }
    }
    if outermost {
        ctx.progress = None;
    }
    Ok(RawArray {
        item_type,
        len: len_usize,
        start,
        index,
    })
}

/// A metadata array: its length and item type are known; elements decode on demand.
#[derive(Debug, Clone)]
pub struct ArrayView<'a> {
    header: &'a [u8],
    format: Format,
    raw: Cow<'a, RawArray>,
}

impl<'a> ArrayView<'a> {
    pub(crate) fn new(header: &'a [u8], format: Format, raw: &'a RawArray) -> ArrayView<'a> {
        ArrayView {
            header,
            format,
            raw: Cow::Borrowed(raw),
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.raw.len
    }

    /// True when the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.raw.len == 0
    }

    /// The type of every element.
    pub fn item_type(&self) -> ValueType {
        self.raw.item_type
    }

    /// Element `i`, or None past the end.
    pub fn get(&self, i: usize) -> Option<Value<'a>> {
        if i >= self.raw.len {
            return None;
        }
        let pos = match self.raw.item_type.fixed_size() {
            Some(size) => self.raw.start.checked_add(i.checked_mul(size as usize)?)?,
            None => usize::try_from(*self.raw.index.get(i)?).ok()?,
        };
        let mut cur = Cursor::at(self.header, pos, self.format.big_endian);
        decode_at(&mut cur, self.header, self.raw.item_type, self.format)
    }

    /// Every element, in order.
    pub fn iter(&self) -> impl Iterator<Item = Value<'a>> + '_ {
        (0..self.raw.len).map_while(move |i| self.get(i))
    }

    /// The indices (from `start`, at most `limit`) of the string items whose bytes contain
    /// `needle`, ASCII letters compared without case (the bytes are not decoded; an empty needle
    /// matches every item). Other item types match nothing. For searching a 250k-token
    /// vocabulary in place: one pass over the retained header, no allocation per item.
    pub fn find_text(&self, needle: &str, start: usize, limit: usize) -> Vec<usize> {
        let needle = needle.as_bytes();
        let mut found = Vec::new();
        if self.raw.item_type != ValueType::String {
            return found;
        }
        for i in start..self.raw.len {
            if found.len() >= limit {
                break;
            }
            if let Some(Value::String(s)) = self.get(i) {
                if contains_ignoring_ascii_case(s.as_bytes(), needle) {
                    found.push(i);
                }
            }
        }
        found
    }
}

/// Whether `haystack` contains `needle`, ASCII letters compared without case.
fn contains_ignoring_ascii_case(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty()
        || haystack
            .windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle))
}

/// Decodes a value that parsing already validated; None only if the bytes changed under us.
fn decode_at<'a>(
    cur: &mut Cursor<'a>,
    header: &'a [u8],
    value_type: ValueType,
    format: Format,
) -> Option<Value<'a>> {
    Some(match value_type {
        ValueType::U8 => Value::U8(cur.u8("").ok()?),
        ValueType::I8 => Value::I8(cur.i8("").ok()?),
        ValueType::U16 => Value::U16(cur.u16("").ok()?),
        ValueType::I16 => Value::I16(cur.i16("").ok()?),
        ValueType::U32 => Value::U32(cur.u32("").ok()?),
        ValueType::I32 => Value::I32(cur.i32("").ok()?),
        ValueType::F32 => Value::F32(cur.f32("").ok()?),
        ValueType::Bool => Value::Bool(cur.u8("").ok()? != 0),
        ValueType::U64 => Value::U64(cur.u64("").ok()?),
        ValueType::I64 => Value::I64(cur.i64("").ok()?),
        ValueType::F64 => Value::F64(cur.f64("").ok()?),
        ValueType::String => {
            let len = format.read_len(cur, "").ok()?;
            let offset = cur.pos();
            Value::String(GgufStr {
                bytes: cur.take(len, "").ok()?,
                offset,
            })
        }
        ValueType::Array => {
            // Nested arrays are rare (ggml itself rejects them): index them again on access.
            let limits = super::Limits::default();
            let mut ctx = ValueContext {
                limits: &limits,
                key: "",
                progress: None,
            };
            let raw = read_array(cur, format, &mut ctx, 1).ok()?;
            Value::Array(ArrayView {
                header,
                format,
                raw: Cow::Owned(raw),
            })
        }
    })
}

/// Turns a parsed value into its view over the retained header bytes.
pub(crate) fn view<'a>(header: &'a [u8], format: Format, raw: &'a RawValue) -> Value<'a> {
    match raw {
        RawValue::U8(v) => Value::U8(*v),
        RawValue::I8(v) => Value::I8(*v),
        RawValue::U16(v) => Value::U16(*v),
        RawValue::I16(v) => Value::I16(*v),
        RawValue::U32(v) => Value::U32(*v),
        RawValue::I32(v) => Value::I32(*v),
        RawValue::F32(v) => Value::F32(*v),
        RawValue::Bool(v) => Value::Bool(*v),
        RawValue::U64(v) => Value::U64(*v),
        RawValue::I64(v) => Value::I64(*v),
        RawValue::F64(v) => Value::F64(*v),
        RawValue::String { start, len } => Value::String(GgufStr {
            bytes: start
                .checked_add(*len)
                .and_then(|end| header.get(*start..end))
                .unwrap_or_default(),
            offset: *start as u64,
        }),
        RawValue::Array(raw) => Value::Array(ArrayView::new(header, format, raw)),
    }
}
