//! RWKV-World as llama.cpp's `llm_tokenizer_rwkv` does it: token texts are escaped byte strings
//! (`\n`, `\t`, `\r`, `\xNN`, `\<c>` for c itself); the text is cut greedily from the left into
//! the longest token whose unescaped bytes it starts with. A byte no token starts with becomes
//! the unknown token (none by default: llama.cpp then emits -1).

use super::{FxMap, Tokenizer};

/// Token text to bytes (llama.cpp's `llama_unescape_rwkv_token`). Hex digits are read as that
/// function reads them on x86 (signed `char`), so malformed escapes give the same bytes.
pub(crate) fn unescape(escaped: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(escaped.len());
    let mut escaping = false;
    let mut hex_remaining = 0u8;
    let mut hex_acc = 0u8;
    for &c in escaped {
        if hex_remaining != 0 {
            let value = if (c as i8) >= b'a' as i8 {
                c.wrapping_sub(b'a').wrapping_add(10)
            } else {
                c.wrapping_sub(b'0')
            };
            hex_acc = (hex_acc << 4).wrapping_add(value);
            hex_remaining -= 1;
            if hex_remaining == 0 {
                out.push(hex_acc);
                hex_acc = 0;
            }
            continue;
        }
        if escaping {
            match c {
                b't' => out.push(b'\t'),
                b'n' => out.push(b'\n'),
                b'r' => out.push(b'\r'),
                b'x' => hex_remaining = 2,
                _ => out.push(c),
            }
            escaping = false;
            continue;
        }
        if c == b'\\' {
            escaping = true;
            continue;
        }
        out.push(c);
    }
    out
}

/// A byte trie of the unescaped token texts: node 0 is the root; edges live in one map keyed
/// by (node, byte), so a node costs 4 bytes plus its incoming edge.
#[derive(Debug)]
pub(crate) struct Trie {
    /// Per node: the token ending there, or -1.
    values: Vec<i32>,
    edges: FxMap<(u32, u8), u32>,
}

impl Trie {
    pub(crate) fn new(tok: &Tokenizer) -> Trie {
        let mut trie = Trie {
            values: vec![-1],
            edges: FxMap::default(),
        };
        for id in 0..tok.len() {
            let bytes = unescape(tok.token_text(id as i32));
            let mut node = 0u32;
            for &b in &bytes {
                let next = trie.values.len() as u32;
                node = *trie.edges.entry((node, b)).or_insert_with(|| {
                    trie.values.push(-1);
                    next
                });
            }
            // A later token with the same bytes takes the node (naive_trie::insert overwrites).
            trie.values[node as usize] = id as i32;
        }
        trie
    }

    fn child(&self, node: u32, b: u8) -> Option<u32> {
        self.edges.get(&(node, b)).copied()
    }
}

pub(crate) fn tokenize(tok: &Tokenizer, trie: &Trie, text: &[u8], out: &mut Vec<i32>) {
    let unk = tok.unk.unwrap_or(-1);
    let mut pos = 0;
    while pos < text.len() {
        let mut node = 0u32;
        let mut best: Option<(i32, usize)> = None;
        let mut i = pos;
        while i < text.len() {
            let Some(next) = trie.child(node, text[i]) else {
                break;
            };
            node = next;
            i += 1;
            let v = trie.values[node as usize];
            if v >= 0 {
                best = Some((v, i));
            }
        }
        match best {
            Some((id, end)) => {
                out.push(id);
                pos = end;
            }
            // No token starts with this byte. (When some token does but none is a prefix of
            // the rest, llama.cpp restarts from the text's start forever; one unknown token
            // and the next byte is what is done here instead.)
            None => {
                out.push(unk);
                pos += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::unescape;

    #[test]
    fn unescapes_as_llama_cpp() {
        assert_eq!(unescape(br"a\nb\tc\rd"), b"a\nb\tc\rd");
        assert_eq!(unescape(br"\xe4\xb8\xad"), "中".as_bytes());
        assert_eq!(unescape(br"\\\'"), b"\\'");
        // Upper-case hex is read as llama.cpp reads it (digit arithmetic, wrapping).
        assert_eq!(
            unescape(br"\xFF"),
            vec![((b'F' - b'0') << 4).wrapping_add(b'F' - b'0')]
        );
        // A dangling escape or hex escape gives nothing.
        assert_eq!(unescape(br"ab\"), b"ab");
        assert_eq!(unescape(br"ab\x4"), b"ab");
        assert_eq!(
            unescape(b"\\x\xff\xff"),
            vec![0xcfu8.wrapping_shl(4).wrapping_add(0xcf)]
        );
    }
}
