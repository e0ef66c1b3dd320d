//! The bit planes of a group's 32 4-bit codes taken straight from the bytes holding them as
//! nibbles (bit `i` of plane `k`: bit `k` of code `i`): one shift and one byte-mask per plane
//! and 16 bytes, where writing each code to its own byte and reading it back cost more than
//! counting them (`codes.rs` counts codes from planes).

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
        if crate::quant::avx2_chosen() {
            // SAFETY: the CPU has AVX2 (`avx2_chosen` implies it).
            let m = unsafe { x86::masks32(qs) };
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
    #[cfg(target_arch = "x86_64")]
    {
        x86::masks(x)
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        wasm::masks(x)
    }
    #[cfg(not(any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    )))]
    {
        portable_masks(x)
    }
}

/// [`masks`] without vectors (the reference).
#[cfg_attr(
    any(
        target_arch = "x86_64",
        all(target_arch = "wasm32", target_feature = "simd128")
    ),
    allow(dead_code)
)]
fn portable_masks(x: &[u8; 16]) -> [u32; 8] {
    let mut m = [0u32; 8];
    for (j, &b) in x.iter().enumerate() {
        for (k, mk) in m.iter_mut().enumerate() {
            *mk |= u32::from(b >> k & 1) << j;
        }
    }
    m
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// [`masks`] of 32 bytes at once (bit `j` of `m[k]`: bit `k` of byte `j`).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn masks32(x: &[u8; 32]) -> [u32; 8] {
        let q = _mm256_loadu_si256(x.as_ptr().cast());
        [
            _mm256_movemask_epi8(_mm256_slli_epi16::<7>(q)) as u32,
            _mm256_movemask_epi8(_mm256_slli_epi16::<6>(q)) as u32,
            _mm256_movemask_epi8(_mm256_slli_epi16::<5>(q)) as u32,
            _mm256_movemask_epi8(_mm256_slli_epi16::<4>(q)) as u32,
            _mm256_movemask_epi8(_mm256_slli_epi16::<3>(q)) as u32,
            _mm256_movemask_epi8(_mm256_slli_epi16::<2>(q)) as u32,
            _mm256_movemask_epi8(_mm256_slli_epi16::<1>(q)) as u32,
            _mm256_movemask_epi8(q) as u32,
        ]
    }

    /// SSE2 (every x86_64): bit k to each byte's top bit (16-bit shifts: a low byte's bits
    /// never reach its high byte's top bit), then the top bits as a mask.
    #[inline(always)]
    pub(super) fn masks(x: &[u8; 16]) -> [u32; 8] {
        // SAFETY: SSE2 is part of x86_64; a 16-byte unaligned load of 16 bytes.
        unsafe {
            let q = _mm_loadu_si128(x.as_ptr().cast());
            [
                _mm_movemask_epi8(_mm_slli_epi16::<7>(q)) as u32,
                _mm_movemask_epi8(_mm_slli_epi16::<6>(q)) as u32,
                _mm_movemask_epi8(_mm_slli_epi16::<5>(q)) as u32,
                _mm_movemask_epi8(_mm_slli_epi16::<4>(q)) as u32,
                _mm_movemask_epi8(_mm_slli_epi16::<3>(q)) as u32,
                _mm_movemask_epi8(_mm_slli_epi16::<2>(q)) as u32,
                _mm_movemask_epi8(_mm_slli_epi16::<1>(q)) as u32,
                _mm_movemask_epi8(q) as u32,
            ]
        }
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod wasm {
    use std::arch::wasm32::*;

    #[inline(always)]
    pub(super) fn masks(x: &[u8; 16]) -> [u32; 8] {
        // SAFETY: 16 bytes; v128_load takes unaligned pointers.
        let q = unsafe { v128_load(x.as_ptr().cast()) };
        // 16-bit shifts (one instruction, where a byte shift is several): a low byte's bits
        // never reach its high byte's top bit.
        let m = |s: u32| u32::from(i8x16_bitmask(i16x8_shl(q, s)));
        [m(7), m(6), m(5), m(4), m(3), m(2), m(1), m(0)]
    }
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
