//! One pre-tokenizer regex, compiled for the `regex` crate's DFA whenever it can be, with the
//! same matches as llama.cpp's backtracking std::regex:
//! - `(?=[\p{L}])([^a-z])` (a letter that is not a-z) becomes the class `[\p{L}&&[^a-z]]`;
//! - a trailing `|\s+(?!\S)|\s+` becomes `|\s+`, and a whitespace-only match that came from
//!   that branch (no earlier alternative matches at its start), is at least two characters
//!   long and is followed by more text gives back its last character, which is what the
//!   lookahead does (the run stops one short so the next word keeps its leading space).
//!
//! Anything else with lookaround stays on `fancy-regex`.

use regex::Regex;

const TAIL: &str = r"|\s+(?!\S)|\s+";

#[derive(Debug)]
pub(crate) enum Matcher {
    Plain {
        re: Regex,
        /// The alternatives before the lookahead tail, anchored at the start.
        head: Option<Regex>,
    },
    Fancy(fancy_regex::Regex),
}

/// The class forms of the letter-case lookaheads llama.cpp's gpt-4o-like regexes use.
fn without_case_lookaheads(p: &str) -> String {
    let mut s = p.to_string();
    for (class, inner) in [("[\\p{L}\\p{M}]", "\\p{L}\\p{M}"), ("[\\p{L}]", "\\p{L}")] {
        for (from, to) in [("a-z", "a-z"), ("A-Z", "A-Z")] {
            let pat = format!("(?={class})([^{from}])");
            let rep = format!("([{inner}&&[^{to}]])");
            s = s.replace(&pat, &rep);
        }
    }
    s
}

impl Matcher {
    pub(crate) fn new(pattern: &str) -> Option<Matcher> {
        let p = without_case_lookaheads(pattern);
        if let Some(head) = p.strip_suffix(TAIL) {
            let plain = format!(r"{head}|\s+");
            if let (Ok(re), Ok(h)) = (Regex::new(&plain), Regex::new(&format!(r"\A(?:{head})"))) {
                return Some(Matcher::Plain { re, head: Some(h) });
            }
        } else if let Ok(re) = Regex::new(&p) {
            return Some(Matcher::Plain { re, head: None });
        }
        fancy_regex::RegexBuilder::new(pattern)
            .backtrack_limit(10_000_000)
            .build()
            .ok()
            .map(Matcher::Fancy)
    }

    /// The first match in `hay` at or after byte `at`, as a byte range.
    pub(crate) fn find_at(&self, hay: &str, at: usize) -> Option<(usize, usize)> {
        match self {
            Matcher::Fancy(re) => re
                .find_from_pos(hay, at)
                .ok()
                .flatten()
                .map(|m| (m.start(), m.end())),
            Matcher::Plain { re, head } => {
                let m = re.find_at(hay, at)?;
                let (s, mut e) = (m.start(), m.end());
                if let Some(head) = head {
                    let w = &hay[s..e];
                    if e < hay.len()
                        && w.chars().nth(1).is_some()
                        && w.chars().all(char::is_whitespace)
                        && !head.is_match(&hay[s..])
                    {
                        e -= w.chars().next_back().map_or(0, char::len_utf8);
                    }
                }
                Some((s, e))
            }
        }
    }

    #[cfg(test)]
    pub(crate) fn is_plain(&self) -> bool {
        matches!(self, Matcher::Plain { .. })
    }
}
