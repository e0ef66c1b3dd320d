//! The llama.cpp file type (`LLAMA_FTYPE_*`) a file's tensor mix points to, for files whose
//! `general.file_type` is missing or disagrees with the tensors ("Q4_K_M by tensor mix").
//!
//! How the guess works, following how llama.cpp's quantizer (`src/llama-quant.cpp`) assigns types:
//! 1. Only matrices count: 1-D tensors (norms, biases) stay F32 in every file type, and
//!    `token_embd`/`output` get per-ftype special types, so they are left out too.
//! 2. The *base* type is the one holding the most elements among the remaining matrices; it is
//!    the ftype's default type (Q4_K for Q4_K_S/M, Q8_0 for Q8_0, ...).
//! 3. K-quant sizes (S/M/L) differ only in the upgrades given to `attn_v` and `ffn_down`
//!    (and `attn_output` for Q3_K_L): Q4_K/Q5_K with any Q6_K `attn_v`/`ffn_down` is _M, else _S;
//!    Q3_K with a Q5_K `attn_output` is _L, with Q4_K/Q5_K `attn_v`/`ffn_down` is _M, else _S.
//! 4. Every matrix F32 is ALL_F32. Types with no ftype of their own give no guess.
//!
//! Ambiguities it does not resolve (the label is then the family's plain member): Q2_K vs
//! Q2_K_S, IQ3_S vs IQ3_M, IQ2_XS vs IQ2_S, IQ3_XXS vs IQ3_XS (the quantizer reuses base types).

use std::collections::BTreeMap;

use crate::gguf::{GgufFile, TensorInfo};
use crate::types::GgmlType;

/// What the guess needs of one tensor.
#[derive(Debug, Clone, Copy)]
pub struct TensorKind<'a> {
    pub name: &'a str,
    pub ggml_type: GgmlType,
    pub n_dims: usize,
    pub n_elements: u64,
}

impl<'a> TensorKind<'a> {
    pub fn of(t: &'a TensorInfo) -> TensorKind<'a> {
        TensorKind {
            name: t.name(),
            ggml_type: t.ggml_type(),
            n_dims: t.dims().len(),
            n_elements: t.n_elements(),
        }
    }
}

/// The `LLAMA_FTYPE` id the tensor mix points to, or None when there is no matrix or the base
/// type has no ftype.
pub fn guess_file_type(tensors: &[TensorKind]) -> Option<u64> {
    let matrices = voting_matrices(tensors);
    let base = majority_type(&matrices)?;
    let role_has = |role: &str, types: &[GgmlType]| {
        matrices
            .iter()
            .any(|t| t.name.contains(role) && types.contains(&t.ggml_type))
    };
    let upgraded =
        |types: &[GgmlType]| role_has(".attn_v.", types) || role_has(".ffn_down.", types);
    use GgmlType as G;
    Some(match base {
        G::F32 => 0,
        G::F16 => 1,
        G::Q4_0 => 2,
        G::Q4_1 => 3,
        G::Q8_0 => 7,
        G::Q5_0 => 8,
        G::Q5_1 => 9,
        G::Q2_K => 10,
        G::Q3_K if role_has(".attn_output.", &[G::Q5_K]) => 13,
        G::Q3_K if upgraded(&[G::Q4_K, G::Q5_K]) => 12,
        G::Q3_K => 11,
        G::Q4_K if upgraded(&[G::Q6_K]) => 15,
        G::Q4_K => 14,
        G::Q5_K if upgraded(&[G::Q6_K]) => 17,
        G::Q5_K => 16,
        G::Q6_K => 18,
        G::IQ2_XXS => 19,
        G::IQ2_XS => 20,
        G::IQ3_XXS => 23,
        G::IQ1_S => 24,
        G::IQ4_NL => 25,
        G::IQ3_S => 26,
        G::IQ2_S => 28,
        G::IQ4_XS => 30,
        G::IQ1_M => 31,
        G::BF16 => 32,
        G::TQ1_0 => 36,
        G::TQ2_0 => 37,
        G::MXFP4 => 38,
        G::NVFP4 => 39,
        G::Q1_0 => 40,
        G::Q2_0 => 41,
        _ => return None,
    })
}

/// The matrices that vote (steps 1 and 2 above): 2-D and up, not `token_embd`/`output`.
fn voting_matrices<'t, 'a>(tensors: &'t [TensorKind<'a>]) -> Vec<&'t TensorKind<'a>> {
    let is_special = |n: &str| n.starts_with("token_embd.") || n.starts_with("output.");
    tensors
        .iter()
        .filter(|t| t.n_dims >= 2 && !is_special(t.name))
        .collect()
}

/// The type holding the most elements among `matrices`.
fn majority_type(matrices: &[&TensorKind]) -> Option<GgmlType> {
    let mut elements: BTreeMap<GgmlType, u64> = BTreeMap::new();
    for t in matrices {
        let e = elements.entry(t.ggml_type).or_default();
        *e = e.saturating_add(t.n_elements);
    }
    elements.iter().max_by_key(|(_, n)| **n).map(|(t, _)| *t)
}

/// The *base* type of the tensor mix: the type holding the most elements among the matrices
/// other than `token_embd`/`output` (None without such a matrix).
pub fn base_type(tensors: &[TensorKind]) -> Option<GgmlType> {
    majority_type(&voting_matrices(tensors))
}

/// The default tensor type llama-quantize gives a `LLAMA_FTYPE` (`llama-quant.cpp`'s
/// `llama_ftype_get_default_type`): what most matrices of a file with that label hold. None for
/// ids with no type (removed, unknown, GUESSED).
pub fn default_type(file_type: u64) -> Option<GgmlType> {
    use GgmlType as G;
    Some(match file_type {
        0 => G::F32,
        1 => G::F16,
        2 => G::Q4_0,
        3 => G::Q4_1,
        7 => G::Q8_0,
        8 => G::Q5_0,
        9 => G::Q5_1,
        10 | 21 => G::Q2_K,
        11..=13 => G::Q3_K,
        14 | 15 => G::Q4_K,
        16 | 17 => G::Q5_K,
        18 => G::Q6_K,
        19 => G::IQ2_XXS,
        20 | 28 => G::IQ2_XS,
        22 | 26 | 27 => G::IQ3_S,
        23 => G::IQ3_XXS,
        24 => G::IQ1_S,
        25 => G::IQ4_NL,
        29 => G::IQ2_S,
        30 => G::IQ4_XS,
        31 => G::IQ1_M,
        32 => G::BF16,
        36 => G::TQ1_0,
        37 => G::TQ2_0,
        38 => G::MXFP4,
        39 => G::NVFP4,
        40 => G::Q1_0,
        41 => G::Q2_0,
        _ => return None,
    })
}

/// The guess for a parsed file.
pub fn guess_file_type_of(file: &GgufFile) -> Option<u64> {
    let kinds: Vec<TensorKind> = file.tensors().iter().map(TensorKind::of).collect();
    guess_file_type(&kinds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use GgmlType as G;

    fn t(name: &str, ggml_type: GgmlType, n_dims: usize) -> TensorKind<'_> {
        TensorKind {
            name,
            ggml_type,
            n_dims,
            n_elements: 256 * 256,
        }
    }

    #[test]
    fn k_quant_sizes_follow_the_attn_v_and_ffn_down_upgrades() {
        let mut v = vec![
            t("blk.0.attn_norm.weight", G::F32, 1),
            t("blk.0.attn_q.weight", G::Q4_K, 2),
            t("blk.0.ffn_up.weight", G::Q4_K, 2),
            t("blk.0.attn_v.weight", G::Q5_K, 2),
            t("output.weight", G::Q6_K, 2),
        ];
        assert_eq!(guess_file_type(&v), Some(14));
        v.push(t("blk.0.ffn_down.weight", G::Q6_K, 2));
        assert_eq!(guess_file_type(&v), Some(15));
        let q3 = |v_type, out_type| {
            let v = vec![
                t("blk.0.attn_q.weight", G::Q3_K, 2),
                t("blk.0.ffn_up.weight", G::Q3_K, 2),
                t("blk.0.ffn_gate.weight", G::Q3_K, 2),
                t("blk.0.attn_v.weight", v_type, 2),
                t("blk.0.attn_output.weight", out_type, 2),
            ];
            guess_file_type(&v)
        };
        assert_eq!(q3(G::Q3_K, G::Q3_K), Some(11));
        assert_eq!(q3(G::Q4_K, G::Q3_K), Some(12));
        assert_eq!(q3(G::Q5_K, G::Q5_K), Some(13));
    }

    #[test]
    fn vectors_and_specials_do_not_vote_and_no_matrix_means_no_guess() {
        let v = vec![
            t("token_embd.weight", G::F16, 2),
            t("blk.0.attn_q.weight", G::Q8_0, 2),
            t("blk.0.attn_norm.weight", G::F32, 1),
        ];
        assert_eq!(guess_file_type(&v), Some(7));
        assert_eq!(guess_file_type(&[t("a.weight", G::F32, 1)]), None);
        assert_eq!(guess_file_type(&[t("a.weight", G::I32, 2)]), None);
    }
}
