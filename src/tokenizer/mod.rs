//! The file's own tokenizer, built from its `tokenizer.ggml.*` metadata, giving the token ids
//! llama.cpp's `llama_tokenize(vocab, text, add_special, parse_special)` gives (SPM, BPE with
//! llama.cpp's pre-tokenizers, WPM, UGM, RWKV, PLaMo-2), and `llama_token_to_piece` / detokenize.
//!
//! The vocabulary's text is copied once into one buffer; the text -> id map and the merge
//! ranks are built on the first call that needs them, so opening a 262k-token vocabulary only
//! reads the arrays.

mod bpe;
mod joins;
mod matcher;
mod plamo2;
mod pretokenize;
mod rwkv;
mod splitters;
mod spm;
mod table;
mod trie;
mod ugm;
mod unicode;
mod wpm;

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::error::{Error, ErrorKind};
use crate::{GgufFile, Value, ValueType};
use table::{hash_bytes, IdTable};

/// Token attributes (llama.cpp's `llama_token_attr` bits).
pub mod attr {
    pub const UNDEFINED: u32 = 0;
    pub const UNKNOWN: u32 = 1 << 0;
    pub const UNUSED: u32 = 1 << 1;
    pub const NORMAL: u32 = 1 << 2;
    pub const CONTROL: u32 = 1 << 3;
    pub const USER_DEFINED: u32 = 1 << 4;
    pub const BYTE: u32 = 1 << 5;
    pub const NORMALIZED: u32 = 1 << 6;
    pub const LSTRIP: u32 = 1 << 7;
    pub const RSTRIP: u32 = 1 << 8;
    pub const SINGLE_WORD: u32 = 1 << 9;
}

/// The vocabulary kinds tokenized here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VocabType {
    /// SentencePiece BPE with scores (`tokenizer.ggml.model = llama`).
    Spm,
    /// Byte-level BPE with merges (`gpt2`, `gemma4`, ...).
    Bpe,
    /// WordPiece (`bert`).
    Wpm,
    /// Unigram (`t5`).
    Ugm,
    /// RWKV-World: greedy longest match over escaped byte strings (`rwkv`).
    Rwkv,
    /// PLaMo-2: least-cost cut by token scores with byte fallback (`plamo2`).
    Plamo2,
}

/// The most text `try_tokenize` takes (what the CLI and the npm package tokenize): far beyond
/// a context window, small enough that the ids and the work stay bounded.
pub const MAX_TOKENIZE_BYTES: usize = 8 << 20;

/// Why a tokenizer cannot be built from a file's metadata, in plain words.
fn bad(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::BadTokenizer {
        message: message.into(),
    })
}

fn err<T>(msg: impl Into<String>) -> Result<T, Error> {
    Err(bad(msg))
}

/// A tokenizer built from a GGUF file's metadata.
#[derive(Debug)]
pub struct Tokenizer {
    vocab_type: VocabType,
    pre: String,
    text: Vec<u8>,
    /// Token i's text is `text[offsets[i]..offsets[i + 1]]`.
    offsets: Vec<usize>,
    scores: Vec<f32>,
    attrs: Vec<u32>,
    merges_text: Vec<u8>,
    merges_offsets: Vec<usize>,
    token_index: OnceLock<TokenIndex>,
    merge_index: OnceLock<IdTable>,
    /// BPE: where words can be cut (joins.rs); None when the merges do not allow it.
    joins: OnceLock<Option<joins::Joins>>,
    pretok: Option<pretokenize::PreTokenizer>,
    /// Special tokens to split out first, longest text first.
    special_cache: Vec<i32>,
    pieces: OnceLock<Vec<Box<[u8]>>>,
    /// SPM: bit `a * 256 + b` is set when bytes `a`, `b` are adjacent inside some token (see
    /// spm::tokenize).
    spm_glue: OnceLock<Box<[u64; 1024]>>,
    add_bos: bool,
    add_eos: bool,
    add_space_prefix: bool,
    escape_whitespaces: bool,
    ignore_merges: bool,
    byte_encode: bool,
    bos: Option<i32>,
    eos: Option<i32>,
    pub(crate) unk: Option<i32>,
    sep: Option<i32>,
    pub(crate) lowercase: bool,
    pub(crate) strip_accents: bool,
    pub(crate) max_token_len: usize,
    pub(crate) remove_extra_whitespaces: bool,
    ugm: Option<ugm::Ugm>,
    /// WPM's tokens by text (each text's id as `token_id` gives it).
    pub(crate) wpm: Option<trie::ByteTrie>,
    rwkv: OnceLock<rwkv::Trie>,
    plamo2: Option<plamo2::Plamo2>,
}

fn get_bool(file: &GgufFile, key: &str) -> Option<bool> {
    match file.get(key)? {
        Value::Bool(b) => Some(b),
        _ => None,
    }
}

fn string_array(file: &GgufFile, key: &str) -> Option<(Vec<u8>, Vec<usize>)> {
    let v = file.get(key)?;
    let a = v.as_array()?;
    if a.item_type() != ValueType::String {
        return None;
    }
    let mut text = Vec::new();
    let mut offsets = Vec::with_capacity(a.len() + 1);
    for item in a.iter() {
        offsets.push(text.len());
        if let Value::String(s) = item {
            text.extend_from_slice(s.as_bytes());
        }
    }
    offsets.push(text.len());
    Some((text, offsets))
}

impl Tokenizer {
    /// Builds the tokenizer from `tokenizer.ggml.*` as llama.cpp's `llama_vocab::load` does.
    pub fn from_gguf(file: &GgufFile) -> Result<Tokenizer, Error> {
        let model = file
            .get("tokenizer.ggml.model")
            .and_then(|v| v.as_str().map(|s| s.into_owned()))
            .ok_or_else(|| bad("no tokenizer.ggml.model in the file"))?;
        let mut pre = file
            .get("tokenizer.ggml.pre")
            .and_then(|v| v.as_str().map(|s| s.into_owned()))
            .unwrap_or_default();
        let (vocab_type, mut bos, mut eos, mut unk, mut sep) = match model.as_str() {
            "llama" => (VocabType::Spm, Some(1), Some(2), Some(0), None),
            "gpt2" => (VocabType::Bpe, Some(11), Some(11), None, None),
            "bert" => (VocabType::Wpm, Some(101), None, Some(100), Some(102)),
            "t5" => (VocabType::Ugm, None, Some(1), Some(2), None),
            "rwkv" => (VocabType::Rwkv, None, None, None, None),
            "plamo2" => (VocabType::Plamo2, Some(1), Some(2), Some(0), None),
            "gemma4" => {
                pre = "gemma4".to_string();
                (VocabType::Bpe, None, None, None, None)
            }
            other => return err(format!("tokenizer '{other}' is not supported yet")),
        };
        let (text, mut offsets) = string_array(file, "tokenizer.ggml.tokens")
            .ok_or_else(|| bad("no tokenizer.ggml.tokens string array"))?;
        let n = offsets.len() - 1;
        // llama.cpp names empty tokens [EMPTY_i]; rebuild the buffer only when there are any.
        let text = if (0..n).any(|i| offsets[i] == offsets[i + 1]) {
            let mut t = Vec::with_capacity(text.len());
            let mut o = Vec::with_capacity(n + 1);
            for i in 0..n {
                o.push(t.len());
                let s = &text[offsets[i]..offsets[i + 1]];
                if s.is_empty() {
                    t.extend_from_slice(format!("[EMPTY_{i}]").as_bytes());
                } else {
                    t.extend_from_slice(s);
                }
            }
            o.push(t.len());
            offsets = o;
            t
        } else {
            text
        };
        let mut scores = vec![0f32; n];
        if let Some(v) = file.get("tokenizer.ggml.scores") {
            if let Some(a) = v.as_array() {
                for (i, s) in a.iter().take(n).enumerate() {
                    scores[i] = s.as_f64().unwrap_or(0.0) as f32;
                }
            }
        }
        let mut attrs = vec![attr::NORMAL; n];
        if let Some(v) = file.get("tokenizer.ggml.token_type") {
            if let Some(a) = v.as_array() {
                for (i, t) in a.iter().take(n).enumerate() {
                    attrs[i] = match t.as_f64().map(|f| f as i64) {
                        Some(2) => attr::UNKNOWN,
                        Some(5) => attr::UNUSED,
                        Some(1) => attr::NORMAL,
                        Some(3) => attr::CONTROL,
                        Some(4) => attr::USER_DEFINED,
                        Some(6) => attr::BYTE,
                        _ => attr::UNDEFINED,
                    };
                }
            }
        }
        let (merges_text, merges_offsets) = if vocab_type == VocabType::Bpe {
            match string_array(file, "tokenizer.ggml.merges") {
                Some(m) => m,
                // llama.cpp loads Kimi-K2 files without merges (every word is then its bytes).
                None if pre == "kimi-k2" && file.get("tokenizer.ggml.merges").is_none() => {
                    (Vec::new(), vec![0])
                }
                None => return err("no tokenizer.ggml.merges in the file"),
            }
        } else {
            (Vec::new(), vec![0])
        };

        let mut add_bos = false;
        let mut add_eos = false;
        let mut add_space_prefix = false;
        let mut escape_whitespaces = false;
        let mut ignore_merges = false;
        let mut pretok = None;
        let mut byte_encode = true;
        match vocab_type {
            VocabType::Spm => {
                add_space_prefix = true;
                add_bos = true;
            }
            VocabType::Wpm => add_bos = true,
            VocabType::Rwkv | VocabType::Plamo2 => {}
            VocabType::Ugm => {
                add_eos = true;
                escape_whitespaces = true;
            }
            VocabType::Bpe => {
                match pre.as_str() {
                    "minicpm5" | "glm4" | "glm5" | "youtu" | "granite-embed-multi-97m" => {
                        ignore_merges = true
                    }
                    "llama3" | "llama-v3" | "llama-bpe" | "falcon3" | "falcon-h1" | "pixtral"
                    | "midm-2.0" | "lfm2" | "jina-v5-nano" | "tekken" => {
                        ignore_merges = true;
                        add_bos = true;
                    }
                    "chameleon" => add_bos = true,
                    "gemma4" | "granite-embed-multi-311m" | "sarvam-moe" => {
                        escape_whitespaces = true
                    }
                    _ => {}
                }
                if matches!(pre.as_str(), "chatglm-bpe" | "glm4" | "glm5") {
                    bos = None;
                }
                let p = pretokenize::PreTokenizer::new(&pre)
                    .ok_or_else(|| bad(format!("pre-tokenizer '{pre}' is not supported")))?;
                byte_encode = p.byte_encode();
                pretok = Some(p);
            }
        }
        if let Some(b) = get_bool(file, "tokenizer.ggml.add_space_prefix") {
            add_space_prefix = b;
        }

        let id_of = |key: &str| -> Option<Option<i32>> {
            let v = file.get(key)?.as_u64()?;
            Some((v < n as u64).then_some(v as i32))
        };
        let valid = |id: Option<i32>| id.filter(|&i| i >= 0 && (i as usize) < n);
        bos = valid(bos);
        eos = valid(eos);
        unk = valid(unk);
        sep = valid(sep);
        if let Some(Some(id)) = id_of("tokenizer.ggml.unknown_token_id") {
            unk = Some(id);
        }
        if let Some(Some(id)) = id_of("tokenizer.ggml.seperator_token_id") {
            sep = Some(id);
        }
        let lowercase = get_bool(file, "tokenizer.ggml.normalizer.lowercase").unwrap_or(true);
        let strip_accents =
            get_bool(file, "tokenizer.ggml.normalizer.strip_accents").unwrap_or(lowercase);
        let remove_extra_whitespaces =
            get_bool(file, "tokenizer.ggml.remove_extra_whitespaces").unwrap_or(false);
        let max_token_len = (0..n)
            .map(|i| offsets[i + 1] - offsets[i])
            .max()
            .unwrap_or(0);
        // An out-of-range id in the file keeps the default (llama.cpp warns and keeps it).
        if let Some(Some(id)) = id_of("tokenizer.ggml.bos_token_id") {
            bos = Some(id);
        }
        if let Some(Some(id)) = id_of("tokenizer.ggml.eos_token_id") {
            eos = Some(id);
        }
        if let Some(b) = get_bool(file, "tokenizer.ggml.add_bos_token") {
            add_bos = b;
        }
        if let Some(b) = get_bool(file, "tokenizer.ggml.add_eos_token") {
            add_eos = b;
        }
        if pre == "gemma4" && !add_bos {
            add_bos = true;
        }

        let mut tok = Tokenizer {
            vocab_type,
            pre,
            text,
            offsets,
            scores,
            attrs,
            merges_text,
            merges_offsets,
            token_index: OnceLock::new(),
            merge_index: OnceLock::new(),
            joins: OnceLock::new(),
            pretok,
            special_cache: Vec::new(),
            pieces: OnceLock::new(),
            spm_glue: OnceLock::new(),
            add_bos,
            add_eos,
            add_space_prefix,
            escape_whitespaces,
            ignore_merges,
            byte_encode,
            bos,
            eos,
            unk,
            sep,
            lowercase,
            strip_accents,
            max_token_len,
            remove_extra_whitespaces,
            ugm: None,
            wpm: None,
            rwkv: OnceLock::new(),
            plamo2: None,
        };
        tok.adjust_attrs(file, &id_of);
        if vocab_type == VocabType::Wpm {
            let mut t = trie::ByteTrie::new();
            for id in 0..tok.len() as i32 {
                let text = tok.token_text(id);
                if let Some(canonical) = tok.token_id(text) {
                    t.insert(text, canonical);
                }
            }
            tok.wpm = Some(t);
        }
        if vocab_type == VocabType::Ugm {
            let charsmap: Vec<u8> = file
                .get("tokenizer.ggml.precompiled_charsmap")
                .and_then(|v| {
                    v.as_array().map(|a| {
                        a.iter()
                            .map(|x| x.as_f64().unwrap_or(0.0) as i64 as u8)
                            .collect()
                    })
                })
                .unwrap_or_default();
            tok.ugm = Some(ugm::Ugm::new(&tok, &charsmap));
        }
        if vocab_type == VocabType::Plamo2 {
            // Built here: llama.cpp refuses to load a PLaMo-2 vocabulary missing a byte token.
            tok.plamo2 = Some(plamo2::Plamo2::new(&tok)?);
        }
        Ok(tok)
    }

    /// The special-token attribute fix-ups llama.cpp applies by token text and model name.
    fn adjust_attrs(&mut self, file: &GgufFile, id_of: &dyn Fn(&str) -> Option<Option<i32>>) {
        let n = self.len();
        let has = |key: &str| matches!(id_of(key), Some(Some(_)));
        // Auto-detected EOT/EOM/FIM tokens become CONTROL when the file names none.
        let groups: &[(&[&str], &[&str])] = &[
            (
                &["tokenizer.ggml.eot_token_id"],
                &[
                    "<|eot_id|>",
                    "<|im_end|>",
                    "<|end|>",
                    "<end_of_turn>",
                    "<|endoftext|>",
                    "<|end_of_text|>",
                    "<EOT>",
                    "_<EOT>",
                    "[EOT]",
                    "<｜end▁of▁sentence｜>",
                    "<end_of_utterance>",
                ],
            ),
            (&["tokenizer.ggml.eom_token_id"], &["<|eom_id|>"]),
            (
                &[
                    "tokenizer.ggml.fim_pre_token_id",
                    "tokenizer.ggml.prefix_token_id",
                ],
                &[
                    "<|fim_prefix|>",
                    "<fim-prefix>",
                    "<fim_prefix>",
                    "<｜fim▁begin｜>",
                    "<PRE>",
                    "▁<PRE>",
                    "<|code_prefix|>",
                    "<|prefix|>",
                ],
            ),
            (
                &[
                    "tokenizer.ggml.fim_suf_token_id",
                    "tokenizer.ggml.suffix_token_id",
                ],
                &[
                    "<|fim_suffix|>",
                    "<fim-suffix>",
                    "<fim_suffix>",
                    "<｜fim▁hole｜>",
                    "<SUF>",
                    "▁<SUF>",
                    "<|code_suffix|>",
                    "<|suffix|>",
                ],
            ),
            (
                &[
                    "tokenizer.ggml.fim_mid_token_id",
                    "tokenizer.ggml.middle_token_id",
                ],
                &[
                    "<|fim_middle|>",
                    "<fim-middle>",
                    "<fim_middle>",
                    "<｜fim▁end｜>",
                    "<MID>",
                    "▁<MID>",
                    "<|code_middle|>",
                    "<|middle|>",
                ],
            ),
            (
                &["tokenizer.ggml.fim_pad_token_id"],
                &["<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"],
            ),
            (
                &["tokenizer.ggml.fim_rep_token_id"],
                &[
                    "<|fim_repo|>",
                    "<|repo_name|>",
                    "<fim-repo>",
                    "<REPO>",
                    "<reponame>",
                ],
            ),
            (&["tokenizer.ggml.fim_sep_token_id"], &["<|file_sep|>"]),
        ];
        for (keys, texts) in groups {
            if keys.iter().any(|k| has(k)) {
                continue;
            }
            // llama.cpp takes the first match in hash-map order; the lowest id here.
            if let Some(id) = texts
                .iter()
                .flat_map(|t| self.ids_with_text(t.as_bytes()))
                .min()
            {
                self.attrs[id] |= attr::CONTROL;
            }
        }
        for i in 0..n {
            let t = &self.text[self.offsets[i]..self.offsets[i + 1]];
            let a = &mut self.attrs[i];
            if *a & attr::CONTROL != 0 && *a & attr::UNUSED == 0 && contains(t, b"unused") {
                *a |= attr::UNUSED;
            }
        }
        const EOG: &[&str] = &[
            "<|eot_id|>",
            "<|im_end|>",
            "<|end|>",
            "<|return|>",
            "<|call|>",
            "<|flush|>",
            "<|calls|>",
            "<end_of_turn>",
            "<|endoftext|>",
            "</s>",
            "<|eom_id|>",
            "<EOT>",
            "_<EOT>",
            "[EOT]",
            "[EOS]",
            "<|end_of_text|>",
            "<end_of_utterance>",
            "<eos>",
            "<turn|>",
            "<|tool_response>",
            "<｜end▁of▁sentence｜>",
            "[e~[",
        ];
        let mut eog: Vec<usize> = EOG
            .iter()
            .flat_map(|e| self.ids_with_text(e.as_bytes()))
            .collect();
        eog.sort_unstable();
        eog.dedup();
        for &i in &eog {
            self.attrs[i] |= attr::CONTROL;
        }
        for t in ["<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"] {
            for i in self.ids_with_text(t.as_bytes()) {
                self.attrs[i] = attr::USER_DEFINED;
            }
        }
        let find = |tok: &Tokenizer, s: &str| {
            eog.iter()
                .copied()
                .find(|&i| tok.token_text(i as i32) == s.as_bytes())
        };
        let end = find(self, "<|end|>");
        if let Some(end) = end {
            let ret = find(self, "<|return|>").is_some();
            let call = find(self, "<|call|>").is_some() || find(self, "<|calls|>").is_some();
            let flush = find(self, "<|flush|>").is_some();
            if call && (ret || flush) {
                self.attrs[end] = attr::USER_DEFINED;
            }
        }
        if let Some(s) = find(self, "</s>") {
            if find(self, "<|tool_response>").is_some()
                || self
                    .token_id(b"<|plamo:eos|>")
                    .is_some_and(|i| eog.contains(&(i as usize)))
            {
                self.attrs[s] = attr::NORMAL;
            }
        }
        // Special tokens cache: control, user-defined and unknown tokens, longest text first.
        let mut cache: Vec<i32> = (0..n as i32)
            .filter(|&i| {
                self.attrs[i as usize] & (attr::CONTROL | attr::USER_DEFINED | attr::UNKNOWN) != 0
            })
            .collect();
        cache.sort_by_key(|&i| std::cmp::Reverse(self.token_text(i).len()));
        // llama.cpp caches the pieces here; the attribute changes below only touch the
        // LSTRIP/RSTRIP bits, which pieces do not depend on, so they are built on first use.
        // Per-model attributes.
        let name = file
            .get("general.name")
            .and_then(|v| v.as_str().map(|s| s.to_lowercase()))
            .unwrap_or_default();
        let arch = file
            .get("general.architecture")
            .and_then(|v| v.as_str().map(|s| s.into_owned()))
            .unwrap_or_default();
        let pre = file
            .get("tokenizer.ggml.pre")
            .and_then(|v| v.as_str().map(|s| s.into_owned()))
            .unwrap_or_default();
        let any = |s: &str, subs: &[&str]| subs.iter().any(|x| s.contains(x));
        if any(&pre, &["jina-v2-de", "jina-v2-es", "jina-v2-code"])
            || any(&arch, &["nomic-bert-moe", "jina-bert-v3"])
        {
            if let Some(id) = self.token_id(b"<mask>") {
                self.attrs[id as usize] |= attr::LSTRIP;
            }
        } else if any(&name, &["phi-3", "phi3"]) {
            for &id in &cache {
                self.attrs[id as usize] |= attr::RSTRIP;
            }
            if let Some(id) = self.token_id(b"</s>") {
                self.attrs[id as usize] |= attr::RSTRIP;
            }
            for t in [b"<unk>".as_slice(), b"<s>", b"<|endoftext|>"] {
                if let Some(id) = self.token_id(t) {
                    self.attrs[id as usize] &= !attr::RSTRIP;
                }
            }
        } else if any(&name, &["modern-bert"]) {
            if let Some(id) = self.token_id(b"[MASK]") {
                self.attrs[id as usize] |= attr::LSTRIP;
            }
        }
        self.special_cache = cache;
    }

    /// Number of tokens.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// True when the vocabulary is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// SPM or BPE.
    pub fn vocab_type(&self) -> VocabType {
        self.vocab_type
    }

    pub(crate) fn pre_name(&self) -> &str {
        &self.pre
    }

    /// The BOS id the tokenizer adds, if any.
    pub fn bos(&self) -> Option<i32> {
        self.bos
    }

    /// The EOS id the tokenizer adds, if any.
    pub fn eos(&self) -> Option<i32> {
        self.eos
    }

    /// A token's text as stored (empty for an id out of range).
    pub fn token_text(&self, id: i32) -> &[u8] {
        if id < 0 || id as usize >= self.len() {
            return &[];
        }
        &self.text[self.offsets[id as usize]..self.offsets[id as usize + 1]]
    }

    /// A token's attribute bits ([`attr`]).
    pub fn token_attr(&self, id: i32) -> u32 {
        if id < 0 {
            return 0;
        }
        self.attrs.get(id as usize).copied().unwrap_or(0)
    }

    /// Whether bytes `a`, `b` are adjacent inside some token (so a cut between them could
    /// split a token); built on first use.
    pub(crate) fn spm_glued(&self, a: u8, b: u8) -> bool {
        let glue = self.spm_glue.get_or_init(|| {
            let mut glue = Box::new([0u64; 1024]);
            for w in self.text_pairs() {
                let bit = (w.0 as usize) << 8 | w.1 as usize;
                glue[bit >> 6] |= 1 << (bit & 63);
            }
            glue
        });
        let bit = (a as usize) << 8 | b as usize;
        glue[bit >> 6] & (1 << (bit & 63)) != 0
    }

    /// Every adjacent byte pair inside a token's text.
    fn text_pairs(&self) -> impl Iterator<Item = (u8, u8)> + '_ {
        (0..self.len())
            .flat_map(move |i| self.token_text(i as i32).windows(2).map(|w| (w[0], w[1])))
    }

    pub(crate) fn score(&self, id: i32) -> f32 {
        self.scores.get(id as usize).copied().unwrap_or(0.0)
    }

    fn index(&self) -> &TokenIndex {
        self.token_index.get_or_init(|| {
            let entries: Vec<u64> = (0..self.len())
                .map(|i| IdTable::entry(hash_bytes(self.token_text(i as i32)), i as u32))
                .collect();
            // Later duplicates win, as with llama.cpp's token_to_id[word] = i.
            let (table, duplicates) = IdTable::build(&entries, true, |a, b| {
                self.token_text(a as i32) == self.token_text(b as i32)
            });
            TokenIndex { table, duplicates }
        })
    }

    /// Every id whose text is `t`, lowest first.
    fn ids_with_text(&self, t: &[u8]) -> Vec<usize> {
        if self.index().duplicates {
            (0..self.len())
                .filter(|&i| self.token_text(i as i32) == t)
                .collect()
        } else {
            self.token_id(t).map(|i| i as usize).into_iter().collect()
        }
    }

    /// The id of the token with exactly this text.
    pub fn token_id(&self, text: &[u8]) -> Option<i32> {
        self.index()
            .table
            .find(hash_bytes(text), |id| self.token_text(id as i32) == text)
            .map(|id| id as i32)
    }

    pub(crate) fn text_to_token(&self, text: &[u8]) -> Option<i32> {
        self.token_id(text)
    }

    pub(crate) fn byte_to_token(&self, b: u8) -> Option<i32> {
        self.byte_to_token_hex(b).or_else(|| self.token_id(&[b]))
    }

    /// The `<0xXX>` byte token.
    pub(crate) fn byte_to_token_hex(&self, b: u8) -> Option<i32> {
        const HEX: &[u8; 16] = b"0123456789ABCDEF";
        let t = [
            b'<',
            b'0',
            b'x',
            HEX[(b >> 4) as usize],
            HEX[(b & 15) as usize],
            b'>',
        ];
        self.token_id(&t)
    }

    /// Merge line i's two parts: split at the first space after the first byte
    /// (llama.cpp's word.find(' ', 1)); None for a line without one.
    fn merge_parts(&self, i: usize) -> Option<(&[u8], &[u8])> {
        let w = &self.merges_text[self.merges_offsets[i]..self.merges_offsets[i + 1]];
        let p = w.iter().skip(1).position(|&c| c == b' ')?;
        Some((&w[..p + 1], &w[p + 2..]))
    }

    /// Merge line numbers by their two parts' text: building it looks no token up, which keeps
    /// the first token of a big vocabulary fast (bpe::tokenize caches ranks by id per call).
    fn merges(&self) -> &IdTable {
        self.merge_index.get_or_init(|| {
            let n = self.merges_offsets.len().saturating_sub(1);
            let mut entries = Vec::with_capacity(n);
            for i in 0..n {
                if let Some((a, b)) = self.merge_parts(i) {
                    entries.push(IdTable::entry(pair_hash(a, b), i as u32));
                }
            }
            // The first rank of a pair wins (bpe_ranks.emplace).
            IdTable::build(&entries, false, |i, j| {
                self.merge_parts(i as usize) == self.merge_parts(j as usize)
            })
            .0
        })
    }

    /// The character pairs some merge result holds, built on the first long BPE word.
    pub(crate) fn joins(&self) -> Option<&joins::Joins> {
        self.joins
            .get_or_init(|| {
                let n = self.merges_offsets.len().saturating_sub(1);
                joins::Joins::build((0..n).filter_map(|i| self.merge_parts(i)))
            })
            .as_ref()
    }

    /// The merge rank of the pair `a`, `b`.
    pub(crate) fn merge_rank(&self, a: &[u8], b: &[u8]) -> Option<u32> {
        // A first part with a space after its first byte is no merge line's first part.
        if a.is_empty() || a[1..].contains(&b' ') {
            return None;
        }
        self.merges().find(pair_hash(a, b), |j| {
            let j = j as usize;
            let w = &self.merges_text[self.merges_offsets[j]..self.merges_offsets[j + 1]];
            w.len() == a.len() + 1 + b.len()
                && w[a.len()] == b' '
                && &w[..a.len()] == a
                && &w[a.len() + 1..] == b
        })
    }

    /// [`Tokenizer::tokenize`] for text from outside: an error for text over
    /// [`MAX_TOKENIZE_BYTES`] (the work and the ids grow with it).
    pub fn try_tokenize(
        &self,
        text: &[u8],
        add_special: bool,
        parse_special: bool,
    ) -> Result<Vec<i32>, Error> {
        if text.len() > MAX_TOKENIZE_BYTES {
            return Err(Error::new(ErrorKind::InputTooLong {
                what: "tokenize: text".to_string(),
                len: text.len() as u64,
                limit: MAX_TOKENIZE_BYTES as u64,
            }));
        }
        Ok(self.tokenize(text, add_special, parse_special))
    }

    /// Token ids for `text` as llama.cpp's `llama_tokenize` gives them.
    pub fn tokenize(&self, text: &[u8], add_special: bool, parse_special: bool) -> Vec<i32> {
        let fragments = self.partition(text, parse_special);
        let mut out = Vec::new();
        match self.vocab_type {
            VocabType::Spm => {
                let mut prev_special = true;
                if add_special && self.add_bos {
                    if let Some(b) = self.bos {
                        out.push(b);
                    }
                }
                for f in &fragments {
                    match *f {
                        Fragment::Text(s, e) => {
                            let mut t = Vec::with_capacity(e - s + 4);
                            if self.add_space_prefix && prev_special {
                                t.push(b' ');
                            }
                            t.extend_from_slice(&text[s..e]);
                            let t = escape_whitespace(&t);
                            spm::tokenize(self, &t, &mut out);
                            prev_special = false;
                        }
                        Fragment::Token(id) => {
                            out.push(id);
                            prev_special = true;
                        }
                    }
                }
                if add_special && self.add_eos {
                    if let Some(e) = self.eos {
                        out.push(e);
                    }
                }
            }
            VocabType::Ugm => {
                if add_special && self.add_bos {
                    if let Some(b) = self.bos {
                        out.push(b);
                    }
                }
                for f in &fragments {
                    match *f {
                        Fragment::Text(s, e) => {
                            if let Some(u) = &self.ugm {
                                u.tokenize(self, &text[s..e], &mut out);
                            }
                        }
                        Fragment::Token(id) => out.push(id),
                    }
                }
                if add_special && self.add_eos {
                    if let Some(e) = self.eos {
                        out.push(e);
                    }
                }
            }
            VocabType::Rwkv => {
                // llama.cpp's RWKV path adds no BOS/EOS whatever the file says.
                let trie = self.rwkv.get_or_init(|| rwkv::Trie::new(self));
                for f in &fragments {
                    match *f {
                        Fragment::Text(s, e) => rwkv::tokenize(self, trie, &text[s..e], &mut out),
                        Fragment::Token(id) => out.push(id),
                    }
                }
            }
            VocabType::Plamo2 => {
                // llama.cpp's PLaMo-2 path adds no BOS/EOS whatever the file says.
                for f in &fragments {
                    match *f {
                        Fragment::Text(s, e) => {
                            if let Some(p) = &self.plamo2 {
                                p.tokenize(&text[s..e], &mut out);
                            }
                        }
                        Fragment::Token(id) => out.push(id),
                    }
                }
            }
            VocabType::Wpm => {
                if add_special {
                    if let Some(b) = self.bos {
                        out.push(b);
                    }
                }
                for f in &fragments {
                    match *f {
                        Fragment::Text(s, e) => wpm::tokenize(self, &text[s..e], &mut out),
                        Fragment::Token(id) => out.push(id),
                    }
                }
                if add_special {
                    if let Some(s) = self.sep {
                        out.push(s);
                    }
                }
            }
            VocabType::Bpe => {
                if add_special && self.add_bos {
                    if let Some(b) = self.bos {
                        out.push(b);
                    }
                }
                let Some(pretok) = &self.pretok else {
                    return out;
                };
                for f in &fragments {
                    match *f {
                        Fragment::Text(s, e) => {
                            let words = if self.escape_whitespaces {
                                pretok.split(&escape_whitespace(&text[s..e]))
                            } else {
                                pretok.split(&text[s..e])
                            };
                            bpe::tokenize(self, &words, &mut out);
                        }
                        Fragment::Token(id) => out.push(id),
                    }
                }
                if add_special && self.add_eos {
                    if let Some(e) = self.eos {
                        out.push(e);
                    }
                }
            }
        }
        out
    }

    /// Splits special-token texts out of `text` (llama.cpp's `tokenizer_st_partition`).
    fn partition(&self, text: &[u8], parse_special: bool) -> Vec<Fragment> {
        let mut frags = if text.is_empty() {
            Vec::new()
        } else {
            vec![Fragment::Text(0, text.len())]
        };
        if frags.is_empty() || self.special_cache.is_empty() {
            return frags;
        }
        // Where each byte that starts a special token occurs in the text, so each token's
        // search visits only the places it could start (one pass over the text in all).
        let mut wanted = [false; 256];
        for &id in &self.special_cache {
            if let Some(&b) = self.token_text(id).first() {
                wanted[b as usize] = true;
            }
        }
        let mut positions: Vec<Vec<usize>> = vec![Vec::new(); 256];
        for (i, &b) in text.iter().enumerate() {
            if wanted[b as usize] {
                positions[b as usize].push(i);
            }
        }
        let find = |needle: &[u8], s: usize, e: usize| -> Option<usize> {
            let ps = &positions[needle[0] as usize];
            if ps.len() > text.len() / 64 {
                // A common first byte: a plain scan is faster than walking its positions.
                return find(&text[s..e], needle).map(|p| p + s);
            }
            let from = ps.partition_point(|&p| p < s);
            ps[from..]
                .iter()
                .take_while(|&&p| p + needle.len() <= e)
                .find(|&&p| &text[p..p + needle.len()] == needle)
                .copied()
        };
        for &id in &self.special_cache {
            let a = self.token_attr(id);
            if !parse_special && a & (attr::CONTROL | attr::UNKNOWN) != 0 {
                continue;
            }
            let needle = self.token_text(id);
            if needle.is_empty() {
                continue;
            }
            let mut next = Vec::with_capacity(frags.len());
            for f in frags {
                let Fragment::Text(mut s, e) = f else {
                    next.push(f);
                    continue;
                };
                loop {
                    let Some(m) = find(needle, s, e) else {
                        next.push(Fragment::Text(s, e));
                        break;
                    };
                    if m > s {
                        let mut le = m;
                        if a & attr::LSTRIP != 0 {
                            while le > s && is_c_space(text[le - 1]) {
                                le -= 1;
                            }
                        }
                        if le > s {
                            next.push(Fragment::Text(s, le));
                        }
                    }
                    next.push(Fragment::Token(id));
                    let mut rs = m + needle.len();
                    if rs >= e {
                        break;
                    }
                    if a & attr::RSTRIP != 0 {
                        while rs < e && is_c_space(text[rs]) {
                            rs += 1;
                        }
                    }
                    if rs >= e {
                        break;
                    }
                    s = rs;
                }
            }
            frags = next;
        }
        frags
    }

    fn compute_piece(&self, id: i32) -> Vec<u8> {
        let a = self.token_attr(id);
        let t = self.token_text(id);
        if self.vocab_type == VocabType::Rwkv {
            // Every RWKV token, whatever its type, is its unescaped bytes.
            return rwkv::unescape(t);
        }
        if self.vocab_type == VocabType::Plamo2 {
            // A well-formed byte token is its byte; any other token its text as stored.
            if a & attr::BYTE != 0 {
                if let Some(b) = plamo2::hex_byte(t) {
                    return vec![b];
                }
            }
            return t.to_vec();
        }
        if a & (attr::UNKNOWN | attr::CONTROL | attr::USER_DEFINED) != 0 {
            return t.to_vec();
        }
        if a & attr::NORMAL != 0 {
            if self.vocab_type != VocabType::Bpe || self.escape_whitespaces {
                return unescape_whitespace(t);
            }
            return decode_bpe_text(t);
        }
        if a & attr::BYTE != 0 {
            let hex = t.get(3..5).and_then(|h| std::str::from_utf8(h).ok());
            let b = hex
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .unwrap_or(0);
            return vec![b];
        }
        Vec::new()
    }

    /// What `llama_token_to_piece(vocab, id, buf, len, 0, special)` writes; control and
    /// unknown tokens give nothing unless `special`. Out-of-range ids give nothing.
    pub fn token_to_piece(&self, id: i32, special: bool) -> &[u8] {
        if id < 0 || id as usize >= self.len() {
            return &[];
        }
        if !special && self.token_attr(id) & (attr::UNKNOWN | attr::CONTROL) != 0 {
            return &[];
        }
        let pieces = self.pieces.get_or_init(|| {
            (0..self.len() as i32)
                .map(|i| self.compute_piece(i).into_boxed_slice())
                .collect()
        });
        &pieces[id as usize]
    }

    /// The text of `ids`: their pieces concatenated (`special` renders control tokens).
    pub fn detokenize(&self, ids: &[i32], special: bool) -> Vec<u8> {
        let mut out = Vec::new();
        for &id in ids {
            out.extend_from_slice(self.token_to_piece(id, special));
        }
        out
    }
}

/// A fast non-cryptographic hasher (FxHash's mixing) for the vocabulary maps: the keys come
/// from the file, the lookups from the text, and SipHash's DoS resistance costs a third of the
/// tokenizing time here.
#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher(u64);

impl std::hash::Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let v = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
    }

    fn write_u32(&mut self, i: u32) {
        self.0 = (self.0.rotate_left(5) ^ u64::from(i)).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn write_usize(&mut self, i: usize) {
        self.0 = (self.0.rotate_left(5) ^ i as u64).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) type FxBuild = std::hash::BuildHasherDefault<FxHasher>;
pub(crate) type FxMap<K, V> = HashMap<K, V, FxBuild>;

/// The token index: ids by text, and whether any text is there twice.
#[derive(Debug)]
struct TokenIndex {
    table: IdTable,
    duplicates: bool,
}

fn pair_hash(a: &[u8], b: &[u8]) -> u64 {
    hash_bytes(a).rotate_left(21) ^ hash_bytes(b).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

#[derive(Debug, Clone, Copy)]
enum Fragment {
    Text(usize, usize),
    Token(i32),
}

fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r')
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    find(hay, needle).is_some()
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || needle.len() > hay.len() {
        return None;
    }
    let first = needle[0];
    let last = hay.len() - needle.len();
    let mut i = 0;
    while i <= last {
        let p = hay[i..=last].iter().position(|&b| b == first)? + i;
        if &hay[p..p + needle.len()] == needle {
            return Some(p);
        }
        i = p + 1;
    }
    None
}

fn escape_whitespace(t: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(t.len() + 8);
    for &b in t {
        if b == b' ' {
            out.extend_from_slice("\u{2581}".as_bytes());
        } else {
            out.push(b);
        }
    }
    out
}

fn unescape_whitespace(t: &[u8]) -> Vec<u8> {
    let pat = "\u{2581}".as_bytes();
    let mut out = Vec::with_capacity(t.len());
    let mut i = 0;
    while i < t.len() {
        if t[i..].starts_with(pat) {
            out.push(b' ');
            i += pat.len();
        } else {
            out.push(t[i]);
            i += 1;
        }
    }
    out
}

/// GPT-2 byte-level text back to bytes (llama.cpp's `llama_decode_text`).
fn decode_bpe_text(t: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(t.len());
    for c in unicode::cpts_from_utf8(t) {
        match unicode::cpt_to_byte(c) {
            Some(b) => out.push(b),
            None => {
                let mut enc = Vec::new();
                unicode::push_cpt(&mut enc, c);
                out.extend_from_slice(b"[UNK_BYTE_0x");
                for b in &enc {
                    out.extend_from_slice(format!("{b:02x}").as_bytes());
                }
                out.extend_from_slice(t);
                out.push(b']');
            }
        }
    }
    out
}
