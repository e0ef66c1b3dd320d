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
    /// Rank of the merge with the next symbol (linear path only).
    pair: Option<u32>,
}

/// Words with more symbols than this merge through the heap; shorter ones (nearly all) scan
/// their few pairs, which is faster than heap upkeep and gives the same lowest-rank, leftmost
/// order.
const LINEAR_MAX: usize = 48;

/// Per-call caches: a word's ids depend on the word alone, a pair's rank and merged id on the
/// two ids alone, and a character's id on its bytes alone. Merged ids are looked up only when
/// a merge happens: most ranked pairs lose to a neighbour.
struct Caches<'w> {
    seen: super::FxMap<&'w [u8], (usize, usize)>,
    ranks: super::FxMap<(i32, i32), Option<u32>>,
    merged: super::FxMap<(i32, i32), Option<i32>>,
    ascii: [Option<Option<i32>>; 128],
    chars: super::FxMap<&'w [u8], Option<i32>>,
}

impl<'w> Caches<'w> {
    fn char_id(&mut self, tok: &Tokenizer, c: &'w [u8]) -> Option<i32> {
        if c.len() == 1 && c[0] < 128 {
            *self.ascii[c[0] as usize].get_or_insert_with(|| tok.text_to_token(c))
        } else {
            *self.chars.entry(c).or_insert_with(|| tok.text_to_token(c))
        }
    }

    /// The rank of merging `l` and `r` (texts in `word`).
    fn pair(&mut self, tok: &Tokenizer, word: &[u8], l: &Sym, r: &Sym) -> Option<u32> {
        let a = &word[l.start..l.start + l.n];
        let b = &word[r.start..r.start + r.n];
        match (l.id, r.id) {
            (Some(x), Some(y)) => *self
                .ranks
                .entry((x, y))
                .or_insert_with(|| tok.merge_rank(a, b)),
            _ => tok.merge_rank(a, b),
        }
    }

    /// The id of `l` and `r` merged.
    fn merged_id(&mut self, tok: &Tokenizer, word: &[u8], l: &Sym, r: &Sym) -> Option<i32> {
        let text = &word[l.start..r.start + r.n];
        match (l.id, r.id) {
            (Some(x), Some(y)) => *self
                .merged
                .entry((x, y))
                .or_insert_with(|| tok.text_to_token(text)),
            _ => tok.text_to_token(text),
        }
    }
}

/// Words longer than this (in bytes) are cut where no merge can join (joins.rs) and their
/// pieces tokenized, and cached, one by one: lines (gemma-4) from a few words on, where the
/// pieces repeat; other words only when long enough for the heap (cutting the usual
/// pre-tokenizers' medium words, e.g. qwen2's CJK runs, costs more than it saves).
const CUT_MIN_LINES: usize = 16;
const CUT_MIN: usize = 4 * LINEAR_MAX;

pub(crate) fn tokenize(tok: &Tokenizer, words: &Words, out: &mut Vec<i32>) {
    let gemma4 = tok.pre_name() == "gemma4";
    let cut_min = match &tok.pretok {
        Some(p) if p.gives_lines() => CUT_MIN_LINES,
        _ => CUT_MIN,
    };
    let mut c = Caches {
        seen: super::FxMap::default(),
        ranks: super::FxMap::default(),
        merged: super::FxMap::default(),
        ascii: [None; 128],
        chars: super::FxMap::default(),
    };
    let mut w = Work {
        syms: Vec::new(),
        queue: BinaryHeap::new(),
    };
    for word in words.iter() {
        // A whole-word token (ignore_merges) must see the whole word.
        let joins = if word.len() > cut_min && !tok.ignore_merges {
            tok.joins()
        } else {
            None
        };
        let Some(joins) = joins else {
            encode(tok, word, gemma4, &mut c, &mut w, out);
            continue;
        };
        // Long words seldom repeat: only their pieces go to the cache.
        let mut start = 0;
        let mut prev = 0..len_utf8(word[0]).min(word.len());
        while prev.end < word.len() {
            let next = prev.end..prev.end + len_utf8(word[prev.end]).min(word.len() - prev.end);
            if !joins.joinable(&word[prev.clone()], &word[next.clone()]) {
                encode(tok, &word[start..next.start], gemma4, &mut c, &mut w, out);
                start = next.start;
            }
            prev = next;
        }
        encode(tok, &word[start..], gemma4, &mut c, &mut w, out);
    }
}

/// Reused buffers.
struct Work {
    syms: Vec<Sym>,
    /// (rank, left, right, size), smallest rank then smallest left first.
    queue: BinaryHeap<Reverse<(u32, usize, usize, usize)>>,
}

/// Appends `word`'s ids (from the cache when it has them).
fn encode<'w>(
    tok: &Tokenizer,
    word: &'w [u8],
    gemma4: bool,
    c: &mut Caches<'w>,
    w: &mut Work,
    out: &mut Vec<i32>,
) {
    if let Some(&(from, to)) = c.seen.get(word) {
        out.extend_from_within(from..to);
        return;
    }
    let first = out.len();
    let syms = &mut w.syms;
    syms.clear();
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
            pair: None,
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
            id: c.char_id(tok, &word[offset..offset + n]),
            pair: None,
        });
        offset += n;
    }
    if syms.len() <= LINEAR_MAX {
        merge_linear(tok, word, syms, c);
    } else {
        merge_heap(tok, word, syms, c, &mut w.queue);
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
    c.seen.insert(word, (first, out.len()));
}

/// Merges the live pair of lowest rank (leftmost on ties) until none is left, by scanning.
fn merge_linear(tok: &Tokenizer, word: &[u8], syms: &mut [Sym], c: &mut Caches) {
    for i in 1..syms.len() {
        syms[i - 1].pair = c.pair(tok, word, &syms[i - 1], &syms[i]);
    }
    loop {
        let mut best: Option<(u32, usize)> = None;
        let mut i = 0isize;
        while i >= 0 {
            let s = &syms[i as usize];
            if let Some(rank) = s.pair {
                if best.map_or(true, |(r, _)| rank < r) {
                    best = Some((rank, i as usize));
                }
            }
            i = s.next;
        }
        let Some((_, left)) = best else {
            break;
        };
        let right = syms[left].next as usize;
        let r = syms[right];
        syms[left].id = c.merged_id(tok, word, &syms[left], &r);
        syms[left].n += r.n;
        syms[right].n = 0;
        syms[left].next = r.next;
        if r.next >= 0 {
            syms[r.next as usize].prev = left as isize;
        }
        syms[left].pair = if r.next >= 0 {
            c.pair(tok, word, &syms[left], &syms[r.next as usize])
        } else {
            None
        };
        let prev = syms[left].prev;
        if prev >= 0 {
            let p = prev as usize;
            syms[p].pair = c.pair(tok, word, &syms[p], &syms[left]);
        }
    }
}

/// The same merging through a priority queue, for long words.
fn merge_heap(
    tok: &Tokenizer,
    word: &[u8],
    syms: &mut [Sym],
    c: &mut Caches,
    queue: &mut BinaryHeap<Reverse<(u32, usize, usize, usize)>>,
) {
    queue.clear();
    let add =
        |c: &mut Caches, syms: &[Sym], queue: &mut BinaryHeap<_>, left: isize, right: isize| {
            if left < 0 || right < 0 {
                return;
            }
            let (l, r) = (&syms[left as usize], &syms[right as usize]);
            if let Some(rank) = c.pair(tok, word, l, r) {
                queue.push(Reverse((rank, left as usize, right as usize, l.n + r.n)));
            }
        };
    for i in 1..syms.len() {
        add(c, syms, queue, i as isize - 1, i as isize);
    }
    while let Some(Reverse((_, left, right, size))) = queue.pop() {
        let (l, r) = (syms[left], syms[right]);
        // Symbols only grow, so an unchanged total size means both are as they were.
        if l.n == 0 || r.n == 0 || l.n + r.n != size || l.next != right as isize {
            continue;
        }
        syms[left].id = c.merged_id(tok, word, &l, &r);
        syms[left].n += r.n;
        syms[right].n = 0;
        syms[left].next = r.next;
        if r.next >= 0 {
            syms[r.next as usize].prev = left as isize;
        }
        let (prev, next) = (syms[left].prev, syms[left].next);
        add(c, syms, queue, prev, left as isize);
        add(c, syms, queue, left as isize, next);
    }
}
