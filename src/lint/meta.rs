//! Metadata that must agree with the tensors or with itself: `general.file_type` against the
//! tensor mix, `{arch}.block_count` against the `blk.N` tensors, chat templates that parse.

use std::collections::BTreeSet;

use super::{architecture, Finding, View};
use crate::effective_ftype::{base_type, default_type, guess_file_type, TensorKind};
use crate::gguf::{GgufFile, TensorInfo, Value};
use crate::model::file_type_label;
use crate::types::GgmlType;

const FILE_TYPE_KEY: &str = "general.file_type";
/// llama.cpp's LLAMA_FTYPE_GUESSED: "the loader guessed it", no claim to check.
const GUESSED: u64 = 1024;

pub(super) fn check(view: &View, findings: &mut Vec<Finding>) {
    if view.complete {
        file_type(view, findings);
        block_count(view, findings);
    }
    chat_templates(view.meta, findings);
}

/// A label: `MOSTLY_Q4_K_M (15)`.
fn label(file_type: u64) -> String {
    match file_type_label(file_type) {
        Some(name) => format!("{name} ({file_type})"),
        None => format!("{file_type}"),
    }
}

/// Types llama-quantize falls back to when a row length is not a multiple of the intended
/// type's block (`llama-quant.cpp`'s `tensor_type_fallback`: Q4_K → Q5_0, Q5_K → Q5_1,
/// Q6_K → Q8_0, Q2_K/Q3_K → Q4_0, IQ → IQ4_NL, F16 when even that does not fit).
const FALLBACK_TYPES: &[GgmlType] = &[
    GgmlType::Q4_0,
    GgmlType::Q5_0,
    GgmlType::Q5_1,
    GgmlType::Q8_0,
    GgmlType::IQ4_NL,
    GgmlType::F16,
];

/// A tensor as the label's quantization meant it: a fallback type on a row length the label's
/// default type cannot hold counts as that default type.
fn as_intended<'a>(t: &'a TensorInfo, default: GgmlType) -> TensorKind<'a> {
    let mut kind = TensorKind::of(t);
    let fits = t.row_len() % u64::from(default.block_size()) == 0;
    if !fits && FALLBACK_TYPES.contains(&kind.ggml_type) {
        kind.ggml_type = default;
    }
    kind
}

/// Whether the tensor mix's base type can come from quantizing to `file_type` (whose default
/// type is `default`): the default type itself; for the IQ labels any IQ type (their recipes
/// mix them: IQ3_XS puts IQ3_XXS in some roles, IQ2_M IQ2_S and IQ3_S, …); for MXFP4_MOE also
/// Q8_0 (MXFP4 goes to the experts only).
fn label_fits(file_type: u64, default: GgmlType, base: GgmlType) -> bool {
    use GgmlType as G;
    let iq = [
        G::IQ1_S,
        G::IQ1_M,
        G::IQ2_XXS,
        G::IQ2_XS,
        G::IQ2_S,
        G::IQ3_XXS,
        G::IQ3_S,
        G::IQ4_NL,
        G::IQ4_XS,
    ];
    base == default
        || (iq.contains(&default) && iq.contains(&base))
        || (file_type == 38 && base == G::Q8_0)
}

fn file_type(view: &View, findings: &mut Vec<Finding>) {
    let file = view.meta;
    let kinds: Vec<TensorKind> = view.tensors.iter().map(|t| TensorKind::of(t)).collect();
    let at = file.value_offset(FILE_TYPE_KEY);
    let Some(value) = file.get(FILE_TYPE_KEY) else {
        if let Some(base) = base_type(&kinds) {
            let by_mix = guess_file_type(&kinds)
                .map_or(String::new(), |g| format!(": {} by tensor mix", label(g)));
            findings.push(
                Finding::warning(
                    "file-type-missing",
                    format!(
                        "no general.file_type; most matrices are {}{by_mix}",
                        base.name()
                    ),
                )
                .key(FILE_TYPE_KEY),
            );
        }
        return;
    };
    let Some(claimed) = value.as_u64() else {
        return; // not an integer: `keys` reports the type
    };
    if claimed == GUESSED {
        return;
    }
    let Some(expected) = default_type(claimed) else {
        findings.push(
            Finding::warning(
                "file-type-unknown",
                format!("general.file_type {claimed} is no file type llama.cpp defines"),
            )
            .key(FILE_TYPE_KEY)
            .at(at),
        );
        return;
    };
    let intended: Vec<TensorKind> = view
        .tensors
        .iter()
        .map(|t| as_intended(t, expected))
        .collect();
    let Some(base) = base_type(&intended) else {
        return; // no matrix to compare with (a vocabulary-only file)
    };
    if !label_fits(claimed, expected, base) {
        let by_mix = guess_file_type(&kinds)
            .map_or(String::new(), |g| format!(": {} by tensor mix", label(g)));
        findings.push(
            Finding::error(
                "file-type-mismatch",
                format!(
                    "general.file_type is {}, whose matrices are {}, but most matrices are \
                     {}{by_mix}",
                    label(claimed),
                    expected.name(),
                    base.name()
                ),
            )
            .key(FILE_TYPE_KEY)
            .at(at),
        );
        return;
    }
    // Same base type: only the K-quant sizes (S/M/L) can be told apart from the mix.
    let k_quant_size = |t: u64| (11..=17).contains(&t);
    let guess = guess_file_type(&intended);
    if let Some(g) = guess.filter(|&g| g != claimed && k_quant_size(g) && k_quant_size(claimed)) {
        findings.push(
            Finding::warning(
                "file-type-variant",
                format!(
                    "general.file_type is {}, but the tensor mix is that of {}",
                    label(claimed),
                    label(g)
                ),
            )
            .key(FILE_TYPE_KEY)
            .at(at),
        );
    }
}

/// The block index of a `blk.N.…` tensor name.
pub(super) fn block_of(name: &str) -> Option<u64> {
    let rest = name.strip_prefix("blk.")?;
    let (n, _) = rest.split_once('.')?;
    n.parse().ok()
}

fn block_count(view: &View, findings: &mut Vec<Finding>) {
    let file = view.meta;
    if view.adapter {
        return;
    }
    let blocks: BTreeSet<u64> = view
        .tensors
        .iter()
        .filter_map(|t| block_of(t.name()))
        .collect();
    let Some(arch) = architecture(file) else {
        return;
    };
    if view.tensors.is_empty() {
        return; // a vocabulary-only file
    }
    let key = format!("{arch}.block_count");
    if blocks.is_empty() && file.get(&key).is_none() {
        return; // no blocks claimed, none found (not a transformer llama.cpp knows)
    }
    let at = file.value_offset(&key);
    let Some(count) = file.get(&key).and_then(|v| v.as_u64()) else {
        findings.push(
            Finding::error(
                "block-count-missing",
                format!("{key} is missing or not an integer: llama.cpp requires it"),
            )
            .key(&key)
            .at(at),
        );
        return;
    };
    let beyond: Vec<u64> = blocks.range(count..).copied().collect();
    // The last `nextn_predict_layers` blocks are multi-token-prediction layers, which
    // converters may leave out (llama.cpp creates their tensors as not required).
    let nextn = file
        .get(&format!("{arch}.nextn_predict_layers"))
        .and_then(|v| v.as_u64())
        .unwrap_or(0)
        .min(count);
    let needed = count - nextn;
    // Blocks 0..needed without a tensor (count comes from the file: never iterate up to it).
    let present = blocks.range(..needed).count() as u64;
    let missing = needed - present;
    if beyond.is_empty() && missing == 0 {
        return;
    }
    let mut parts = Vec::new();
    if let (Some(first), Some(last)) = (beyond.first(), beyond.last()) {
        parts.push(format!(
            "tensors of blocks {first}..={last} lie beyond it (llama.cpp refuses unused tensors)"
        ));
    }
    if missing > 0 {
        // The first gap lies within the first present + 1 indices.
        let first = (0..=present).find(|b| !blocks.contains(b)).unwrap_or(0);
        parts.push(format!(
            "{missing} of its blocks have no tensor (the first: blk.{first})"
        ));
    }
    findings.push(
        Finding::error(
            "block-count-mismatch",
            format!(
                "{key} is {count} but the tensors have {} blocks: {}",
                blocks.len(),
                parts.join("; ")
            ),
        )
        .key(&key)
        .at(at),
    );
}

/// Tags Hugging Face's chat template environment adds (`{% generation %}` of its
/// AssistantTracker): not Jinja, removed before parsing.
fn strip_generation_tags(text: &str) -> std::borrow::Cow<'_, str> {
    match regex::Regex::new(r"\{%-?\s*(end)?generation\s*-?%\}") {
        Ok(tags) => tags.replace_all(text, ""),
        Err(_) => std::borrow::Cow::Borrowed(text),
    }
}

fn chat_templates(file: &GgufFile, findings: &mut Vec<Finding>) {
    for (key, value) in file.metadata() {
        if !key.starts_with("tokenizer.chat_template") || key == "tokenizer.chat_templates" {
            continue;
        }
        let Value::String(s) = value else {
            continue;
        };
        let at = Some(s.offset());
        let text = match s.to_str() {
            Ok(text) => text,
            Err(err) => {
                findings.push(
                    Finding::error("chat-template-syntax", format!("{key}: {err}"))
                        .key(key)
                        .at(err.offset),
                );
                continue;
            }
        };
        let text = strip_generation_tags(text);
        let env = minijinja::Environment::new();
        if let Err(err) = env.template_from_str(&text) {
            let line = err.line().map_or(String::new(), |l| format!(" (line {l})"));
            let detail = err.detail().unwrap_or("syntax error");
            findings.push(
                Finding::error(
                    "chat-template-syntax",
                    format!("the chat template does not parse{line}: {detail}"),
                )
                .key(key)
                .at(at),
            );
        }
    }
}
