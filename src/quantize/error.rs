//! Quantization error of one type on given values: quantize (bit-exact to ggml), dequantize,
//! compare. Fed chunk by chunk (whole blocks), so a tensor of any size streams through. Each
//! block's sums (f64, in value order) go into exact sums, so parts of a tensor quantized apart
//! (threads, workers) merge into the same bits as one pass, whatever the split.

mod exact_sum;

use exact_sum::ExactSum;

use super::{quantize_row, quantized_size, QuantizeError};
use crate::types::GgmlType;

/// Running sums of the error of quantizing values to one type: per block in f64, then exact
/// across blocks (so independent of how the values were split and merged).
#[derive(Debug, Clone)]
pub struct QuantError {
    ty: GgmlType,
    n: u64,
    sum_err2: ExactSum,
    sum_x2: ExactSum,
    sum_y2: ExactSum,
    sum_xy: ExactSum,
    max_abs_err: f64,
    /// Values summed in f64 before an exact add: whole blocks that tile every row.
    group: usize,
    bytes: Vec<u8>,
    back: Vec<f32>,
}

/// The metrics of a [`QuantError`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuantErrorReport {
    pub ty: GgmlType,
    pub n_values: u64,
    /// Bits per weight of the type alone (block bytes·8 / block values).
    pub bits_per_weight: f64,
    pub rmse: f64,
    pub max_abs_err: f64,
    /// RMSE over the root mean square of the values (0 when both are 0).
    pub relative_rmse: f64,
    /// Cosine similarity of the values and their round trip (1 when both are all zeros).
    pub cosine: f64,
}

impl QuantError {
    pub fn new(ty: GgmlType) -> QuantError {
        QuantError {
            ty,
            n: 0,
            sum_err2: ExactSum::default(),
            sum_x2: ExactSum::default(),
            sum_y2: ExactSum::default(),
            sum_xy: ExactSum::default(),
            max_abs_err: 0.0,
            group: ty.block_size().max(1) as usize,
            bytes: Vec::new(),
            back: Vec::new(),
        }
    }

    /// For rows of `row_len` values (a multiple of the type's block): sums up to 256 values in
    /// f64 before each exact add (cheaper for F16/BF16, whose block is one value); the parts
    /// merged must then be whole rows.
    pub fn for_rows(ty: GgmlType, row_len: u64) -> QuantError {
        let mut acc = QuantError::new(ty);
        let block = acc.group as u64;
        if block <= 256 && 256 % block == 0 && row_len % block == 0 && row_len > 0 {
            acc.group = (block * gcd(row_len / block, 256 / block)) as usize;
        }
        acc
    }

    /// Adds `values` (a whole number of the type's blocks; of rows after `for_rows`).
    pub fn add(&mut self, values: &[f32]) -> Result<(), QuantizeError> {
        let size = quantized_size(self.ty, values.len())?;
        self.bytes.resize(size, 0);
        quantize_row(self.ty, values, &mut self.bytes)?;
        self.back.resize(values.len(), 0.0);
        // Cannot fail: the sizes match by construction, and every quantized type dequantizes.
        crate::quant::dequantize(self.ty, &self.bytes, &mut self.back)
            .map_err(|_| QuantizeError::Unsupported(self.ty))?;
        for (xs, ys) in values.chunks(self.group).zip(self.back.chunks(self.group)) {
            let (mut err2, mut x2, mut y2, mut xy) = (0.0, 0.0, 0.0, 0.0);
            for (&x, &y) in xs.iter().zip(ys) {
                let (x, y) = (f64::from(x), f64::from(y));
                let e = x - y;
                err2 += e * e;
                x2 += x * x;
                y2 += y * y;
                xy += x * y;
                if e.abs() > self.max_abs_err {
                    self.max_abs_err = e.abs();
                }
            }
            self.sum_err2.add(err2);
            self.sum_x2.add(x2);
            self.sum_y2.add(y2);
            self.sum_xy.add(xy);
        }
        self.n += values.len() as u64;
        Ok(())
    }

    /// Merges the sums of another accumulator of the same type (threads, workers): the same
    /// bits as adding its values here, in any order.
    pub fn merge(&mut self, other: &QuantError) {
        self.n += other.n;
        self.sum_err2.merge(&other.sum_err2);
        self.sum_x2.merge(&other.sum_x2);
        self.sum_y2.merge(&other.sum_y2);
        self.sum_xy.merge(&other.sum_xy);
        self.max_abs_err = self.max_abs_err.max(other.max_abs_err);
    }

    /// The sums as bytes (for another thread or worker; `from_state` reads them back).
    pub fn state(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::STATE_LEN);
        out.extend_from_slice(&self.n.to_le_bytes());
        out.extend_from_slice(&self.max_abs_err.to_le_bytes());
        for s in [&self.sum_err2, &self.sum_x2, &self.sum_y2, &self.sum_xy] {
            s.to_bytes(&mut out);
        }
        out
    }

    /// Bytes of `state`.
    pub const STATE_LEN: usize = 16 + 4 * ExactSum::ENCODED_LEN;

    /// An accumulator of type `ty` from `state`'s bytes; None when they are not that.
    pub fn from_state(ty: GgmlType, bytes: &[u8]) -> Option<QuantError> {
        if bytes.len() != Self::STATE_LEN {
            return None;
        }
        let mut acc = QuantError::new(ty);
        acc.n = u64::from_le_bytes(bytes[..8].try_into().ok()?);
        acc.max_abs_err = f64::from_le_bytes(bytes[8..16].try_into().ok()?);
        let mut sums = bytes[16..]
            .chunks_exact(ExactSum::ENCODED_LEN)
            .map(ExactSum::from_bytes);
        acc.sum_err2 = sums.next()??;
        acc.sum_x2 = sums.next()??;
        acc.sum_y2 = sums.next()??;
        acc.sum_xy = sums.next()??;
        Some(acc)
    }

    pub fn report(&self) -> QuantErrorReport {
        let n = self.n.max(1) as f64;
        let (sum_err2, sum_x2, sum_y2, sum_xy) = (
            self.sum_err2.value(),
            self.sum_x2.value(),
            self.sum_y2.value(),
            self.sum_xy.value(),
        );
        let rmse = (sum_err2 / n).sqrt();
        let relative_rmse = if sum_x2 > 0.0 {
            (sum_err2 / sum_x2).sqrt()
        } else if sum_err2 > 0.0 {
            f64::INFINITY
        } else {
            0.0
        };
        let cosine = if sum_x2 > 0.0 && sum_y2 > 0.0 {
            sum_xy / (sum_x2.sqrt() * sum_y2.sqrt())
        } else if sum_x2 == 0.0 && sum_y2 == 0.0 {
            1.0
        } else {
            0.0
        };
        QuantErrorReport {
            ty: self.ty,
            n_values: self.n,
            bits_per_weight: self.ty.bits_per_weight(),
            rmse,
            max_abs_err: self.max_abs_err,
            relative_rmse,
            cosine,
        }
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q8_0_on_a_ramp_has_small_error() {
        let values: Vec<f32> = (0..256).map(|i| (i as f32 - 128.0) / 64.0).collect();
        let mut acc = QuantError::new(GgmlType::Q8_0);
        acc.add(&values).unwrap();
        let r = acc.report();
        assert_eq!(r.n_values, 256);
        assert_eq!(r.bits_per_weight, 8.5);
        assert!(r.rmse > 0.0 && r.rmse < 0.01, "{r:?}");
        assert!(r.max_abs_err < 0.01);
        assert!(r.cosine > 0.9999);
    }

    #[test]
    fn any_split_merges_into_the_same_bits() {
        let mut x = 12345u32;
        let values: Vec<f32> = (0..256 * 40)
            .map(|_| {
                x = x.wrapping_mul(1664525).wrapping_add(1013904223);
                (x >> 8) as f32 / (1 << 24) as f32 - 0.5
            })
            .collect();
        for ty in [
            GgmlType::Q4_0,
            GgmlType::Q4_K,
            GgmlType::IQ4_NL,
            GgmlType::F16,
        ] {
            let mut whole = QuantError::for_rows(ty, 256);
            whole.add(&values).unwrap();
            let want = whole.report();
            for cuts in [&[256][..], &[2560, 5120, 7680], &[256 * 39]] {
                let mut merged = QuantError::for_rows(ty, 256);
                let mut start = 0;
                for &end in cuts.iter().chain([values.len()].iter()) {
                    let mut part = QuantError::for_rows(ty, 256);
                    part.add(&values[start..end]).unwrap();
                    let part = QuantError::from_state(ty, &part.state()).unwrap();
                    merged.merge(&part);
                    start = end;
                }
                assert_eq!(merged.report(), want, "{ty} {cuts:?}");
            }
        }
        assert!(QuantError::from_state(GgmlType::Q8_0, &[0; 10]).is_none());
    }

    #[test]
    fn zeros_are_exact() {
        let mut acc = QuantError::new(GgmlType::Q4_K);
        acc.add(&[0.0; 256]).unwrap();
        let r = acc.report();
        assert_eq!((r.rmse, r.relative_rmse, r.cosine), (0.0, 0.0, 1.0));
    }
}
