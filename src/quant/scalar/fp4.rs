//! STUB: to be written.
pub(crate) fn dequant_mxfp4(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_nvfp4(_blocks: &[u8], _out: &mut [f32]) {}
