//! MXFP4 and NVFP4: E2M1 nibbles (doubled, as ggml's `kvalues_mxfp4`) looked up with a byte
//! swizzle, times a half-scale computed as the scalar kernel does (NVFP4's from a table of it).

use core::arch::wasm32::*;
use std::sync::OnceLock;

use super::{high_nibbles, i8x16_to_f32, load, load8, low_nibbles, mul4, store16};
use crate::quant::scalar::for_each_block;
use crate::quant::scalar::fp4::{e8m0_to_f32_half, ue4m3_to_f32_half};

/// ggml's `kvalues_mxfp4` as a swizzle table.
#[inline(always)]
fn kvalues() -> v128 {
    i8x16(0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12)
}

pub(super) fn dequant_mxfp4(blocks: &[u8], out: &mut [f32]) {
    let table = kvalues();
    // e, qs[16]
    for_each_block(blocks, out, |b: &[u8; 17], y: &mut [f32; 32]| {
        let d = f32x4_splat(e8m0_to_f32_half(b[0]));
        let qs = load(b, 1);
        let lo = i8x16_swizzle(table, low_nibbles(qs));
        let hi = i8x16_swizzle(table, high_nibbles(qs));
        store16(y, 0, mul4(i8x16_to_f32(lo), d));
        store16(y, 16, mul4(i8x16_to_f32(hi), d));
    });
}

/// `ue4m3_to_f32_half` for every byte, made once: one load per scale instead of its
/// data-dependent branches.
fn ue4m3_half_table() -> &'static [f32; 256] {
    static TABLE: OnceLock<[f32; 256]> = OnceLock::new();
    TABLE.get_or_init(|| core::array::from_fn(|x| ue4m3_to_f32_half(x as u8)))
}

pub(super) fn dequant_nvfp4(blocks: &[u8], out: &mut [f32]) {
    let table = kvalues();
    let scales = ue4m3_half_table();
    // d[4] (UE4M3), qs[4][8]
    for_each_block(blocks, out, |b: &[u8; 36], y: &mut [f32; 64]| {
        for s in 0..4 {
            let d = f32x4_splat(scales[usize::from(b[s])]);
            let qs = load8(b, 4 + 8 * s);
            // Low nibbles of the 8 bytes, then their high nibbles.
            let q = i8x16_shuffle::<0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23>(
                low_nibbles(qs),
                high_nibbles(qs),
            );
            store16(y, 16 * s, mul4(i8x16_to_f32(i8x16_swizzle(table, q)), d));
        }
    });
}
