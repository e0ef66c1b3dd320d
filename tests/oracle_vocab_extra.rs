//! The RWKV and PLaMo-2 tokenizers against llama.cpp on the synthetic vocabularies of
//! fixtures/tokenizer/vocab_extra/ (fixtures/make_vocab_extra.py): every corpus text in both
//! modes gives llama.cpp's ids, every recorded id llama.cpp's pieces; random bytes and
//! malformed UTF-8 never panic.

mod common;

use gguf_lens::tokenizer::{Tokenizer, VocabType};
use gguf_lens::GgufFile;

fn load(name: &str) -> Vec<u8> {
    std::fs::read(
        common::root()
            .join("fixtures/tokenizer/vocab_extra")
            .join(name),
    )
    .unwrap()
}

#[test]
fn vocab_extra_matches_llama_cpp() {
    let doc: serde_json::Value = serde_json::from_slice(&load("expected.json")).unwrap();
    let texts = common::corpus::texts(&doc);
    assert!(texts.len() >= 290);
    let modes = common::corpus::modes(&doc);
    let vocabs = doc["vocabs"].as_object().unwrap();
    assert!(vocabs.contains_key("rwkv.gguf") && vocabs.contains_key("plamo2.gguf"));
    let mut failures = Vec::new();
    for (name, v) in vocabs {
        let bytes = load(name);
        let file = GgufFile::from_bytes(&bytes).unwrap();
        let tok = Tokenizer::from_gguf(&file).unwrap();
        let want_type = if name.starts_with("rwkv") {
            VocabType::Rwkv
        } else {
            VocabType::Plamo2
        };
        assert_eq!(tok.vocab_type(), want_type);
        let ids = v["ids"].as_array().unwrap();
        let (bad, total) =
            common::corpus::check_ids(name, &tok, &texts, &modes, ids, 3, &mut failures);
        assert!(total >= 580);
        let pieces = v["pieces"].as_object().unwrap();
        let (bad_pieces, n_pieces) =
            common::corpus::check_pieces(name, &tok, pieces, &mut failures);
        eprintln!(
            "{name}: {}/{total} corpus cases match; {bad_pieces} of {n_pieces} pieces differ",
            total - bad
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Random bytes, malformed UTF-8 and half escapes never panic, and (with every byte in the
/// vocabulary) detokenizing gives the bytes back: any bytes for RWKV, valid UTF-8 without a
/// leading BOM for PLaMo-2 (which reads code points and drops a leading BOM).
#[test]
fn vocab_extra_hostile_bytes_never_panic() {
    for name in ["rwkv.gguf", "plamo2.gguf"] {
        hostile(name);
    }
}

fn hostile(name: &str) {
    let bytes = load(name);
    let file = GgufFile::from_bytes(&bytes).unwrap();
    let tok = Tokenizer::from_gguf(&file).unwrap();
    let rwkv = tok.vocab_type() == VocabType::Rwkv;
    let mut inputs: Vec<Vec<u8>> = [
        b"\xf4\x90\x80\x80".as_slice(),
        b"a\xf7\xbf\xbf\xbfb",
        b"\xff\xfe\xfd",
        b"\xed\xa0\x80\xed\xbf\xbf",
        b"<s\xff>",
        b"\\x",
        "naïve 中文 🙂 \u{feff}x".as_bytes(),
        b"\\",
        b"\x00\x00",
    ]
    .iter()
    .map(|b| b.to_vec())
    .collect();
    // A small xorshift generator: reproducible random byte strings.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for len in 0..200 {
        let mut v = Vec::with_capacity(len);
        for _ in 0..len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            v.push(x as u8);
        }
        inputs.push(v);
    }
    for input in &inputs {
        for (add, parse) in [(true, true), (false, false)] {
            let ids = tok.tokenize(input, add, parse);
            assert!(ids.iter().all(|&i| i >= 0 && (i as usize) < tok.len()));
            let utf8 = std::str::from_utf8(input).is_ok_and(|t| !t.starts_with('\u{feff}'));
            if !parse && (rwkv || utf8) {
                assert_eq!(&tok.detokenize(&ids, true), input, "{name}");
            }
        }
    }
    for id in [-1, i32::MIN, i32::MAX, tok.len() as i32] {
        assert!(tok.token_to_piece(id, true).is_empty());
    }
}

/// A PLaMo-2 vocabulary without a token for some byte is refused, as llama.cpp refuses it
/// ("Byte token for <0x65> is not set"); an RWKV one without it tokenizes that byte as -1.
#[test]
fn vocab_extra_missing_byte_token() {
    let mut bytes = load("plamo2.gguf");
    let at = bytes.windows(6).position(|w| w == b"<0x41>").unwrap();
    bytes[at + 4] = b'G'; // `<0x4G>`: not hex, so no token for byte 0x41
    let file = GgufFile::from_bytes(&bytes).unwrap();
    let e = Tokenizer::from_gguf(&file).unwrap_err();
    assert!(e.to_string().contains("<0x41>"), "{e}");

    let mut bytes = load("rwkv.gguf");
    // Byte 0x01's token text `\x01` becomes `\x02`, a second token for 0x02.
    let at = bytes.windows(4).position(|w| w == br"\x01").unwrap();
    bytes[at + 3] = b'2';
    let file = GgufFile::from_bytes(&bytes).unwrap();
    let tok = Tokenizer::from_gguf(&file).unwrap();
    assert_eq!(tok.tokenize(b"\x01", false, false), vec![-1]);
    assert!(tok.detokenize(&[-1], true).is_empty());
}
