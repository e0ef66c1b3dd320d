//! The vocabulary: special-token ids inside it, the per-token arrays as long as the token list,
//! merges that name tokens.

use std::collections::HashSet;

use super::Finding;
use crate::gguf::{ArrayView, GgufFile, Value, ValueType};
use crate::special_tokens::special_tokens;

const TOKENS_KEY: &str = "tokenizer.ggml.tokens";
const MERGES_KEY: &str = "tokenizer.ggml.merges";
/// Arrays llama.cpp reads one entry per token from (`llama-vocab.cpp` throws when they are
/// shorter than the token list).
const PER_TOKEN_KEYS: &[&str] = &["tokenizer.ggml.scores", "tokenizer.ggml.token_type"];

pub(super) fn check(file: &GgufFile, findings: &mut Vec<Finding>) {
    let Some(tokens_value) = file.get(TOKENS_KEY) else {
        return;
    };
    let tokens = match tokens_value {
        Value::Array(a) if a.item_type() == ValueType::String => a,
        other => {
            findings.push(
                Finding::error(
                    "wrong-value-type",
                    format!(
                        "{TOKENS_KEY} is {}, llama.cpp reads an array of strings",
                        describe(&other)
                    ),
                )
                .key(TOKENS_KEY)
                .at(file.value_offset(TOKENS_KEY)),
            );
            return;
        }
    };
    let n_vocab = tokens.len() as u64;
    special_ids(file, n_vocab, findings);
    array_lengths(file, n_vocab, findings);
    merges(file, &tokens, findings);
}

fn describe(value: &Value) -> String {
    match value {
        Value::Array(a) => format!("an array of {}", a.item_type()),
        other => format!("a {}", other.value_type()),
    }
}

/// llama.cpp warns and falls back to its default id for an id outside the vocabulary
/// (`bad special token`): the file's EOS/BOS/… is then silently not the one it names.
fn special_ids(file: &GgufFile, n_vocab: u64, findings: &mut Vec<Finding>) {
    for token in special_tokens(file) {
        if token.id < n_vocab {
            continue;
        }
        let message = format!(
            "{} token id {} is outside the vocabulary ({n_vocab} tokens)",
            token.name, token.id
        );
        let finding = if token.recognized {
            Finding::error("special-token-out-of-vocab", message)
        } else {
            // A spelling llama.cpp does not read: wrong, but it changes nothing there.
            Finding::warning("special-token-out-of-vocab", message)
        };
        findings.push(finding.key(token.key).at(file.value_offset(token.key)));
    }
}

fn array_lengths(file: &GgufFile, n_vocab: u64, findings: &mut Vec<Finding>) {
    for &key in PER_TOKEN_KEYS {
        let Some(value) = file.get(key) else {
            continue;
        };
        let at = file.value_offset(key);
        let Some(array) = value.as_array() else {
            findings.push(
                Finding::error(
                    "wrong-value-type",
                    format!("{key} is {}, llama.cpp reads an array", describe(&value)),
                )
                .key(key)
                .at(at),
            );
            continue;
        };
        let len = array.len() as u64;
        if len != n_vocab {
            let effect = if len < n_vocab {
                "llama.cpp refuses the vocabulary"
            } else {
                "the extra entries belong to no token"
            };
            findings.push(
                Finding::error(
                    "vocab-array-length",
                    format!("{key} has {len} entries for {n_vocab} tokens: {effect}"),
                )
                .key(key)
                .at(at),
            );
        }
    }
}

/// Merges whose sides, or whose result, are not tokens.
///
/// A warning, not an error: llama.cpp does not check merges against the vocabulary when it
/// loads them (`llama-vocab.cpp` keeps each merge as a pair of strings split at the first space
/// after the first byte), so the file loads; when tokenizing, a merge whose sides are never
/// produced never applies, and a merged symbol that is not a token is emitted as its single-byte
/// tokens. The tokenization may then differ from the reference tokenizer's (which refuses such
/// merges), which is worth fixing but is not a load failure.
fn merges(file: &GgufFile, tokens: &ArrayView, findings: &mut Vec<Finding>) {
    let Some(value) = file.get(MERGES_KEY) else {
        return;
    };
    let at = file.value_offset(MERGES_KEY);
    let merges = match value {
        Value::Array(a) if a.item_type() == ValueType::String => a,
        other => {
            findings.push(
                Finding::error(
                    "wrong-value-type",
                    format!(
                        "{MERGES_KEY} is {}, llama.cpp reads an array of strings",
                        describe(&other)
                    ),
                )
                .key(MERGES_KEY)
                .at(at),
            );
            return;
        }
    };
    let vocab: HashSet<&[u8]> = tokens
        .iter()
        .filter_map(|v| match v {
            Value::String(s) => Some(s.as_bytes()),
            _ => None,
        })
        .collect();
    let mut bad = 0usize;
    let mut first: Option<(usize, String)> = None;
    let mut joined = Vec::new();
    for (i, merge) in merges.iter().enumerate() {
        let Value::String(s) = merge else {
            continue;
        };
        let bytes = s.as_bytes();
        // As llama.cpp splits: at the first space after the first byte.
        let split = bytes.iter().skip(1).position(|&b| b == b' ').map(|p| p + 1);
        let ok = split.is_some_and(|p| {
            let (left, right) = (&bytes[..p], &bytes[p + 1..]);
            joined.clear();
            joined.extend_from_slice(left);
            joined.extend_from_slice(right);
            vocab.contains(left) && vocab.contains(right) && vocab.contains(joined.as_slice())
        });
        if !ok {
            bad += 1;
            if first.is_none() {
                first = Some((i, s.to_string_lossy().into_owned()));
            }
        }
    }
    if let Some((i, text)) = first {
        findings.push(
            Finding::warning(
                "merge-unknown-token",
                format!(
                    "{bad} of {} merges name a token the vocabulary does not have (or are not \
                     two tokens separated by a space); the first: #{i} {text:?}",
                    merges.len()
                ),
            )
            .key(MERGES_KEY)
            .at(at),
        );
    }
}
