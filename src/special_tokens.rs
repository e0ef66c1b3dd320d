//! The special-token ids a GGUF vocabulary names in its metadata: every
//! `tokenizer.ggml.*_token_id` key llama.cpp reads (`llama-arch.cpp`'s LLM_KV_TOKENIZER_*_ID),
//! plus the `pad`/`sep` spellings some converters write. One list for the CLI, lint, the
//! tokenizer and (through wasm) the viewer.

use serde::Serialize;

use crate::GgufFile;

/// (short name, metadata key), in llama.cpp's order. `seperator` is llama.cpp's spelling.
pub const SPECIAL_TOKEN_KEYS: &[(&str, &str)] = &[
    ("bos", "tokenizer.ggml.bos_token_id"),
    ("eos", "tokenizer.ggml.eos_token_id"),
    ("eot", "tokenizer.ggml.eot_token_id"),
    ("eom", "tokenizer.ggml.eom_token_id"),
    ("unknown", "tokenizer.ggml.unknown_token_id"),
    ("seperator", "tokenizer.ggml.seperator_token_id"),
    ("padding", "tokenizer.ggml.padding_token_id"),
    ("cls", "tokenizer.ggml.cls_token_id"),
    ("mask", "tokenizer.ggml.mask_token_id"),
    ("fim_pre", "tokenizer.ggml.fim_pre_token_id"),
    ("fim_suf", "tokenizer.ggml.fim_suf_token_id"),
    ("fim_mid", "tokenizer.ggml.fim_mid_token_id"),
    ("fim_pad", "tokenizer.ggml.fim_pad_token_id"),
    ("fim_rep", "tokenizer.ggml.fim_rep_token_id"),
    ("fim_sep", "tokenizer.ggml.fim_sep_token_id"),
    // Older FIM keys llama.cpp still reads (codellama-style prefix/suffix/middle).
    ("prefix", "tokenizer.ggml.prefix_token_id"),
    ("suffix", "tokenizer.ggml.suffix_token_id"),
    ("middle", "tokenizer.ggml.middle_token_id"),
    // Spellings llama.cpp does not read but some converters write: shown so they can be fixed.
    ("sep", "tokenizer.ggml.sep_token_id"),
    ("pad", "tokenizer.ggml.pad_token_id"),
];

/// One special token the file names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SpecialToken {
    /// Short name, e.g. `eos`, `fim_pre`.
    pub name: &'static str,
    /// The metadata key it was read from.
    pub key: &'static str,
    /// The id as stored (not checked against the vocabulary here; lint does that).
    pub id: u64,
    /// Whether llama.cpp reads this key (false for the `sep`/`pad` spellings).
    pub recognized: bool,
}

/// Every special-token key present in `file` with an integer value, in llama.cpp's order.
pub fn special_tokens(file: &GgufFile) -> Vec<SpecialToken> {
    SPECIAL_TOKEN_KEYS
        .iter()
        .filter_map(|&(name, key)| {
            let id = file.get(key)?.as_u64()?;
            Some(SpecialToken {
                name,
                key,
                id,
                recognized: !matches!(name, "sep" | "pad"),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_and_named_as_llama_cpp_names_them() {
        let mut keys: Vec<&str> = SPECIAL_TOKEN_KEYS.iter().map(|(_, k)| *k).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), SPECIAL_TOKEN_KEYS.len());
        for (name, key) in SPECIAL_TOKEN_KEYS {
            assert_eq!(*key, format!("tokenizer.ggml.{name}_token_id"));
        }
    }
}
