//! Metadata types: llama.cpp reads each key with one type and refuses the file when the key has
//! another (`llama-model-loader.cpp`: "key … has wrong type … but expected type …"), even for
//! keys it reads only when present. Per-layer keys may be arrays, one entry per block.

use super::{architecture, Finding};
use crate::gguf::{GgufFile, Value, ValueType};
use crate::special_tokens::SPECIAL_TOKEN_KEYS;

/// How llama.cpp reads a key.
#[derive(Clone, Copy)]
enum Read {
    Scalar(ValueType),
    /// A uint32, or an array with one entry per block (`get_key_or_arr`).
    PerLayer,
}

use Read::*;
use ValueType as T;

/// Keys under `{arch}.` and how llama.cpp's `load_hparams` reads them.
const ARCH_KEYS: &[(&str, Read)] = &[
    ("context_length", Scalar(T::U32)),
    ("embedding_length", Scalar(T::U32)),
    ("block_count", Scalar(T::U32)),
    ("feed_forward_length", PerLayer),
    ("attention.head_count", PerLayer),
    ("attention.head_count_kv", PerLayer),
    ("expert_count", Scalar(T::U32)),
    ("expert_used_count", Scalar(T::U32)),
    ("vocab_size", Scalar(T::U32)),
    ("rope.dimension_count", Scalar(T::U32)),
    ("rope.freq_base", Scalar(T::F32)),
    ("attention.key_length", Scalar(T::U32)),
    ("attention.value_length", Scalar(T::U32)),
    ("attention.layer_norm_epsilon", Scalar(T::F32)),
    ("attention.layer_norm_rms_epsilon", Scalar(T::F32)),
];

/// Keys outside `{arch}.` (the special-token ids are added from `special_tokens`).
const KEYS: &[(&str, Read)] = &[
    ("general.architecture", Scalar(T::String)),
    ("general.file_type", Scalar(T::U32)),
    ("tokenizer.ggml.model", Scalar(T::String)),
    ("tokenizer.ggml.pre", Scalar(T::String)),
    ("tokenizer.ggml.add_bos_token", Scalar(T::Bool)),
    ("tokenizer.ggml.add_eos_token", Scalar(T::Bool)),
    ("tokenizer.ggml.add_space_prefix", Scalar(T::Bool)),
    ("tokenizer.chat_template", Scalar(T::String)),
];

pub(super) fn check(file: &GgufFile, findings: &mut Vec<Finding>) {
    let arch = architecture(file);
    let block_count = arch
        .as_ref()
        .and_then(|a| file.get(&format!("{a}.block_count")))
        .and_then(|v| v.as_u64());
    let special = SPECIAL_TOKEN_KEYS
        .iter()
        // The `pad`/`sep` spellings are not read by llama.cpp.
        .filter(|(name, _)| !matches!(*name, "pad" | "sep"))
        .map(|(_, key)| (key.to_string(), Scalar(T::U32)));
    let general = KEYS.iter().map(|(k, r)| (k.to_string(), *r));
    let per_arch = arch
        .iter()
        .flat_map(|a| ARCH_KEYS.iter().map(move |(k, r)| (format!("{a}.{k}"), *r)));
    for (key, read) in general.chain(special).chain(per_arch) {
        let Some(value) = file.get(&key) else {
            continue;
        };
        let at = file.value_offset(&key);
        let found = value.value_type();
        let wrong = |expected: &str| {
            Finding::error(
                "wrong-value-type",
                format!(
                    "{key} is {}, llama.cpp reads {expected} and refuses the file",
                    describe(&value)
                ),
            )
            .key(&key)
            .at(at)
        };
        match (read, &value) {
            (Scalar(t), _) if found == t => {}
            (Scalar(t), _) => findings.push(wrong(&format!("a {t}"))),
            (PerLayer, Value::U32(_)) => {}
            (PerLayer, Value::Array(a)) => {
                let items_fit = matches!(a.item_type(), T::U32 | T::I32);
                if !items_fit {
                    findings.push(wrong("a uint32 or an array of int32/uint32 per block"));
                } else if let Some(n) = block_count.filter(|&n| n != a.len() as u64) {
                    findings.push(
                        Finding::error(
                            "hparam-invalid",
                            format!(
                                "{key} has {} entries, llama.cpp requires one per block ({n})",
                                a.len()
                            ),
                        )
                        .key(&key)
                        .at(at),
                    );
                }
            }
            (PerLayer, _) => findings.push(wrong("a uint32 or an array with one entry per block")),
        }
    }
}

fn describe(value: &Value) -> String {
    match value {
        Value::Array(a) => format!("an array of {}", a.item_type()),
        other => format!("a {}", other.value_type()),
    }
}
