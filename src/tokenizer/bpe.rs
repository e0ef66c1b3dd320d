//! BPE merging as llama.cpp's `llm_tokenizer_bpe_session` does it: per pre-tokenized word,
//! start from UTF-8 characters and merge the adjacent pair with the lowest merge rank (ties:
//! leftmost) until none is left; a symbol that is not a token falls back to its bytes.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::pretokenize::Words;
use super::unicode::len_utf8;
use super::Tokenizer;

#[derive(Clone, Copy)]
struct Sym {
    prev: isize,
    next: isize,
    start: usize,
    n: usize,
    /// The symbol's token id, when its text is a token (tracked so ranks need no text lookup).
    id: Option<i32>,
}

pub(crate) fn tokenize(tok: &Tokenizer, words: &Words, out: &mut Vec<i32>) {
    let gemma4 = tok.pre_name() == "gemma4";
    // A word's ids depend on the word alone: repeated words reuse the first result.
    let mut seen: super::FxMap<&[u8], (usize, usize)> = super::FxMap::default();
    let mut syms: Vec<Sym> = Vec::new();
    // (rank, left, right, size), smallest rank then smallest left first.
    let mut queue: BinaryHeap<Reverse<(u32, usize, usize, usize)>> = BinaryHeap::new();
    // Ranks of the pairs of tokens met in this call (by id: no text hashing on a hit).
    let mut ranks: super::FxMap<(i32, i32), Option<u32>> = super::FxMap::default();
    for word in words.iter() {
        if let Some(&(from, to)) = seen.get(word) {
            out.extend_from_within(from..to);
            continue;
        }
        let first = out.len();
        syms.clear();
        queue.clear();
        let mut offset = 0;
        let whole_id = if tok.ignore_merges || (gemma4 && word.iter().all(|&b| b == b'\n')) {
            tok.text_to_token(word)
        } else {
            None
        };
        if let Some(id) = whole_id {
            syms.push(Sym {
                prev: -1,
                next: -1,
                start: 0,
                n: word.len(),
                id: Some(id),
            });
            offset = word.len();
        }
        while offset < word.len() {
            let n = len_utf8(word[offset]).min(word.len() - offset);
            let index = syms.len() as isize;
            syms.push(Sym {
                prev: index - 1,
                next: if offset + n == word.len() {
                    -1
                } else {
                    index + 1
                },
                start: offset,
                n,
                id: tok.text_to_token(&word[offset..offset + n]),
            });
            offset += n;
        }
        let mut add = |syms: &[Sym], queue: &mut BinaryHeap<_>, left: isize, right: isize| {
            if left < 0 || right < 0 {
                return;
            }
            let (l, r) = (syms[left as usize], syms[right as usize]);
            let a = &word[l.start..l.start + l.n];
            let b = &word[r.start..r.start + r.n];
            let rank = match (l.id, r.id) {
                (Some(x), Some(y)) => *ranks.entry((x, y)).or_insert_with(|| tok.merge_rank(a, b)),
                _ => tok.merge_rank(a, b),
            };
            if let Some(rank) = rank {
                queue.push(Reverse((rank, left as usize, right as usize, l.n + r.n)));
            }
        };
        for i in 1..syms.len() {
            add(&syms, &mut queue, i as isize - 1, i as isize);
        }
        while let Some(Reverse((_, left, right, size))) = queue.pop() {
            let (l, r) = (syms[left], syms[right]);
            // Symbols only grow, so an unchanged total size means both are as they were.
            if l.n == 0 || r.n == 0 || l.n + r.n != size || l.next != right as isize {
                continue;
            }
            syms[left].n += r.n;
            syms[left].id = tok.text_to_token(&word[l.start..l.start + l.n + r.n]);
            syms[right].n = 0;
            syms[left].next = r.next;
            if r.next >= 0 {
                syms[r.next as usize].prev = left as isize;
            }
            let (prev, next) = (syms[left].prev, syms[left].next);
            add(&syms, &mut queue, prev, left as isize);
            add(&syms, &mut queue, left as isize, next);
        }
        for s in syms.iter().filter(|s| s.n > 0) {
            match s.id {
                Some(id) => out.push(id),
                None => {
                    for &b in &word[s.start..s.start + s.n] {
                        let id = if tok.byte_encode {
                            tok.text_to_token(&[b])
                        } else {
                            tok.byte_to_token_hex(b)
                        };
                        if let Some(id) = id {
                            out.push(id);
                        }
                    }
                }
            }
        }
        seen.insert(word, (first, out.len()));
    }
}
