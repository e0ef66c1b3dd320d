//! Parsing a GGUF header from a prefix of the file, and the validated file model it yields.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use super::tensor::{check_layout, read_tensor_info, TensorInfo};
use super::value::{read_string_span, read_value, view, ArrayProgress, Format, RawValue, Value};
use super::value::{ValueContext, ValueType};
use super::Limits;
use crate::cursor::Cursor;
use crate::error::{Error, ErrorKind, Result};

/// The default data alignment when `general.alignment` is absent.
pub const DEFAULT_ALIGNMENT: u64 = 32;
const ALIGNMENT_KEY: &str = "general.alignment";
const TOKENIZER_MODEL_KEY: &str = "tokenizer.ggml.model";

/// Byte order of the file's numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endian {
    Little,
    Big,
}

impl Endian {
    /// `"little"` or `"big"`.
    pub fn name(self) -> &'static str {
        match self {
            Endian::Little => "little",
            Endian::Big => "big",
        }
    }
}

/// What parsing a prefix gave.
#[derive(Debug, Clone)]
pub enum ParseStatus {
    /// The whole header was in the prefix.
    Complete(GgufFile),
    /// The header goes on past the prefix. `at_least` is a hard lower bound on the prefix
    /// length the header needs (every byte up to it is certainly header); `estimate` is a guess
    /// at the whole header's length from what was seen (average string sizes so far).
    NeedMore { at_least: u64, estimate: u64 },
}

#[derive(Debug, Clone)]
struct Entry {
    key: String,
    value_offset: u64,
    value: RawValue,
}

/// A parsed GGUF header: metadata, tensor infos and the data section's place, all validated.
#[derive(Debug, Clone)]
pub struct GgufFile {
    header: Vec<u8>,
    format: Format,
    version: u32,
    alignment: u64,
    data_offset: u64,
    file_size: Option<u64>,
    metadata: Vec<Entry>,
    tensors: Vec<TensorInfo>,
    tensor_index: HashMap<String, usize>,
}

/// Parses the header from `prefix`, the first bytes of a file of `file_size` bytes (None when
/// the size is unknown). A prefix that is the whole file gives `Complete` or an error; a shorter
/// one may give `NeedMore`.
pub fn parse(prefix: &[u8], file_size: Option<u64>) -> Result<ParseStatus> {
    let prefix = prefix
        .get(..within_file(prefix.len(), file_size))
        .unwrap_or(prefix);
    Ok(match parse_in_place(prefix, file_size)? {
        Parsed::Complete(mut file, header_len) => {
            file.header = prefix.get(..header_len).unwrap_or(prefix).to_vec();
            ParseStatus::Complete(file)
        }
        Parsed::NeedMore(status) => status,
    })
}

/// [`parse`] for a prefix the caller gives away: the header keeps the prefix's own buffer
/// (cut to the header's length) instead of a copy, so a big header is held once, not twice.
pub fn parse_owned(mut prefix: Vec<u8>, file_size: Option<u64>) -> Result<ParseStatus> {
    prefix.truncate(within_file(prefix.len(), file_size));
    Ok(match parse_in_place(&prefix, file_size)? {
        Parsed::Complete(mut file, header_len) => {
            prefix.truncate(header_len);
            // A prefix read past the header would otherwise stay held whole by the result.
            prefix.shrink_to_fit();
            file.header = prefix;
            ParseStatus::Complete(file)
        }
        Parsed::NeedMore(status) => status,
    })
}

/// The prefix length that lies inside a file of `file_size` bytes.
fn within_file(len: usize, file_size: Option<u64>) -> usize {
    match file_size {
        Some(size) => len.min(usize::try_from(size).unwrap_or(usize::MAX)),
        None => len,
    }
}

/// A parse result whose header bytes are not yet attached: the file (with an empty `header`)
/// and the header's length in the prefix.
enum Parsed {
    Complete(GgufFile, usize),
    NeedMore(ParseStatus),
}

fn parse_in_place(prefix: &[u8], file_size: Option<u64>) -> Result<Parsed> {
    let is_whole_file = file_size == Some(prefix.len() as u64);
    let limits = Limits {
        file_size,
        ..Limits::default()
    };
    let mut parser = Parser::new(prefix, limits);
    match parser.parse() {
        Ok(file) => {
            let header_len = usize::try_from(parser.cur.pos()).unwrap_or(prefix.len());
            Ok(Parsed::Complete(file, header_len))
        }
        Err(err) => match (&err.kind, err.offset, is_whole_file) {
            (ErrorKind::Truncated { needed, .. }, Some(at), false) => {
                let at_least = at.saturating_add(*needed).saturating_add(parser.rest_min());
                // A guess is capped by what the bytes seen justify (an array's first item
                // may be far longer than the rest), the header limit and the file.
                let cap = (prefix.len() as u64)
                    .saturating_mul(MAX_ESTIMATE_GROWTH)
                    .min(parser.limits.max_header_bytes)
                    .min(file_size.unwrap_or(u64::MAX));
                let estimate = parser.estimate(at).min(cap).max(at_least);
                Ok(Parsed::NeedMore(ParseStatus::NeedMore {
                    at_least,
                    estimate,
                }))
            }
            _ => Err(err),
        },
    }
}

/// The most a `NeedMore` estimate may be, as a multiple of the prefix it was made from: enough
/// for a 64 KiB prefix of a large vocabulary to predict its whole header (about 120×), little
/// enough that one long first string in a huge array does not ask for gigabytes.
pub const MAX_ESTIMATE_GROWTH: u64 = 128;

/// How llama.cpp's vocabulary arrays go on after `tokenizer.ggml.tokens`, by tokenizer, as
/// measured on the vocabulary files llama.cpp ships (`models/ggml-vocab-*.gguf`): BPE
/// vocabularies come in merge order, so later tokens are longer (the text per token over the
/// whole vocabulary is about (tokens / tokens seen)^0.18 times that of the first ones), and
/// they have about one merge per token, but Llama 3's (`llama-bpe`) 2.18 and Gemma 4's 1.96.
struct VocabShape {
    text_growth: f64,
    scores: bool,
    merges_per_token: f64,
}

const TOKENIZER_PRE_KEY: &str = "tokenizer.ggml.pre";
/// The most the rank growth may stretch the text per token: from a 64 KiB first read, llama.cpp's
/// vocabularies need up to ~2 (nomic-bert-moe: 250k tokens from the first 4.6k), and a first
/// read that saw few, long tokens must not turn into a read several times too long.
const MAX_TEXT_GROWTH: f64 = 2.1;

impl VocabShape {
    fn of(model: Option<&str>, pre: Option<&str>) -> VocabShape {
        let bpe = |merges_per_token| VocabShape {
            text_growth: 0.18,
            scores: false,
            merges_per_token,
        };
        match (model, pre) {
            (Some("gpt2"), Some("llama-bpe")) => bpe(2.18),
            (Some("gpt2"), _) => bpe(1.0),
            (Some("gemma4"), _) => VocabShape {
                scores: true,
                ..bpe(1.96)
            },
            (Some("t5"), _) => VocabShape {
                scores: true,
                ..bpe(0.0)
            },
            (Some("llama"), _) => VocabShape {
                text_growth: 0.0,
                scores: true,
                merges_per_token: 0.0,
            },
            _ => VocabShape {
                text_growth: 0.0,
                scores: false,
                merges_per_token: 0.0,
            },
        }
    }

    /// Bytes per token of each array that follows the tokens, in llama.cpp's order (scores,
    /// token types, merges), given a merge's average size.
    fn following(&self, merge_size: f64) -> impl Iterator<Item = f64> {
        let scores = self.scores.then_some(4.0);
        let merges = (self.merges_per_token > 0.0).then_some(self.merges_per_token * merge_size);
        scores.into_iter().chain([4.0]).chain(merges)
    }
}

struct Parser<'a> {
    cur: Cursor<'a>,
    format: Format,
    limits: Limits,
    /// Key/value pairs and tensors not yet started, for the lower bound on what remains.
    kv_left: u64,
    tensors_left: u64,
    /// Progress inside the outermost array when a read ran out of bytes.
    progress: Option<ArrayProgress>,
    /// `tokenizer.ggml.model`, once read: it tells which arrays follow the vocabulary.
    tokenizer_model: Option<String>,
    /// `tokenizer.ggml.pre` (the pre-tokenizer), once read: it tells how many merges follow.
    tokenizer_pre: Option<String>,
}

impl<'a> Parser<'a> {
    fn new(bytes: &'a [u8], limits: Limits) -> Parser<'a> {
        Parser {
            cur: Cursor::new(bytes),
            format: Format {
                v1: false,
                big_endian: false,
            },
            limits,
            kv_left: 0,
            tensors_left: 0,
            progress: None,
            tokenizer_model: None,
            tokenizer_pre: None,
        }
    }

    /// Fewest bytes a key/value pair takes: key length, value type, a 1-byte value.
    fn min_kv_size(&self) -> u64 {
        if self.format.v1 {
            4 + 4 + 1
        } else {
            8 + 4 + 1
        }
    }

    /// Fewest bytes a tensor info takes: name length, n_dims, type, offset.
    fn min_tensor_size(&self) -> u64 {
        if self.format.v1 {
            4 + 4 + 4 + 8
        } else {
            8 + 4 + 4 + 8
        }
    }

    /// A lower bound on the header bytes after the item being read when bytes ran out.
    fn rest_min(&self) -> u64 {
        let array_rest = self.progress.map_or(0, |p| {
            p.len.saturating_sub(p.done + 1).saturating_mul(p.min_item)
        });
        self.kv_left
            .saturating_mul(self.min_kv_size())
            .saturating_add(self.tensors_left.saturating_mul(self.min_tensor_size()))
            .saturating_add(array_rest)
    }

    /// A guess at the whole header's length: an array's remaining elements are assumed to be
    /// as long on average as those seen so far. Inside the vocabulary, the arrays llama.cpp
    /// writes after it are counted too, so one more read usually gets the whole header:
    /// `token_type` (4 bytes a token), and `scores` (4 bytes a token) for SentencePiece
    /// (`llama`) vocabularies or `merges` for BPE (`gpt2`) ones: about one merge a token, and a
    /// merge `a b` is the token `ab` it makes plus a space.
    fn estimate(&self, at: u64) -> u64 {
        let rest_outside = self
            .kv_left
            .saturating_mul(self.min_kv_size())
            .saturating_add(
                self.tensors_left
                    .saturating_mul(self.min_tensor_size() + 32),
            );
        let Some(p) = self.progress.filter(|p| p.done > 0) else {
            return at.saturating_add(rest_outside);
        };
        let seen_average = at.saturating_sub(p.start) as f64 / p.done as f64;
        let min_item = p.min_item as f64;
        let shape = VocabShape::of(
            self.tokenizer_model.as_deref(),
            self.tokenizer_pre.as_deref(),
        );
        let done_bytes = at.saturating_sub(p.start) as f64;
        let rest_items = p.len.saturating_sub(p.done) as f64;
        // Tokens and merges come in rank order: the text per item of the rest is longer.
        let seen_text = (seen_average - min_item).max(0.0);
        let growth = if p.is_vocab || p.is_merges {
            (p.len as f64 / p.done as f64)
                .powf(shape.text_growth)
                .min(MAX_TEXT_GROWTH)
        } else {
            1.0
        };
        let rest_text = seen_text * growth;
        let array_end = p.start as f64 + done_bytes + rest_items * (min_item + rest_text);
        let after_vocab = if p.is_vocab {
            let average_text = (seen_text * p.done as f64 + rest_text * rest_items) / p.len as f64;
            // Only as many of the following arrays as there are keys left to hold them.
            let per_token: f64 = shape
                .following(min_item + average_text + 1.0)
                .take(usize::try_from(self.kv_left).unwrap_or(usize::MAX))
                .sum();
            per_token * p.len as f64
        } else {
            0.0
        };
        // f64 → u64 saturates; the sum of a file's worth of bytes is far below 2^53.
        ((array_end + after_vocab) as u64).saturating_add(rest_outside)
    }

    /// Reads a count (u32 in v1, u64 after) and rejects it if the bytes cannot hold that many
    /// items of `min_size` bytes, or it is over `cap`.
    fn read_count(&mut self, what: &str, min_size: u64, cap: u64) -> Result<u64> {
        let at = self.cur.pos();
        let count = self.format.read_len(&mut self.cur, what)?;
        if count > cap {
            return Err(Error::at(
                ErrorKind::TooMany {
                    what: what.to_string(),
                    count,
                    limit: cap,
                },
                at,
            ));
        }
        self.limits
            .check_fits(&self.cur, count.saturating_mul(min_size), what, at)?;
        Ok(count)
    }

    fn parse(&mut self) -> Result<GgufFile> {
        let magic_bytes = self.cur.take(4, "magic")?;
        if magic_bytes != b"GGUF" {
            let mut found = [0u8; 4];
            found.copy_from_slice(magic_bytes);
            return Err(Error::at(ErrorKind::BadMagic { found }, 0));
        }
        let mut version = self.cur.u32("version")?;
        // No byte-order marker exists: a big-endian file's small version reads byte-swapped.
        if version & 0xFFFF == 0 && version != 0 {
            version = version.swap_bytes();
            self.format.big_endian = true;
            self.cur.set_big_endian(true);
        }
        if !(1..=3).contains(&version) {
            return Err(Error::at(ErrorKind::UnsupportedVersion { version }, 4));
        }
        self.format.v1 = version == 1;
        let tensor_count = self.read_count(
            "tensor count",
            self.min_tensor_size(),
            self.limits.max_tensor_count,
        )?;
        let kv_count = self.read_count(
            "metadata count",
            self.min_kv_size(),
            self.limits.max_kv_count,
        )?;
        // Room for the tensor infos after the metadata was not yet checked against the file:
        // the counts were checked separately, which is enough to bound every allocation.
        self.kv_left = kv_count;
        self.tensors_left = tensor_count;

        let metadata = self.read_metadata(kv_count)?;
        let tensors = self.read_tensors(tensor_count)?;
        let header_len = self.cur.pos();

        let alignment = alignment_of(&metadata)?;
        let data_offset = header_len
            .checked_next_multiple_of(alignment)
            .ok_or_else(|| Error::at(ErrorKind::BadAlignment { alignment }, header_len))?;
        check_layout(&tensors, alignment, data_offset, self.limits.file_size)?;

        let mut tensor_index = HashMap::with_capacity(tensors.len());
        for (i, t) in tensors.iter().enumerate() {
            if tensor_index.insert(t.name().to_string(), i).is_some() {
                return Err(Error::at(
                    ErrorKind::DuplicateTensor {
                        name: t.name().to_string(),
                    },
                    t.info_offset(),
                ));
            }
        }
        Ok(GgufFile {
            // Attached by `parse` / `parse_owned`, which own or borrow the prefix.
            header: Vec::new(),
            format: self.format,
            version,
            alignment,
            data_offset,
            file_size: self.limits.file_size,
            metadata,
            tensors,
            tensor_index,
        })
    }

    fn read_metadata(&mut self, kv_count: u64) -> Result<Vec<Entry>> {
        let mut entries = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        for _ in 0..kv_count {
            self.kv_left -= 1;
            let key_at = self.cur.pos();
            let (key_start, key_bytes) =
                read_string_span(&mut self.cur, self.format, &self.limits, "metadata key")?;
            let key = std::str::from_utf8(key_bytes).map_err(|e| {
                Error::at(
                    ErrorKind::InvalidUtf8 {
                        what: "metadata key".to_string(),
                    },
                    key_start as u64 + e.valid_up_to() as u64,
                )
            })?;
            let type_at = self.cur.pos();
            let type_id = self.cur.u32("metadata value type")?;
            let value_type = ValueType::from_id(type_id).ok_or_else(|| {
                Error::at(
                    ErrorKind::UnknownValueType {
                        key: key.to_string(),
                        type_id,
                    },
                    type_at,
                )
            })?;
            let value_offset = self.cur.pos();
            let mut ctx = ValueContext {
                limits: &self.limits,
                key,
                progress: None,
            };
            let value = read_value(&mut self.cur, value_type, self.format, &mut ctx, 0);
            self.progress = ctx.progress;
            let value = value?;
            if let RawValue::String { start, len } = &value {
                let text = || {
                    let bytes = self
                        .cur
                        .slice_to_pos()
                        .get(*start..start.saturating_add(*len));
                    bytes.map(|b| String::from_utf8_lossy(b).into_owned())
                };
                match key {
                    TOKENIZER_MODEL_KEY => self.tokenizer_model = text(),
                    TOKENIZER_PRE_KEY => self.tokenizer_pre = text(),
                    _ => {}
                }
            }
            if !seen.insert(key.to_string()) {
                return Err(Error::at(
                    ErrorKind::DuplicateKey {
                        key: key.to_string(),
                    },
                    key_at,
                ));
            }
            entries.push(Entry {
                key: key.to_string(),
                value_offset,
                value,
            });
        }
        Ok(entries)
    }

    fn read_tensors(&mut self, tensor_count: u64) -> Result<Vec<TensorInfo>> {
        let mut tensors = Vec::new();
        for _ in 0..tensor_count {
            self.tensors_left -= 1;
            tensors.push(read_tensor_info(&mut self.cur, self.format, &self.limits)?);
        }
        Ok(tensors)
    }
}

/// `general.alignment`: a u32, non-zero power of two; 32 when absent.
fn alignment_of(metadata: &[Entry]) -> Result<u64> {
    let Some(entry) = metadata.iter().find(|e| e.key == ALIGNMENT_KEY) else {
        return Ok(DEFAULT_ALIGNMENT);
    };
    let RawValue::U32(alignment) = entry.value else {
        let found = match &entry.value {
            RawValue::String { .. } => "string",
            RawValue::Array(_) => "array",
            _ => "another number type",
        };
        return Err(Error::at(
            ErrorKind::WrongValueType {
                key: ALIGNMENT_KEY.to_string(),
                expected: "uint32",
                found,
            },
            entry.value_offset,
        ));
    };
    if alignment == 0 || !alignment.is_power_of_two() {
        return Err(Error::at(
            ErrorKind::BadAlignment {
                alignment: alignment.into(),
            },
            entry.value_offset,
        ));
    }
    Ok(alignment.into())
}

impl GgufFile {
    /// Parses a whole file held in memory.
    pub fn from_bytes(bytes: &[u8]) -> Result<GgufFile> {
        match parse(bytes, Some(bytes.len() as u64))? {
            ParseStatus::Complete(file) => Ok(file),
            // A whole file never needs more; kept total for the type checker.
            ParseStatus::NeedMore { at_least, .. } => Err(Error::at(
                ErrorKind::Truncated {
                    what: "header".to_string(),
                    needed: at_least,
                    available: bytes.len() as u64,
                },
                bytes.len() as u64,
            )),
        }
    }

    /// GGUF version: 1, 2 or 3.
    pub fn version(&self) -> u32 {
        self.version
    }

    /// Byte order of the file.
    pub fn endian(&self) -> Endian {
        if self.format.big_endian {
            Endian::Big
        } else {
            Endian::Little
        }
    }

    /// Data alignment (`general.alignment`, default 32).
    pub fn alignment(&self) -> u64 {
        self.alignment
    }

    /// Length of the header: where the last tensor info ends.
    pub fn header_len(&self) -> u64 {
        self.header.len() as u64
    }

    /// Absolute offset of the data section: the header end rounded up to the alignment.
    /// (With zero tensors gguf-py writes this padding and ggml does not; both read the same.)
    pub fn data_offset(&self) -> u64 {
        self.data_offset
    }

    /// File size given at parse time, if any.
    pub fn file_size(&self) -> Option<u64> {
        self.file_size
    }

    /// The header bytes this model keeps (strings and arrays are views into them).
    pub fn header_bytes(&self) -> &[u8] {
        &self.header
    }

    /// Number of metadata pairs.
    pub fn metadata_len(&self) -> usize {
        self.metadata.len()
    }

    /// Metadata pairs in file order.
    pub fn metadata(&self) -> impl Iterator<Item = (&str, Value<'_>)> + '_ {
        self.metadata
            .iter()
            .map(move |e| (e.key.as_str(), view(&self.header, self.format, &e.value)))
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<Value<'_>> {
        self.metadata
            .iter()
            .find(|e| e.key == key)
            .map(|e| view(&self.header, self.format, &e.value))
    }

    /// Absolute file offset of `key`'s value (just after its type id).
    pub fn value_offset(&self, key: &str) -> Option<u64> {
        self.metadata
            .iter()
            .find(|e| e.key == key)
            .map(|e| e.value_offset)
    }

    /// Tensor infos in file order.
    pub fn tensors(&self) -> &[TensorInfo] {
        &self.tensors
    }

    /// The tensor named `name`.
    pub fn tensor(&self, name: &str) -> Result<&TensorInfo> {
        self.tensor_index
            .get(name)
            .and_then(|&i| self.tensors.get(i))
            .ok_or_else(|| {
                Error::new(ErrorKind::NoSuchTensor {
                    name: name.to_string(),
                })
            })
    }

    /// Absolute byte range of `tensor`'s data in the file.
    pub fn tensor_range(&self, tensor: &TensorInfo) -> Range<u64> {
        // Parse checked data_offset + offset + n_bytes for overflow.
        let start = self.data_offset.saturating_add(tensor.offset());
        start..start.saturating_add(tensor.n_bytes())
    }

    /// Absolute byte range of rows `rows` of `tensor` (a row is `dims[0]` elements).
    pub fn rows_range(&self, tensor: &TensorInfo, rows: Range<u64>) -> Result<Range<u64>> {
        let relative = tensor.row_byte_range(rows)?;
        let start = self.tensor_range(tensor).start;
        Ok(start + relative.start..start + relative.end)
    }

    /// `tensor`'s bytes within `file_bytes` (the whole file, or at least up to its end).
    pub fn tensor_data<'b>(&self, file_bytes: &'b [u8], tensor: &TensorInfo) -> Result<&'b [u8]> {
        let range = self.tensor_range(tensor);
        let out_of_file = || {
            Error::at(
                ErrorKind::TensorOutOfFile {
                    name: tensor.name().to_string(),
                    offset: tensor.offset(),
                    size: tensor.n_bytes(),
                    file_size: file_bytes.len() as u64,
                },
                tensor.info_offset(),
            )
        };
        let start = usize::try_from(range.start).map_err(|_| out_of_file())?;
        let end = usize::try_from(range.end).map_err(|_| out_of_file())?;
        file_bytes.get(start..end).ok_or_else(out_of_file)
    }

    /// Dequantizes `bytes` (whole rows of `tensor`, as read from this file) into `out`,
    /// converting byte order first for big-endian files.
    pub fn dequantize_rows(
        &self,
        tensor: &TensorInfo,
        bytes: &[u8],
        out: &mut [f32],
    ) -> Result<()> {
        self.dequantize_rows_with(crate::quant::Kernel::auto()?, tensor, bytes, out)
    }

    /// As [`GgufFile::dequantize_rows`], with a chosen kernel.
    pub fn dequantize_rows_with(
        &self,
        kernel: crate::quant::Kernel,
        tensor: &TensorInfo,
        bytes: &[u8],
        out: &mut [f32],
    ) -> Result<()> {
        let ty = tensor.ggml_type();
        if self.endian() == Endian::Little {
            return crate::quant::dequantize_with(kernel, ty, bytes, out);
        }
        let swapped = crate::quant::big_endian_to_little(ty, bytes)?;
        crate::quant::dequantize_with(kernel, ty, &swapped, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimal_file_parses() {
        let mut bytes = b"GGUF".to_vec();
        bytes.extend_from_slice(&3u32.to_le_bytes());
        bytes.extend_from_slice(&0u64.to_le_bytes());
        bytes.extend_from_slice(&0u64.to_le_bytes());
        let file = GgufFile::from_bytes(&bytes).unwrap();
        assert_eq!(file.version(), 3);
        assert_eq!(file.header_len(), 24);
        assert_eq!(file.data_offset(), 32);
        assert_eq!(file.alignment(), 32);
    }

    fn minimal_header() -> Vec<u8> {
        let mut bytes = b"GGUF".to_vec();
        bytes.extend_from_slice(&3u32.to_le_bytes());
        bytes.extend_from_slice(&0u64.to_le_bytes());
        bytes.extend_from_slice(&0u64.to_le_bytes());
        bytes
    }

    /// The wasm parseHeader hands its argument to `parse_owned`: the header must keep that very
    /// buffer (a copy would hold a big header twice during the parse).
    #[test]
    fn parse_owned_keeps_the_buffer() {
        let bytes = minimal_header();
        let ptr = bytes.as_ptr();
        let ParseStatus::Complete(file) = parse_owned(bytes, Some(1 << 20)).unwrap() else {
            panic!("whole header given")
        };
        assert_eq!(file.header.as_ptr(), ptr);
        assert_eq!(file.header.len(), 24);
    }

    /// A prefix read past the header is cut to the header and its capacity given back.
    #[test]
    fn parse_owned_releases_bytes_past_the_header() {
        let mut bytes = minimal_header();
        bytes.resize(1 << 20, 0);
        let ParseStatus::Complete(file) = parse_owned(bytes, Some(1 << 30)).unwrap() else {
            panic!("whole header given")
        };
        assert_eq!(file.header.len(), 24);
        assert!(file.header.capacity() < 1024, "{}", file.header.capacity());
    }
}
