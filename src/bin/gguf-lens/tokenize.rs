//! `gguf-lens tokenize` and `gguf-lens detokenize`: the file's own tokenizer, as llama.cpp's
//! `llama_tokenize` / `llama_token_to_piece` give it.

use std::io::{Read, Write};

use gguf_lens::gguf::read_header;
use gguf_lens::tokenizer::Tokenizer;

/// Tokenize text with the GGUF's own vocabulary: the ids llama.cpp's
/// `llama_tokenize(vocab, text, add_special, parse_special)` gives, one line, space-separated.
/// The text is `--text`, else all of stdin (bytes as they are: input that is not UTF-8 is
/// tokenized as llama.cpp does, byte tokens for SPM and U+FFFD for BPE).
///
/// By default add_special is true (BOS/EOS as the file says) and parse_special false (special
/// token text such as `<|im_end|>` is tokenized as plain text).
///
/// Example: gguf-lens tokenize model.gguf --text 'Hello world' --json
#[derive(clap::Args, Debug)]
pub struct Args {
    /// GGUF file.
    file: String,
    /// The text (default: stdin).
    #[arg(long, value_name = "TEXT")]
    text: Option<String>,
    /// add_special = false: no BOS/EOS.
    #[arg(long)]
    no_special: bool,
    /// parse_special = true: special-token text becomes the special token.
    #[arg(long)]
    parse_special: bool,
    /// Print {"ids":[...],"pieces":[...]} (a piece is llama_token_to_piece(id, special=true),
    /// lossy UTF-8).
    #[arg(long)]
    json: bool,
}

/// Turn token ids back into text: each id's piece (`llama_token_to_piece`, control tokens
/// included unless --no-special), concatenated, written as raw bytes.
///
/// Example: gguf-lens detokenize model.gguf 1 15043 3186
#[derive(clap::Args, Debug)]
pub struct DetokenizeArgs {
    /// GGUF file.
    file: String,
    /// Token ids.
    #[arg(required = true, allow_negative_numbers = true)]
    ids: Vec<i64>,
    /// Leave control and unknown tokens out (llama_token_to_piece with special = false).
    #[arg(long)]
    no_special: bool,
}

fn load(path: &str) -> Result<Tokenizer, String> {
    let shown = |e: &dyn std::fmt::Display| format!("{path}: {e}");
    let mut file = std::fs::File::open(path).map_err(|e| shown(&e))?;
    let size = file.metadata().map_err(|e| shown(&e))?.len();
    let header = read_header(&mut file, size).map_err(|e| shown(&e))?;
    Tokenizer::from_gguf(&header).map_err(|e| shown(&e))
}

/// Writes the output; at a terminal, its control characters escaped (see `escape`): piped or
/// redirected, the bytes are the tokens' own.
fn write(bytes: &[u8]) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    let shown;
    let bytes = if std::io::IsTerminal::is_terminal(&out) {
        shown = crate::escape::lines(&String::from_utf8_lossy(bytes)).into_owned();
        shown.as_bytes()
    } else {
        bytes
    };
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|e| format!("stdout: {e}"))
}

/// Runs `tokenize`; errors are one line, exit 1.
pub fn run(args: &Args) -> Result<(), crate::Failure> {
    let tok = load(&args.file)?;
    let text = match &args.text {
        Some(t) => t.as_bytes().to_vec(),
        None => {
            let mut buf = Vec::new();
            std::io::stdin()
                .read_to_end(&mut buf)
                .map_err(|e| format!("stdin: {e}"))?;
            buf
        }
    };
    let ids = tok
        .try_tokenize(&text, !args.no_special, args.parse_special)
        .map_err(|e| e.to_string())?;
    let out = if args.json {
        let pieces: Vec<String> = ids
            .iter()
            .map(|&id| String::from_utf8_lossy(tok.token_to_piece(id, true)).into_owned())
            .collect();
        crate::json_line(&serde_json::json!({ "ids": ids, "pieces": pieces }))
    } else {
        let mut s = ids
            .iter()
            .map(|id| id.to_string())
            .collect::<Vec<_>>()
            .join(" ");
        s.push('\n');
        s
    };
    write(out.as_bytes())?;
    Ok(())
}

/// Runs `detokenize`; an id outside the vocabulary is an error (exit 1).
pub fn run_detokenize(args: &DetokenizeArgs) -> Result<(), crate::Failure> {
    let tok = load(&args.file)?;
    let mut ids = Vec::with_capacity(args.ids.len());
    for &id in &args.ids {
        if id < 0 || id >= tok.len() as i64 {
            return Err(
                format!("token id {id} is outside the vocabulary (0..{})", tok.len()).into(),
            );
        }
        ids.push(id as i32);
    }
    write(&tok.detokenize(&ids, !args.no_special))?;
    Ok(())
}
