//! wasm32 simd128 values of 32 codes at once: the code book looked up by byte swizzles (one per
//! byte of the f32 values), times the block's scale, rounded to bf16 where asked, the same bits
//! as the scalar loop (`BnbDtype::round`).

use core::arch::wasm32::*;

use crate::quant::simd128::lanes::{
    high_nibbles, interleave4, load, low_nibbles, round_bf16, store,
};

/// A code book as four byte planes (plane `k`: byte `k` of each of the 16 f32 values).
pub(super) struct Book {
    planes: [v128; 4],
    bf16: bool,
}

impl Book {
    pub(super) fn new(code: &[f32; 16], bf16: bool) -> Book {
        let planes = std::array::from_fn(|k| {
            let bytes: [u8; 16] = std::array::from_fn(|i| code[i].to_bits().to_le_bytes()[k]);
            load(&bytes, 0)
        });
        Book { planes, bf16 }
    }

    /// `out[i] = round(code[q_i] · s)` for the 32 codes of `bytes` (16 bytes, the first value of
    /// a byte in its high nibble).
    #[inline]
    pub(super) fn thirty_two(&self, bytes: &[u8], s: f32, out: &mut [f32]) {
        let x = load(bytes, 0);
        let (hi, lo) = (high_nibbles(x), low_nibbles(x));
        let first = u8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(hi, lo);
        let second =
            u8x16_shuffle::<8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31>(hi, lo);
        let s = f32x4_splat(s);
        self.sixteen(first, s, out, 0);
        self.sixteen(second, s, out, 16);
    }

    #[inline(always)]
    fn sixteen(&self, q: v128, s: v128, out: &mut [f32], at: usize) {
        let [p0, p1, p2, p3] = self.planes.map(|p| i8x16_swizzle(p, q));
        // The planes' bytes back into whole f32 values.
        let values = interleave4(p0, p1, p2, p3);
        for (k, v) in values.into_iter().enumerate() {
            let w = f32x4_mul(v, s);
            store(out, at + 4 * k, if self.bf16 { round_bf16(w) } else { w });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bnb::run_tests::runs_equal_the_per_value_loop;
    use crate::bnb::BnbDtype;

    /// The simd128 runs (f32 and bf16) give the per-value loop's bits.
    #[test]
    fn thirty_two_values_are_the_scalar_values() {
        let run = |code: &[f32; 16], dtype: BnbDtype, bytes: &[u8], s: f32, out: &mut [f32]| {
            Book::new(code, dtype == BnbDtype::BF16).thirty_two(bytes, s, out)
        };
        runs_equal_the_per_value_loop(&run, &[BnbDtype::F32, BnbDtype::BF16]);
    }
}
