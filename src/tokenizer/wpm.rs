//! WordPiece as llama.cpp's `llm_tokenizer_wpm_session` does it: BERT-style normalization
//! (lowercase, accents stripped through the first code point of the NFD form, control
//! characters dropped but not unassigned ones; punctuation, ASCII symbols and CJK ideographs
//! become words of their own), then per word (with a leading U+2581) the longest vocabulary
//! match from the left; a word that cannot be covered becomes the unknown token.

use std::sync::OnceLock;

use unicode_normalization::UnicodeNormalization;

use super::unicode::{cpts_from_utf8, push_cpt};
use super::Tokenizer;

struct Classes {
    control: regex::Regex,
    mark: regex::Regex,
    punct: regex::Regex,
    symbol: regex::Regex,
}

fn classes() -> &'static Classes {
    static C: OnceLock<Classes> = OnceLock::new();
    C.get_or_init(|| Classes {
        // llama.cpp's control flag: Cc, Cf, Co and Cs (no str holds a surrogate). Unassigned
        // code points and noncharacters (Cn) are "undefined" there: kept in the word, which
        // then becomes the unknown token.
        control: regex::Regex::new(r"^[\p{Cc}\p{Cf}\p{Co}]$").expect("static regex"),
        mark: regex::Regex::new(r"^\p{M}$").expect("static regex"),
        punct: regex::Regex::new(r"^\p{P}$").expect("static regex"),
        symbol: regex::Regex::new(r"^\p{S}$").expect("static regex"),
    })
}

fn is_chinese(c: u32) -> bool {
    (0x4E00..=0x9FFF).contains(&c)
        || (0x3400..=0x4DBF).contains(&c)
        || (0x20000..=0x2A6DF).contains(&c)
        || (0x2A700..=0x2B73F).contains(&c)
        || (0x2B740..=0x2B81F).contains(&c)
        || (0x2B920..=0x2CEAF).contains(&c)
        || (0xF900..=0xFAFF).contains(&c)
        || (0x2F800..=0x2FA1F).contains(&c)
}

fn preprocess(text: &[u8], lowercase: bool, strip_accents: bool) -> Vec<Vec<u8>> {
    let cl = classes();
    let mut words: Vec<Vec<u8>> = vec![Vec::new()];
    let mut buf = [0u8; 4];
    for mut cpt in cpts_from_utf8(text) {
        if strip_accents {
            if let Some(c) = char::from_u32(cpt) {
                cpt = c.nfd().next().map_or(cpt, u32::from);
            }
        }
        let ch = char::from_u32(cpt);
        let s: &str = match ch {
            Some(c) => c.encode_utf8(&mut buf),
            None => "\u{E000}",
        };
        if ch.is_some_and(char::is_whitespace) {
            if !words.last().is_some_and(|w| w.is_empty()) {
                words.push(Vec::new());
            }
            continue;
        }
        if cpt == 0 || cpt == 0xFFFD || cl.control.is_match(s) || ch.is_none() {
            continue;
        }
        if strip_accents && cl.mark.is_match(s) {
            continue;
        }
        let lower = match ch {
            Some(c) if lowercase => {
                let mut l = c.to_lowercase();
                match (l.next(), l.next()) {
                    (Some(x), None) => u32::from(x),
                    _ => cpt,
                }
            }
            _ => cpt,
        };
        let mut enc = Vec::with_capacity(4);
        push_cpt(&mut enc, lower);
        if cl.punct.is_match(s) || (cpt < 0x7F && cl.symbol.is_match(s)) || is_chinese(cpt) {
            if words.last().is_some_and(|w| !w.is_empty()) {
                words.push(Vec::new());
            }
            if let Some(last) = words.last_mut() {
                *last = enc;
            }
            words.push(Vec::new());
        } else if let Some(last) = words.last_mut() {
            last.extend_from_slice(&enc);
        }
    }
    if words.last().is_some_and(|w| w.is_empty()) {
        words.pop();
    }
    words
}

pub(crate) fn tokenize(tok: &Tokenizer, text: &[u8], out: &mut Vec<i32>) {
    for word in preprocess(text, tok.lowercase, tok.strip_accents) {
        if word.is_empty() {
            continue;
        }
        let mut w = "\u{2581}".as_bytes().to_vec();
        w.extend_from_slice(&word);
        let n = w.len();
        let start = out.len();
        let mut i = 0;
        while i < n {
            // The longest token at i (llama.cpp tries every length from the longest token's).
            let end = n.min(i + tok.max_token_len + 1);
            let found = match &tok.wpm {
                Some(trie) => trie.longest(&w[i..end]),
                None => (i + 1..=end)
                    .rev()
                    .find_map(|j| tok.text_to_token(&w[i..j]).map(|id| (j - i, id))),
            };
            let Some((len, id)) = found else {
                out.truncate(start);
                break;
            };
            out.push(id);
            i += len;
        }
        if out.len() == start {
            if let Some(unk) = tok.unk {
                out.push(unk);
            }
        }
    }
}
