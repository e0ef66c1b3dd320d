//! STUB: to be written.
pub(crate) fn dequant_q4_0(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_q4_1(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_q5_0(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_q5_1(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_q8_0(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_q8_1(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_q1_0(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_q2_0(_blocks: &[u8], _out: &mut [f32]) {}
