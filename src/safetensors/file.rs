//! Parsing and validating a safetensors header from a prefix of the file.

use std::collections::HashMap;
use std::ops::Range;

use serde_json::Value as Json;

use super::dtype::Dtype;
use super::{json_error_offset, MAX_HEADER_LEN};
use crate::error::{Error, ErrorKind, Result};

/// What parsing a prefix gave.
#[derive(Debug, Clone)]
pub enum ParseStatus {
    /// The whole header was in the prefix.
    Complete(SafetensorsFile),
    /// The header ends past the prefix: the first `at_least` bytes hold it (exact once the
    /// 8 length bytes are in the prefix, 8 before).
    NeedMore { at_least: u64 },
}

/// One tensor of the header.
#[derive(Debug, Clone)]
pub struct Tensor {
    name: String,
    dtype: Dtype,
    shape: Vec<u64>,
    begin: u64,
    end: u64,
    n_elements: u64,
}

impl Tensor {
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn dtype(&self) -> Dtype {
        self.dtype
    }
    /// Dimensions, outermost first (row-major, as PyTorch).
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }
    /// Start of the data, relative to the data section.
    pub fn offset(&self) -> u64 {
        self.begin
    }
    pub fn n_bytes(&self) -> u64 {
        self.end - self.begin
    }
    pub fn n_elements(&self) -> u64 {
        self.n_elements
    }
    /// Elements per row: the last dimension (1 for a scalar).
    pub fn row_len(&self) -> u64 {
        self.shape.last().copied().unwrap_or(1)
    }
    /// Rows: the product of all dimensions but the last (1 for a scalar or a vector), and 0
    /// when rows are empty, as for GGUF: a shape `[2^62, 0]` has nothing to read, and every
    /// row loop over it ends at once.
    pub fn n_rows(&self) -> u64 {
        self.n_elements.checked_div(self.row_len()).unwrap_or(0)
    }
}

/// A parsed, validated safetensors header.
#[derive(Debug, Clone)]
pub struct SafetensorsFile {
    header_len: u64,
    file_size: Option<u64>,
    metadata: Vec<(String, String)>,
    tensors: Vec<Tensor>,
    index: HashMap<String, usize>,
}

/// Parses the header from `prefix`, the first bytes of a file of `file_size` bytes (None when
/// unknown: then the last tensor need not end at the end of the file).
pub fn parse(prefix: &[u8], file_size: Option<u64>) -> Result<ParseStatus> {
    let Some(len_bytes) = prefix.get(..8) else {
        if file_size.is_some_and(|size| size < 8) {
            return Err(Error::at(truncated("header length", 8, file_size), 0));
        }
        return Ok(ParseStatus::NeedMore { at_least: 8 });
    };
    let header_len = u64::from_le_bytes(len_bytes.try_into().unwrap_or([0; 8]));
    if header_len > MAX_HEADER_LEN {
        let kind = ErrorKind::HeaderTooLarge {
            needed: header_len,
            limit: MAX_HEADER_LEN,
        };
        return Err(Error::at(kind, 0));
    }
    let end = 8 + header_len;
    if file_size.is_some_and(|size| end > size) {
        return Err(Error::at(truncated("header", header_len, file_size), 8));
    }
    let Some(json) = prefix.get(8..end as usize) else {
        return Ok(ParseStatus::NeedMore { at_least: end });
    };
    let file = parse_json(json, header_len, file_size)?;
    Ok(ParseStatus::Complete(file))
}

fn truncated(what: &str, needed: u64, file_size: Option<u64>) -> ErrorKind {
    let at = if what == "header" { 8 } else { 0 };
    ErrorKind::Truncated {
        what: format!("safetensors {what}"),
        needed,
        available: file_size.unwrap_or(0).saturating_sub(at),
    }
}

fn bad_json(message: impl Into<String>) -> ErrorKind {
    ErrorKind::BadJson {
        what: "safetensors header".to_string(),
        message: message.into(),
    }
}

fn parse_json(json: &[u8], header_len: u64, file_size: Option<u64>) -> Result<SafetensorsFile> {
    let text = std::str::from_utf8(json).map_err(|e| {
        let what = "safetensors header".to_string();
        Error::at(ErrorKind::InvalidUtf8 { what }, 8 + e.valid_up_to() as u64)
    })?;
    if !text.starts_with('{') {
        return Err(Error::at(bad_json("it does not start with '{'"), 8));
    }
    let doc: Json = serde_json::from_str(text)
        .map_err(|e| Error::at(bad_json(e.to_string()), 8 + json_error_offset(json, &e)))?;
    let Json::Object(entries) = doc else {
        return Err(Error::at(bad_json("not a JSON object"), 8));
    };
    let data_offset = 8 + header_len;
    let mut metadata = Vec::new();
    let mut tensors = Vec::new();
    for (name, entry) in entries {
        if name == "__metadata__" {
            metadata = read_metadata(&entry)?;
        } else {
            tensors.push(read_tensor(name, &entry, data_offset)?);
        }
    }
    check_tiling(&tensors, data_offset, file_size)?;
    let index = tensors
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.clone(), i))
        .collect();
    Ok(SafetensorsFile {
        header_len,
        file_size,
        metadata,
        tensors,
        index,
    })
}

fn read_metadata(entry: &Json) -> Result<Vec<(String, String)>> {
    let bad = || {
        Error::at(
            bad_json("__metadata__ is not a map of strings to strings"),
            8,
        )
    };
    // `null` is what mlx's `save_safetensors` writes without metadata, and the safetensors
    // library reads it as none.
    let map = match entry {
        Json::Object(map) => map,
        Json::Null => return Ok(Vec::new()),
        _ => return Err(bad()),
    };
    map.iter()
        .map(|(k, v)| Ok((k.clone(), v.as_str().ok_or_else(bad)?.to_string())))
        .collect()
}

fn read_tensor(name: String, entry: &Json, data_offset: u64) -> Result<Tensor> {
    let bad = |what: &str| Error::at(bad_json(format!("tensor {name:?}: {what}")), 8);
    let dtype_name = entry
        .get("dtype")
        .and_then(Json::as_str)
        .ok_or_else(|| bad("no string \"dtype\""))?;
    let dtype = Dtype::from_name(dtype_name).ok_or_else(|| {
        let kind = ErrorKind::UnknownDtype {
            name: name.clone(),
            dtype: dtype_name.to_string(),
        };
        Error::at(kind, 8)
    })?;
    let shape = entry
        .get("shape")
        .and_then(Json::as_array)
        .and_then(|dims| dims.iter().map(Json::as_u64).collect::<Option<Vec<u64>>>())
        .ok_or_else(|| bad("\"shape\" is not a list of non-negative integers"))?;
    let offsets = entry
        .get("data_offsets")
        .and_then(Json::as_array)
        .and_then(|o| match o.as_slice() {
            [a, b] => Some((a.as_u64()?, b.as_u64()?)),
            _ => None,
        })
        .ok_or_else(|| bad("\"data_offsets\" is not [begin, end]"))?;
    let (begin, end) = offsets;
    let at = data_offset.saturating_add(begin);
    let overflow = || Error::at(ErrorKind::DimsOverflow { name: name.clone() }, at);
    let n_elements = shape
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d))
        .ok_or_else(overflow)?;
    let n_bits = n_elements
        .checked_mul(u64::from(dtype.bits()))
        .ok_or_else(overflow)?;
    if end >= begin && (n_bits % 8 != 0 || n_bits / 8 != end - begin) {
        let kind = ErrorKind::ShapeMismatch {
            name: name.clone(),
            n_bytes: end - begin,
            expected: n_bits.div_ceil(8),
        };
        return Err(Error::at(kind, at));
    }
    Ok(Tensor {
        name,
        dtype,
        shape,
        begin,
        end,
        n_elements,
    })
}

/// Tensors, in offset order, must tile the data section: each starts where the previous one
/// ends, the first at 0, the last at the end of the file (when its size is known).
fn check_tiling(tensors: &[Tensor], data_offset: u64, file_size: Option<u64>) -> Result<()> {
    let mut order: Vec<&Tensor> = tensors.iter().collect();
    order.sort_by_key(|t| (t.begin, t.end));
    let data_len = file_size.map(|size| size - data_offset);
    let mut expected = 0u64;
    let mut previous: Option<&Tensor> = None;
    for t in order {
        let at = data_offset.saturating_add(t.begin);
        if let Some(len) = data_len.filter(|&len| t.end > len) {
            let kind = ErrorKind::TensorOutOfFile {
                name: t.name.clone(),
                offset: t.begin,
                size: t.end.saturating_sub(t.begin),
                file_size: len,
            };
            return Err(Error::at(kind, at));
        }
        if let Some(p) = previous.filter(|p| t.begin < p.end) {
            let kind = ErrorKind::TensorsOverlap {
                first: p.name.clone(),
                second: t.name.clone(),
            };
            return Err(Error::at(kind, at));
        }
        if t.begin != expected || t.end < t.begin {
            let kind = ErrorKind::DataOffsetGap {
                name: t.name.clone(),
                start: t.begin,
                end: t.end,
                expected_start: expected,
            };
            return Err(Error::at(kind, at));
        }
        expected = t.end;
        previous = Some(t);
    }
    if let Some(len) = data_len.filter(|&len| len != expected) {
        let kind = ErrorKind::UnusedData {
            end: expected,
            data_len: len,
        };
        return Err(Error::at(kind, data_offset + expected));
    }
    Ok(())
}

impl SafetensorsFile {
    /// Parses a whole file held in memory.
    pub fn from_bytes(bytes: &[u8]) -> Result<SafetensorsFile> {
        match parse(bytes, Some(bytes.len() as u64))? {
            ParseStatus::Complete(file) => Ok(file),
            ParseStatus::NeedMore { at_least } => Err(Error::at(
                truncated("header", at_least, Some(bytes.len() as u64)),
                8,
            )),
        }
    }

    /// Reads and parses the header of a seekable file of `file_size` bytes (two reads).
    pub fn read_header<R: std::io::Read + std::io::Seek>(
        reader: &mut R,
        file_size: u64,
    ) -> Result<SafetensorsFile> {
        let first = crate::gguf::read_range(reader, 0..8.min(file_size))?;
        match parse(&first, Some(file_size))? {
            ParseStatus::Complete(file) => Ok(file),
            ParseStatus::NeedMore { at_least } => {
                let prefix = crate::gguf::read_range(reader, 0..at_least)?;
                match parse(&prefix, Some(file_size))? {
                    ParseStatus::Complete(file) => Ok(file),
                    ParseStatus::NeedMore { at_least } => {
                        Err(Error::at(truncated("header", at_least, Some(file_size)), 8))
                    }
                }
            }
        }
    }

    /// The JSON header's length N (the data section starts at 8 + N).
    pub fn header_len(&self) -> u64 {
        self.header_len
    }
    /// Absolute offset of the data section.
    pub fn data_offset(&self) -> u64 {
        8 + self.header_len
    }
    pub fn file_size(&self) -> Option<u64> {
        self.file_size
    }
    /// `__metadata__`, in header order.
    pub fn metadata(&self) -> &[(String, String)] {
        &self.metadata
    }
    /// Tensors in header order.
    pub fn tensors(&self) -> &[Tensor] {
        &self.tensors
    }
    pub fn get(&self, name: &str) -> Option<&Tensor> {
        self.index.get(name).map(|&i| &self.tensors[i])
    }
    /// The tensor named `name`, or a `NoSuchTensor` error.
    pub fn tensor(&self, name: &str) -> Result<&Tensor> {
        self.get(name).ok_or_else(|| {
            Error::new(ErrorKind::NoSuchTensor {
                name: name.to_string(),
            })
        })
    }
    /// Absolute byte range of a tensor's data.
    pub fn data_range(&self, t: &Tensor) -> Range<u64> {
        self.data_offset() + t.begin..self.data_offset() + t.end
    }
    /// Absolute byte range of rows `rows` of a plain tensor (rows as in [`Tensor::n_rows`]).
    pub fn rows_range(&self, t: &Tensor, rows: Range<u64>) -> Result<Range<u64>> {
        let n_rows = t.n_rows();
        if t.dtype.bits() % 8 != 0 {
            return Err(Error::new(ErrorKind::UnsupportedDtype {
                name: t.name.clone(),
                dtype: t.dtype.name(),
            }));
        }
        if rows.start > rows.end || rows.end > n_rows {
            let kind = ErrorKind::BadRowRange {
                name: t.name.clone(),
                start: rows.start,
                end: rows.end,
                rows: n_rows,
            };
            return Err(Error::new(kind));
        }
        // In range: row * row_len * size <= n_bytes, which did not overflow.
        let row_bytes = t.row_len() * u64::from(t.dtype.bits() / 8);
        let base = self.data_range(t).start;
        Ok(base + rows.start * row_bytes..base + rows.end * row_bytes)
    }
}
