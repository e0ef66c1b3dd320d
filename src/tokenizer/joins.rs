//! Where a BPE word can be cut without changing its tokens.
//!
//! A merge joins two adjacent symbols into one whose text is that merge line's two parts
//! concatenated. So a symbol spanning the boundary between characters `x` and `y` of a word
//! contains `xy`, and exists only if some merge result contains `xy`. If none does, no symbol
//! ever spans that boundary, no pair across it has a rank, and the merges on either side run
//! in the same order as they would alone (the lowest rank, leftmost, of one side is that of the
//! whole whenever it is on that side): the word's ids are those of its two halves.
//! Gemma-4's pre-tokenizer gives whole lines as words; cut at such boundaries, they become short
//! pieces that the word cache mostly already holds.

use std::collections::HashSet;

use super::unicode::len_utf8;
use super::FxBuild;

/// The character pairs that occur adjacent in some merge result.
#[derive(Debug)]
pub(crate) struct Joins {
    /// Bit `y` of `ascii[x]`: ASCII `x` then ASCII `y`.
    ascii: Box<[u128; 128]>,
    /// Other pairs, each character's bytes packed into a u32.
    other: HashSet<u64, FxBuild>,
}

/// A character's bytes (1–4) packed; unambiguous for valid UTF-8, where the lead byte gives
/// the length.
fn pack(c: &[u8]) -> u64 {
    c.iter().fold(0u64, |k, &b| (k << 8) | u64::from(b))
}

impl Joins {
    /// From the merge results; `None` when one is not valid UTF-8 (an occurrence of `xy` in it
    /// might then not start at one of its characters, so the pairs would not show it).
    pub(crate) fn build<'a>(merges: impl Iterator<Item = (&'a [u8], &'a [u8])>) -> Option<Joins> {
        let mut j = Joins {
            ascii: Box::new([0; 128]),
            other: HashSet::default(),
        };
        let mut buf = Vec::new();
        for (a, b) in merges {
            buf.clear();
            buf.extend_from_slice(a);
            buf.extend_from_slice(b);
            std::str::from_utf8(&buf).ok()?;
            let mut i = 0;
            let mut prev: &[u8] = &[];
            while i < buf.len() {
                let n = len_utf8(buf[i]);
                let c = &buf[i..i + n];
                if !prev.is_empty() {
                    j.insert(prev, c);
                }
                prev = c;
                i += n;
            }
        }
        Some(j)
    }

    fn insert(&mut self, x: &[u8], y: &[u8]) {
        if x.len() == 1 && y.len() == 1 {
            self.ascii[x[0] as usize] |= 1u128 << y[0];
        } else {
            self.other.insert((pack(x) << 32) | pack(y));
        }
    }

    /// Whether some merge could join the word's adjacent characters `x` and `y`. A merge result
    /// is valid UTF-8, so where it holds `xy` starting with a lead byte, `x` and `y` are two of
    /// its characters: the pairs show it. Otherwise (a lone continuation byte, a sequence cut
    /// short) no claim is made.
    pub(crate) fn joinable(&self, x: &[u8], y: &[u8]) -> bool {
        if x.len() == 1 && y.len() == 1 && x[0] < 128 && y[0] < 128 {
            return self.ascii[x[0] as usize] >> y[0] & 1 != 0;
        }
        if !whole_char(x) || !whole_char(y) {
            return true;
        }
        self.other.contains(&((pack(x) << 32) | pack(y)))
    }
}

fn whole_char(c: &[u8]) -> bool {
    c[0] & 0xC0 != 0x80 && c.len() == len_utf8(c[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_from_merge_results() {
        let merges: Vec<(&[u8], &[u8])> = vec![
            (b"a", b"b"),
            ("▁".as_bytes(), b"c"),
            (b">", "▁</".as_bytes()),
        ];
        let j = Joins::build(merges.into_iter()).unwrap();
        assert!(j.joinable(b"a", b"b"));
        assert!(!j.joinable(b"b", b"a"));
        assert!(j.joinable("▁".as_bytes(), b"c"));
        assert!(j.joinable(b">", "▁".as_bytes()));
        assert!(!j.joinable(b"c", "▁".as_bytes()));
        // Not one valid character: no claim.
        assert!(j.joinable(&[0xE2, 0x96], b"c"));
        assert!(j.joinable(&[0x96], b"c"));
        let bad: Vec<(&[u8], &[u8])> = vec![(b"a", &[0xFF])];
        assert!(Joins::build(bad.into_iter()).is_none());
    }
}
