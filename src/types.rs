//! The ggml tensor type table: one place for ids, names, block sizes and block byte sizes.
//!
//! Checked against ggml 0.21 (see `shared/reference/ggml-types.md`). Ids 4, 5, 31-33 and 36-38
//! were removed from ggml; they are rejected by name so users learn why their file fails.

use std::fmt;

/// Every live ggml tensor type. The discriminant is ggml's type id.
#[allow(non_camel_case_types)] // ggml's own spellings (Q4_K, IQ2_XXS) are what users search for
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u32)]
pub enum GgmlType {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q8_1 = 9,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    Q8_K = 15,
    IQ2_XXS = 16,
    IQ2_XS = 17,
    IQ3_XXS = 18,
    IQ1_S = 19,
    IQ4_NL = 20,
    IQ3_S = 21,
    IQ2_S = 22,
    IQ4_XS = 23,
    I8 = 24,
    I16 = 25,
    I32 = 26,
    I64 = 27,
    F64 = 28,
    IQ1_M = 29,
    BF16 = 30,
    TQ1_0 = 34,
    TQ2_0 = 35,
    MXFP4 = 39,
    NVFP4 = 40,
    Q1_0 = 41,
    Q2_0 = 42,
}

/// One row of the table: (type, name, elements per block, bytes per block).
const TABLE: [(GgmlType, &str, u32, u32); 35] = [
    (GgmlType::F32, "F32", 1, 4),
    (GgmlType::F16, "F16", 1, 2),
    (GgmlType::Q4_0, "Q4_0", 32, 18),
    (GgmlType::Q4_1, "Q4_1", 32, 20),
    (GgmlType::Q5_0, "Q5_0", 32, 22),
    (GgmlType::Q5_1, "Q5_1", 32, 24),
    (GgmlType::Q8_0, "Q8_0", 32, 34),
    (GgmlType::Q8_1, "Q8_1", 32, 36),
    (GgmlType::Q2_K, "Q2_K", 256, 84),
    (GgmlType::Q3_K, "Q3_K", 256, 110),
    (GgmlType::Q4_K, "Q4_K", 256, 144),
    (GgmlType::Q5_K, "Q5_K", 256, 176),
    (GgmlType::Q6_K, "Q6_K", 256, 210),
    (GgmlType::Q8_K, "Q8_K", 256, 292),
    (GgmlType::IQ2_XXS, "IQ2_XXS", 256, 66),
    (GgmlType::IQ2_XS, "IQ2_XS", 256, 74),
    (GgmlType::IQ3_XXS, "IQ3_XXS", 256, 98),
    (GgmlType::IQ1_S, "IQ1_S", 256, 50),
    (GgmlType::IQ4_NL, "IQ4_NL", 32, 18),
    (GgmlType::IQ3_S, "IQ3_S", 256, 110),
    (GgmlType::IQ2_S, "IQ2_S", 256, 82),
    (GgmlType::IQ4_XS, "IQ4_XS", 256, 136),
    (GgmlType::I8, "I8", 1, 1),
    (GgmlType::I16, "I16", 1, 2),
    (GgmlType::I32, "I32", 1, 4),
    (GgmlType::I64, "I64", 1, 8),
    (GgmlType::F64, "F64", 1, 8),
    (GgmlType::IQ1_M, "IQ1_M", 256, 56),
    (GgmlType::BF16, "BF16", 1, 2),
    (GgmlType::TQ1_0, "TQ1_0", 256, 54),
    (GgmlType::TQ2_0, "TQ2_0", 256, 66),
    (GgmlType::MXFP4, "MXFP4", 32, 17),
    (GgmlType::NVFP4, "NVFP4", 64, 36),
    (GgmlType::Q1_0, "Q1_0", 128, 18),
    (GgmlType::Q2_0, "Q2_0", 64, 18),
];

const REMOVED: [(u32, &str); 8] = [
    (4, "Q4_2"),
    (5, "Q4_3"),
    (31, "Q4_0_4_4"),
    (32, "Q4_0_4_8"),
    (33, "Q4_0_8_8"),
    (36, "IQ4_NL_4_4"),
    (37, "IQ4_NL_4_8"),
    (38, "IQ4_NL_8_8"),
];

impl GgmlType {
    /// All live types, in id order.
    pub const ALL: [GgmlType; 35] = {
        let mut all = [GgmlType::F32; 35];
        let mut i = 0;
        while i < TABLE.len() {
            all[i] = TABLE[i].0;
            i += 1;
        }
        all
    };

    /// The type with ggml id `id`, if it is a live one (see [`GgmlType::removed_name`]).
    pub fn from_id(id: u32) -> Option<GgmlType> {
        TABLE.iter().find(|row| row.0 as u32 == id).map(|row| row.0)
    }

    /// The name ggml's removed type `id` had; None for a live id or one ggml never assigned.
    pub fn removed_name(id: u32) -> Option<&'static str> {
        REMOVED
            .iter()
            .find(|(removed, _)| *removed == id)
            .map(|(_, name)| *name)
    }

    /// The type named `name` (ggml's spelling, case-insensitive).
    pub fn from_name(name: &str) -> Option<GgmlType> {
        TABLE
            .iter()
            .find(|row| row.1.eq_ignore_ascii_case(name))
            .map(|row| row.0)
    }

    /// This type's row of the table. A `const fn`, so block structs can assert their size.
    const fn row(self) -> &'static (GgmlType, &'static str, u32, u32) {
        let mut i = 0;
        while i < TABLE.len() {
            if TABLE[i].0 as u32 == self as u32 {
                return &TABLE[i];
            }
            i += 1;
        }
        // Every variant is in TABLE (checked by a test); this is never reached.
        &TABLE[0]
    }

    /// ggml's type id.
    pub const fn id(self) -> u32 {
        self as u32
    }

    /// ggml's name: `F32`, `Q4_K`, `IQ2_XXS`, `MXFP4`, ...
    pub const fn name(self) -> &'static str {
        self.row().1
    }

    /// Elements per block.
    pub const fn block_size(self) -> u32 {
        self.row().2
    }

    /// Bytes per block.
    pub const fn type_size(self) -> u32 {
        self.row().3
    }

    /// True for the types stored one element per "block" (floats and integers).
    pub fn is_plain(self) -> bool {
        self.block_size() == 1
    }

    /// Bytes taken by `n_elements` elements, or None when `n_elements` is not a whole number of
    /// blocks or the size overflows u64.
    pub fn bytes_for(self, n_elements: u64) -> Option<u64> {
        let block = u64::from(self.block_size());
        if n_elements % block != 0 {
            return None;
        }
        (n_elements / block).checked_mul(u64::from(self.type_size()))
    }

    /// Bits per weight of this type alone.
    pub fn bits_per_weight(self) -> f64 {
        f64::from(self.type_size()) * 8.0 / f64::from(self.block_size())
    }
}

impl fmt::Display for GgmlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_live_id_round_trips() {
        for ty in GgmlType::ALL {
            assert_eq!(GgmlType::from_id(ty.id()), Some(ty));
            assert_eq!(GgmlType::removed_name(ty.id()), None);
            assert_eq!(GgmlType::from_name(ty.name()), Some(ty));
            assert!(ty.type_size() > 0 && ty.block_size() > 0);
        }
        let mut ids: Vec<u32> = GgmlType::ALL.iter().map(|t| t.id()).collect();
        ids.dedup();
        assert_eq!(ids.len(), 35);
    }

    #[test]
    fn removed_and_unknown_ids_are_told_apart() {
        assert_eq!(GgmlType::from_id(4), None);
        assert_eq!(GgmlType::removed_name(4), Some("Q4_2"));
        assert_eq!(GgmlType::removed_name(37), Some("IQ4_NL_4_8"));
        for id in [43, u32::MAX] {
            assert_eq!(GgmlType::from_id(id), None);
            assert_eq!(GgmlType::removed_name(id), None);
        }
        for id in 0..43 {
            assert!(GgmlType::from_id(id).is_some() || REMOVED.iter().any(|r| r.0 == id));
        }
    }

    #[test]
    fn byte_sizes() {
        assert_eq!(GgmlType::Q4_K.bytes_for(4096 * 4096), Some(9_437_184));
        assert_eq!(GgmlType::Q4_0.bytes_for(33), None);
        assert_eq!(GgmlType::F64.bytes_for(u64::MAX), None);
    }
}
