//! Quantization error of one type on given values: quantize (bit-exact to ggml), dequantize,
//! compare. Fed chunk by chunk (whole blocks), so a tensor of any size streams through. Each
//! group's sums (f32 runs in fixed lanes, then f64: `lanes.rs`) go into exact sums, so parts of a tensor
//! quantized apart (threads, workers) merge into the same bits as one pass, whatever the split.
//! [`QuantErrorSet`] measures several types on the same values at once (what the viewer runs);
//! `tensor_quant_error` runs sets on threads over a model's tensor of any storage.

mod exact_sum;
mod lanes;
mod set;
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
mod tensor;

pub use set::{block_mismatch, block_mismatch_message, QuantErrorSet};
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub use tensor::{tensor_quant_error, Outcome, TensorQuantError};

use crate::error::{Error, ErrorKind};
use crate::types::GgmlType;

/// Measures what quantizing values to one type loses (a meter, not an error: its `report` gives
/// the metrics): running sums per group in fixed lanes, then exact across groups (so independent
/// of how the values were split and merged).
#[derive(Debug, Clone)]
pub struct QuantErrorMeter {
    row_len: u64,
    set: QuantErrorSet,
}

/// The metrics of a [`QuantErrorMeter`].
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

impl QuantErrorMeter {
    /// For any whole blocks of `ty`.
    pub fn new(ty: GgmlType) -> QuantErrorMeter {
        QuantErrorMeter::for_rows(ty, u64::from(ty.block_size()))
    }

    /// For rows of `row_len` values (a multiple of the type's block): sums up to 4096 values in
    /// lanes before each exact add; the parts merged must then be whole rows.
    pub fn for_rows(ty: GgmlType, row_len: u64) -> QuantErrorMeter {
        QuantErrorMeter {
            row_len,
            set: QuantErrorSet::new(&[ty], row_len),
        }
    }

    /// Adds `values` (a whole number of the type's blocks; of rows after `for_rows`).
    pub fn add(&mut self, values: &[f32]) -> Result<(), Error> {
        let ty = self.set.types()[0];
        if !self.set.is_present(0) {
            return Err(Error::new(ErrorKind::QuantizeRowLength {
                ty,
                len: self.row_len as usize,
                block: ty.block_size() as usize,
            }));
        }
        self.set.add(values)?;
        match self.set.failure(0) {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Merges the sums of another accumulator of the same type (threads, workers): the same
    /// bits as adding its values here, in any order.
    pub fn merge(&mut self, other: &QuantErrorMeter) {
        self.set.merge(&other.set);
    }

    /// The sums as bytes (for another thread or worker; `from_state` reads them back).
    pub fn state(&self) -> Vec<u8> {
        let mut out = self.row_len.to_le_bytes().to_vec();
        out.extend_from_slice(&self.set.state());
        out
    }

    /// An accumulator of type `ty` from `state`'s bytes; None when they are not that.
    pub fn from_state(ty: GgmlType, bytes: &[u8]) -> Option<QuantErrorMeter> {
        let row_len = u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?);
        let (set, rest) = QuantErrorSet::from_state(&[ty], row_len, &bytes[8..])?;
        (rest.is_empty() && set.is_present(0)).then_some(QuantErrorMeter { row_len, set })
    }

    pub fn report(&self) -> QuantErrorReport {
        let ty = self.set.types()[0];
        self.set.report(0).unwrap_or(QuantErrorReport {
            ty,
            n_values: 0,
            bits_per_weight: ty.bits_per_weight(),
            rmse: f64::NAN,
            max_abs_err: f64::NAN,
            relative_rmse: f64::NAN,
            cosine: f64::NAN,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q8_0_on_a_ramp_has_small_error() {
        let values: Vec<f32> = (0..256).map(|i| (i as f32 - 128.0) / 64.0).collect();
        let mut acc = QuantErrorMeter::new(GgmlType::Q8_0);
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
            let mut whole = QuantErrorMeter::for_rows(ty, 256);
            whole.add(&values).unwrap();
            let want = whole.report();
            for cuts in [&[256][..], &[2560, 5120, 7680], &[256 * 39]] {
                let mut merged = QuantErrorMeter::for_rows(ty, 256);
                let mut start = 0;
                for &end in cuts.iter().chain([values.len()].iter()) {
                    let mut part = QuantErrorMeter::for_rows(ty, 256);
                    part.add(&values[start..end]).unwrap();
                    let part = QuantErrorMeter::from_state(ty, &part.state()).unwrap();
                    merged.merge(&part);
                    start = end;
                }
                assert_eq!(merged.report(), want, "{ty} {cuts:?}");
            }
        }
        assert!(QuantErrorMeter::from_state(GgmlType::Q8_0, &[0; 10]).is_none());
    }

    #[test]
    fn zeros_are_exact() {
        let mut acc = QuantErrorMeter::new(GgmlType::Q4_K);
        acc.add(&[0.0; 256]).unwrap();
        let r = acc.report();
        assert_eq!((r.rmse, r.relative_rmse, r.cosine), (0.0, 0.0, 1.0));
    }
}
