//! wasm32 simd128 loops of pack-quantized rows: 4- and 8-bit codes unpacked 16 bytes a step
//! (`q − 2^(bits−1)` exactly in f32), and `(q − z) · s` rounded to bf16 in lanes; the same bits
//! as the scalar loops beside them, which take what these leave (other widths, f16 scales, the
//! tails).

use core::arch::wasm32::*;

use crate::quant::simd128::lanes::{
    load, load_f32x4, nibbles_low_first, round_bf16, store, store16, widen_biased, MAGIC,
};

/// Writes the first values of `row` from its bit stream `words` (4 or 8 bits a value, low bits
/// first): how many (a multiple of 16; 0 for other widths).
pub(super) fn unpack(bits: u32, words: &[u8], row: &mut [f32]) -> usize {
    match bits {
        4 => {
            let runs = (words.len() / 16).min(row.len() / 32);
            for i in 0..runs {
                let [first, second] = nibbles_low_first(load(words, 16 * i));
                store16(row, 32 * i, widen_biased(first, MAGIC + 8.0));
                store16(row, 32 * i + 16, widen_biased(second, MAGIC + 8.0));
            }
            runs * 32
        }
        8 => {
            let runs = (words.len() / 16).min(row.len() / 16);
            for i in 0..runs {
                store16(
                    row,
                    16 * i,
                    widen_biased(load(words, 16 * i), MAGIC + 128.0),
                );
            }
            runs * 16
        }
        _ => 0,
    }
}

/// `w = (w − zero) · s` for the first values of `chunk`, rounded to bf16 when `bf16`: how many
/// (a multiple of 4).
pub(super) fn scale(chunk: &mut [f32], zero: f32, s: f32, bf16: bool) -> usize {
    let (zero, s) = (f32x4_splat(zero), f32x4_splat(s));
    let runs = chunk.len() / 4;
    for i in 0..runs {
        let w = f32x4_mul(f32x4_sub(load_f32x4(chunk, 4 * i), zero), s);
        store(chunk, 4 * i, if bf16 { round_bf16(w) } else { w });
    }
    runs * 4
}

#[cfg(test)]
mod tests {
    /// Unpacked codes and scaled values equal the scalar loops' bits: 4 and 8 bits, rows with
    /// and without a tail, f32 and bf16 products of random scales and zero points.
    #[test]
    fn vector_loops_are_the_scalar_loops() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for (bits, cols) in [(4u32, 64usize), (4, 72), (4, 40), (8, 48), (8, 20)] {
            let words: Vec<u8> = (0..(cols * bits as usize).div_ceil(32) * 4)
                .map(|_| next() as u8)
                .collect();
            let want: Vec<f32> = (0..cols)
                .map(|c| super::super::unpack(&words, bits, c as u64 * u64::from(bits)) as f32)
                .collect();
            let mut got = vec![f32::NAN; cols];
            let done = super::unpack(bits, &words, &mut got);
            assert!(done > 0 && done % 16 == 0);
            assert_eq!(&got[..done], &want[..done], "{bits} bits, {cols} columns");
            for bf16 in [false, true] {
                let zero = (next() % 16) as f32 - 8.0;
                let s = f32::from_bits((next() as u32 & 0x3fff_ffff) | 0x2000_0000);
                let round = |v: f32| {
                    if bf16 {
                        half::bf16::from_f32(v).to_f32()
                    } else {
                        v
                    }
                };
                let expect: Vec<u32> = want
                    .iter()
                    .map(|&w| round((w - zero) * s).to_bits())
                    .collect();
                let mut chunk = want.clone();
                let done = super::scale(&mut chunk, zero, s, bf16);
                assert_eq!(done, cols / 4 * 4);
                let got: Vec<u32> = chunk[..done].iter().map(|v| v.to_bits()).collect();
                assert_eq!(got, expect[..done], "bf16 {bf16}");
            }
        }
    }
}
