//! The bit planes of a group's 32 4-bit codes taken straight from the bytes holding them as
//! nibbles (bit `i` of plane `k`: bit `k` of code `i`): one shift and one byte-mask per plane
//! and 16 bytes, where writing each code to its own byte and reading it back cost more than
//! counting them (`codes.rs` counts codes from planes).

#[cfg(target_arch = "x86_64")]
use super::kernels::avx2;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
use super::kernels::simd128;
use super::kernels::{isa, Isa};

/// Codes per group.
pub(crate) const CODES: usize = 16;
/// Values per group.
pub(crate) const GROUP: usize = 32;

/// Planes of one group stored as 16 bytes of nibbles: code `j` is the low nibble of byte `j`,
/// code `16 + j` its high nibble (Q4_0, Q4_1, IQ4_NL, IQ4_XS).
#[inline(always)]
pub(crate) fn of_nibbles(qs: &[u8; 16]) -> [u32; 4] {
    let m = masks(qs);
    [
        m[0] | m[4] << 16,
        m[1] | m[5] << 16,
        m[2] | m[6] << 16,
        m[3] | m[7] << 16,
    ]
}

/// Planes of two groups stored in 32 bytes: the low nibbles are the first group's 32 codes,
/// the high nibbles the second's (Q4_K).
#[inline(always)]
pub(crate) fn of_pair(qs: &[u8; 32]) -> ([u32; 4], [u32; 4]) {
    #[cfg(target_arch = "x86_64")]
    {
        if isa() == Isa::Avx2 {
            // SAFETY: the CPU has AVX2 (`isa` chose it only then), all `masks32` needs.
            let m = unsafe { avx2::planes::masks32(qs) };
            return ([m[0], m[1], m[2], m[3]], [m[4], m[5], m[6], m[7]]);
        }
    }
    let (a, b) = qs.split_at(16);
    let (a, b) = (masks(a.try_into().unwrap()), masks(b.try_into().unwrap()));
    let plane = |k: usize| a[k] | b[k] << 16;
    (
        [plane(0), plane(1), plane(2), plane(3)],
        [plane(4), plane(5), plane(6), plane(7)],
    )
}

/// `m[k]`: bit `k` of each of the 16 bytes (bit `j` of `m[k]` from byte `j`).
#[inline(always)]
fn masks(x: &[u8; 16]) -> [u32; 8] {
    match isa() {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => avx2::planes::masks(x),
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        Isa::Simd128 => simd128::planes::masks(x),
        Isa::Scalar => portable_masks(x),
    }
}

/// [`masks`] without vectors (the reference).
#[inline(always)]
fn portable_masks(x: &[u8; 16]) -> [u32; 8] {
    let mut m = [0u32; 8];
    for (j, &b) in x.iter().enumerate() {
        for (k, mk) in m.iter_mut().enumerate() {
            *mk |= u32::from(b >> k & 1) << j;
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planes_hold_each_codes_bits() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200 {
            let qs: [u8; 32] = std::array::from_fn(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            });
            let half: [u8; 16] = qs[..16].try_into().unwrap();
            assert_eq!(masks(&half), portable_masks(&half));
            let code = |planes: [u32; 4], i: usize| {
                (0..4).fold(0u8, |c, k| c | ((planes[k] >> i & 1) as u8) << k)
            };
            let p = of_nibbles(&half);
            for (j, &b) in half.iter().enumerate() {
                assert_eq!(code(p, j), b & 15);
                assert_eq!(code(p, 16 + j), b >> 4);
            }
            let (lo, hi) = of_pair(&qs);
            for (i, &b) in qs.iter().enumerate() {
                assert_eq!(code(lo, i), b & 15);
                assert_eq!(code(hi, i), b >> 4);
            }
        }
    }
}
