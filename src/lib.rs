//! gguf-lens: read GGUF model files and dequantize every ggml tensor type.
//!
//! A GGUF file is a header (magic `GGUF`, version, tensor count, metadata key/value pairs,
//! tensor infos) followed by a data section that starts at the header end rounded up to
//! `general.alignment`. [`gguf::parse`] reads the header from a prefix of the file and says how
//! many more bytes it needs when the prefix is short; [`quant::dequantize`] turns a tensor's
//! blocks into f32 exactly as ggml does.
//!
//! [`safetensors::parse`] does the same for safetensors headers (plus shard indexes), and
//! [`gptq`] dequantizes GPTQ layers stored in them bit for bit as llama.cpp's
//! `convert_hf_to_gguf.py` and GPTQModel do.

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub mod atomic_write;
pub mod bnb;
pub mod chat;
pub mod compare;
pub mod ct;
mod cursor;
pub mod diff_report;
pub mod edit;
pub mod effective_ftype;
pub mod error;
pub mod fp8;
pub mod gguf;
pub mod gptq;
pub mod hash;
mod hf_config;
pub mod lint;
pub mod llama_names;
pub mod mlx;
pub mod model;
pub mod mxfp4;
pub mod plan;
pub mod quant;
pub mod quantize;
pub mod safetensors;
pub mod special_tokens;
pub mod stats;
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
mod threads;
pub mod tokenizer;
pub mod types;
pub mod value_show;
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
mod wasm;

pub use error::{Error, ErrorKind, Result};
pub use gguf::{parse, GgufFile, ParseStatus, TensorInfo, Value, ValueType};
pub use quant::{dequantize, dequantize_with, Kernel};
pub use types::GgmlType;
