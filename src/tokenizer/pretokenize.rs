//! BPE pre-tokenization: the regex list llama.cpp uses for each `tokenizer.ggml.pre` (some
//! entries stand for its hand-written splitters, see splitters.rs), applied
//! as `unicode_regex_split` does (each regex splits the pieces the previous one left, and the
//! text between matches is kept as a piece of its own), then GPT-2 byte encoding.
//!
//! llama.cpp runs these through std::regex on a text where every non-ASCII whitespace code
//! point is replaced by U+000B; the same is done here, with `fancy-regex` and true Unicode
//! classes, so `\s` means the same thing. Code points that are not Rust chars (surrogates from
//! the lax decoder) match as a private-use character, which no class here names.

use super::matcher::Matcher;
use super::splitters::{custom_step, Custom};
use super::unicode::{byte_to_cpt_table, cpts_from_utf8, push_cpt};

const CONTRACTIONS: &str = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";
const GPT2: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)";

/// The regexes for a pre-tokenizer name, plus whether words are GPT-2 byte encoded.
/// None when llama.cpp does not know the name.
pub(crate) fn regexes_for(pre: &str) -> Option<(Vec<String>, bool)> {
    let llama3 = format!(
        r"{CONTRACTIONS}|[^\r\n\p{{L}}\p{{N}}]?\p{{L}}+|\p{{N}}{{1,3}}| ?[^\s\p{{L}}\p{{N}}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    );
    let qwen2 = format!(
        r"{CONTRACTIONS}|[^\r\n\p{{L}}\p{{N}}]?\p{{L}}+|\p{{N}}| ?[^\s\p{{L}}\p{{N}}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    );
    let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mut byte_encode = true;
    let list = match pre {
        "" | "default" => s(&[
            r"[\p{P}\$\+<=>\^~\|]+",
            GPT2,
            r"\p{N}+",
            "[0-9][0-9][0-9]",
        ]),
        "llama3" | "llama-v3" | "llama-bpe" | "falcon3" | "falcon-h1" | "pixtral" | "midm-2.0"
        | "lfm2" | "jina-v5-nano" | "dbrx" | "smaug-bpe" | "chatglm-bpe" | "glm4" | "glm5" => {
            vec![llama3]
        }
        "minicpm5" => vec![
            r"\p{N}{1,3}".to_string(),
            format!(
                r"{CONTRACTIONS}|[^\r\n\p{{L}}\p{{N}}]?\p{{L}}+|\p{{N}}+| ?[^\s\p{{L}}\p{{N}}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
            ),
        ],
        "jais-2" => vec![format!(
            r"{CONTRACTIONS}|[^\r\n\p{{L}}\p{{N}}]?\p{{L}}+|\p{{N}}{{1,3}}| ?[^\s\p{{L}}\p{{N}}]+[\r\n]*|\s*[\r\n]+|\s{{512}}(?!\S)|\s{{256}}(?!\S)|\s{{128}}(?!\S)|\s{{64}}(?!\S)|\s{{32}}(?!\S)|\s{{16}}(?!\S)|\s{{8}}(?!\S)|\s{{4}}(?!\S)|\s{{1,2}}(?!\S)|\s{{1}}"
        )],
        "deepseek-llm" => s(&[
            "[\r\n]",
            "\\s?[A-Za-z\u{B5}\u{C0}-\u{D6}\u{D8}-\u{F6}\u{F8}-\u{1BA}\u{1BC}-\u{1BF}\u{1C4}-\u{293}\u{295}-\u{2AF}\u{370}-\u{373}\u{376}\u{377}\u{37B}-\u{37D}\u{37F}\u{386}\u{388}-\u{38A}\u{38C}\u{38E}-\u{3A1}\u{3A3}-\u{3F5}\u{3F7}-\u{481}\u{48A}-\u{52F}\u{531}-\u{556}\u{10A0}-\u{10C5}\u{13A0}-\u{13F5}\u{13F8}-\u{13FD}\u{1C90}-\u{1CBA}\u{1CBD}-\u{1CBF}\u{1D00}-\u{1D2B}\u{1D6B}-\u{1D77}\u{1D79}-\u{1D9A}\u{1E00}-\u{1F15}\u{1F18}-\u{1F1D}\u{1F20}-\u{1F45}\u{1F48}-\u{1F4D}\u{1F50}-\u{1F57}\u{1F59}\u{1F5B}\u{1F5D}\u{1F5F}-\u{1F7D}\u{1F80}-\u{1FB4}\u{1FB6}-\u{1FBC}\u{1FBE}\u{1FC2}-\u{1FC4}\u{1FC6}-\u{1FCC}\u{1FD0}-\u{1FD3}\u{1FD6}-\u{1FDB}\u{1FE0}-\u{1FEC}\u{1FF2}-\u{1FF4}\u{1FF6}-\u{1FFC}\u{2102}\u{2107}\u{210A}-\u{2113}\u{2115}\u{2119}-\u{211D}\u{2124}\u{2126}\u{2128}\u{212A}-\u{212D}\u{212F}-\u{2134}\u{2139}\u{213C}-\u{213F}\u{2145}-\u{2149}\u{214E}\u{2183}\u{2184}\u{2C00}-\u{2C7B}\u{2C7E}-\u{2CE4}\u{2CEB}-\u{2CEE}\u{2CF2}\u{2CF3}\u{A640}-\u{A66D}\u{A680}-\u{A69B}\u{A722}-\u{A76F}\u{A771}-\u{A787}\u{A78B}-\u{A78E}\u{AB70}-\u{ABBF}\u{FB00}-\u{FB06}\u{FB13}-\u{FB17}\u{FF21}-\u{FF3A}\u{FF41}-\u{FF5A}\u{10400}-\u{1044F}\u{104B0}-\u{104D3}\u{104D8}-\u{104FB}\u{10C80}-\u{10CB2}\u{10CC0}-\u{10CF2}\u{118A0}-\u{118DF}\u{1E900}-\u{1E943}]+",
            "\\s?[!-/:-~！-／：-～‘-‟　-。]+",
            "\\s+$",
            "[一-龥ࠀ-一가-퟿]+",
            "\\p{N}+",
        ]),
        "deepseek-v3" | "hunyuan-dense" | "joyai-llm" | "hy_v4" => s(&[
            r"\p{N}{1,3}",
            "[一-龥぀-ゟ゠-ヿ]+",
            "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
        ]),
        "spark2_5" => s(&[
            r"\p{N}{1,3}",
            "[一-龥぀-ゟ゠-ヿ]+",
            "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+|[\r\n]|\\s+(?!\\S)|\\s+",
            r"\p{N}",
        ]),
        "deepseek-coder" => s(&[
            "[\r\n]",
            r"\s?\p{L}+",
            r"\s?\p{P}+",
            "[一-龥ࠀ-一가-퟿]+",
            r"\p{N}",
        ]),
        "falcon" => s(&[r"[\p{P}\$\+<=>\^~\|`]+", GPT2, "[0-9][0-9][0-9]"]),
        "starcoder" | "refact" | "command-r" | "smollm" | "codeshell" | "exaone" | "minerva-7b"
        | "mellum2" => s(&[r"\p{N}", GPT2]),
        "gpt-2" | "phi-2" | "jina-es" | "jina-de" | "gigachat" | "jina-v2-es" | "jina-v2-de"
        | "a.x-4.0" | "mellum" | "modern-bert" | "jina-v1-en" | "jina-v2-code" | "roberta-bpe"
        | "mpt" | "olmo" | "jais" | "trillion" | "granite-docling" | "exaone4" => s(&[GPT2]),
        "stablelm2" | "qwen2" | "deepseek-r1-qwen" | "kormo" | "f2llmv2" | "hunyuan"
        | "solar-open" | "megrez" | "grok-2" => vec![qwen2],
        "qwen35" => vec![format!(
            r"{CONTRACTIONS}|[^\r\n\p{{L}}\p{{N}}]?[\p{{L}}\p{{M}}]+|\p{{N}}| ?[^\s\p{{L}}\p{{M}}\p{{N}}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
        )],
        "poro-chat" | "bloom" | "gpt3-finnish" => s(&[" ?[^(\\s|.,!?…。，、।۔،)]+"]),
        "viking" => s(&[" ?[^(\\s|.,!?…。，、।۔،)]+", r"\p{N}"]),
        "tekken" => s(&["[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"]),
        "chameleon" => s(&[
            "<sentinel:[0-9]+>",
            "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z",
            "([\\t\\n]|    |  )",
            r"\p{N}",
            "[\\p{P}!-/:-@\\[-`{-~]",
            GPT2,
        ]),
        "gpt-4o" | "llama4" | "kanana2" | "talkie" | "minimax-m2" => vec![format!(
            "[^\\r\\n\\p{{L}}\\p{{N}}]?((?=[\\p{{L}}])([^a-z]))*((?=[\\p{{L}}])([^A-Z]))+{CONTRACTIONS}?|[^\\r\\n\\p{{L}}\\p{{N}}]?((?=[\\p{{L}}])([^a-z]))+((?=[\\p{{L}}])([^A-Z]))*{CONTRACTIONS}?|\\p{{N}}{{1,3}}| ?[^\\s\\p{{L}}\\p{{N}}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
        )],
        "granite-embed-multi-97m" => vec![format!(
            "[^\\r\\n\\p{{L}}\\p{{N}}]?((?=[\\p{{L}}\\p{{M}}])([^a-z]))*((?=[\\p{{L}}\\p{{M}}])([^A-Z]))+{CONTRACTIONS}?|[^\\r\\n\\p{{L}}\\p{{N}}]?((?=[\\p{{L}}\\p{{M}}])([^a-z]))+((?=[\\p{{L}}\\p{{M}}])([^A-Z]))*{CONTRACTIONS}?|\\p{{N}}{{1,3}}| ?[^\\s\\p{{L}}\\p{{N}}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
        )],
        "youtu" => vec![format!(
            "[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+|__YOUTU_SPLIT__[^\\r\\n\\p{{L}}\\p{{N}}]?[\\p{{Lu}}\\p{{Lt}}\\p{{Lm}}\\p{{Lo}}\\p{{M}}]*[\\p{{Ll}}\\p{{Lm}}\\p{{Lo}}\\p{{M}}]+{CONTRACTIONS}?|[^\\r\\n\\p{{L}}\\p{{N}}]?[\\p{{Lu}}\\p{{Lt}}\\p{{Lm}}\\p{{Lo}}\\p{{M}}]+[\\p{{Ll}}\\p{{Lm}}\\p{{Lo}}\\p{{M}}]*{CONTRACTIONS}?|\\p{{N}}| ?[^\\s\\p{{L}}\\p{{N}}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
        )]
        .into_iter()
        .flat_map(|r| r.split("|__YOUTU_SPLIT__").map(str::to_string).collect::<Vec<_>>())
        .collect(),
        "bailingmoe" | "bailingmoe2" | "llada-moe" => s(&["'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+"]),
        "seed-coder" => vec![format!(
            r"{CONTRACTIONS}|[^\r\n\p{{L}}\p{{N}}]?\p{{L}}+|\p{{N}}{{1}}| ?[^\s\p{{L}}\p{{N}}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+"
        )],
        "ufakzeka" => s(&[r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"]),
        "laguna" => vec![LINES.to_string(), qwen2],
        "exaone-moe" => vec![format!(
            r"{CONTRACTIONS}|[^\r\n\p{{L}}\p{{N}}]?(?:\p{{L}}\p{{M}}*(?: \p{{L}}\p{{M}}*)*)+|\p{{N}}| ?[^\s\p{{L}}\p{{N}}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+"
        )],
        "gemma4" | "granite-embed-multi-311m" | "sarvam-moe" => {
            byte_encode = false;
            s(&[LINES])
        }
        "whitespace" => {
            byte_encode = false;
            s(&[r"\S+"])
        }
        // llama.cpp runs its hand-written digit grouping for the first (splitters.rs). The
        // second runs on llama.cpp's collapsed text, where every letter class (\p{Lu}, \p{Ll},
        // ...) is the one letter byte: both its alternatives become "letters or marks".
        "tiny_aya" | "cohere2moe" => vec![
            r"\d{1,3}(?=(?:\d{3})*\b)".to_string(),
            format!(
                r"[^\r\n\p{{L}}\p{{N}}]?[\p{{L}}\p{{M}}]+{CONTRACTIONS}?|\p{{N}}{{1,3}}| ?[^\s\p{{L}}\p{{N}}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
            ),
        ],
        // As in llama.cpp, these regex texts stand for its hand-written splitters (splitters.rs).
        "kimi-k2" => s(&[r"\p{Han}+"]),
        // The lookahead runs on std::wregex, whose \d is ASCII only; its empty matches only cut.
        "superbpe" => s(&[r"\p{N}+", "(?=([0-9]{3})+(?![0-9]))"]),
        "afmoe" => s(&[
            r"\p{AFMoE_digits}",
            "[一-鿿㐀-䶿豈-﫿぀-ゟ゠-ヿ･-ﾟ⼀-⿟เ-๿຀-໿ក-៿က-႟ꩠ-ꩿꧠ-꧿가-힯ᄀ-ᇿ]+",
            "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
        ]),
        _ => return None,
    };
    Some((list, byte_encode))
}

/// One split step: a regex, or a splitter llama.cpp writes by hand.
#[derive(Debug)]
enum Step {
    Regex(Matcher),
    Custom(Custom),
}

/// Whole lines and runs of newlines as words (gemma-4's pre-tokenizer).
const LINES: &str = "[^\\n]+|[\\n]+";

/// Compiled pre-tokenizer.
#[derive(Debug)]
pub(crate) struct PreTokenizer {
    steps: Vec<Step>,
    byte_encode: bool,
    /// The only step is LINES: words are as long as lines.
    lines: bool,
    /// GPT-2 byte encoding of each byte, as UTF-8 (1 or 2 bytes, length in the last slot).
    byte_utf8: [[u8; 3]; 256],
}

/// The words of a text: word i is `buf[ends[i - 1]..ends[i]]` (from 0 for the first).
#[derive(Debug, Default)]
pub(crate) struct Words {
    pub(crate) buf: Vec<u8>,
    pub(crate) ends: Vec<usize>,
}

impl Words {
    pub(crate) fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let mut start = 0;
        self.ends.iter().map(move |&e| {
            let w = &self.buf[start..e];
            start = e;
            w
        })
    }
}

impl PreTokenizer {
    pub(crate) fn new(pre: &str) -> Option<PreTokenizer> {
        let (list, byte_encode) = regexes_for(pre)?;
        let lines = list == [LINES];
        let steps = list
            .iter()
            .map(|r| match custom_step(r) {
                Some(c) => Some(Step::Custom(c)),
                None => Matcher::new(r).map(Step::Regex),
            })
            .collect::<Option<Vec<_>>>()?;
        let table = byte_to_cpt_table();
        let mut byte_utf8 = [[0u8; 3]; 256];
        for (b, &c) in table.iter().enumerate() {
            let mut v = Vec::with_capacity(2);
            push_cpt(&mut v, c);
            byte_utf8[b][..v.len()].copy_from_slice(&v);
            byte_utf8[b][2] = v.len() as u8;
        }
        Some(PreTokenizer {
            steps,
            byte_encode,
            lines,
            byte_utf8,
        })
    }

    pub(crate) fn byte_encode(&self) -> bool {
        self.byte_encode
    }

    pub(crate) fn gives_lines(&self) -> bool {
        self.lines
    }

    /// Splits `text` into words (byte encoded when the pre-tokenizer says so).
    pub(crate) fn split(&self, text: &[u8]) -> Words {
        // The words are made of the lax-decoded code points re-encoded (`canon`); the regexes
        // see one char per code point with non-ASCII whitespace as U+000B (`hay`). For valid
        // UTF-8 without non-ASCII whitespace (the usual case) both are the text itself.
        let plain = std::str::from_utf8(text)
            .ok()
            .filter(|s| s.is_ascii() || !s.chars().any(|c| c > '\u{7F}' && c.is_whitespace()));
        let owned;
        let (hay, canon, to_canon): (&str, &[u8], Option<Vec<usize>>) = match plain {
            Some(s) => (s, text, None),
            None => {
                let cpts = cpts_from_utf8(text);
                let mut hay = String::with_capacity(text.len());
                let mut canon = Vec::with_capacity(text.len());
                let mut map = vec![0usize; text.len() * 3 + 1];
                for &c in &cpts {
                    map[hay.len()] = canon.len();
                    let ch = match char::from_u32(c) {
                        Some(ch) if c > 0x7F && ch.is_whitespace() => '\u{0B}',
                        Some(ch) => ch,
                        None => '\u{E000}',
                    };
                    hay.push(ch);
                    push_cpt(&mut canon, c);
                }
                map[hay.len()] = canon.len();
                map.truncate(hay.len() + 1);
                owned = (hay, canon);
                (owned.0.as_str(), owned.1.as_slice(), Some(map))
            }
        };

        // Cut points in `hay`, each regex splitting the pieces the previous one left.
        let mut cuts = vec![0, hay.len()];
        for step in &self.steps {
            let mut next = Vec::with_capacity(cuts.len() * 2);
            next.push(0);
            for w in cuts.windows(2) {
                let (s, e) = (w[0], w[1]);
                let seg = &hay[s..e];
                let re = match step {
                    Step::Regex(re) => re,
                    Step::Custom(c) => {
                        c.split(seg, s, &mut next);
                        continue;
                    }
                };
                let mut at = 0usize;
                while at <= seg.len() {
                    let Some((ms, me)) = re.find_at(seg, at) else {
                        break;
                    };
                    for c in [s + ms, s + me] {
                        if c > *next.last().unwrap_or(&0) {
                            next.push(c);
                        }
                    }
                    at = if me > ms {
                        me
                    } else {
                        // An empty match: step one char (std::regex_iterator does the same).
                        match seg[me..].chars().next() {
                            Some(c) => me + c.len_utf8(),
                            None => break,
                        }
                    };
                }
                if e > *next.last().unwrap_or(&0) {
                    next.push(e);
                }
            }
            cuts = next;
        }

        let mut words = Words {
            buf: Vec::with_capacity(if self.byte_encode {
                canon.len() * 5 / 4
            } else {
                canon.len()
            }),
            ends: Vec::with_capacity(cuts.len()),
        };
        let map = |c: usize| to_canon.as_ref().map_or(c, |m| m[c]);
        for w in cuts.windows(2) {
            let word = &canon[map(w[0])..map(w[1])];
            if self.byte_encode {
                for &b in word {
                    let e = &self.byte_utf8[b as usize];
                    words.buf.extend_from_slice(&e[..e[2] as usize]);
                }
            } else {
                words.buf.extend_from_slice(word);
            }
            words.ends.push(words.buf.len());
        }
        words
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pre-tokenizer name llama.cpp knows that has regexes compiles.
    #[test]
    fn every_regex_compiles() {
        for pre in [
            "default",
            "llama3",
            "minicpm5",
            "jais-2",
            "deepseek-llm",
            "deepseek-v3",
            "spark2_5",
            "deepseek-coder",
            "falcon",
            "starcoder",
            "gpt-2",
            "qwen2",
            "qwen35",
            "bloom",
            "viking",
            "tekken",
            "chameleon",
            "gpt-4o",
            "granite-embed-multi-97m",
            "youtu",
            "bailingmoe",
            "seed-coder",
            "ufakzeka",
            "laguna",
            "exaone-moe",
            "gemma4",
            "whitespace",
            "tiny_aya",
            "kimi-k2",
            "superbpe",
            "afmoe",
        ] {
            let (list, _) = regexes_for(pre).unwrap();
            for r in list.iter().filter(|r| custom_step(r).is_none()) {
                let m = Matcher::new(r).unwrap_or_else(|| panic!("{pre}: {r}"));
                // The common families run on the regex crate's DFA, not the backtracker.
                if matches!(
                    pre,
                    "llama3" | "qwen2" | "gpt-2" | "gpt-4o" | "tekken" | "deepseek-v3"
                ) {
                    assert!(m.is_plain(), "{pre}: {r}");
                }
            }
        }
    }
}
