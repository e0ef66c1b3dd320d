//! f32 → F16 and BF16, element by element, as ggml converts them.

/// f32 → IEEE half the way ggml's `ggml_compute_fp32_to_fp16` does it: round to nearest even
/// (subnormals included) by two float multiplications and an add, overflow to infinity, and any
/// NaN to 0x7E00 with the sign kept.
pub fn f32_to_f16(f: f32) -> u16 {
    let scale_to_inf = f32::from_bits(0x7780_0000); // 2^112
    let scale_to_zero = f32::from_bits(0x0880_0000); // 2^-110
    let mut base = (f.abs() * scale_to_inf) * scale_to_zero;

    let w = f.to_bits();
    let shl1_w = w.wrapping_add(w);
    let sign = w & 0x8000_0000;
    let bias = (shl1_w & 0xff00_0000).max(0x7100_0000);

    base += f32::from_bits((bias >> 1) + 0x0780_0000);
    let bits = base.to_bits();
    let exp_bits = (bits >> 13) & 0x0000_7c00;
    let mantissa_bits = bits & 0x0000_0fff;
    let nonsign = exp_bits + mantissa_bits;
    // Truncation to 16 bits is the C code's implicit conversion.
    ((sign >> 16)
        | if shl1_w > 0xff00_0000 {
            0x7e00
        } else {
            nonsign
        }) as u16
}

/// f32 → bfloat16 as ggml's `ggml_compute_fp32_to_bf16`: round to nearest even on the top 16
/// bits; a NaN keeps its top bits with the quiet bit (64) forced on.
pub fn f32_to_bf16(f: f32) -> u16 {
    let i = f.to_bits();
    if i & 0x7fff_ffff > 0x7f80_0000 {
        return ((i >> 16) | 64) as u16;
    }
    (i.wrapping_add(0x7fff + ((i >> 16) & 1)) >> 16) as u16
}

/// `f16_to_f32(f32_to_f16(f))` for finite |f| < 65504, in float arithmetic (`round_trip.rs`):
/// with E the exponent of |f| (at least −14, f16's smallest normal), c = 1.5·2^(E+13) puts
/// |f| + c in the binade whose spacing is f16's at E (2^(E−10), 2^−24 for subnormals), so that
/// add rounds |f| to nearest even (c is an even number of those steps), and subtracting c is
/// exact. No overflow below 65504. The sign goes back on with its bit (−0 stays −0).
#[inline(always)]
pub(crate) fn f16_round(f: f32) -> f32 {
    round_to_spacing::<13, 113>(f)
}

/// `f32_to_bf16` read back (a shift) for finite |f| < 2¹¹¹, as [`f16_round`] with bfloat16's
/// spacing 2^(E−7) (E at least −126: f32's subnormals round to bfloat16's).
#[inline(always)]
pub(crate) fn bf16_round(f: f32) -> f32 {
    round_to_spacing::<16, 1>(f)
}

/// |f| rounded to nearest even at spacing 2^(E − 23 + SHIFT), E its exponent but at least
/// `MIN_EXP` − 127 (a biased field), by adding and subtracting c = 1.5·2^(E + SHIFT); the sign
/// put back by its bit.
#[inline(always)]
fn round_to_spacing<const SHIFT: u32, const MIN_EXP: u32>(f: f32) -> f32 {
    let a = f.abs();
    let e = (a.to_bits() & 0x7f80_0000).max(MIN_EXP << 23);
    let c = f32::from_bits(e + (SHIFT << 23) + 0x0040_0000);
    f32::from_bits(((a + c) - c).to_bits() | (f.to_bits() & 0x8000_0000))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_matches_ieee_rounding_on_finite_values() {
        // half's conversion is IEEE round-to-nearest-even; ggml's must agree on finite values.
        let mut state = 0x1234_5678_9abc_def0u64;
        for _ in 0..200_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let f = f32::from_bits((state >> 32) as u32);
            if f.is_finite() {
                assert_eq!(f32_to_f16(f), half::f16::from_f32(f).to_bits(), "{f:e}");
            }
        }
        assert_eq!(f32_to_f16(f32::NAN), 0x7e00);
        assert_eq!(f32_to_f16(1.0e6), 0x7c00);
    }

    #[test]
    fn bf16_rounds_to_even_and_quiets_nan() {
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f80_8000)), 0x3f80);
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f81_8000)), 0x3f82);
        assert_eq!(f32_to_bf16(f32::from_bits(0x7f80_0001)), 0x7fc0);
    }
}
