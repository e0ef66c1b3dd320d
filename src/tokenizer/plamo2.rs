//! PLaMo-2 as llama.cpp's `llm_tokenizer_plamo2` does it: over the text's code points (a
//! leading BOM dropped), a right-to-left dynamic program picks the cut of least cost, a token
//! costing `-round(score * 1e4)` and a code point no token covers `1e7` (its UTF-8 bytes then
//! become `<0xXX>` byte tokens). llama.cpp walks an Aho-Corasick-like suffix table; the
//! candidates at each position are the same as here (every non-byte token whose text starts
//! there), tried longest first with ties kept by the first, the unknown code point last.

use super::unicode::cpts_from_utf8;
use super::{attr, bad, FxMap, Tokenizer};
use crate::error::Error;

/// What a code point costs when no token covers it (llama.cpp's UNKNOWN_SCORE, negated).
const UNKNOWN_COST: i64 = 10_000_000;

#[derive(Debug)]
pub(crate) struct Plamo2 {
    /// Byte b's `<0xXX>` token.
    bytes: [i32; 256],
    /// Code-point trie of the non-byte token texts; per node (score * 1e4 rounded, token id)
    /// when a token with a finite score ends there.
    values: Vec<Option<(i32, i32)>>,
    edges: FxMap<(u32, u32), u32>,
}

/// The byte a `<0xXX>` text stands for.
pub(crate) fn hex_byte(t: &[u8]) -> Option<u8> {
    if t.len() != 6 || !t.starts_with(b"<0x") || t[5] != b'>' {
        return None;
    }
    let h = std::str::from_utf8(&t[3..5]).ok()?;
    if !h.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u8::from_str_radix(h, 16).ok()
}

impl Plamo2 {
    pub(crate) fn new(tok: &Tokenizer) -> Result<Plamo2, Error> {
        let n = tok.len();
        let mut bytes = [0i32; 256];
        // Score by text (the last token with a text sets it) and id by text (the last id,
        // byte tokens included), as llama.cpp's two maps do.
        let mut score: FxMap<&[u8], f32> = FxMap::default();
        let mut ids: FxMap<&[u8], i32> = FxMap::default();
        for id in 0..n {
            let t = tok.token_text(id as i32);
            ids.insert(t, id as i32);
            if tok.token_attr(id as i32) & attr::BYTE != 0 {
                if let Some(b) = hex_byte(t) {
                    bytes[b as usize] = id as i32;
                }
                continue;
            }
            score.insert(t, tok.score(id as i32));
        }
        // llama.cpp refuses the vocabulary unless every byte has a token (id 0 counts as none).
        if let Some(b) = bytes.iter().position(|&id| id == 0) {
            return Err(bad(format!(
                "PLaMo-2 vocabulary has no byte token for <0x{b:02X}>"
            )));
        }
        let mut p = Plamo2 {
            bytes,
            values: vec![None],
            edges: FxMap::default(),
        };
        for (t, s) in &score {
            // Suffix-only entries and non-finite scores are never candidates.
            let scaled = f64::from(*s) * 1e4;
            if !scaled.is_finite() {
                continue;
            }
            let Some(&id) = ids.get(t) else {
                continue;
            };
            let mut node = 0u32;
            for c in cpts_from_utf8(t) {
                let next = p.values.len() as u32;
                node = *p.edges.entry((node, c)).or_insert_with(|| {
                    p.values.push(None);
                    next
                });
            }
            if node != 0 {
                p.values[node as usize] = Some((scaled.round() as i32, id));
            }
        }
        Ok(p)
    }

    pub(crate) fn tokenize(&self, text: &[u8], out: &mut Vec<i32>) {
        let mut cpts = cpts_from_utf8(text);
        if cpts.first() == Some(&0xFEFF) {
            cpts.remove(0);
        }
        let n = cpts.len();
        if n == 0 {
            return;
        }
        // cost[i]: least cost of cpts[i..]; step[i]: (length, token id or -1) of its first piece.
        let mut cost = vec![i64::MAX; n + 1];
        let mut step = vec![(1usize, -1i32); n + 1];
        cost[n] = 0;
        let mut found: Vec<(usize, i32, i32)> = Vec::new();
        for i in (0..n).rev() {
            found.clear();
            let mut node = 0u32;
            for (k, &c) in cpts[i..].iter().enumerate() {
                let Some(&next) = self.edges.get(&(node, c)) else {
                    break;
                };
                node = next;
                if let Some((s, id)) = self.values[node as usize] {
                    found.push((k + 1, s, id));
                }
            }
            let mut best = i64::MAX;
            for &(len, s, id) in found.iter().rev() {
                let c = cost[i + len].saturating_sub(i64::from(s));
                if c < best {
                    best = c;
                    step[i] = (len, id);
                }
            }
            let c = cost[i + 1].saturating_add(UNKNOWN_COST);
            if c < best {
                best = c;
                step[i] = (1, -1);
            }
            cost[i] = best;
        }
        let mut pos = 0;
        while pos < n {
            let (len, id) = step[pos];
            if id >= 0 {
                out.push(id);
            } else {
                let mut buf = [0u8; 4];
                let c = cpts[pos];
                let s = 1
                    + usize::from(c >= 0x80)
                    + usize::from(c >= 0x800)
                    + usize::from(c >= 0x10000);
                // UTF-8 bytes of c, as llama.cpp forms them (also for c past U+10FFFF).
                for (i, b) in buf.iter_mut().enumerate().take(s) {
                    let lead: u32 = if s == 1 {
                        c
                    } else if i == 0 {
                        (0xF00 >> s) & 0xFF
                    } else {
                        0x80
                    };
                    *b = ((lead | ((c >> ((s - i - 1) * 6)) & 0x3F)) & 0xFF) as u8;
                }
                out.extend(buf[..s].iter().map(|&b| self.bytes[b as usize]));
            }
            pos += len;
        }
    }
}
