//! STUB: to be written.
pub(crate) fn dequant_q2_k(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_q3_k(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_q4_k(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_q5_k(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_q6_k(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_q8_k(_blocks: &[u8], _out: &mut [f32]) {}
