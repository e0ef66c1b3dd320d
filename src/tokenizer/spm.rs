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
}

struct Bigram {
    left: usize,
    right: usize,
    score: f32,
    size: usize,
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

pub(crate) fn tokenize(tok: &Tokenizer, text: &[u8], out: &mut Vec<i32>) {
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
        });
        offs += n;
    }
    let mut queue = BinaryHeap::new();
    let try_add = |syms: &[Sym], queue: &mut BinaryHeap<Bigram>, left: isize, right: isize| {
        if left < 0 || right < 0 {
            return;
        }
        let (l, r) = (syms[left as usize], syms[right as usize]);
        let piece = &text[l.start..l.start + l.n + r.n];
        if let Some(id) = tok.text_to_token(piece) {
            queue.push(Bigram {
                left: left as usize,
                right: right as usize,
                score: tok.score(id),
                size: piece.len(),
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
        match tok.text_to_token(piece) {
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
