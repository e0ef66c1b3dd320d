//! An exact sum of f64 values: a fixed-point integer wide enough for every finite f64 (and 2⁶⁴
//! of them), so the result is the same for any order or split of the terms — a tensor's error
//! sums merge across workers bit for bit. Rounded to f64 once, at the end.

/// 1074 fraction bits (the smallest subnormal) + 1024 integer bits + 64 bits of headroom for
/// carries + the sign, in two's complement.
const LIMBS: usize = 35;
const BYTES: usize = LIMBS * 8 + 8;

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ExactSum {
    limbs: [u64; LIMBS],
    /// Sum of the non-finite terms (infinities, NaN), which dominate any finite total.
    special: f64,
}

impl Default for ExactSum {
    fn default() -> Self {
        ExactSum {
            limbs: [0; LIMBS],
            special: 0.0,
        }
    }
}

impl ExactSum {
    pub(crate) fn add(&mut self, v: f64) {
        if v == 0.0 {
            return;
        }
        if !v.is_finite() {
            self.special += v;
            return;
        }
        let bits = v.to_bits();
        let exp = ((bits >> 52) & 0x7ff) as usize;
        let frac = bits & ((1u64 << 52) - 1);
        // v = m · 2^(p − 1074): the bit position of m's lowest bit in the fixed point.
        let (m, p) = if exp == 0 {
            (frac, 0)
        } else {
            (frac | (1u64 << 52), exp - 1)
        };
        let wide = u128::from(m) << (p % 64);
        let (lo, hi) = (wide as u64, (wide >> 64) as u64);
        let at = p / 64;
        if bits >> 63 == 0 {
            self.add_at(at, lo, hi);
        } else {
            self.sub_at(at, lo, hi);
        }
    }

    fn add_at(&mut self, at: usize, lo: u64, hi: u64) {
        let (s, c1) = self.limbs[at].overflowing_add(lo);
        self.limbs[at] = s;
        let (s, c2) = self.limbs[at + 1].overflowing_add(hi);
        let (s, c3) = s.overflowing_add(u64::from(c1));
        self.limbs[at + 1] = s;
        let mut carry = c2 || c3;
        let mut i = at + 2;
        while carry && i < LIMBS {
            let (s, c) = self.limbs[i].overflowing_add(1);
            self.limbs[i] = s;
            carry = c;
            i += 1;
        }
    }

    fn sub_at(&mut self, at: usize, lo: u64, hi: u64) {
        let (s, b1) = self.limbs[at].overflowing_sub(lo);
        self.limbs[at] = s;
        let (s, b2) = self.limbs[at + 1].overflowing_sub(hi);
        let (s, b3) = s.overflowing_sub(u64::from(b1));
        self.limbs[at + 1] = s;
        let mut borrow = b2 || b3;
        let mut i = at + 2;
        while borrow && i < LIMBS {
            let (s, b) = self.limbs[i].overflowing_sub(1);
            self.limbs[i] = s;
            borrow = b;
            i += 1;
        }
    }

    pub(crate) fn merge(&mut self, other: &ExactSum) {
        let mut carry = false;
        for (a, &b) in self.limbs.iter_mut().zip(&other.limbs) {
            let (s, c1) = a.overflowing_add(b);
            let (s, c2) = s.overflowing_add(u64::from(carry));
            *a = s;
            carry = c1 || c2;
        }
        self.special += other.special;
    }

    /// The negated sum (exact: two's complement of the fixed point).
    pub(crate) fn negated(&self) -> ExactSum {
        let mut out = ExactSum::default();
        let mut carry = true;
        for (o, &l) in out.limbs.iter_mut().zip(&self.limbs) {
            let (s, c) = (!l).overflowing_add(u64::from(carry));
            *o = s;
            carry = c;
        }
        out.special = -self.special;
        out
    }

    /// The sum rounded to the nearest f64 (ties to even; a subnormal total may round twice).
    pub(crate) fn value(&self) -> f64 {
        if self.special != 0.0 || self.special.is_nan() {
            return self.special;
        }
        let negative = self.limbs[LIMBS - 1] >> 63 == 1;
        let mut mag = self.limbs;
        if negative {
            // Two's complement: invert and add one.
            let mut carry = true;
            for l in mag.iter_mut() {
                let (s, c) = (!*l).overflowing_add(u64::from(carry));
                *l = s;
                carry = c;
            }
        }
        let Some(top) = mag.iter().rposition(|&l| l != 0) else {
            return 0.0;
        };
        let pos = top * 64 + 63 - mag[top].leading_zeros() as usize;
        // A 64-bit window under the top bit; the bits below it only decide the rounding, so one
        // sticky bit in the window's last place stands for all of them.
        let shift = pos.saturating_sub(63);
        let (j, o) = (shift / 64, shift % 64);
        let mut window = mag[j] >> o;
        if o > 0 && j + 1 < LIMBS {
            window |= mag[j + 1] << (64 - o);
        }
        let sticky = (o > 0 && mag[j] & ((1u64 << o) - 1) != 0) || mag[..j].iter().any(|&l| l != 0);
        window |= u64::from(sticky);
        let v = scale(window as f64, shift as i64 - 1074);
        if negative {
            -v
        } else {
            v
        }
    }

    /// Little-endian bytes: the limbs, then the non-finite part.
    pub(crate) fn to_bytes(&self, out: &mut Vec<u8>) {
        for l in &self.limbs {
            out.extend_from_slice(&l.to_le_bytes());
        }
        out.extend_from_slice(&self.special.to_le_bytes());
    }

    /// From `to_bytes`' output at the start of `bytes`; None when it is too short.
    pub(crate) fn from_bytes(bytes: &[u8]) -> Option<ExactSum> {
        let bytes = bytes.get(..BYTES)?;
        let mut sum = ExactSum::default();
        for (l, b) in sum.limbs.iter_mut().zip(bytes.chunks_exact(8)) {
            *l = u64::from_le_bytes(b.try_into().ok()?);
        }
        sum.special = f64::from_le_bytes(bytes[LIMBS * 8..].try_into().ok()?);
        Some(sum)
    }

    pub(crate) const ENCODED_LEN: usize = BYTES;
}

/// x · 2^k, in steps that stay within f64's exponent range.
fn scale(mut x: f64, mut k: i64) -> f64 {
    let pow = |e: i64| f64::from_bits(((e + 1023) as u64) << 52);
    while k > 1023 {
        x *= pow(1023);
        k -= 1023;
    }
    while k < -1022 {
        x *= pow(-1022);
        k += 1022;
    }
    x * pow(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum(values: &[f64]) -> f64 {
        let mut s = ExactSum::default();
        for &v in values {
            s.add(v);
        }
        s.value()
    }

    #[test]
    fn exact_where_f64_is_not() {
        assert_eq!(sum(&[1e308, 1.0, -1e308]), 1.0);
        assert_eq!(sum(&[0.1, 0.2, 0.3]), 0.6);
        assert_eq!(sum(&[1.0, 2f64.powi(-60), -1.0]), 2f64.powi(-60));
        assert_eq!(sum(&[f64::MAX, f64::MAX, -f64::MAX]), f64::MAX);
        assert_eq!(sum(&[5e-324, 5e-324]), 1e-323);
        assert_eq!(sum(&[-3.5, 1.25]), -2.25);
        assert_eq!(sum(&[]), 0.0);
        assert_eq!(sum(&[1.0, f64::INFINITY]), f64::INFINITY);
        assert!(sum(&[f64::NAN, 1.0]).is_nan());
        // Rounds once: 1 + 2⁻⁵³ + 2⁻¹⁰⁰ is just above the tie, so up.
        assert_eq!(
            sum(&[1.0, 2f64.powi(-53), 2f64.powi(-100)]),
            1.0 + f64::EPSILON
        );
        assert_eq!(sum(&[1.0, 2f64.powi(-53)]), 1.0);
        let mut a = ExactSum::default();
        a.add(0.1);
        let mut b = ExactSum::default();
        b.add(0.3);
        b.merge(&a.negated());
        b.merge(&a.negated());
        assert_eq!(b.value(), 0.3 - 0.2);
        assert_eq!(ExactSum::default().negated().value(), 0.0);
    }

    #[test]
    fn any_order_and_split_gives_the_same_bits() {
        let mut x = 0x9e3779b97f4a7c15u64;
        let values: Vec<f64> = (0..5000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let e = (x % 80) as i32 - 40;
                (x as f64 / u64::MAX as f64 - 0.3) * 2f64.powi(e)
            })
            .collect();
        let whole = sum(&values);
        let mut reversed = values.clone();
        reversed.reverse();
        assert_eq!(sum(&reversed).to_bits(), whole.to_bits());
        for cut in [1, 777, 2500, 4999] {
            let mut a = ExactSum::default();
            let mut b = ExactSum::default();
            values[..cut].iter().for_each(|&v| a.add(v));
            values[cut..].iter().for_each(|&v| b.add(v));
            let mut bytes = Vec::new();
            b.to_bytes(&mut bytes);
            a.merge(&ExactSum::from_bytes(&bytes).unwrap());
            assert_eq!(a.value().to_bits(), whole.to_bits(), "cut {cut}");
        }
    }
}
