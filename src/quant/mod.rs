//! Dequantization: whole blocks of a ggml type in, f32 out, bit-exact with ggml's `to_float`.
//!
//! One kernel per type per ISA, all with the signature of [`scalar::KernelFn`]. This module
//! checks lengths once, then calls the kernel of the chosen ISA.

pub mod scalar;

use crate::error::{Error, ErrorKind, Result};
use crate::types::GgmlType;

pub use scalar::KernelFn;

/// An instruction set whose kernels can be chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// Portable reference kernels.
    Scalar,
}

impl Kernel {
    /// Its name as used by `GGUF_LENS_KERNEL`.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Scalar => "scalar",
        }
    }

    /// The kernel named `name`, if this build and CPU can run it.
    pub fn from_name(name: &str) -> Result<Kernel> {
        match name {
            "scalar" => Ok(Kernel::Scalar),
            _ => Err(Error::new(ErrorKind::KernelUnavailable {
                kernel: name.to_string(),
            })),
        }
    }

    /// The best kernel for this CPU, or the one `GGUF_LENS_KERNEL` names.
    pub fn auto() -> Result<Kernel> {
        match std::env::var("GGUF_LENS_KERNEL") {
            Ok(name) if !name.is_empty() => Kernel::from_name(&name),
            _ => Ok(Kernel::Scalar),
        }
    }

    /// This ISA's kernel for `ty`.
    pub fn kernel_for(self, ty: GgmlType) -> KernelFn {
        match self {
            Kernel::Scalar => scalar::kernel_for(ty),
        }
    }
}

/// Number of blocks in `bytes` of type `ty`, checking that `out` holds exactly their elements.
fn check_lengths(ty: GgmlType, bytes: &[u8], out: &[f32]) -> Result<()> {
    let type_size = ty.type_size() as usize;
    let block_size = ty.block_size() as usize;
    if bytes.len() % type_size != 0 {
        return Err(Error::new(ErrorKind::BadLength {
            what: format!("{} data", ty.name()),
            len: bytes.len() as u64,
            expected: (bytes.len() / type_size * type_size) as u64,
        }));
    }
    let n_elements = bytes.len() / type_size * block_size;
    if out.len() != n_elements {
        return Err(Error::new(ErrorKind::BadLength {
            what: "output buffer".to_string(),
            len: out.len() as u64,
            expected: n_elements as u64,
        }));
    }
    Ok(())
}

/// Dequantizes whole blocks of `ty` into `out` (one f32 per element) with the given kernel.
pub fn dequantize_with(kernel: Kernel, ty: GgmlType, bytes: &[u8], out: &mut [f32]) -> Result<()> {
    check_lengths(ty, bytes, out)?;
    (kernel.kernel_for(ty))(bytes, out);
    Ok(())
}

/// Copies big-endian tensor data of `ty` into little-endian order. Only the plain types (one
/// number per element) have one agreed byte order for their data; quantized blocks written by
/// big-endian tools differ by tool, so they are refused rather than guessed.
pub fn big_endian_to_little(ty: GgmlType, bytes: &[u8]) -> Result<Vec<u8>> {
    if !ty.is_plain() {
        return Err(Error::new(ErrorKind::BigEndianData {
            type_name: ty.name(),
        }));
    }
    let width = ty.type_size() as usize;
    let mut out = bytes.to_vec();
    for element in out.chunks_exact_mut(width) {
        element.reverse();
    }
    Ok(out)
}

/// Dequantizes whole blocks of `ty` into `out` with the scalar reference kernels.
pub fn dequantize(ty: GgmlType, bytes: &[u8], out: &mut [f32]) -> Result<()> {
    dequantize_with(Kernel::Scalar, ty, bytes, out)
}
