//! STUB: to be written.
pub(crate) fn dequant_iq2_xxs(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_iq2_xs(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_iq2_s(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_iq3_xxs(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_iq3_s(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_iq1_s(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_iq1_m(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_iq4_nl(_blocks: &[u8], _out: &mut [f32]) {}
pub(crate) fn dequant_iq4_xs(_blocks: &[u8], _out: &mut [f32]) {}
