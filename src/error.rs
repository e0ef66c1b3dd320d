//! The one error type. Every error says what went wrong and, for file data, the byte offset
//! where it was found; `Display` is the one-line message users see (CLI, JS, viewer).

use std::fmt;

use crate::types::GgmlType;

/// What went wrong and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// What went wrong.
    pub kind: ErrorKind,
    /// Absolute byte offset in the file where it was found, when it concerns file bytes.
    pub offset: Option<u64>,
}

/// Everything that can go wrong, one variant per cause.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The bytes end before `what` does: `needed` bytes at the offset, `available` there.
    Truncated {
        what: String,
        needed: u64,
        available: u64,
    },
    /// The file does not start with `GGUF`.
    BadMagic { found: [u8; 4] },
    /// A version other than 1, 2 or 3.
    UnsupportedVersion { version: u32 },
    /// A count (keys, tensors, array length, dims) that the bytes cannot hold or over a cap.
    TooMany {
        what: String,
        count: u64,
        limit: u64,
    },
    /// A string longer than the cap or than the bytes that remain.
    StringTooLong { what: String, len: u64, limit: u64 },
    /// A key or tensor name that is not UTF-8.
    InvalidUtf8 { what: String },
    /// A metadata value type id outside 0..=12.
    UnknownValueType { key: String, type_id: u32 },
    /// Arrays nested deeper than the cap.
    NestingTooDeep { key: String, limit: u32 },
    /// The same key twice.
    DuplicateKey { key: String },
    /// The same tensor name twice.
    DuplicateTensor { name: String },
    /// A metadata key with a value of the wrong type for what it means.
    WrongValueType {
        key: String,
        expected: &'static str,
        found: &'static str,
    },
    /// `general.alignment` that is zero or not a power of two.
    BadAlignment { alignment: u64 },
    /// A tensor type id ggml never had.
    UnknownTensorType { name: String, type_id: u32 },
    /// A tensor type id ggml removed.
    RemovedTensorType {
        name: String,
        type_id: u32,
        type_name: &'static str,
    },
    /// A tensor name of `len` bytes: ggml (GGML_MAX_NAME = `limit`) takes names shorter than
    /// `limit` bytes and refuses the file otherwise.
    TensorNameTooLong { name: String, len: u64, limit: u64 },
    /// More dimensions than ggml's 4.
    TooManyDims {
        name: String,
        n_dims: u32,
        limit: u32,
    },
    /// A dimension above i64::MAX, or a product of dimensions or byte size that overflows.
    DimsOverflow { name: String },
    /// A first dimension that is not a whole number of blocks.
    PartialBlock {
        name: String,
        ne0: u64,
        block_size: u32,
    },
    /// A tensor offset that is not a multiple of the alignment.
    Misaligned {
        name: String,
        offset: u64,
        alignment: u64,
    },
    /// A tensor whose bytes reach past the end of the file.
    TensorOutOfFile {
        name: String,
        offset: u64,
        size: u64,
        file_size: u64,
    },
    /// Two tensors share bytes.
    TensorsOverlap { first: String, second: String },
    /// A header larger than the cap this library will hold in memory.
    HeaderTooLarge { needed: u64, limit: u64 },
    /// A lookup by name that found nothing.
    NoSuchTensor { name: String },
    /// A row range outside the tensor.
    BadRowRange {
        name: String,
        start: u64,
        end: u64,
        rows: u64,
    },
    /// A buffer handed to a dequantizer whose length does not fit the type.
    BadLength {
        what: String,
        len: u64,
        expected: u64,
    },
    /// A kernel that this build or CPU cannot run.
    KernelUnavailable { kernel: String },
    /// Big-endian tensor data of a type whose byte order we do not convert.
    BigEndianData { type_name: &'static str },
    /// Reading the file failed.
    Io { message: String },
    /// A safetensors header (or index / quantization config) that is not the JSON it must be.
    BadJson { what: String, message: String },
    /// A safetensors dtype name the format does not have.
    UnknownDtype { name: String, dtype: String },
    /// A safetensors dtype this library does not convert to f32.
    UnsupportedDtype { name: String, dtype: &'static str },
    /// safetensors data offsets that leave a gap or run backwards (tensors must tile the data).
    DataOffsetGap {
        name: String,
        start: u64,
        end: u64,
        expected_start: u64,
    },
    /// safetensors tensors that end before the data section does.
    UnusedData { end: u64, data_len: u64 },
    /// A safetensors tensor whose byte length is not its shape's element count times its size.
    ShapeMismatch {
        name: String,
        n_bytes: u64,
        expected: u64,
    },
    /// GPTQ tensors whose shapes, dtypes or group indices do not fit together.
    GptqLayout { layer: String, message: String },
    /// An MLX quantized layer (uint32 weight, scales, biases) whose parts or config do not fit.
    MlxLayout { layer: String, message: String },
    /// An FP8 block-scaled layer whose parts do not fit together (or a scale that is not finite).
    Fp8Layout { layer: String, message: String },
    /// A compressed-tensors layer whose parts do not fit its scheme (or a scale that is not finite).
    CtLayout { layer: String, message: String },
    /// A gpt-oss MXFP4 tensor (`_blocks` + e8m0 `_scales`) whose parts do not fit (or a NaN scale).
    Mxfp4Layout { layer: String, message: String },
    /// A bitsandbytes 4-bit layer whose parts do not fit its quant state (or a scale that is not finite).
    BnbLayout { layer: String, message: String },
    /// A call that does not fit what it works on (e.g. statistics fed rows out of their range).
    InvalidRequest { message: String },
    /// The shards of a split GGUF model that do not fit together (count, order, a name twice).
    BadSplit { shard: String, message: String },
    /// A file whose tokenizer metadata cannot be made into a tokenizer (missing, unsupported or
    /// inconsistent), in plain words.
    BadTokenizer { message: String },
    /// An input (not file data) longer than the limit this library takes.
    InputTooLong { what: String, len: u64, limit: u64 },
    /// A metadata edit the file cannot take: a value that does not parse or fit the key's type,
    /// a key that is not there, an alignment that is not a power of two (naming the key).
    BadEdit { message: String },
    /// A chat template that does not compile or render (raise_exception's text, an undefined
    /// name, a syntax error, a limit of `chat/limits.rs`), in one line.
    ChatTemplate { message: String },
    /// No quantizer for this type (the IQ1/IQ2/IQ3 families need an importance matrix).
    CannotQuantize { ty: GgmlType },
    /// Values to quantize that are not a whole number of the type's blocks.
    QuantizeRowLength {
        ty: GgmlType,
        len: usize,
        block: usize,
    },
    /// A quantization destination without exactly the bytes the values quantize to.
    QuantizeDestinationSize {
        ty: GgmlType,
        expected: usize,
        actual: usize,
    },
    /// A NaN or infinite value (value `index`, its bits) given to a block quantizer.
    NotFinite {
        ty: GgmlType,
        index: usize,
        value_bits: u32,
    },
    /// A block whose f16 scale (or min) would be infinite: its values are too large for the
    /// type (the scale's f32 bits).
    ScaleOverflow {
        ty: GgmlType,
        block: usize,
        scale_bits: u32,
    },
    /// An error of one file among several (a side of a comparison): which one, and the error.
    InFile { file: String, error: Box<Error> },
    /// A memory plan that cannot be made: a model the planner cannot read, or a combination
    /// llama.cpp refuses (its message, as llama.cpp words it).
    PlanRefused { message: String },
    /// Two tensors compared value by value that do not have the same shape.
    ShapesDiffer {
        name: String,
        a: Vec<u64>,
        b: Vec<u64>,
    },
}

impl Error {
    /// An error found at byte `offset` of the file.
    pub fn at(kind: ErrorKind, offset: u64) -> Error {
        Error {
            kind,
            offset: Some(offset),
        }
    }

    /// `error`, of the file named `file` among several.
    pub fn in_file(file: &str, error: Error) -> Error {
        Error::new(ErrorKind::InFile {
            file: file.to_string(),
            error: Box::new(error),
        })
    }

    /// An error that concerns no particular byte of the file.
    pub fn new(kind: ErrorKind) -> Error {
        Error { kind, offset: None }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ErrorKind::*;
        match self {
            Truncated { what, needed, available } => write!(
                f,
                "file ends inside {what} (needs {needed} bytes, {available} left)"
            ),
            BadMagic { found } => write!(
                f,
                "not a GGUF file: magic is {:?}, expected \"GGUF\"",
                String::from_utf8_lossy(found)
            ),
            UnsupportedVersion { version } => {
                write!(f, "unsupported GGUF version {version} (supported: 1, 2, 3)")
            }
            TooMany { what, count, limit } => {
                write!(f, "{what} {count} is more than the file can hold (limit {limit})")
            }
            StringTooLong { what, len, limit } => {
                write!(f, "{what} length {len} is too long (limit {limit})")
            }
            InvalidUtf8 { what } => write!(f, "{what} is not valid UTF-8"),
            UnknownValueType { key, type_id } => {
                write!(f, "metadata {key:?} has unknown value type {type_id}")
            }
            NestingTooDeep { key, limit } => {
                write!(f, "metadata {key:?} nests arrays deeper than {limit}")
            }
            DuplicateKey { key } => write!(f, "duplicate metadata key {key:?}"),
            DuplicateTensor { name } => write!(f, "duplicate tensor name {name:?}"),
            WrongValueType { key, expected, found } => {
                write!(f, "metadata {key:?} has type {found}, expected {expected}")
            }
            BadAlignment { alignment } => write!(
                f,
                "general.alignment {alignment} is not a non-zero power of two"
            ),
            UnknownTensorType { name, type_id } => {
                write!(f, "tensor {name} has unknown ggml type id {type_id}")
            }
            RemovedTensorType { name, type_id, type_name } => write!(
                f,
                "tensor {name} has ggml type id {type_id} ({type_name}), which ggml removed"
            ),
            TensorNameTooLong { name, len, limit } => write!(
                f,
                "tensor name {name:?} is {len} bytes, ggml takes at most {} (GGML_MAX_NAME {limit})",
                limit.saturating_sub(1)
            ),
            TooManyDims { name, n_dims, limit } => {
                write!(f, "tensor {name} has {n_dims} dimensions (limit {limit})")
            }
            DimsOverflow { name } => {
                write!(f, "tensor {name} has dimensions whose size overflows")
            }
            PartialBlock { name, ne0, block_size } => write!(
                f,
                "tensor {name} first dimension {ne0} is not a multiple of its block size {block_size}"
            ),
            Misaligned { name, offset, alignment } => write!(
                f,
                "tensor {name} offset {offset} is not a multiple of the alignment {alignment}"
            ),
            TensorOutOfFile { name, offset, size, file_size } => write!(
                f,
                "tensor {name} extends past end of file (offset {offset}, size {size}, file size {file_size})"
            ),
            TensorsOverlap { first, second } => {
                write!(f, "tensors {first} and {second} overlap")
            }
            HeaderTooLarge { needed, limit } => {
                write!(f, "header needs {needed} bytes (limit {limit})")
            }
            NoSuchTensor { name } => write!(f, "no tensor named {name:?}"),
            BadRowRange { name, start, end, rows } => write!(
                f,
                "rows {start}..{end} are outside tensor {name} ({rows} rows)"
            ),
            BadLength { what, len, expected } => {
                write!(f, "{what} has {len} bytes or elements, expected {expected}")
            }
            KernelUnavailable { kernel } => {
                write!(f, "kernel {kernel:?} is not available on this build or CPU")
            }
            BigEndianData { type_name } => write!(
                f,
                "big-endian {type_name} tensor data is not supported (only plain float and integer types)"
            ),
            Io { message } => write!(f, "read failed: {message}"),
            InvalidRequest { message } => write!(f, "invalid request: {message}"),
            BadSplit { shard, message } => write!(f, "split model, shard {shard}: {message}"),
            BadJson { what, message } => write!(f, "{what} is not valid: {message}"),
            UnknownDtype { name, dtype } => {
                write!(f, "tensor {name} has unknown dtype {dtype:?}")
            }
            UnsupportedDtype { name, dtype } => {
                write!(f, "tensor {name} has dtype {dtype}, which is not converted to f32")
            }
            DataOffsetGap { name, start, end, expected_start } => write!(
                f,
                "tensor {name} data offsets [{start}, {end}] do not start where the previous tensor ends ({expected_start})"
            ),
            UnusedData { end, data_len } => write!(
                f,
                "tensors end at data offset {end} but the data section has {data_len} bytes"
            ),
            ShapeMismatch { name, n_bytes, expected } => write!(
                f,
                "tensor {name} has {n_bytes} bytes of data, its shape and dtype need {expected}"
            ),
            GptqLayout { layer, message } => write!(f, "GPTQ layer {layer}: {message}"),
            MlxLayout { layer, message } => write!(f, "MLX layer {layer}: {message}"),
            Fp8Layout { layer, message } => write!(f, "FP8 layer {layer}: {message}"),
            CtLayout { layer, message } => {
                write!(f, "compressed-tensors layer {layer}: {message}")
            }
            Mxfp4Layout { layer, message } => write!(f, "MXFP4 tensor {layer}: {message}"),
            BnbLayout { layer, message } => write!(f, "bitsandbytes layer {layer}: {message}"),
            PlanRefused { message } => f.write_str(message),
            BadEdit { message } => f.write_str(message),
            ChatTemplate { message } => f.write_str(message),
            InFile { file, error } => write!(f, "{file}: {error}"),
            CannotQuantize { ty } => write!(f, "cannot quantize to {ty}"),
            QuantizeRowLength { ty, len, block } => write!(
                f,
                "{len} values are not a whole number of {ty} blocks of {block}"
            ),
            QuantizeDestinationSize { ty, expected, actual } => write!(
                f,
                "{ty} output needs {expected} bytes, the buffer has {actual}"
            ),
            NotFinite { ty, index, value_bits } => write!(
                f,
                "cannot quantize {} (value {index}) to {ty}",
                f32::from_bits(*value_bits)
            ),
            ScaleOverflow { ty, block, scale_bits } => write!(
                f,
                "{ty} block {block}: scale {:e} overflows f16 (values too large for {ty})",
                f32::from_bits(*scale_bits)
            ),
            BadTokenizer { message } => f.write_str(message),
            InputTooLong { what, len, limit } => write!(
                f,
                "{what} of {len} bytes is over the input limit of {limit} bytes"
            ),
            ShapesDiffer { name, a, b } => write!(
                f,
                "tensor {name} has shape {a:?} in A and {b:?} in B: values are compared only for the same shape"
            ),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(offset) => write!(f, "{} at byte {offset}", self.kind),
            None => write!(f, "{}", self.kind),
        }
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(err: std::io::Error) -> Error {
        Error::new(ErrorKind::Io {
            message: err.to_string(),
        })
    }
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, Error>;
