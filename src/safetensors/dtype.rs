//! safetensors dtypes: the names the format allows, their bit sizes, and conversion of the
//! plain ones to f32.

use crate::error::{Error, ErrorKind, Result};

/// An element type of a safetensors tensor (the `dtype` string of its header entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    Bool,
    F4,
    F6E2M3,
    F6E3M2,
    U8,
    I8,
    F8E5M2,
    F8E4M3,
    F8E8M0,
    I16,
    U16,
    F16,
    BF16,
    I32,
    U32,
    F32,
    C64,
    F64,
    I64,
    U64,
}

const ALL: [(Dtype, &str, u32); 20] = [
    (Dtype::Bool, "BOOL", 8),
    (Dtype::F4, "F4", 4),
    (Dtype::F6E2M3, "F6_E2M3", 6),
    (Dtype::F6E3M2, "F6_E3M2", 6),
    (Dtype::U8, "U8", 8),
    (Dtype::I8, "I8", 8),
    (Dtype::F8E5M2, "F8_E5M2", 8),
    (Dtype::F8E4M3, "F8_E4M3", 8),
    (Dtype::F8E8M0, "F8_E8M0", 8),
    (Dtype::I16, "I16", 16),
    (Dtype::U16, "U16", 16),
    (Dtype::F16, "F16", 16),
    (Dtype::BF16, "BF16", 16),
    (Dtype::I32, "I32", 32),
    (Dtype::U32, "U32", 32),
    (Dtype::F32, "F32", 32),
    (Dtype::C64, "C64", 64),
    (Dtype::F64, "F64", 64),
    (Dtype::I64, "I64", 64),
    (Dtype::U64, "U64", 64),
];

impl Dtype {
    /// The dtype named `name` in a header (the safetensors crate's spelling).
    pub fn from_name(name: &str) -> Option<Dtype> {
        ALL.iter().find(|(_, n, _)| *n == name).map(|(d, _, _)| *d)
    }

    /// The header spelling, e.g. `"BF16"`.
    pub fn name(self) -> &'static str {
        ALL.iter().find(|(d, _, _)| *d == self).map_or("?", |e| e.1)
    }

    /// Bits per element.
    pub fn bits(self) -> u32 {
        ALL.iter().find(|(d, _, _)| *d == self).map_or(0, |e| e.2)
    }

    /// Whether [`to_f32`] converts this dtype.
    pub fn is_plain(self) -> bool {
        !matches!(
            self,
            Dtype::F4 | Dtype::F6E2M3 | Dtype::F6E3M2 | Dtype::F8E8M0 | Dtype::C64
        )
    }
}

macro_rules! convert {
    ($bytes:expr, $out:expr, $n:literal, $f:expr) => {
        for (chunk, o) in $bytes.chunks_exact($n).zip($out.iter_mut()) {
            let b: [u8; $n] = chunk.try_into().unwrap_or([0; $n]);
            *o = $f(b);
        }
    };
}

/// Converts little-endian elements of `dtype` to f32 as torch's `.to(torch.float32)` does (the
/// oracle in fixtures/gptq/plain_dtypes): floats widen exactly or round to nearest (F64),
/// integers round to nearest, BOOL is 0 or 1, F8 formats decode exactly (E4M3 is the `fn`
/// variant: no infinities, S.1111.111 is NaN).
pub fn to_f32(dtype: Dtype, name: &str, bytes: &[u8], out: &mut [f32]) -> Result<()> {
    if !dtype.is_plain() {
        return Err(Error::new(ErrorKind::UnsupportedDtype {
            name: name.to_string(),
            dtype: dtype.name(),
        }));
    }
    let size = (dtype.bits() / 8) as usize;
    let expected = out.len().saturating_mul(size);
    if bytes.len() != expected {
        return Err(Error::new(ErrorKind::BadLength {
            what: format!("data of tensor {name}"),
            len: bytes.len() as u64,
            expected: expected as u64,
        }));
    }
    match dtype {
        Dtype::Bool => convert!(bytes, out, 1, |b: [u8; 1]| f32::from(u8::from(b[0] != 0))),
        Dtype::U8 => convert!(bytes, out, 1, |b: [u8; 1]| f32::from(b[0])),
        Dtype::I8 => convert!(bytes, out, 1, |b: [u8; 1]| f32::from(b[0] as i8)),
        Dtype::F8E5M2 => convert!(bytes, out, 1, |b: [u8; 1]| {
            half::f16::from_bits(u16::from(b[0]) << 8).to_f32()
        }),
        Dtype::F8E4M3 => {
            #[allow(unused_mut)]
            let mut done = 0;
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            if crate::quant::simd128_chosen() {
                done = super::simd128::e4m3fn(bytes, out);
            }
            let (bytes, out) = (&bytes[done..], &mut out[done..]);
            convert!(bytes, out, 1, |b: [u8; 1]| f32::from_bits(
                E4M3FN[b[0] as usize]
            ))
        }
        Dtype::I16 => convert!(bytes, out, 2, |b| f32::from(i16::from_le_bytes(b))),
        Dtype::U16 => convert!(bytes, out, 2, |b| f32::from(u16::from_le_bytes(b))),
        Dtype::F16 => convert!(bytes, out, 2, |b| half::f16::from_le_bytes(b).to_f32()),
        // A bit shift, as torch and ggml do (it keeps signalling NaNs signalling).
        Dtype::BF16 => convert!(bytes, out, 2, |b| {
            f32::from_bits(u32::from(u16::from_le_bytes(b)) << 16)
        }),
        Dtype::I32 => convert!(bytes, out, 4, |b| i32::from_le_bytes(b) as f32),
        Dtype::U32 => convert!(bytes, out, 4, |b| u32::from_le_bytes(b) as f32),
        Dtype::F32 => convert!(bytes, out, 4, f32::from_le_bytes),
        Dtype::F64 => convert!(bytes, out, 8, |b| f64::from_le_bytes(b) as f32),
        Dtype::I64 => convert!(bytes, out, 8, |b| i64::from_le_bytes(b) as f32),
        Dtype::U64 => convert!(bytes, out, 8, |b| u64::from_le_bytes(b) as f32),
        _ => {}
    }
    Ok(())
}

/// OCP FP8 E4M3 ("fn": finite, one NaN pattern per sign).
/// The f32 bits of every E4M3 byte (a look-up: the arithmetic per byte cost more than the
/// rest of a dequantization).
static E4M3FN: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = e4m3fn_bits(b as u8);
        b += 1;
    }
    table
};

/// One E4M3 byte's f32 bits: normal values move their exponent (bias 7 to 127) and mantissa
/// into place, the subnormals `m · 2^-9` are normalised, and S.1111.111 is NaN with the
/// mantissa bits at the top of f32's, as torch converts (0x7FF00000).
const fn e4m3fn_bits(b: u8) -> u32 {
    let sign = ((b & 0x80) as u32) << 24;
    let em = (b & 0x7f) as u32;
    if em == 0x7f {
        return sign | 0x7FF0_0000;
    }
    if em >= 8 {
        return sign | ((em << 20) + (120 << 23));
    }
    if em == 0 {
        return sign;
    }
    // m · 2^-9 with m in 1..8: the top bit p of m is the implicit one.
    let p = 31 - em.leading_zeros();
    sign | ((127 - 9 + p) << 23) | ((em - (1 << p)) << (23 - p))
}

#[cfg(test)]
mod e4m3_tests {
    use super::*;

    /// The table is the format's definition, `(-1)^s · (1 + m/8) · 2^(e−7)` (subnormals
    /// `m/8 · 2^-6`), for every byte; the NaNs as torch gives them.
    #[test]
    fn the_e4m3_table_is_the_formula() {
        for b in 0..=255u8 {
            let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
            let (exp, man) = (i32::from((b >> 3) & 0xF), f32::from(b & 7));
            let want = if b & 0x7f == 0x7f {
                f32::from_bits((u32::from(b & 0x80) << 24) | 0x7FF0_0000)
            } else if exp == 0 {
                sign * (man / 8.0 * 2f32.powi(-6))
            } else {
                sign * ((1.0 + man / 8.0) * 2f32.powi(exp - 7))
            };
            assert_eq!(E4M3FN[b as usize], want.to_bits(), "byte {b:#04x}");
        }
    }

    /// The simd128 runs give the table's bits for every byte, in every lane of a run.
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    #[test]
    fn e4m3_runs_are_the_table() {
        let bytes: Vec<u8> = (0..=255u8).chain((0..=255u8).rev()).chain(0..7).collect();
        let mut out = vec![0f32; bytes.len()];
        let done = super::super::simd128::e4m3fn(&bytes, &mut out);
        assert_eq!(done, 512);
        for (b, o) in bytes.iter().zip(&out[..done]) {
            assert_eq!(o.to_bits(), E4M3FN[*b as usize], "byte {b:#04x}");
        }
    }
}
