//! The grid i-quants IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S and IQ1_M.
//!
//! Grid rows (8 values, or two 4-value IQ3 rows side by side) are fetched from the shared
//! tables with scalar loads, as the scalar kernels (src/quant/scalar/iq.rs) do; the scales are
//! the scalar kernels' f32 expressions, computed once per group. Per 8 values: widen the row,
//! convert, multiply by the group scale, then flip the sign bit (XOR) where the sign byte says
//! so — ggml's `* ±1` is a sign flip, NaN included, as the scalar `put_signed` negation.
//! IQ3_S instead loads its rows already as f32 (`IQ3S_ROWS`), at offsets made with SIMD once
//! per block.

use core::arch::x86_64::*;

use super::{f16_to_f32, le_u16, load16, safe_kernel, store};
use crate::quant::scalar::grids::{
    IQ1S_DELTA, IQ1S_GRID, IQ2S_GRID, IQ2XS_GRID, IQ2XXS_GRID, IQ3S_GRID, IQ3XXS_GRID, KSIGNS_IQ2XS,
};

safe_kernel!(dequant_iq2_xxs => iq2_xxs);
safe_kernel!(dequant_iq2_xs => iq2_xs);
safe_kernel!(dequant_iq2_s => iq2_s);
safe_kernel!(dequant_iq3_xxs => iq3_xxs);
safe_kernel!(dequant_iq3_s => iq3_s);
safe_kernel!(dequant_iq1_s => iq1_s);
safe_kernel!(dequant_iq1_m => iq1_m);

/// The little-endian u32 at bytes `at..at + 4` of a block.
#[inline(always)]
fn le_u32<const B: usize>(b: &[u8; B], at: usize) -> u32 {
    u32::from(le_u16(b, at)) | u32::from(le_u16(b, at + 2)) << 16
}

/// Two 4-value IQ3 grid rows side by side, as one 8-byte row (first in the low bytes).
#[inline(always)]
fn iq3_rows(first: u32, second: u32) -> u64 {
    u64::from(first) | u64::from(second) << 32
}

/// Per sign byte, the XOR masks of its 8 values: bit j set gives 0x8000_0000 in lane j.
#[repr(align(32))]
struct SignMasks([[u32; 8]; 256]);

static SIGN_MASKS: SignMasks = {
    let mut t = [[0u32; 8]; 256];
    let mut s = 0;
    while s < 256 {
        let mut j = 0;
        while j < 8 {
            if (s >> j) & 1 != 0 {
                t[s][j] = 0x8000_0000;
            }
            j += 1;
        }
        s += 1;
    }
    SignMasks(t)
};

/// The sign-flip mask of a sign byte (one load instead of broadcast, shift and mask).
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn sign_mask(signs: u8) -> __m256 {
    let row = &SIGN_MASKS.0[usize::from(signs)];
    // SAFETY: `row` is 8 u32 (32 bytes), 32-byte aligned by SignMasks' alignment.
    _mm256_load_ps(row.as_ptr().cast())
}

/// Writes the 8 values `±(scale · grid[j])` at `y[at..at + 8]`: `row` holds 8 unsigned grid
/// bytes, bit j of `signs` negates value j (by flipping its sign bit).
///
/// # Safety
/// `at + 8 <= y.len()`, and `store`'s alignment rule for `ST`.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn put_signed8<const ST: u8>(y: &mut [f32], at: usize, scale: __m256, row: u64, signs: u8) {
    let grid = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(row as i64)));
    let v = _mm256_mul_ps(scale, grid);
    // SAFETY: the caller guarantees y[at..at + 8] exists (and `ST`'s alignment).
    store::<ST>(y, at, _mm256_xor_ps(v, sign_mask(signs)));
}

/// Writes the 8 values `dl · (grid[j] + delta)` (add, then multiply, as the scalar `put_iq1`)
/// at `y[at..at + 8]` from IQ1 grid row `index` (11 bits), whose bytes are signed.
///
/// # Safety
/// `at + 8 <= y.len()`, and `store`'s alignment rule for `ST`.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn put_iq1<const ST: u8>(y: &mut [f32], at: usize, dl: __m256, index: usize, delta: __m256) {
    let row = IQ1S_GRID[index & 0x7ff];
    let grid = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_cvtsi64_si128(row as i64)));
    let v = _mm256_mul_ps(dl, _mm256_add_ps(grid, delta));
    // SAFETY: the caller guarantees y[at..at + 8] exists (and `ST`'s alignment).
    store::<ST>(y, at, v);
}

/// IQ1 delta in every lane: `+IQ1S_DELTA`, or its negation where `flag` (a single bit, any
/// position) is set — the scalar `iq1_delta`, made without a branch: the flags are data, so a
/// branch (what LLVM makes of a select) is mispredicted half the time. One broadcast load
/// from a two-entry table.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn iq1_delta(flag: u32) -> __m256 {
    static SIGNED: [f32; 2] = [IQ1S_DELTA, -IQ1S_DELTA];
    let pick = usize::from(flag != 0);
    // SAFETY: pick is 0 or 1, inside SIGNED.
    _mm256_broadcast_ss(&*SIGNED.as_ptr().add(pick))
}

/// Calls `$body` with each whole block as `&[u8; $size]` and its 256 outputs.
macro_rules! blocks {
    ($blocks:ident, $out:ident, $size:literal, |$b:ident, $y:ident| $body:block) => {
        for (bytes, $y) in $blocks.chunks_exact($size).zip($out.chunks_exact_mut(256)) {
            let Ok($b) = <&[u8; $size]>::try_from(bytes) else {
                continue;
            };
            $body
        }
    };
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn iq2_xxs<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    blocks!(blocks, out, 66, |b, y| {
        let d = f16_to_f32(le_u16(b, 0));
        for g in 0..8 {
            let at = 2 + 8 * g;
            let aux = le_u32(b, at + 4);
            let db = _mm256_set1_ps(d * (0.5 + (aux >> 28) as f32) * 0.25);
            for k in 0..4 {
                let row = IQ2XXS_GRID[usize::from(b[at + k])];
                let signs = KSIGNS_IQ2XS[((aux >> (7 * k)) & 127) as usize];
                // SAFETY: 32 * g + 8 * k + 8 <= 256 = y.len() (g < 8, k < 4).
                put_signed8::<ST>(y, 32 * g + 8 * k, db, row, signs);
            }
        }
    });
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn iq2_xs<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    blocks!(blocks, out, 74, |b, y| {
        let d = f16_to_f32(le_u16(b, 0));
        for g in 0..8 {
            let scales = b[66 + g];
            for p in 0..2 {
                let s = (scales >> (4 * p)) & 0x0F;
                let db = _mm256_set1_ps(d * (0.5 + f32::from(s)) * 0.25);
                for w in 0..2 {
                    let q = le_u16(b, 2 + 8 * g + 4 * p + 2 * w);
                    let row = IQ2XS_GRID[usize::from(q & 0x1ff)];
                    let signs = KSIGNS_IQ2XS[usize::from((q >> 9) & 127)];
                    // SAFETY: 32 * g + 16 * p + 8 * w + 8 <= 256 = y.len().
                    put_signed8::<ST>(y, 32 * g + 16 * p + 8 * w, db, row, signs);
                }
            }
        }
    });
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn iq2_s<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    blocks!(blocks, out, 82, |b, y| {
        let d = f16_to_f32(le_u16(b, 0));
        for g in 0..8 {
            let qh = b[66 + g];
            let scales = b[74 + g];
            for p in 0..2 {
                let s = (scales >> (4 * p)) & 0x0F;
                let db = _mm256_set1_ps(d * (0.5 + f32::from(s)) * 0.25);
                for k in 2 * p..2 * p + 2 {
                    let index =
                        usize::from(b[2 + 4 * g + k]) | (usize::from((qh >> (2 * k)) & 3) << 8);
                    let row = IQ2S_GRID[index & 0x3ff];
                    let signs = b[34 + 4 * g + k];
                    // SAFETY: 32 * g + 8 * k + 8 <= 256 = y.len() (g < 8, k < 4).
                    put_signed8::<ST>(y, 32 * g + 8 * k, db, row, signs);
                }
            }
        }
    });
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn iq3_xxs<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    blocks!(blocks, out, 98, |b, y| {
        let d = f16_to_f32(le_u16(b, 0));
        for g in 0..8 {
            let aux = le_u32(b, 66 + 4 * g);
            let db = _mm256_set1_ps(d * (0.5 + (aux >> 28) as f32) * 0.5);
            for r in 0..4 {
                let first = IQ3XXS_GRID[usize::from(b[2 + 8 * g + 2 * r])];
                let second = IQ3XXS_GRID[usize::from(b[3 + 8 * g + 2 * r])];
                let signs = KSIGNS_IQ2XS[((aux >> (7 * r)) & 127) as usize];
                let row = iq3_rows(first, second);
                // SAFETY: 32 * g + 8 * r + 8 <= 256 = y.len() (g < 8, r < 4).
                put_signed8::<ST>(y, 32 * g + 8 * r, db, row, signs);
            }
        }
    });
}

/// IQ3_S's grid with each 4-value row as 4 f32 (the bytes converted exactly), so a row is one
/// 16-byte load: no widening or converting per value.
#[repr(align(16))]
struct Iq3sRows([[f32; 4]; 512]);

static IQ3S_ROWS: Iq3sRows = {
    let mut t = [[0f32; 4]; 512];
    let mut i = 0;
    while i < 512 {
        let row = IQ3S_GRID[i].to_le_bytes();
        let mut j = 0;
        while j < 4 {
            t[i][j] = row[j] as f32;
            j += 1;
        }
        i += 1;
    }
    Iq3sRows(t)
};

/// The byte offsets into [`IQ3S_ROWS`] of a block's 64 grid rows: row `i` of group `g` has
/// index `qs[8g + i] | (bit i of qh[g]) << 8`, made 16 at a time.
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn iq3_s_offsets(b: &[u8; 110]) -> [u16; 64] {
    let spread = _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
    let bits = _mm_set1_epi64x(0x8040_2010_0804_0201_u64 as i64);
    let nine = _mm_set1_epi16(0x1ff);
    let mut offsets = [0u16; 64];
    for j in 0..4 {
        // SAFETY: qs is bytes 2..66 of the block; j < 4.
        let qs = load16(b, 2 + 16 * j);
        // 0xFF in byte i of each 8 where bit i of that group's qh byte is set.
        let qh = _mm_shuffle_epi8(_mm_set1_epi16(le_u16(b, 66 + 2 * j) as i16), spread);
        let high = _mm_cmpeq_epi8(_mm_and_si128(qh, bits), bits);
        for (h, words) in [_mm_unpacklo_epi8(qs, high), _mm_unpackhi_epi8(qs, high)]
            .into_iter()
            .enumerate()
        {
            let words = _mm_slli_epi16::<4>(_mm_and_si128(words, nine));
            // SAFETY: offsets[16j + 8h..+8] exists (j < 4, h < 2); storeu needs no alignment.
            _mm_storeu_si128(offsets.as_mut_ptr().add(16 * j + 8 * h).cast(), words);
        }
    }
    offsets
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn iq3_s<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    blocks!(blocks, out, 110, |b, y| {
        let d = _mm256_set1_ps(f16_to_f32(le_u16(b, 0)));
        // The 8 group scales d·(1 + 2s), s the nibbles of bytes 106..110 (low nibble first).
        let s = _mm_cvtsi32_si128(le_u32(b, 106) as i32);
        let s = _mm_and_si128(
            _mm_unpacklo_epi8(s, _mm_srli_epi16::<4>(s)),
            _mm_set1_epi8(0x0F),
        );
        let s = _mm_add_epi8(_mm_add_epi8(s, s), _mm_set1_epi8(1));
        let mut dbs = [0f32; 8];
        // SAFETY: dbs is 8 f32; storeu needs no alignment.
        _mm256_storeu_ps(
            dbs.as_mut_ptr(),
            _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(s))),
        );
        let offsets = iq3_s_offsets(b);
        let rows: *const f32 = IQ3S_ROWS.0.as_ptr().cast();
        // SAFETY: each offset is at most 511·16 bytes, so it and the next 16 bytes lie inside
        // the 16-byte aligned 512 × 16-byte IQ3S_ROWS.
        let row = |i: usize| _mm_load_ps(rows.byte_add(usize::from(offsets[i])));
        for g in 0..8 {
            let db = _mm256_broadcast_ss(&dbs[g]);
            for r in 0..4 {
                let first = row(8 * g + 2 * r);
                let grid = _mm256_insertf128_ps::<1>(
                    _mm256_castps128_ps256(first),
                    row(8 * g + 2 * r + 1),
                );
                // db·grid is the scalar `scale * f32::from(g)`; the sign flip its negation.
                let v = _mm256_xor_ps(_mm256_mul_ps(db, grid), sign_mask(b[74 + 4 * g + r]));
                // SAFETY: 32 * g + 8 * r + 8 <= 256 = y.len() (g < 8, r < 4).
                store::<ST>(y, 32 * g + 8 * r, v);
            }
        }
    });
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn iq1_s<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    blocks!(blocks, out, 50, |b, y| {
        let d = f16_to_f32(le_u16(b, 0));
        for g in 0..8 {
            let qh = le_u16(b, 34 + 2 * g);
            let dl = _mm256_set1_ps(d * f32::from(2 * ((qh >> 12) & 7) + 1));
            let delta = iq1_delta(u32::from(qh & 0x8000));
            for k in 0..4 {
                let index = usize::from(b[2 + 4 * g + k]) | (usize::from((qh >> (3 * k)) & 7) << 8);
                // SAFETY: 32 * g + 8 * k + 8 <= 256 = y.len() (g < 8, k < 4).
                put_iq1::<ST>(y, 32 * g + 8 * k, dl, index, delta);
            }
        }
    });
}

#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn iq1_m<const ST: u8>(blocks: &[u8], out: &mut [f32]) {
    blocks!(blocks, out, 56, |b, y| {
        let s: [u16; 4] = [le_u16(b, 48), le_u16(b, 50), le_u16(b, 52), le_u16(b, 54)];
        let d = f16_to_f32(
            (s[0] >> 12) | ((s[1] >> 8) & 0x00f0) | ((s[2] >> 4) & 0x0f00) | (s[3] & 0xf000),
        );
        for h in 0..16 {
            let dl = _mm256_set1_ps(d * f32::from(2 * ((s[h / 4] >> (3 * (h % 4))) & 7) + 1));
            let qh = b[32 + h];
            for r in 0..2 {
                let nib = (qh >> (4 * r)) & 0x0F;
                let index = usize::from(b[2 * h + r]) | (usize::from(nib & 7) << 8);
                // SAFETY: 16 * h + 8 * r + 8 <= 256 = y.len() (h < 16, r < 2).
                put_iq1::<ST>(y, 16 * h + 8 * r, dl, index, iq1_delta(u32::from(nib & 8)));
            }
        }
    });
}
