//! wasm32 simd128 rows of the byte-aligned widths (4 and 8 bits): 16 packed bytes a step, the
//! same `scale · q + bias` (a product, then a sum: no fused multiply-add) as `scalar_row`.

use core::arch::wasm32::*;

/// Writes `row` for `bits` 4 or 8 with groups of a multiple of 32 values and returns true;
/// false (nothing written) for any other width, which the scalar row serves.
pub(super) fn row(
    bits: usize,
    group: usize,
    packed: &[u8],
    s: &[f32],
    b: &[f32],
    row: &mut [f32],
) -> bool {
    if !(bits == 4 || bits == 8) || group % 32 != 0 || row.len() % group != 0 {
        return false;
    }
    let group_bytes = group * bits / 8;
    if packed.len() != row.len() / group * group_bytes || s.len() * group != row.len() {
        return false;
    }
    let groups = packed
        .chunks_exact(group_bytes)
        .zip(row.chunks_exact_mut(group))
        .zip(s.iter().zip(b));
    for ((bytes, out), (&s, &b)) in groups {
        let (s, b) = (f32x4_splat(s), f32x4_splat(b));
        if bits == 4 {
            for (x, out) in bytes.chunks_exact(16).zip(out.chunks_exact_mut(32)) {
                let x = load(x);
                // Value 2j is byte j's low nibble, value 2j + 1 its high nibble.
                let (lo, hi) = (v128_and(x, u8x16_splat(15)), u8x16_shr(x, 4));
                let first =
                    u8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(lo, hi);
                let second =
                    u8x16_shuffle::<8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31>(
                        lo, hi,
                    );
                sixteen(first, s, b, &mut out[..16]);
                sixteen(second, s, b, &mut out[16..]);
            }
        } else {
            for (x, out) in bytes.chunks_exact(16).zip(out.chunks_exact_mut(16)) {
                sixteen(load(x), s, b, out);
            }
        }
    }
    true
}

#[inline(always)]
fn load(x: &[u8]) -> v128 {
    assert!(x.len() >= 16);
    // SAFETY: `x` holds at least 16 bytes (checked above); `v128_load` reads unaligned.
    unsafe { v128_load(x.as_ptr().cast()) }
}

/// `out[i] = s · q[i] + b` for the 16 bytes of `q` (`out` 16 long).
#[inline(always)]
fn sixteen(q: v128, s: v128, b: v128, out: &mut [f32]) {
    let out: &mut [f32; 16] = out.try_into().unwrap();
    let halves = [u16x8_extend_low_u8x16(q), u16x8_extend_high_u8x16(q)];
    for (h, out) in halves.into_iter().zip(out.chunks_exact_mut(8)) {
        let quads = [u32x4_extend_low_u16x8(h), u32x4_extend_high_u16x8(h)];
        for (w, out) in quads.into_iter().zip(out.chunks_exact_mut(4)) {
            let v = f32x4_add(f32x4_mul(s, f32x4_convert_u32x4(w)), b);
            let out: &mut [f32; 4] = out.try_into().unwrap();
            // SAFETY: `out` is 4 f32s, 16 bytes; `v128_store` writes unaligned.
            unsafe { v128_store(out.as_mut_ptr().cast(), v) };
        }
    }
}
