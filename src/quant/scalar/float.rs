//! STUB: to be written.
pub(crate) fn dequant_f32(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_f16(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_bf16(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_f64(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_i8(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_i16(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_i32(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_i64(_blocks: &[u8], _out: &mut [f32]) {}
