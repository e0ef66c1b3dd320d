//! A byte trie of token texts: the tokens that are prefixes of a text, found in one walk of
//! it. WPM's longest match and UGM's Viterbi looked up every prefix up to the longest
//! token's length by hashing it, which is quadratic in that length at every position; a
//! vocabulary with one very long token made tokenizing any text crawl.

use super::FxMap;

#[derive(Debug, Default)]
pub(crate) struct ByteTrie {
    /// The id ending at each node (-1: none); node 0 is the root.
    values: Vec<i32>,
    edges: FxMap<(u32, u8), u32>,
}

impl ByteTrie {
    pub(crate) fn new() -> ByteTrie {
        ByteTrie {
            values: vec![-1],
            edges: FxMap::default(),
        }
    }

    /// Sets the id of `text` (a later insert of the same text wins).
    pub(crate) fn insert(&mut self, text: &[u8], id: i32) {
        let mut node = 0u32;
        for &b in text {
            let next = self.values.len() as u32;
            node = *self.edges.entry((node, b)).or_insert(next);
            if node == next {
                self.values.push(-1);
            }
        }
        self.values[node as usize] = id;
    }

    /// The (length, id) of each token that `text` starts with, shortest first.
    pub(crate) fn prefixes<'a>(
        &'a self,
        text: &'a [u8],
    ) -> impl Iterator<Item = (usize, i32)> + 'a {
        let mut node = 0u32;
        let mut bytes = text.iter().enumerate();
        std::iter::from_fn(move || loop {
            let (i, &b) = bytes.next()?;
            #[cfg(test)]
            tests::STEPS.with(|s| s.set(s.get() + 1));
            node = *self.edges.get(&(node, b))?;
            let id = self.values[node as usize];
            if id >= 0 {
                return Some((i + 1, id));
            }
        })
    }

    /// The longest token `text` starts with, as (length, id).
    pub(crate) fn longest(&self, text: &[u8]) -> Option<(usize, i32)> {
        self.prefixes(text).last()
    }
}

#[cfg(test)]
mod tests {
    use super::ByteTrie;
    use std::cell::Cell;

    thread_local! {
        /// Bytes looked at by `prefixes` on this thread: the work a walk does.
        pub(super) static STEPS: Cell<usize> = const { Cell::new(0) };
    }

    #[test]
    fn a_long_token_costs_a_walk_only_as_deep_as_the_match() {
        // WPM's hostile case: one 100,000-byte token; every position of a 20,000-byte word
        // of another letter is looked up with a window as long as that token.
        let mut t = ByteTrie::new();
        t.insert("\u{2581}b".as_bytes(), 0);
        t.insert(b"b", 1);
        t.insert(&vec![b'a'; 100_000], 2);
        let word = vec![b'b'; 20_000];
        STEPS.with(|s| s.set(0));
        for i in 0..word.len() {
            let end = word.len().min(i + 100_001);
            assert_eq!(t.longest(&word[i..end]), Some((1, 1)));
        }
        // One byte matched and one refused per position, not the window's length.
        assert_eq!(STEPS.with(Cell::get), 2 * word.len() - 1);
        STEPS.with(|s| s.set(0));
        assert_eq!(t.longest(&vec![b'a'; 100_000]), Some((100_000, 2)));
        assert_eq!(STEPS.with(Cell::get), 100_000);
    }

    #[test]
    fn finds_every_prefix_token_in_order() {
        let mut t = ByteTrie::new();
        for (i, w) in ["a", "ab", "abcd", "b", "ab"].iter().enumerate() {
            t.insert(w.as_bytes(), i as i32);
        }
        assert_eq!(
            t.prefixes(b"abcde").collect::<Vec<_>>(),
            [(1, 0), (2, 4), (4, 2)]
        );
        assert_eq!(t.longest(b"abc"), Some((2, 4)));
        assert_eq!(t.longest(b"c"), None);
        assert_eq!(t.prefixes(b"").count(), 0);
    }
}
