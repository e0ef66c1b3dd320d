//! Quantization error of one type on given values: quantize (bit-exact to ggml), dequantize,
//! compare. Fed chunk by chunk (whole blocks), so a tensor of any size streams through.

use super::{quantize_row, quantized_size, QuantizeError};
use crate::types::GgmlType;

/// Running sums of the error of quantizing values to one type (f64, so 10⁹ values stay exact
/// enough).
#[derive(Debug, Clone)]
pub struct QuantError {
    ty: GgmlType,
    n: u64,
    sum_err2: f64,
    sum_x2: f64,
    sum_y2: f64,
    sum_xy: f64,
    max_abs_err: f64,
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
            sum_err2: 0.0,
            sum_x2: 0.0,
            sum_y2: 0.0,
            sum_xy: 0.0,
            max_abs_err: 0.0,
            bytes: Vec::new(),
            back: Vec::new(),
        }
    }

    /// Adds `values` (a whole number of the type's blocks).
    pub fn add(&mut self, values: &[f32]) -> Result<(), QuantizeError> {
        let size = quantized_size(self.ty, values.len())?;
        self.bytes.resize(size, 0);
        quantize_row(self.ty, values, &mut self.bytes)?;
        self.back.resize(values.len(), 0.0);
        // Cannot fail: the sizes match by construction, and every quantized type dequantizes.
        crate::quant::dequantize(self.ty, &self.bytes, &mut self.back)
            .map_err(|_| QuantizeError::Unsupported(self.ty))?;
        for (&x, &y) in values.iter().zip(&self.back) {
            let (x, y) = (f64::from(x), f64::from(y));
            let e = x - y;
            self.sum_err2 += e * e;
            self.sum_x2 += x * x;
            self.sum_y2 += y * y;
            self.sum_xy += x * y;
            if e.abs() > self.max_abs_err {
                self.max_abs_err = e.abs();
            }
        }
        self.n += values.len() as u64;
        Ok(())
    }

    /// Merges the sums of another accumulator of the same type (for threads).
    pub fn merge(&mut self, other: &QuantError) {
        self.n += other.n;
        self.sum_err2 += other.sum_err2;
        self.sum_x2 += other.sum_x2;
        self.sum_y2 += other.sum_y2;
        self.sum_xy += other.sum_xy;
        self.max_abs_err = self.max_abs_err.max(other.max_abs_err);
    }

    pub fn report(&self) -> QuantErrorReport {
        let n = self.n.max(1) as f64;
        let rmse = (self.sum_err2 / n).sqrt();
        let relative_rmse = if self.sum_x2 > 0.0 {
            (self.sum_err2 / self.sum_x2).sqrt()
        } else if self.sum_err2 > 0.0 {
            f64::INFINITY
        } else {
            0.0
        };
        let cosine = if self.sum_x2 > 0.0 && self.sum_y2 > 0.0 {
            self.sum_xy / (self.sum_x2.sqrt() * self.sum_y2.sqrt())
        } else if self.sum_x2 == 0.0 && self.sum_y2 == 0.0 {
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
    fn zeros_are_exact() {
        let mut acc = QuantError::new(GgmlType::Q4_K);
        acc.add(&[0.0; 256]).unwrap();
        let r = acc.report();
        assert_eq!((r.rmse, r.relative_rmse, r.cosine), (0.0, 0.0, 1.0));
    }
}
