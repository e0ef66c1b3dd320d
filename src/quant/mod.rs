//! Dequantization: whole blocks of a ggml type in, f32 out, bit-exact with ggml's `to_float`.
//!
//! One kernel per type per ISA, all with the signature of [`scalar::KernelFn`]. This module
//! checks lengths once, then calls the kernel of the chosen ISA.

mod aligned;
pub mod scalar;

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "aarch64")]
mod neon;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(crate) mod simd128;

use std::sync::OnceLock;

use crate::error::{Error, ErrorKind, Result};
use crate::types::GgmlType;

pub use aligned::AlignedF32;
pub use scalar::KernelFn;

/// An instruction set whose kernels can be chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// Portable reference kernels.
    Scalar,
    /// x86_64 AVX2 with FMA and F16C (chosen at run time).
    Avx2,
    /// aarch64 NEON (always present there).
    Neon,
    /// WebAssembly SIMD (when the build enables `simd128`).
    Simd128,
}

impl Kernel {
    /// Every kernel, best last.
    pub const ALL: [Kernel; 4] = [Kernel::Scalar, Kernel::Avx2, Kernel::Neon, Kernel::Simd128];

    /// Its name as used by `GGUF_LENS_KERNEL`.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Scalar => "scalar",
            Kernel::Avx2 => "avx2",
            Kernel::Neon => "neon",
            Kernel::Simd128 => "simd128",
        }
    }

    /// True when this build and CPU can run the kernel.
    pub fn is_available(self) -> bool {
        match self {
            Kernel::Scalar => true,
            Kernel::Avx2 => avx2_detected(),
            Kernel::Neon => cfg!(target_arch = "aarch64"),
            Kernel::Simd128 => cfg!(all(target_arch = "wasm32", target_feature = "simd128")),
        }
    }

    /// The kernels this build and CPU can run.
    pub fn available() -> Vec<Kernel> {
        Kernel::ALL
            .into_iter()
            .filter(|k| k.is_available())
            .collect()
    }

    /// The kernel named `name`, if this build and CPU can run it.
    pub fn from_name(name: &str) -> Result<Kernel> {
        Kernel::ALL
            .into_iter()
            .find(|k| k.name() == name && k.is_available())
            .ok_or_else(|| {
                Error::new(ErrorKind::KernelUnavailable {
                    kernel: name.to_string(),
                })
            })
    }

    /// The best kernel this build and CPU can run.
    pub fn best() -> Kernel {
        Kernel::ALL
            .into_iter()
            .rev()
            .find(|k| k.is_available())
            .unwrap_or(Kernel::Scalar)
    }

    /// The kernel `GGUF_LENS_KERNEL` names, else the best one. Read once per process.
    pub fn auto() -> Result<Kernel> {
        static CHOSEN: OnceLock<Result<Kernel>> = OnceLock::new();
        CHOSEN
            .get_or_init(|| match std::env::var("GGUF_LENS_KERNEL") {
                Ok(name) if !name.is_empty() => Kernel::from_name(&name),
                _ => Ok(Kernel::best()),
            })
            .clone()
    }

    /// This ISA's kernel for `ty`: its own where it has one, else the scalar one. Asking for a
    /// kernel the CPU cannot run gives the scalar one.
    pub fn kernel_for(self, ty: GgmlType) -> KernelFn {
        self.own_kernel(ty)
            .unwrap_or_else(|| scalar::kernel_for(ty))
    }

    /// This ISA's own (vector) kernel for `ty`, if it has one and the CPU can run it.
    pub fn own_kernel(self, ty: GgmlType) -> Option<KernelFn> {
        match self {
            Kernel::Scalar => None,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 if avx2_detected() => avx2::kernel_for(ty),
            #[cfg(target_arch = "aarch64")]
            Kernel::Neon => neon::kernel_for(ty),
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Kernel::Simd128 => simd128::kernel_for(ty),
            _ => {
                let _ = ty;
                None
            }
        }
    }
}

/// Whether the process runs its wasm32 simd128 loops (a build with `simd128` where
/// [`Kernel::auto`] chose [`Kernel::Simd128`]): the one switch for the loops outside `quant/`.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(crate) fn simd128_chosen() -> bool {
    static CHOSEN: OnceLock<bool> = OnceLock::new();
    *CHOSEN.get_or_init(|| matches!(Kernel::auto(), Ok(Kernel::Simd128)))
}

/// Whether the process runs its x86_64 AVX2 loops: the one switch that dequantization,
/// the quantizers' searches and the statistics loops all ask, so `GGUF_LENS_KERNEL=scalar`
/// turns every vector loop off at once. True when [`Kernel::auto`] chose [`Kernel::Avx2`].
#[inline]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) fn avx2_chosen() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static CHOSEN: OnceLock<bool> = OnceLock::new();
        *CHOSEN.get_or_init(|| matches!(Kernel::auto(), Ok(Kernel::Avx2)))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// AVX2, FMA, F16C and POPCNT, detected once: every x86_64 CPU with the first three has the
/// fourth, and the statistics loops use it beside AVX2.
fn avx2_detected() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static DETECTED: OnceLock<bool> = OnceLock::new();
        *DETECTED.get_or_init(|| {
            is_x86_feature_detected!("avx2")
                && is_x86_feature_detected!("fma")
                && is_x86_feature_detected!("f16c")
                && is_x86_feature_detected!("popcnt")
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
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

/// Dequantizes whole blocks of `ty` into `out` with the best kernel for this CPU (or the one
/// `GGUF_LENS_KERNEL` names).
pub fn dequantize(ty: GgmlType, bytes: &[u8], out: &mut [f32]) -> Result<()> {
    dequantize_with(Kernel::auto()?, ty, bytes, out)
}
