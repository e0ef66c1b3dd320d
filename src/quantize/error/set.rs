//! The error of several types on the same values, fed once: the values go through in slices
//! that stay in L2 (each type quantizes, dequantizes and compares a slice before the next type
//! reads it, instead of streaming the whole chunk once per type), their Σx² summed once for all
//! types. Per type only Σe² and Σx·e are summed (e = x − y, `lanes.rs`):
//! Σy² = Σx² − 2Σx·e + Σe² and Σx·y = Σx² − Σx·e, exactly, in the exact sums.

use super::exact_sum::ExactSum;
use super::lanes::{compare, sum_squares, Extremes};
use super::QuantErrorReport;
use crate::error::{Error, ErrorKind};
use crate::quantize::round_trip::{is_plain, round_trip};
use crate::quantize::{
    quantize_iq4_pair, quantize_row, quantize_row_plain, quantized_size, shifted,
};
use crate::types::GgmlType;

/// Values per slice: 64 KiB of f32, a multiple of every group.
const SLICE: usize = 16384;
/// The most values summed in f64 before an exact add (a divisor of SLICE).
const GROUP_MAX: u64 = 4096;

/// One type's sums.
#[derive(Debug, Clone, Default, PartialEq)]
struct Sums {
    err2: ExactSum,
    xe: ExactSum,
    ext: Extremes,
}

#[derive(Debug, Clone)]
enum Status {
    Live(Box<Sums>),
    /// Its block does not divide the row length.
    Absent,
    /// Quantizing failed (offsets from the start of the values of the `add` that failed).
    Failed(Error),
    /// Dropped by a part absorbed from elsewhere (which knows why).
    Dropped,
}

/// The running error sums of quantizing the same rows to each of several types.
#[derive(Debug, Clone)]
pub struct QuantErrorSet {
    types: Vec<GgmlType>,
    status: Vec<Status>,
    /// Values summed in f64 before each exact add: gcd(row length, GROUP_MAX), whole blocks of
    /// every type present; the parts merged must be whole rows.
    group: usize,
    n: u64,
    sum_x2: ExactSum,
    bytes: Vec<u8>,
    bytes2: Vec<u8>,
    back: Vec<f32>,
}

/// Why type `ty` cannot quantize rows of `row_len` values, when its block does not divide them.
pub fn block_mismatch(ty: GgmlType, row_len: u64) -> Option<String> {
    let block = u64::from(ty.block_size());
    (block == 0 || row_len % block != 0).then(|| block_mismatch_message(ty, row_len))
}

/// The one wording of a type whose block does not divide the row length.
pub fn block_mismatch_message(ty: GgmlType, row_len: u64) -> String {
    let block = ty.block_size();
    format!("row length {row_len} is not a multiple of its block of {block}")
}

impl QuantErrorSet {
    /// For rows of `row_len` values; a type whose block does not divide it is absent.
    pub fn new(types: &[GgmlType], row_len: u64) -> QuantErrorSet {
        let status = types
            .iter()
            .map(|&ty| {
                if block_mismatch(ty, row_len).is_none() && row_len > 0 {
                    Status::Live(Box::default())
                } else {
                    Status::Absent
                }
            })
            .collect();
        let group = if row_len > 0 {
            gcd(row_len, GROUP_MAX)
        } else {
            1
        };
        QuantErrorSet {
            types: types.to_vec(),
            status,
            group: group as usize,
            n: 0,
            sum_x2: ExactSum::default(),
            bytes: Vec::new(),
            bytes2: Vec::new(),
            back: Vec::new(),
        }
    }

    pub fn types(&self) -> &[GgmlType] {
        &self.types
    }

    /// Whether type `i`'s block divides the row length.
    pub fn is_present(&self, i: usize) -> bool {
        !matches!(self.status[i], Status::Absent)
    }

    /// Why type `i` failed, if it did in an `add` here.
    pub fn failure(&self, i: usize) -> Option<&Error> {
        match &self.status[i] {
            Status::Failed(e) => Some(e),
            _ => None,
        }
    }

    /// Stops measuring type `i` (its reason is the caller's).
    pub fn drop_type(&mut self, i: usize) {
        if let Status::Live(_) = self.status[i] {
            self.status[i] = Status::Dropped;
        }
    }

    fn live(&self, i: usize) -> bool {
        matches!(self.status[i], Status::Live(_))
    }

    /// Adds `values`, whole rows. A type that fails to quantize them is dropped with its error
    /// (`failure`); the others go on. Err only when `values` is not whole groups.
    pub fn add(&mut self, values: &[f32]) -> Result<(), Error> {
        if values.len() % self.group != 0 {
            return Err(Error::new(ErrorKind::QuantizeRowLength {
                ty: self.types.first().copied().unwrap_or(GgmlType::F32),
                len: values.len(),
                block: self.group,
            }));
        }
        self.n += values.len() as u64;
        if !(0..self.types.len()).any(|i| self.live(i)) {
            return Ok(());
        }
        for (k, slice) in values.chunks(SLICE).enumerate() {
            let sum_x2 = &mut self.sum_x2;
            sum_squares(slice, self.group, |s| sum_x2.add(s));
            self.add_slice(slice, k * SLICE);
        }
        Ok(())
    }

    /// Quantizes, dequantizes and compares one slice for every live type. A plain slice (all
    /// finite, below f16's largest magnitude) takes the direct round trip where a type has one
    /// (`round_trip.rs`: the same values without the bytes); TQ1_0 and TQ2_0, whose round trips
    /// are the same values, are compared once when their sums so far are equal.
    fn add_slice(&mut self, slice: &[f32], offset: usize) {
        let plain = is_plain(slice);
        let ternary = self.same_sums(GgmlType::TQ1_0, GgmlType::TQ2_0);
        // IQ4_NL and IQ4_XS share their per-block scale search.
        let nl = self.types.iter().position(|&t| t == GgmlType::IQ4_NL);
        let xs = self.types.iter().position(|&t| t == GgmlType::IQ4_XS);
        let pair = match (nl, xs) {
            (Some(a), Some(b)) if a < b && self.live(a) && self.live(b) => Some((a, b)),
            _ => None,
        };
        let mut paired_xs = false;
        for i in 0..self.types.len() {
            if !self.live(i) {
                continue;
            }
            let ty = self.types[i];
            if let Some((first, second)) = ternary {
                if i == second && self.live(first) {
                    self.status[i] = self.status[first].clone();
                    continue;
                }
            }
            self.back.resize(slice.len(), 0.0);
            if plain && round_trip(ty, slice, &mut self.back) {
                self.compare(i, slice);
                continue;
            }
            let quantized = match pair {
                Some((a, b)) if i == a => {
                    let mut bytes2 = std::mem::take(&mut self.bytes2);
                    let [r_nl, r_xs] = self.quantize_pair(slice, &mut bytes2, plain);
                    self.bytes2 = bytes2;
                    if let Err(e) = r_xs {
                        self.status[b] = Status::Failed(shifted(e, offset));
                    } else {
                        paired_xs = true;
                    }
                    r_nl
                }
                Some((_, b)) if i == b && paired_xs => {
                    // Quantized with IQ4_NL: its bytes wait in bytes2.
                    std::mem::swap(&mut self.bytes, &mut self.bytes2);
                    Ok(())
                }
                _ => self.quantize(ty, slice, plain),
            };
            if let Err(e) = quantized {
                self.status[i] = Status::Failed(shifted(e, offset));
                continue;
            }
            // Cannot fail: the sizes match by construction, and every quantized type dequantizes.
            if crate::quant::dequantize(ty, &self.bytes, &mut self.back).is_err() {
                self.status[i] = Status::Failed(Error::new(ErrorKind::CannotQuantize { ty }));
                continue;
            }
            self.compare(i, slice);
        }
    }

    /// Adds type `i`'s errors of `slice` against its round trip in `back`.
    fn compare(&mut self, i: usize, slice: &[f32]) {
        let Status::Live(sums) = &mut self.status[i] else {
            return;
        };
        let Sums { err2, xe, ext } = &mut **sums;
        compare(slice, &self.back, self.group, ext, |a, b| {
            err2.add(a);
            xe.add(b);
        });
    }

    /// The positions of types `a` and `b` (in list order) when both are live with equal sums.
    fn same_sums(&self, a: GgmlType, b: GgmlType) -> Option<(usize, usize)> {
        let ia = self.types.iter().position(|&t| t == a)?;
        let ib = self.types.iter().position(|&t| t == b)?;
        let (first, second) = (ia.min(ib), ia.max(ib));
        match (&self.status[first], &self.status[second]) {
            (Status::Live(x), Status::Live(y)) if x == y => Some((first, second)),
            _ => None,
        }
    }

    /// `ty`'s bytes of `slice` into `bytes` (`plain`: known finite and below 65504).
    fn quantize(&mut self, ty: GgmlType, slice: &[f32], plain: bool) -> Result<(), Error> {
        let size = quantized_size(ty, slice.len())?;
        self.bytes.resize(size, 0);
        if plain {
            quantize_row_plain(ty, slice, &mut self.bytes)
        } else {
            quantize_row(ty, slice, &mut self.bytes)
        }
    }

    /// IQ4_NL into `bytes`, IQ4_XS into `xs`.
    fn quantize_pair(
        &mut self,
        slice: &[f32],
        xs: &mut Vec<u8>,
        plain: bool,
    ) -> [Result<(), Error>; 2] {
        let sizes = (
            quantized_size(GgmlType::IQ4_NL, slice.len()),
            quantized_size(GgmlType::IQ4_XS, slice.len()),
        );
        let (Ok(a), Ok(b)) = sizes else {
            return [sizes.0.map(drop), sizes.1.map(drop)];
        };
        self.bytes.resize(a, 0);
        xs.resize(b, 0);
        quantize_iq4_pair(slice, &mut self.bytes, xs, plain)
    }

    /// Adds another part's sums (a set of the same types and row length, over other whole rows):
    /// the same bits as adding its values here, in any order. A type not measured there is
    /// dropped here.
    pub fn merge(&mut self, other: &QuantErrorSet) {
        self.n += other.n;
        self.sum_x2.merge(&other.sum_x2);
        for (mine, theirs) in self.status.iter_mut().zip(&other.status) {
            match (&mut *mine, theirs) {
                (Status::Live(a), Status::Live(b)) => {
                    a.err2.merge(&b.err2);
                    a.xe.merge(&b.xe);
                    a.ext.max = if a.ext.max < b.ext.max {
                        b.ext.max
                    } else {
                        a.ext.max
                    };
                    a.ext.min = if b.ext.min < a.ext.min {
                        b.ext.min
                    } else {
                        a.ext.min
                    };
                }
                (Status::Live(_), _) => *mine = Status::Dropped,
                _ => {}
            }
        }
    }

    /// The sums as bytes (for another thread or worker; `from_state` reads them back): the
    /// count, Σx², then per type 1 and its sums or 0.
    pub fn state(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&self.n.to_le_bytes());
        self.sum_x2.to_bytes(&mut out);
        for s in &self.status {
            if let Status::Live(s) = s {
                out.push(1);
                s.err2.to_bytes(&mut out);
                s.xe.to_bytes(&mut out);
                out.extend_from_slice(&s.ext.max.to_le_bytes());
                out.extend_from_slice(&s.ext.min.to_le_bytes());
            } else {
                out.push(0);
            }
        }
        out
    }

    /// A set of `types` for rows of `row_len` from `state`'s bytes (the types not measured there
    /// are dropped, or absent), and the bytes after it; None when they are not that.
    pub fn from_state<'a>(
        types: &[GgmlType],
        row_len: u64,
        bytes: &'a [u8],
    ) -> Option<(QuantErrorSet, &'a [u8])> {
        let mut set = QuantErrorSet::new(types, row_len);
        let mut at = 0;
        let mut take = |n: usize| {
            let b = bytes.get(at..at + n)?;
            at += n;
            Some(b)
        };
        set.n = u64::from_le_bytes(take(8)?.try_into().ok()?);
        set.sum_x2 = ExactSum::from_bytes(take(ExactSum::ENCODED_LEN)?)?;
        for status in set.status.iter_mut() {
            let live = take(1)?[0];
            match (live, &mut *status) {
                (1, Status::Live(s)) => {
                    s.err2 = ExactSum::from_bytes(take(ExactSum::ENCODED_LEN)?)?;
                    s.xe = ExactSum::from_bytes(take(ExactSum::ENCODED_LEN)?)?;
                    s.ext.max = f64::from_le_bytes(take(8)?.try_into().ok()?);
                    s.ext.min = f64::from_le_bytes(take(8)?.try_into().ok()?);
                }
                (0, Status::Live(_)) => *status = Status::Dropped,
                (0, Status::Absent) => {}
                _ => return None,
            }
        }
        Some((set, &bytes[at..]))
    }

    /// Type `i`'s metrics, None unless it was measured over every value added.
    pub fn report(&self, i: usize) -> Option<QuantErrorReport> {
        let Status::Live(s) = &self.status[i] else {
            return None;
        };
        let ty = self.types[i];
        let n = self.n.max(1) as f64;
        let neg_xe = s.xe.negated();
        let mut y2 = self.sum_x2.clone();
        y2.merge(&s.err2);
        y2.merge(&neg_xe);
        y2.merge(&neg_xe);
        let mut xy = self.sum_x2.clone();
        xy.merge(&neg_xe);
        let (sum_err2, sum_x2, sum_y2, sum_xy) =
            (s.err2.value(), self.sum_x2.value(), y2.value(), xy.value());
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
        Some(QuantErrorReport {
            ty,
            n_values: self.n,
            bits_per_weight: ty.bits_per_weight(),
            rmse,
            max_abs_err: s.ext.abs_max(),
            relative_rmse,
            cosine,
        })
    }

    /// Every type's [`report`](Self::report), in order.
    pub fn reports(&self) -> Vec<Option<QuantErrorReport>> {
        (0..self.types.len()).map(|i| self.report(i)).collect()
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
    use crate::quantize::{QuantErrorMeter, SUPPORTED};

    fn values(n: usize, seed: u32) -> Vec<f32> {
        let mut x = seed;
        (0..n)
            .map(|i| {
                x = x.wrapping_mul(1664525).wrapping_add(1013904223);
                let v = (x >> 8) as f32 / (1 << 24) as f32 - 0.5;
                // Some blocks far larger or smaller than the rest, and exact zeros.
                match (i / 256) % 5 {
                    1 => v * 1e4,
                    2 => v * 1e-6,
                    3 if i % 7 == 0 => 0.0,
                    _ => v,
                }
            })
            .collect()
    }

    #[test]
    fn iq4_pair_equals_each_alone() {
        let mut x = values(256 * 12, 7);
        // An f16 scale overflow: IQ4_NL's block scale is about max/127, IQ4_XS's super-block
        // scale 32× less, so 1e7 overflows IQ4_NL only, 5e8 both.
        for (case, big) in [
            (0, None),
            (1, Some((3 * 256 + 40, 1e7))),
            (2, Some((9 * 256 + 1, 5e8))),
        ] {
            if let Some((i, v)) = big {
                x[i] = v;
            }
            let mut nl = vec![0u8; 144 * 12];
            let mut xs = vec![0u8; 136 * 12];
            let got = quantize_iq4_pair(&x, &mut nl, &mut xs, is_plain(&x));
            let mut nl1 = vec![0u8; 144 * 12];
            let mut xs1 = vec![0u8; 136 * 12];
            let want = [
                quantize_row(GgmlType::IQ4_NL, &x, &mut nl1),
                quantize_row(GgmlType::IQ4_XS, &x, &mut xs1),
            ];
            assert_eq!(got, want, "case {case}");
            assert_eq!(
                (want[0].is_ok(), want[1].is_ok()),
                [(true, true), (false, true), (false, false)][case]
            );
            if want[0].is_ok() {
                assert_eq!(nl, nl1, "case {case}");
            }
            if want[1].is_ok() {
                assert_eq!(xs, xs1, "case {case}");
            }
        }
        let mut nan = values(512, 3);
        nan[300] = f32::NAN;
        let got = quantize_iq4_pair(&nan, &mut vec![0u8; 288], &mut vec![0u8; 272], false);
        let want = [
            quantize_row(GgmlType::IQ4_NL, &nan, &mut [0u8; 288]),
            quantize_row(GgmlType::IQ4_XS, &nan, &mut [0u8; 272]),
        ];
        // NaN ≠ NaN: compared as text.
        assert_eq!(format!("{got:?}"), format!("{want:?}"));
    }

    #[test]
    fn a_set_measures_each_type_as_alone() {
        let row_len = 768;
        let x = values(row_len * 30, 11);
        let mut set = QuantErrorSet::new(&SUPPORTED, row_len as u64);
        // Uneven feeds of whole rows, beyond one slice.
        set.add(&x[..row_len * 23]).unwrap();
        set.add(&x[row_len * 23..]).unwrap();
        for (i, &ty) in SUPPORTED.iter().enumerate() {
            let mut one = QuantErrorMeter::for_rows(ty, row_len as u64);
            one.add(&x).unwrap();
            assert_eq!(set.report(i), Some(one.report()), "{ty}");
        }
        // Against a plain f64 sum.
        let q = SUPPORTED.iter().position(|&t| t == GgmlType::Q4_K).unwrap();
        let mut y = vec![0u8; quantized_size(GgmlType::Q4_K, x.len()).unwrap()];
        quantize_row(GgmlType::Q4_K, &x, &mut y).unwrap();
        let mut back = vec![0f32; x.len()];
        crate::quant::dequantize(GgmlType::Q4_K, &y, &mut back).unwrap();
        let (mut e2, mut x2, mut y2, mut xy, mut max) = (0.0f64, 0.0, 0.0, 0.0, 0.0f64);
        for (&a, &b) in x.iter().zip(&back) {
            // max |e| is of the f32 difference, as measured.
            max = max.max(f64::from((a - b).abs()));
            let (a, b) = (f64::from(a), f64::from(b));
            e2 += (a - b) * (a - b);
            x2 += a * a;
            y2 += b * b;
            xy += a * b;
        }
        let r = set.report(q).unwrap();
        // The f32 runs' bound (lanes.rs): 10·2⁻²⁴ relative for the sums, half that for the roots.
        let close = |got: f64, want: f64| (got - want).abs() <= 6e-7 * want.abs();
        assert!(close(r.rmse, (e2 / x.len() as f64).sqrt()), "{r:?}");
        assert!(close(r.relative_rmse, (e2 / x2).sqrt()), "{r:?}");
        assert!(close(r.cosine, xy / (x2.sqrt() * y2.sqrt())), "{r:?}");
        assert_eq!(r.max_abs_err, max);
    }

    #[test]
    fn a_failing_type_drops_out_alone() {
        let mut x = values(256 * 8, 5);
        x[256 * 6 + 3] = 1.0e7; // IQ4_NL's block scale overflows f16; IQ4_XS's does not
        let types = [GgmlType::IQ4_NL, GgmlType::IQ4_XS, GgmlType::Q4_K];
        let mut set = QuantErrorSet::new(&types, 512);
        set.add(&x[..1024]).unwrap();
        set.add(&x[1024..]).unwrap();
        let mut nl = vec![0u8; 144 * 4];
        let want = quantize_row(GgmlType::IQ4_NL, &x[1024..], &mut nl).unwrap_err();
        assert_eq!(set.failure(0), Some(&want));
        assert!(set.report(0).is_none());
        for (i, &ty) in types.iter().enumerate().skip(1) {
            let mut one = QuantErrorMeter::for_rows(ty, 512);
            one.add(&x).unwrap();
            assert_eq!(set.report(i), Some(one.report()), "{ty}");
        }
        let state = set.state();
        let (back, rest) = QuantErrorSet::from_state(&types, 512, &state).unwrap();
        assert!(rest.is_empty());
        assert_eq!(back.reports(), set.reports());
    }
}
