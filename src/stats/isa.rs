//! The statistics loops compiled twice on x86_64: as is (SSE2) and for AVX2, chosen at run time
//! by the process's one switch (`quant::avx2_chosen`, which `GGUF_LENS_KERNEL` sets). Both
//! compile the same Rust without fused multiply-add (Rust never contracts `a * b + c`), so they
//! give the same bits.

/// `$name(args) -> ret` calling `$body` (an `#[inline(always)]` function) with AVX2 where the CPU
/// has it.
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
                if $crate::quant::avx2_chosen() {
                    // SAFETY: the CPU has AVX2 (`avx2_chosen` implies it), all `avx2` needs.
                    return unsafe { avx2($($arg),*) };
                }
            }
            $body($($arg),*)
        }
    };
}

pub(crate) use dispatch;
