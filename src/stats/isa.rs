//! The statistics loops compiled twice on x86_64: as is (SSE2) and for AVX2, chosen at run time
//! (`is_x86_feature_detected!`, cached by std). Both compile the same Rust without fused
//! multiply-add (Rust never contracts `a * b + c`), so they give the same bits.

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
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU has AVX2 (checked on the line above), all `avx2` needs.
                    return unsafe { avx2($($arg),*) };
                }
            }
            $body($($arg),*)
        }
    };
}

pub(crate) use dispatch;
