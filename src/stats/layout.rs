//! The one table of the types whose statistics have a shortcut past dequantizing value by value:
//! a [`Layout`] row per type says where a block's scale is and how its values are formed, in one
//! of two forms, each read by one loop for every type of its form:
//! - [`Form::Scaled`]: every value is `d · level` with one scale per block (Q8_0, Q5_0, MXFP4,
//!   the ternary and 1-/2-bit types); the levels come from the type's own kernel with the scale
//!   set to one, and pass 1 counts values per (scale, level) (`scaled.rs`);
//! - [`Form::Coded`]: groups of 32 values that share a scale (and a min) and pick one of 16
//!   levels by a 4-bit code (Q4_0, Q4_1, IQ4_NL, IQ4_XS, Q4_K); a group's 16 values are computed
//!   once and its codes counted (`codes.rs`).
//!
//! A type of neither form takes the per-value path. Q4_0 and IQ4_NL fit both forms; they are
//! coded because it measured faster for them (docs/benchmarks.md, "Statistics shortcuts").

use crate::quant::scalar::f16_to_f32;
use crate::quant::scalar::fp4::e8m0_to_f32_half;
use crate::quant::scalar::grids::KVALUES_IQ4NL;
use crate::quant::scalar::{iq4_xs_scales, unpack_scale_min_k4};
use crate::GgmlType;

/// How a block's scale is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Scale {
    /// An f16, little-endian.
    #[default]
    F16,
    /// One E8M0 byte, read as ggml's `e8m0_to_fp32_half`.
    E8m0Half,
}

impl Scale {
    /// The scale of bits `bits` (as read by [`Layout::scale_bits`]).
    #[inline(always)]
    pub(crate) fn value(self, bits: u16) -> f32 {
        match self {
            Scale::F16 => f16_to_f32(bits),
            Scale::E8m0Half => e8m0_to_f32_half(bits as u8),
        }
    }

    /// Whether every product with the scale of `bits` may be finite (f16 NaN and infinities
    /// have no row in a table: their blocks hold no finite value).
    #[inline(always)]
    pub(crate) fn finite(self, bits: u16) -> bool {
        match self {
            Scale::F16 => bits & 0x7c00 != 0x7c00,
            Scale::E8m0Half => true,
        }
    }

    /// The bits of the scale one.
    pub(crate) fn one(self) -> u16 {
        match self {
            Scale::F16 => 0x3c00,
            Scale::E8m0Half => 128,
        }
    }

    pub(crate) fn id(self) -> u8 {
        match self {
            Scale::F16 => 0,
            Scale::E8m0Half => 1,
        }
    }

    pub(crate) fn from_id(id: u8) -> Option<Scale> {
        match id {
            0 => Some(Scale::F16),
            1 => Some(Scale::E8m0Half),
            _ => None,
        }
    }
}

/// One type's row of the table.
#[derive(Debug)]
pub(crate) struct Layout {
    pub(crate) ty: GgmlType,
    /// Values and bytes per block.
    pub(crate) block: usize,
    pub(crate) block_bytes: usize,
    /// Byte offset of the block's scale, and its kind.
    pub(crate) scale_at: usize,
    pub(crate) scale: Scale,
    pub(crate) form: Form,
}

/// How a block's values are formed from its scale.
#[derive(Debug)]
pub(crate) enum Form {
    /// `d · level`.
    Scaled {
        /// Where a block's bytes are its levels themselves (Q8_0's int8 codes), their offset.
        levels_at: Option<usize>,
        /// Every level a block can hold, when they are few (the ternary and 1-bit types): a
        /// block's values are then counted per level by compares (a row's increments to one
        /// counter would each wait for the last). Empty: counted value by value.
        few: &'static [i8],
    },
    /// Groups of 32 values of 16 levels each.
    Coded(Coded),
}

/// Where a [`Form::Coded`] block's codes, levels, min and per-group scales are.
#[derive(Debug)]
pub(crate) struct Coded {
    pub(crate) codes: Codes,
    /// The level of each code.
    pub(crate) levels: &'static [i8; 16],
    pub(crate) min: Min,
    pub(crate) subs: Subs,
    /// Whether a group's values are the line `a·q − b` whose moments come from code sums
    /// (`affine.rs`), where f32 computes it exactly.
    pub(crate) lines: bool,
}

/// How a block stores its codes as nibbles, from byte `at`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Codes {
    /// 16 bytes per group: code `j` the low nibble of byte `j`, code `16 + j` its high nibble.
    Nibbles { at: usize },
    /// 32 bytes per two groups: the low nibbles are the first group's codes, the high the
    /// second's.
    Pairs { at: usize },
}

/// A block's second f16 (at `at`) and how it joins a value.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Min {
    None,
    /// `level · d + m`.
    Added {
        at: usize,
    },
    /// `d · level − m`.
    Subtracted {
        at: usize,
    },
}

/// Per-group factors of the block's scale (and min), from byte `at`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Subs {
    /// One group per block; the block's own scale and min.
    None,
    /// Q4_K's 12 bytes of 6-bit (scale, min) pairs: `d·sc`, `m·mn`.
    ScaleMinK4 { at: usize },
    /// IQ4_XS's 6-bit scales (a u16 of high bits, 4 bytes of low nibbles): `d·(ls − 32)`.
    Iq4Xs { at: usize },
}

const fn row(ty: GgmlType, scale_at: usize, scale: Scale, form: Form) -> Layout {
    Layout {
        ty,
        block: ty.block_size() as usize,
        block_bytes: ty.type_size() as usize,
        scale_at,
        scale,
        form,
    }
}

const fn scaled(
    ty: GgmlType,
    scale_at: usize,
    scale: Scale,
    levels_at: Option<usize>,
    few: &'static [i8],
) -> Layout {
    row(ty, scale_at, scale, Form::Scaled { levels_at, few })
}

const fn coded(
    ty: GgmlType,
    codes: Codes,
    levels: &'static [i8; 16],
    min: Min,
    subs: Subs,
) -> Layout {
    let lines = matches!(subs, Subs::ScaleMinK4 { .. }) && matches!(min, Min::Subtracted { .. });
    row(
        ty,
        0,
        Scale::F16,
        Form::Coded(Coded {
            codes,
            levels,
            min,
            subs,
            lines,
        }),
    )
}

const SIGNED: [i8; 16] = [-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7];
const UNSIGNED: [i8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];

/// Every shortcut type (ggml's own formulas; ggml-types.md has the block layouts).
pub(crate) static LAYOUTS: [Layout; 12] = [
    scaled(GgmlType::Q8_0, 0, Scale::F16, Some(2), &[]),
    scaled(GgmlType::Q5_0, 0, Scale::F16, None, &[]),
    scaled(GgmlType::MXFP4, 0, Scale::E8m0Half, None, &[]),
    scaled(GgmlType::TQ1_0, 52, Scale::F16, None, &[-1, 0, 1]),
    scaled(GgmlType::TQ2_0, 64, Scale::F16, None, &[-1, 0, 1, 2]),
    scaled(GgmlType::Q1_0, 0, Scale::F16, None, &[-1, 1]),
    scaled(GgmlType::Q2_0, 0, Scale::F16, None, &[-1, 0, 1, 2]),
    coded(
        GgmlType::Q4_0,
        Codes::Nibbles { at: 2 },
        &SIGNED,
        Min::None,
        Subs::None,
    ),
    coded(
        GgmlType::Q4_1,
        Codes::Nibbles { at: 4 },
        &UNSIGNED,
        Min::Added { at: 2 },
        Subs::None,
    ),
    coded(
        GgmlType::IQ4_NL,
        Codes::Nibbles { at: 2 },
        &KVALUES_IQ4NL,
        Min::None,
        Subs::None,
    ),
    coded(
        GgmlType::IQ4_XS,
        Codes::Nibbles { at: 8 },
        &KVALUES_IQ4NL,
        Min::None,
        Subs::Iq4Xs { at: 2 },
    ),
    coded(
        GgmlType::Q4_K,
        Codes::Pairs { at: 16 },
        &UNSIGNED,
        Min::Subtracted { at: 2 },
        Subs::ScaleMinK4 { at: 4 },
    ),
];

// Every block is a power of two values (`scaled::moments` divides by shifts), and a coded
// block whole groups of 32.
const _: () = {
    let mut i = 0;
    while i < LAYOUTS.len() {
        let l = &LAYOUTS[i];
        assert!(l.block.is_power_of_two());
        if let Form::Coded(c) = &l.form {
            assert!(l.block % 32 == 0);
            let groups = l.block / 32;
            assert!(match c.subs {
                Subs::None => groups == 1,
                _ => groups == 8,
            });
            // Codes are a block's last bytes, 16 per group either way.
            let at = match c.codes {
                Codes::Nibbles { at } | Codes::Pairs { at } => at,
            };
            assert!(at + 16 * groups == l.block_bytes);
        }
        i += 1;
    }
};

/// The row of `ty`, when its statistics have a shortcut.
pub(crate) fn layout_of(ty: GgmlType) -> Option<&'static Layout> {
    LAYOUTS.iter().find(|l| l.ty == ty)
}

/// A value `d · level`, as the dequantization kernels compute it.
#[inline(always)]
pub(crate) fn value(d: f32, level: i8) -> f32 {
    f32::from(level) * d
}

impl Layout {
    /// A [`Form::Scaled`] block's levels' offset in its bytes, when they lie there.
    pub(crate) fn levels_at(&self) -> Option<usize> {
        match self.form {
            Form::Scaled { levels_at, .. } => levels_at,
            Form::Coded(_) => None,
        }
    }

    /// A [`Form::Scaled`] type's few levels (empty: many, or another form).
    pub(crate) fn few(&self) -> &'static [i8] {
        match self.form {
            Form::Scaled { few, .. } => few,
            Form::Coded(_) => &[],
        }
    }

    /// The scale bits of a block.
    #[inline(always)]
    pub(crate) fn scale_bits(&self, block: &[u8]) -> u16 {
        match self.scale {
            Scale::F16 => u16::from_le_bytes([block[self.scale_at], block[self.scale_at + 1]]),
            Scale::E8m0Half => u16::from(block[self.scale_at]),
        }
    }
}

impl Coded {
    /// A block's groups: for each its scale and min as the kernels form them (`out[g]`, the
    /// block's groups in order), with the block's own scale `d` and min `m`.
    #[inline(always)]
    pub(crate) fn group_scales(&self, block: &[u8], d: f32, out: &mut [[f32; 2]; 8]) -> usize {
        let m = match self.min {
            Min::None => 0.0,
            Min::Added { at } | Min::Subtracted { at } => half(block, at),
        };
        match self.subs {
            Subs::None => {
                out[0] = [d, m];
                1
            }
            Subs::ScaleMinK4 { at } => {
                let packed: &[u8; 12] = block[at..at + 12].try_into().unwrap();
                for (o, (sc, mn)) in out.iter_mut().zip(unpack_scale_min_k4(packed)) {
                    *o = [d * f32::from(sc), m * f32::from(mn)];
                }
                8
            }
            Subs::Iq4Xs { at } => {
                let high = u16::from_le_bytes([block[at], block[at + 1]]);
                let low: [u8; 4] = block[at + 2..at + 6].try_into().unwrap();
                for (o, ls) in out.iter_mut().zip(iq4_xs_scales(high, low)) {
                    *o = [d * (ls - 32) as f32, 0.0];
                }
                8
            }
        }
    }

    /// The 16 values of a group of scale `d` and min `m`, bit for bit as the kernels give them.
    #[inline(always)]
    pub(crate) fn group_values(&self, [d, m]: [f32; 2]) -> [f32; 16] {
        let l = self.levels;
        match self.min {
            Min::None => std::array::from_fn(|q| f32::from(l[q]) * d),
            Min::Added { .. } => std::array::from_fn(|q| f32::from(l[q]) * d + m),
            Min::Subtracted { .. } => std::array::from_fn(|q| d * f32::from(l[q]) - m),
        }
    }
}

/// The f16 at byte `at` of a block.
#[inline(always)]
pub(crate) fn half(block: &[u8], at: usize) -> f32 {
    f16_to_f32(u16::from_le_bytes([block[at], block[at + 1]]))
}

#[cfg(all(test, not(all(target_arch = "wasm32", target_os = "unknown"))))]
mod tests {
    use super::*;

    /// Each coded type's groups, as the table forms them, are the values its dequantization
    /// kernel (scalar, the reference) writes, for random blocks with random scales.
    #[test]
    fn coded_groups_are_the_kernels_values() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for layout in LAYOUTS.iter() {
            let Form::Coded(coded) = &layout.form else {
                continue;
            };
            for _ in 0..200 {
                let mut block: Vec<u8> = (0..layout.block_bytes).map(|_| next() as u8).collect();
                // Finite scales of either sign (random bits would be NaN now and then, whose
                // bits the comparison below would not see).
                for at in [0, 2] {
                    let h = half::f16::from_f32((next() % 2001) as f32 * 1e-5 - 1e-2);
                    block[at..at + 2].copy_from_slice(&h.to_bits().to_le_bytes());
                }
                let mut want = vec![0f32; layout.block];
                crate::quant::dequantize_with(crate::Kernel::Scalar, layout.ty, &block, &mut want)
                    .unwrap();
                let mut scales = [[0f32; 2]; 8];
                let groups = coded.group_scales(&block, half(&block, 0), &mut scales);
                assert_eq!(groups * 32, layout.block);
                let got: Vec<f32> = (0..layout.block)
                    .map(|i| {
                        let g = i / 32;
                        let code = code_of(coded.codes, &block, g, i % 32);
                        coded.group_values(scales[g])[code]
                    })
                    .collect();
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&got), bits(&want), "{:?}", layout.ty);
            }
        }
    }

    /// Code `i` of group `g`, read the slow way.
    fn code_of(codes: Codes, block: &[u8], g: usize, i: usize) -> usize {
        let nibble = |byte: u8, high: bool| usize::from(if high { byte >> 4 } else { byte & 15 });
        match codes {
            Codes::Nibbles { at } => nibble(block[at + 16 * g + i % 16], i >= 16),
            Codes::Pairs { at } => nibble(block[at + 32 * (g / 2) + i], g % 2 == 1),
        }
    }
}
