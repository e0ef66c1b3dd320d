//! One pre-tokenizer regex, compiled for the `regex` crate's DFA whenever it can be, with the
//! same matches as llama.cpp's backtracking std::regex:
//! - `(?=[\p{L}])([^a-z])` (a letter that is not a-z) becomes the class `[\p{L}&&[^a-z]]`;
//! - a trailing `|\s+(?!\S)|\s+` (or `|\s+(?!\S)`) becomes `|\s+`, and a whitespace-only match that came from
//!   that branch (no earlier alternative matches at its start), is at least two characters
//!   long and is followed by more text gives back its last character, which is what the
//!   lookahead does (the run stops one short so the next word keeps its leading space).
//!
//! Anything else with lookaround stays on `fancy-regex`.

use regex::Regex;

const TAIL: &str = r"|\s+(?!\S)|\s+";
/// GPT-2's regex ends with the lookahead alone: the one whitespace character it leaves
/// unmatched before a word becomes a piece of its own all the same (text between matches is
/// kept), which is what the `\s+` rewrite gives as a one-character match.
const TAIL_GPT2: &str = r"|\s+(?!\S)";

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
        if let Some(head) = p.strip_suffix(TAIL).or_else(|| p.strip_suffix(TAIL_GPT2)) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The pieces' cut points (matches and the text between them, as the splitter keeps).
    fn all(m: &Matcher, hay: &str) -> Vec<usize> {
        let mut out = vec![0, hay.len()];
        let mut at = 0;
        while at <= hay.len() {
            let Some((s, e)) = m.find_at(hay, at) else {
                break;
            };
            out.extend([s, e]);
            at = if e > s {
                e
            } else {
                match hay[e..].chars().next() {
                    Some(c) => e + c.len_utf8(),
                    None => break,
                }
            };
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The rewritten regexes find exactly what the backtracking originals find.
    #[test]
    fn plain_rewrites_match_the_backtracking_originals() {
        let texts = [
            "Hello world  \n\n  x",
            "   leading and trailing   ",
            "a\tb \t c\r\n\r\n  d\u{0B}\u{0B}e",
            "fn main() {\n    let x = 1;\n        return x;\n}\n",
            "I'm don't WE'LL they'RE 123456 7 89",
            "CamelCaseWordsAndHTTPServer ÉCOLE école ǅemal",
            "中文字符 和 日本語のテキスト 한국어 😀🚀 👨‍👩‍👧",
            "  \n",
            "x  ",
            "   ",
            "\n \n \n a",
            "tab\t\t\tx  \u{0B}y",
        ];
        for pre in [
            "llama3",
            "qwen2",
            "gpt-2",
            "gpt-4o",
            "tekken",
            "deepseek-v3",
            "spark2_5",
            "default",
            "granite-embed-multi-97m",
        ] {
            let (list, _) = crate::tokenizer::pretokenize::regexes_for(pre).unwrap();
            for r in &list {
                let plain = Matcher::new(r).unwrap();
                let fancy = Matcher::Fancy(fancy_regex::Regex::new(r).unwrap());
                for t in texts {
                    assert_eq!(all(&plain, t), all(&fancy, t), "{pre}: {r}: {t:?}");
                }
            }
        }
    }
}
