//! The tokenizer as `gguf-lens tokenize` builds it (`Tokenizer::from_gguf` on a parsed header),
//! then tokenize, token_to_piece and detokenize over fuzzed text. The first byte picks where the
//! vocabulary comes from:
//! - 0: the rest is `[flags][text length u16 LE][text][GGUF file]`, a fuzzed file (the corpus
//!   starts from llama.cpp's `models/ggml-vocab-*.gguf`, see scripts/fuzz.sh);
//! - 1: a small vocabulary of any model type and pre-tokenizer built from structured input;
//! - 2: `[vocab index][flags][text]`, one of the real vocabularies in
//!   `$GGUF_LENS_FUZZ_VOCABS` (a directory, loaded once), so the whole input is text.
//!
//! Every id given back must name a token of the vocabulary (or be llama.cpp's null token).
#![no_main]

use std::sync::OnceLock;

use arbitrary::{Arbitrary, Unstructured};
use gguf_lens::tokenizer::Tokenizer;
use gguf_lens::GgufFile;
use gguf_lens_fuzz::{gguf, ArbValue, Meta};
use libfuzzer_sys::fuzz_target;

const MODELS: [&str; 8] = [
    "llama", "gpt2", "bert", "t5", "rwkv", "plamo2", "gemma4", "none",
];

/// `tokenizer.ggml.pre` values the pre-tokenizer knows (and one it does not).
const PRES: &[&str] = &[
    "",
    "default",
    "llama3",
    "llama-bpe",
    "gpt-2",
    "qwen2",
    "qwen35",
    "deepseek-llm",
    "deepseek-coder",
    "deepseek-v3",
    "falcon",
    "starcoder",
    "refact",
    "command-r",
    "olmo",
    "dbrx",
    "smaug-bpe",
    "poro-chat",
    "jais",
    "tekken",
    "chameleon",
    "minerva-7b",
    "gpt-4o",
    "superbpe",
    "kimi-k2",
    "afmoe",
    "tiny_aya",
    "bloom",
    "gpt3-finnish",
    "exaone",
    "viking",
    "chatglm-bpe",
    "whitespace",
    "gemma4",
    "hunyuan",
    "llama4",
    "glm4",
    "grok-2",
    "seed-coder",
    "mpt",
    "phi-2",
    "stablelm2",
    "codeshell",
    "jina-v2-code",
    "roberta-bpe",
    "pixtral",
    "trillion",
    "bailingmoe",
    "lfm2",
    "unknown-pre",
];

const KEYS: &[&str] = &[
    "tokenizer.ggml.bos_token_id",
    "tokenizer.ggml.eos_token_id",
    "tokenizer.ggml.unknown_token_id",
    "tokenizer.ggml.seperator_token_id",
    "tokenizer.ggml.padding_token_id",
    "tokenizer.ggml.mask_token_id",
    "tokenizer.ggml.eot_token_id",
    "tokenizer.ggml.eom_token_id",
    "tokenizer.ggml.fim_pre_token_id",
    "tokenizer.ggml.fim_suf_token_id",
    "tokenizer.ggml.fim_mid_token_id",
    "tokenizer.ggml.fim_pad_token_id",
    "tokenizer.ggml.add_bos_token",
    "tokenizer.ggml.add_eos_token",
    "tokenizer.ggml.add_sep_token",
    "tokenizer.ggml.add_space_prefix",
    "tokenizer.ggml.remove_extra_whitespaces",
    "tokenizer.ggml.precompiled_charsmap",
    "tokenizer.ggml.scores",
    "tokenizer.ggml.token_type",
    "tokenizer.ggml.merges",
];

#[derive(Debug, Arbitrary)]
struct Token {
    text: String,
    /// llama.cpp token types: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte.
    ty: u8,
    score: f32,
}

#[derive(Debug, Arbitrary)]
struct Vocab {
    model: u8,
    pre: u8,
    /// Byte tokens `<0x00>`..`<0xFF>` (SPM falls back to them).
    byte_tokens: bool,
    tokens: Vec<Token>,
    /// Merges as pairs of token indexes.
    merges: Vec<(u16, u16)>,
    keys: Vec<(u8, ArbValue)>,
    flags: u8,
    text: Vec<u8>,
}

fn structured(u: &mut Unstructured<'_>) -> Option<(GgufFile, u8, Vec<u8>)> {
    let v = Vocab::arbitrary(u).ok()?;
    let mut tokens: Vec<Vec<u8>> = Vec::new();
    let mut types = Vec::new();
    let mut scores = Vec::new();
    if v.byte_tokens {
        for b in 0..=255u8 {
            tokens.push(format!("<0x{b:02X}>").into_bytes());
            types.push(Meta::I32(6));
            scores.push(Meta::F32(0.0));
        }
    }
    for t in &v.tokens {
        tokens.push(t.text.as_bytes().to_vec());
        types.push(Meta::I32(i32::from(t.ty % 8)));
        scores.push(Meta::F32(t.score));
    }
    let text_of = |i: u16| -> String {
        match tokens.get(usize::from(i) % tokens.len().max(1)) {
            Some(t) => String::from_utf8_lossy(t).into_owned(),
            None => String::new(),
        }
    };
    let merges: Vec<Meta> = v
        .merges
        .iter()
        .map(|&(a, b)| Meta::Str(format!("{} {}", text_of(a), text_of(b)).into_bytes()))
        .collect();
    let mut kvs = vec![
        (
            "tokenizer.ggml.model".to_string(),
            Meta::Str(
                MODELS[usize::from(v.model) % MODELS.len()]
                    .as_bytes()
                    .to_vec(),
            ),
        ),
        (
            "tokenizer.ggml.pre".to_string(),
            Meta::Str(PRES[usize::from(v.pre) % PRES.len()].as_bytes().to_vec()),
        ),
        (
            "tokenizer.ggml.tokens".to_string(),
            Meta::Array(
                gguf_lens::ValueType::String,
                tokens.into_iter().map(Meta::Str).collect(),
            ),
        ),
        (
            "tokenizer.ggml.token_type".to_string(),
            Meta::Array(gguf_lens::ValueType::I32, types),
        ),
        (
            "tokenizer.ggml.scores".to_string(),
            Meta::Array(gguf_lens::ValueType::F32, scores),
        ),
        (
            "tokenizer.ggml.merges".to_string(),
            Meta::Array(gguf_lens::ValueType::String, merges),
        ),
    ];
    for (k, value) in &v.keys {
        let key = KEYS[usize::from(*k) % KEYS.len()].to_string();
        // a key set twice is a parse error; replace instead, so the tokenizer sees the value
        kvs.retain(|(name, _)| *name != key);
        kvs.push((key, value.meta()));
    }
    let file = GgufFile::from_bytes(&gguf(&kvs, &[], true)).ok()?;
    Some((file, v.flags, v.text))
}

/// The real vocabularies, built once.
fn real() -> &'static [Tokenizer] {
    static REAL: OnceLock<Vec<Tokenizer>> = OnceLock::new();
    REAL.get_or_init(|| {
        let Some(dir) = std::env::var_os("GGUF_LENS_FUZZ_VOCABS") else {
            return Vec::new();
        };
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "gguf"))
            .collect();
        paths.sort();
        paths
            .iter()
            .filter_map(|p| {
                let bytes = std::fs::read(p).ok()?;
                Tokenizer::from_gguf(&GgufFile::from_bytes(&bytes).ok()?).ok()
            })
            .collect()
    })
}

fn exercise(tok: &Tokenizer, flags: u8, text: &[u8]) {
    let n = tok.len();
    let ids = tok.tokenize(text, flags & 1 != 0, flags & 2 != 0);
    for &id in &ids {
        // -1 is llama.cpp's LLAMA_TOKEN_NULL, which RWKV gives for a byte no token starts
        // with when the vocabulary has no unknown token
        assert!(
            id == -1 || usize::try_from(id).is_ok_and(|i| i < n),
            "tokenize gave id {id} of a {n}-token vocabulary"
        );
        let _ = tok.token_to_piece(id, flags & 4 != 0);
    }
    let _ = tok.detokenize(&ids, flags & 4 != 0);
    // ids that are not the vocabulary's must not panic either
    let _ = tok.detokenize(&[-1, n as i32, i32::MAX, 0], true);
    let _ = tok.token_to_piece(-1, true);
    let _ = tok.token_id(text);
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode {
        0 => {
            let [flags, a, b, rest @ ..] = rest else {
                return;
            };
            let len = usize::from(u16::from_le_bytes([*a, *b])).min(rest.len());
            let (text, file) = rest.split_at(len);
            let Ok(file) = GgufFile::from_bytes(file) else {
                return;
            };
            if let Ok(tok) = Tokenizer::from_gguf(&file) {
                exercise(&tok, *flags, text);
            }
        }
        2 if !real().is_empty() => {
            let [index, flags, text @ ..] = rest else {
                return;
            };
            let real = real();
            exercise(&real[usize::from(*index) % real.len()], *flags, text);
        }
        _ => {
            let mut u = Unstructured::new(rest);
            if let Some((file, flags, text)) = structured(&mut u) {
                if let Ok(tok) = Tokenizer::from_gguf(&file) {
                    exercise(&tok, flags, &text);
                }
            }
        }
    }
});
