//! The hot loops of the statistics, one module per instruction set as `quant/` has them:
//! `avx2.rs` (x86_64) and `simd128.rs` (wasm32), one submodule per concept (`moments`,
//! `counted`, `pass2`, `planes`, `scaled`, `codes`, `affine`) with the same functions as that
//! concept's portable loop, which stays beside its concept as the reference. [`isa`] is the one
//! choice, made once from `quant::Kernel::auto` (so `GGUF_LENS_KERNEL=scalar` turns every vector
//! loop of the statistics off, on wasm too). Every vector loop gives the portable loop's bits.

#[cfg(target_arch = "x86_64")]
pub(in crate::stats) mod avx2;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(in crate::stats) mod simd128;

/// The instruction set the statistics loops run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::stats) enum Isa {
    Scalar,
    /// x86_64 AVX2 (with F16C and POPCNT, which `quant::avx2_chosen` implies).
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// wasm32 SIMD (a build with `simd128`).
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    Simd128,
}

/// The process's one choice (`quant::Kernel::auto`, read once).
#[inline]
pub(in crate::stats) fn isa() -> Isa {
    #[cfg(target_arch = "x86_64")]
    {
        if crate::quant::avx2_chosen() {
            return Isa::Avx2;
        }
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        if crate::quant::simd128_chosen() {
            return Isa::Simd128;
        }
    }
    Isa::Scalar
}

/// `$name(args) -> ret` calling `$body` (an `#[inline(always)]` function), compiled twice on
/// x86_64: as is (SSE2) and for AVX2 when [`isa`] chose it. Both compile the same Rust without
/// fused multiply-add (Rust never contracts `a * b + c`), so they give the same bits.
macro_rules! dispatch {
    ($(#[$doc:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty => $body:path) => {
        $(#[$doc])*
        $vis fn $name($($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2")]
                unsafe fn avx2($($arg: $ty),*) -> $ret {
                    $body($($arg),*)
                }
                if $crate::stats::kernels::isa() == $crate::stats::kernels::Isa::Avx2 {
                    // SAFETY: the CPU has AVX2 (`isa` chose it only then), all `avx2` needs.
                    return unsafe { avx2($($arg),*) };
                }
            }
            $body($($arg),*)
        }
    };
}

pub(in crate::stats) use dispatch;
