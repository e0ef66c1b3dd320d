//! wasm32 simd128 conversions of stored elements to f32, the same bits as `dtype.rs`'s loops.

use core::arch::wasm32::*;

/// E4M3 ("fn") bytes to f32, 16 a step: the bits moved into place by lane arithmetic (normal
/// values), `m · 2^-9` in f32 (subnormals, exact), NaN as torch gives it. How many were
/// written (whole runs of 16; the caller takes the tail).
pub(super) fn e4m3fn(bytes: &[u8], out: &mut [f32]) -> usize {
    let mut done = 0;
    for (b, o) in bytes.chunks_exact(16).zip(out.chunks_exact_mut(16)) {
        // SAFETY: `b` is 16 bytes; `v128_load` reads unaligned.
        let x = unsafe { v128_load(b.as_ptr().cast()) };
        let halves = [u16x8_extend_low_u8x16(x), u16x8_extend_high_u8x16(x)];
        for (h, o) in halves.into_iter().zip(o.chunks_exact_mut(8)) {
            let quads = [u32x4_extend_low_u16x8(h), u32x4_extend_high_u16x8(h)];
            for (q, o) in quads.into_iter().zip(o.chunks_exact_mut(4)) {
                let o: &mut [f32; 4] = o.try_into().unwrap();
                // SAFETY: `o` is 4 f32s, 16 bytes; `v128_store` writes unaligned.
                unsafe { v128_store(o.as_mut_ptr().cast(), four(q)) };
            }
        }
        done += 16;
    }
    done
}

/// Four E4M3 values (one a u32 lane, 0..256) as f32 bits.
#[inline(always)]
fn four(x: v128) -> v128 {
    let sign = u32x4_shl(v128_and(x, u32x4_splat(0x80)), 24);
    let em = v128_and(x, u32x4_splat(0x7f));
    let normal = i32x4_add(u32x4_shl(em, 20), u32x4_splat(120 << 23));
    let subnormal = f32x4_mul(f32x4_convert_i32x4(em), f32x4_splat(1.0 / 512.0));
    let magnitude = v128_bitselect(subnormal, normal, u32x4_lt(em, u32x4_splat(8)));
    let magnitude = v128_bitselect(
        u32x4_splat(0x7FF0_0000),
        magnitude,
        i32x4_eq(em, u32x4_splat(0x7f)),
    );
    v128_or(magnitude, sign)
}
