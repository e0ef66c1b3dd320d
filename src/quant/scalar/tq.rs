//! STUB: to be written.
pub(crate) fn dequant_tq1_0(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_tq2_0(_blocks: &[u8], _out: &mut [f32]) {}
