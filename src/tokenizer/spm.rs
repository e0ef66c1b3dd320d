//! SentencePiece-style merging as llama.cpp's `llm_tokenizer_spm_session` does it: start from
//! UTF-8 characters (by lead byte, so invalid bytes stay single symbols), repeatedly merge the
//! adjacent pair whose concatenation is the highest-scoring token (ties: leftmost), then emit
//! each symbol's token or its bytes as `<0xXX>` tokens.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::unicode::len_utf8;
use super::Tokenizer;

#[derive(Clone, Copy)]
struct Sym {
    prev: isize,
    next: isize,
    start: usize,
    n: usize,
    /// The token of a merged symbol (single characters are looked up when emitted).
    id: i32,
}

struct Bigram {
    left: usize,
    right: usize,
    score: f32,
    size: usize,
    id: i32,
}

impl PartialEq for Bigram {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Bigram {}
impl PartialOrd for Bigram {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Bigram {
    // Max-heap: higher score first, then the smaller left index.
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .partial_cmp(&other.score)
            .unwrap_or(Ordering::Equal)
            .then_with(|| other.left.cmp(&self.left))
    }
}

/// Tokenizes `text` (whitespace already escaped) in pieces: a merge never crosses a place no
/// token can span, so the text is cut between two symbols whose facing bytes are adjacent in
/// no token (the merges on each side are then exactly those on the whole text: the queue order
/// between pieces does not matter). Repeated pieces reuse their ids.
pub(crate) fn tokenize(tok: &Tokenizer, text: &[u8], out: &mut Vec<i32>) {
    let mut seen: super::FxMap<&[u8], (usize, usize)> =
        super::FxMap::with_capacity_and_hasher(text.len() / 16, Default::default());
    let mut start = 0;
    let mut offs = 0;
    let mut piece = |s: usize, e: usize, out: &mut Vec<i32>| {
        let p = &text[s..e];
        if let Some(&(from, to)) = seen.get(p) {
            out.extend_from_within(from..to);
            return;
        }
        let first = out.len();
        tokenize_piece(tok, p, out);
        seen.insert(p, (first, out.len()));
    };
    while offs < text.len() {
        if offs > start && !tok.spm_glued(text[offs - 1], text[offs]) {
            piece(start, offs, out);
            start = offs;
        }
        offs += len_utf8(text[offs]).min(text.len() - offs);
    }
    if start < text.len() {
        piece(start, text.len(), out);
    }
}

fn tokenize_piece(tok: &Tokenizer, text: &[u8], out: &mut Vec<i32>) {
    let mut syms: Vec<Sym> = Vec::new();
    let mut offs = 0;
    while offs < text.len() {
        let n = len_utf8(text[offs]).min(text.len() - offs);
        let index = syms.len() as isize;
        syms.push(Sym {
            prev: index - 1,
            next: if offs + n == text.len() {
                -1
            } else {
                index + 1
            },
            start: offs,
            n,
            id: -1,
        });
        offs += n;
    }
    let mut queue = BinaryHeap::new();
    let try_add = |syms: &[Sym], queue: &mut BinaryHeap<Bigram>, left: isize, right: isize| {
        if left < 0 || right < 0 {
            return;
        }
        let (l, r) = (syms[left as usize], syms[right as usize]);
        if l.n + r.n > tok.max_token_len {
            return;
        }
        let piece = &text[l.start..l.start + l.n + r.n];
        if let Some(id) = tok.text_to_token(piece) {
            queue.push(Bigram {
                left: left as usize,
                right: right as usize,
                score: tok.score(id),
                size: piece.len(),
                id,
            });
        }
    };
    for i in 1..syms.len() {
        try_add(&syms, &mut queue, i as isize - 1, i as isize);
    }
    while let Some(b) = queue.pop() {
        let (l, r) = (syms[b.left], syms[b.right]);
        if l.n == 0 || r.n == 0 || l.n + r.n != b.size {
            continue;
        }
        syms[b.left].n += r.n;
        syms[b.left].id = b.id;
        syms[b.right].n = 0;
        syms[b.left].next = r.next;
        if r.next >= 0 {
            syms[r.next as usize].prev = b.left as isize;
        }
        let prev = syms[b.left].prev;
        let next = syms[b.left].next;
        try_add(&syms, &mut queue, prev, b.left as isize);
        try_add(&syms, &mut queue, b.left as isize, next);
    }
    if syms.is_empty() {
        return;
    }
    let mut i = 0isize;
    while i != -1 {
        let s = syms[i as usize];
        let piece = &text[s.start..s.start + s.n];
        // A merged symbol is always a token; otherwise it is one character (resegment's
        // rev_merge lookup can only succeed for texts that are tokens).
        let id = if s.id >= 0 {
            Some(s.id)
        } else {
            tok.text_to_token(piece)
        };
        match id {
            Some(id) => out.push(id),
            None => {
                for &b in piece {
                    if let Some(id) = tok.byte_to_token(b) {
                        out.push(id);
                    }
                }
            }
        }
        i = s.next;
    }
}
