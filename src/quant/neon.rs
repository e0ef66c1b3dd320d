//! neon kernels. Types without one here fall back to the scalar kernel.

use super::KernelFn;
use crate::types::GgmlType;

/// This ISA's own kernel for `ty`, if it has one.
pub(super) fn kernel_for(_ty: GgmlType) -> Option<KernelFn> {
    None
}
