//! The pre-tokenizer steps llama.cpp writes by hand in unicode.cpp instead of running a regex:
//! the digit grouping of afmoe and tiny_aya, and kimi-k2's whole split. They are ported as
//! llama.cpp behaves, quirks included (the digit grouping keeps the text before a digit run
//! with the run's first group; kimi-k2's words are letters without marks).
//!
//! Each works on one piece of the text the previous steps left (`seg`, the regex hay: non-ASCII
//! whitespace is U+000B there, which classifies the same) and pushes the end of every piece it
//! cuts, as a byte offset `base + ..`, to `cuts`.

use std::sync::OnceLock;

/// A hand-written step, named by the regex text llama.cpp dispatches on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Custom {
    /// `\p{AFMoE_digits}` and tiny_aya's `\d{1,3}(?=(?:\d{3})*\b)`.
    DigitGroups,
    /// `\p{Han}+`: kimi-k2's split.
    KimiK2,
}

pub(crate) fn custom_step(regex: &str) -> Option<Custom> {
    match regex {
        r"\p{AFMoE_digits}" | r"\d{1,3}(?=(?:\d{3})*\b)" => Some(Custom::DigitGroups),
        r"\p{Han}+" => Some(Custom::KimiK2),
        _ => None,
    }
}

impl Custom {
    pub(crate) fn split(self, seg: &str, base: usize, cuts: &mut Vec<usize>) {
        let chars: Vec<(usize, char)> = seg.char_indices().collect();
        let at = |i: usize| chars.get(i).map_or(seg.len(), |c| c.0);
        let mut prev = 0usize;
        // llama.cpp's `_add_token`: a piece from the previous end to `end`, if not empty.
        let mut add = |end: usize, cuts: &mut Vec<usize>| {
            if end > prev {
                cuts.push(base + at(end));
                prev = end;
            }
        };
        match self {
            Custom::DigitGroups => digit_groups(&chars, &mut |e| add(e, cuts)),
            Custom::KimiK2 => kimi_k2(&chars, &mut |e| add(e, cuts)),
        }
        if prev < chars.len() {
            cuts.push(base + seg.len());
        }
    }
}

#[derive(Clone, Copy, Default)]
struct Flags {
    letter: bool,
    number: bool,
    space: bool,
}

fn flags(c: char) -> Flags {
    if c.is_ascii() {
        return Flags {
            letter: c.is_ascii_alphabetic(),
            number: c.is_ascii_digit(),
            space: c.is_ascii_whitespace() || c == '\u{0B}',
        };
    }
    static LETTER: OnceLock<regex::Regex> = OnceLock::new();
    let letter = LETTER.get_or_init(|| regex::Regex::new(r"\A\p{L}").expect("static regex"));
    let mut buf = [0u8; 4];
    Flags {
        letter: letter.is_match(c.encode_utf8(&mut buf)),
        number: c.is_numeric(),
        space: c.is_whitespace(),
    }
}

/// llama.cpp's `unicode_cpt_is_han`.
fn is_han(c: char) -> bool {
    let c = u32::from(c);
    [
        (0x4E00, 0x9FFF),
        (0x3400, 0x4DBF),
        (0x20000, 0x2A6DF),
        (0x2A700, 0x2B73F),
        (0x2B740, 0x2B81F),
        (0x2B820, 0x2CEAF),
        (0x2CEB0, 0x2EBEF),
        (0xF900, 0xFAFF),
        (0x2F800, 0x2FA1F),
    ]
    .iter()
    .any(|&(a, b)| (a..=b).contains(&c))
}

/// Digit runs cut into groups of three from the right; the text before a run stays with the
/// run's first group, as `unicode_regex_split_custom_afmoe` does.
fn digit_groups(chars: &[(usize, char)], add: &mut dyn FnMut(usize)) {
    let mut pos = 0;
    while pos < chars.len() {
        if !flags(chars[pos].1).number {
            pos += 1;
            continue;
        }
        let start = pos;
        while pos < chars.len() && flags(chars[pos].1).number {
            pos += 1;
        }
        let mut cur = start + (pos - start) % 3;
        if cur > start {
            add(cur);
        }
        while cur < pos {
            cur += 3;
            add(cur);
        }
    }
}

/// `unicode_regex_split_custom_kimi_k2`: Han runs, letter words (no marks) with an optional
/// leading non-letter and a contraction, numbers in threes, punctuation runs, whitespace.
fn kimi_k2(chars: &[(usize, char)], add: &mut dyn FnMut(usize)) {
    let fl: Vec<Flags> = chars.iter().map(|c| flags(c.1)).collect();
    let n = chars.len();
    let cpt = |i: usize| chars.get(i).map(|c| c.1);
    let get = |i: usize| fl.get(i).copied().unwrap_or_default();
    let word_letter = |i: usize| get(i).letter && !cpt(i).is_some_and(is_han);
    let lower = |i: usize| {
        cpt(i).map(|c| {
            let mut l = c.to_lowercase();
            match (l.next(), l.next()) {
                (Some(x), None) => x,
                _ => c,
            }
        })
    };
    let mut pos = 0;
    while pos < n {
        let c = chars[pos].1;
        let f = fl[pos];
        if is_han(c) {
            while cpt(pos).is_some_and(is_han) {
                pos += 1;
            }
            add(pos);
            continue;
        }
        let leading_ok = !(c == '\r' || c == '\n' || f.letter || f.number);
        if (f.letter && !is_han(c)) || (leading_ok && word_letter(pos + 1)) {
            let lead = leading_ok;
            if lead {
                pos += 1;
            }
            let mut has_letters = false;
            while word_letter(pos) {
                has_letters = true;
                pos += 1;
            }
            if has_letters || (!lead && word_letter(pos)) {
                if !has_letters {
                    pos += 1;
                }
                while word_letter(pos) {
                    pos += 1;
                }
                if cpt(pos) == Some('\'') && pos + 1 < n {
                    let a = lower(pos + 1);
                    if matches!(a, Some('s' | 't' | 'm' | 'd')) {
                        pos += 2;
                    } else if pos + 2 < n {
                        let b = lower(pos + 2);
                        if matches!(
                            (a, b),
                            (Some('r' | 'v'), Some('e')) | (Some('l'), Some('l'))
                        ) {
                            pos += 3;
                        }
                    }
                }
                add(pos);
                continue;
            } else if lead {
                pos -= 1;
            }
        }
        if f.number {
            let mut ini = pos;
            while get(pos).number {
                pos += 1;
                if pos - ini >= 3 {
                    add(pos);
                    ini = pos;
                }
            }
            add(pos);
            continue;
        }
        let punct = |i: usize| i < n && !(get(i).space || get(i).letter || get(i).number);
        if punct(if c == ' ' { pos + 1 } else { pos }) {
            if c == ' ' {
                pos += 1;
            }
            while punct(pos) {
                pos += 1;
            }
            while matches!(cpt(pos), Some('\r' | '\n')) {
                pos += 1;
            }
            add(pos);
            continue;
        }
        let mut spaces = 0;
        let mut last_newline_end = 0;
        while get(pos + spaces).space {
            if matches!(cpt(pos + spaces), Some('\r' | '\n')) {
                last_newline_end = pos + spaces + 1;
            }
            spaces += 1;
        }
        if last_newline_end > 0 {
            pos = last_newline_end;
        } else if spaces > 1 && pos + spaces < n {
            pos += spaces - 1;
        } else if spaces > 0 {
            pos += spaces;
        } else {
            pos += 1;
        }
        add(pos);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(step: Custom, s: &str) -> Vec<&str> {
        let mut cuts = Vec::new();
        step.split(s, 0, &mut cuts);
        let mut start = 0;
        cuts.iter()
            .map(|&e| {
                let p = &s[start..e];
                start = e;
                p
            })
            .collect()
    }

    #[test]
    fn digit_groups_keep_the_text_before_a_run() {
        assert_eq!(
            pieces(Custom::DigitGroups, "abc1234 x"),
            ["abc1", "234", " x"]
        );
        assert_eq!(pieces(Custom::DigitGroups, "123456"), ["123", "456"]);
        assert_eq!(pieces(Custom::DigitGroups, ""), Vec::<&str>::new());
    }

    #[test]
    fn kimi_k2_words_numbers_and_han() {
        assert_eq!(
            pieces(Custom::KimiK2, "I'm 中文abc 12345!!\n\n  x"),
            ["I'm", " ", "中文", "abc", " ", "123", "45", "!!\n\n", " ", " x"]
        );
    }
}
