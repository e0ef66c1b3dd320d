//! The tokenizer on a hostile vocabulary and oversized input: bounded work, clear errors.

mod common;

use common::Builder;
use gguf_lens::tokenizer::{Tokenizer, MAX_TOKENIZE_BYTES};
use gguf_lens::GgufFile;

/// A WPM (BERT) vocabulary: 103 filler tokens, then "▁b", "b" and one 100,000-byte token.
fn bert_with_a_long_token() -> Tokenizer {
    let mut tokens: Vec<Vec<u8>> = (0..103)
        .map(|i| format!("[unused{i}]").into_bytes())
        .collect();
    tokens.push("\u{2581}b".into());
    tokens.push(b"b".to_vec());
    tokens.push(vec![b'a'; 100_000]);
    let mut b = Builder::new(3);
    b.header(0, 2).kv_str("tokenizer.ggml.model", b"bert");
    b.string(b"tokenizer.ggml.tokens")
        .u32(9)
        .u32(8)
        .u64(tokens.len() as u64);
    for t in &tokens {
        b.string(t);
    }
    Tokenizer::from_gguf(&GgufFile::from_bytes(&b.build()).unwrap()).unwrap()
}

#[test]
fn a_long_token_does_not_make_tokenizing_quadratic() {
    let tok = bert_with_a_long_token();
    // One 20,000-letter word: every position looked up every length up to the long token's.
    let text = vec![b'b'; 20_000];
    // (The work per position is counted in tokenizer::trie's unit tests.)
    let ids = tok.tokenize(&text, false, false);
    assert_eq!(ids.len(), 20_000);
    assert_eq!(ids[0], 103);
    assert!(ids[1..].iter().all(|&id| id == 104));
    // A word no token starts gives the unknown token, walking only what matches.
    assert_eq!(tok.tokenize(&vec![b'a'; 100_000], false, false), [100]);
}

#[test]
fn text_over_the_input_limit_is_refused() {
    let tok = bert_with_a_long_token();
    let err = tok
        .try_tokenize(&vec![b'b'; MAX_TOKENIZE_BYTES + 1], false, false)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "tokenize: text of {} bytes is over the input limit of {MAX_TOKENIZE_BYTES} bytes",
            MAX_TOKENIZE_BYTES + 1
        )
    );
    assert_eq!(tok.try_tokenize(b"b b", false, false).unwrap(), [103, 103]);
}
