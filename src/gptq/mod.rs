//! GPTQ checkpoints in safetensors: the quantization config, the quantized linear layers
//! (`<prefix>.qweight`, `.qzeros`, `.scales`, optional `.g_idx`) and their dequantization to
//! f32 `[out_features, in_features]`, as llama.cpp's `convert_hf_to_gguf.py` and GPTQModel do.
//!
//! Storage, for `bits` in 2, 3, 4, 8:
//! - `qweight` int32 `[in * bits / 32, out]`: column `o` is a little-endian bit stream of the
//!   `in` quants of output `o`, `bits` each, low bits first (3-bit values cross word boundaries:
//!   32 values fill three words).
//! - `qzeros` int32 `[n_groups, out * bits / 32]`: row `g` is the bit stream of that group's
//!   zero points, one per output.
//! - `scales` float16 `[n_groups, out]`; `g_idx` int32 `[in]`, the group of each input (absent:
//!   `i / group_size`).
//!
//! `w[o][i] = scale[g][o] * (q[i][o] - zero[g][o])` with `g = g_idx[i]`, computed in f32 (the
//! difference is an exact small integer, the product is rounded once). In the v1 checkpoint
//! format (`checkpoint_format: gptq`) the stored zero is the real one minus 1.

mod config;
mod dequant;
mod layer;

pub use config::{CheckpointFormat, QuantConfig, V1Zeros};
pub use dequant::dequantize_rows;
pub use layer::{discover, find_layers, GptqLayer, LayerParts, TensorShape};
