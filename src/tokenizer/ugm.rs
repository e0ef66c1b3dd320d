//! Unigram (T5-style SentencePiece) as llama.cpp's `llm_tokenizer_ugm_session` does it:
//! normalization through the file's precompiled charsmap (an XOR-compressed double array of
//! prefixes and their replacements; user-defined tokens pass unchanged), spaces as U+2581,
//! then the best-scoring segmentation (Viterbi) over normal, user-defined and unused tokens,
//! an unknown token (min score - 10) where no token covers a code point.

use super::trie::ByteTrie;
use super::unicode::len_utf8;
use super::{attr, Tokenizer};

/// The UGM tables built once per tokenizer.
#[derive(Debug)]
pub(crate) struct Ugm {
    xcda: Vec<u32>,
    replacements: Vec<u8>,
    /// Normal, user-defined and unused tokens by text (a later id wins, as in llama.cpp's trie).
    matcher: ByteTrie,
    /// User-defined tokens (the id is unused).
    user_defined: ByteTrie,
    unknown_score: f64,
}

impl Ugm {
    pub(crate) fn new(tok: &Tokenizer, charsmap: &[u8]) -> Ugm {
        let mut xcda = Vec::new();
        let mut replacements = Vec::new();
        if charsmap.len() >= 4 {
            let size =
                u32::from_le_bytes([charsmap[0], charsmap[1], charsmap[2], charsmap[3]]) as usize;
            let end = 4usize.saturating_add(size).min(charsmap.len());
            xcda = charsmap[4..end]
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            replacements = charsmap[end..].to_vec();
        }
        let mut matcher = ByteTrie::new();
        let mut user_defined = ByteTrie::new();
        let mut min_score = f32::MAX;
        for id in 0..tok.len() as i32 {
            let a = tok.token_attr(id);
            let text = tok.token_text(id);
            if a & attr::NORMAL != 0 {
                min_score = min_score.min(tok.score(id));
            }
            if a & (attr::NORMAL | attr::USER_DEFINED | attr::UNUSED) != 0 {
                matcher.insert(text, id);
            }
            if a & attr::USER_DEFINED != 0 {
                user_defined.insert(text, id);
            }
        }
        Ugm {
            xcda,
            replacements,
            matcher,
            user_defined,
            unknown_score: f64::from(min_score - 10.0),
        }
    }

    fn node(&self, i: usize) -> Option<u32> {
        self.xcda.get(i).copied()
    }

    /// (replacement bytes, input bytes consumed) for the prefix at `at`.
    fn normalize_prefix<'a>(&'a self, input: &'a [u8], at: usize) -> (&'a [u8], usize) {
        let rest = &input[at..];
        if let Some((len, _)) = self.user_defined.longest(rest) {
            return (&rest[..len], len);
        }
        let mut longest = (0usize, 0usize);
        if !self.xcda.is_empty() {
            let base = |n: u32| (n >> 10) << ((n & (1 << 9)) >> 6);
            let mut index = self.node(0).map_or(0, base) as usize;
            for (k, &c) in rest.iter().enumerate() {
                if c == 0 {
                    break;
                }
                index ^= c as usize;
                let Some(n) = self.node(index) else { break };
                if n & ((1 << 31) | 0xFF) != u32::from(c) {
                    break;
                }
                let leaf = (n >> 8) & 1 == 1;
                index ^= base(n) as usize;
                if leaf {
                    let Some(v) = self.node(index) else { break };
                    longest = (k + 1, (v & ((1 << 31) - 1)) as usize);
                }
            }
        }
        if longest.0 > 0 {
            if let Some(r) = self.replacements.get(longest.1..) {
                if let Some(end) = r.iter().position(|&b| b == 0) {
                    return (&r[..end], longest.0);
                }
            }
        }
        let n = len_utf8(rest[0]);
        let valid = rest[0] < 0xF8
            && n <= rest.len()
            && (n == 1 && rest[0] < 0x80 || n > 1 && rest[1..n].iter().all(|&b| b & 0xC0 == 0x80));
        if valid {
            (&rest[..n], n)
        } else {
            ("\u{FFFD}".as_bytes(), 1)
        }
    }

    fn normalize(&self, tok: &Tokenizer, input: &[u8]) -> Vec<u8> {
        let space: &[u8] = if tok.escape_whitespaces {
            "\u{2581}".as_bytes()
        } else {
            b" "
        };
        let prepend = tok.add_space_prefix;
        let merge = tok.remove_extra_whitespaces;
        let mut out = Vec::with_capacity(input.len() * 3);
        let mut prepended = false;
        let mut non_ws = false;
        let mut at = 0;
        while at < input.len() {
            let (rep, used) = self.normalize_prefix(input, at);
            for &c in rep {
                if c != b' ' {
                    if !non_ws {
                        non_ws = true;
                        if (prepend && !prepended) || merge {
                            out.extend_from_slice(space);
                            prepended = true;
                        }
                    }
                    out.push(c);
                } else {
                    non_ws = false;
                    if !merge {
                        out.extend_from_slice(space);
                    }
                }
            }
            at += used.max(1);
        }
        out
    }

    pub(crate) fn tokenize(&self, tok: &Tokenizer, text: &[u8], out: &mut Vec<i32>) {
        let norm = self.normalize(tok, text);
        let n = norm.len();
        if n == 0 {
            return;
        }
        // No valid unknown token (a vocabulary without one): llama.cpp's null token, -1.
        let unk = tok.unk.unwrap_or(-1);
        // (token, start offset, score) per end offset.
        let mut best: Vec<(i32, usize, f64)> = vec![(unk, 0, -f64::MAX); n + 1];
        best[0] = (unk, 0, 0.0);
        let mut at = 0;
        while at < n {
            let units = len_utf8(norm[at]).min(n - at);
            let cur = best[at].2;
            let mut single = false;
            for (len, id) in self
                .matcher
                .prefixes(&norm[at..n.min(at + tok.max_token_len)])
            {
                let end = at + len;
                if end - at == units {
                    single = true;
                }
                let score = if tok.token_attr(id) & attr::USER_DEFINED != 0 {
                    0.0
                } else {
                    f64::from(tok.score(id))
                };
                if cur + score > best[end].2 {
                    best[end] = (id, at, cur + score);
                }
            }
            if !single {
                let end = at + units;
                if cur + self.unknown_score > best[end].2 {
                    best[end] = (unk, at, cur + self.unknown_score);
                }
            }
            at += units;
        }
        let start = out.len();
        let mut prev_unknown = false;
        let mut i = n;
        loop {
            let (id, from, _) = best[i];
            let unknown = id == unk;
            if !(prev_unknown && unknown) {
                out.push(id);
            }
            if from == 0 {
                break;
            }
            prev_unknown = unknown;
            i = from;
        }
        out[start..].reverse();
    }
}
