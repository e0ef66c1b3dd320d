//! `gguf-lens chat`: render the file's chat template as transformers' apply_chat_template does.

use gguf_lens::chat::{file_template, render_chat_template, token_text_for, ChatOptions};
use gguf_lens::gguf::read_header;

/// Render the file's chat template (`tokenizer.chat_template`, or --template) over a
/// conversation, as Hugging Face transformers' apply_chat_template does with jinja2
/// (trim_blocks, lstrip_blocks, raise_exception, tojson, strftime_now; bos_token and eos_token
/// are the texts of the file's BOS/EOS tokens). Prints the rendered text exactly, nothing else.
/// A template error (raise_exception, an undefined name, a syntax error) exits 1 with one
/// `error:` line.
///
/// Example: gguf-lens chat model.gguf --messages chat.json --add-generation-prompt --var enable_thinking=false
#[derive(clap::Args, Debug)]
pub struct Args {
    /// GGUF file.
    file: String,
    /// JSON file with the messages: [{"role": ..., "content": ..., "tool_calls": ...}, ...].
    #[arg(long, value_name = "MESSAGES.json")]
    messages: String,
    /// JSON file with the tools list.
    #[arg(long, value_name = "TOOLS.json")]
    tools: Option<String>,
    /// add_generation_prompt = true.
    #[arg(long)]
    add_generation_prompt: bool,
    /// An extra template variable, its value JSON (e.g. enable_thinking=false). Repeatable.
    #[arg(long = "var", value_name = "KEY=JSON")]
    vars: Vec<String>,
    /// Use this template file instead of the file's.
    #[arg(long, value_name = "FILE.jinja")]
    template: Option<String>,
}

fn read_json(path: &str) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))
}

/// Runs `chat`; errors are one line, exit 1.
pub fn run(args: &Args) -> Result<(), crate::Failure> {
    // Options first: bad usage is reported before any file is read.
    let mut variables = serde_json::Map::new();
    for var in &args.vars {
        let (k, v) = var
            .split_once('=')
            .ok_or_else(|| crate::Failure::Usage(format!("--var {var}: expected KEY=JSON")))?;
        let v: serde_json::Value = serde_json::from_str(v)
            .map_err(|e| crate::Failure::Usage(format!("--var {var}: {e}")))?;
        variables.insert(k.to_string(), v);
    }
    let shown = |e: &dyn std::fmt::Display| format!("{}: {e}", args.file);
    let mut file = std::fs::File::open(&args.file).map_err(|e| shown(&e))?;
    let size = file.metadata().map_err(|e| shown(&e))?.len();
    let header = read_header(&mut file, size).map_err(|e| shown(&e))?;
    let source = match &args.template {
        Some(path) => std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?,
        None => file_template(&header)
            .ok_or_else(|| format!("{}: no tokenizer.chat_template (use --template)", args.file))?,
    };
    let messages = read_json(&args.messages)?;
    if !messages.is_array() {
        return Err(format!("{}: messages must be a JSON list", args.messages).into());
    }
    let tools = args.tools.as_deref().map(read_json).transpose()?;
    let opts = ChatOptions {
        tools,
        add_generation_prompt: args.add_generation_prompt,
        variables,
        bos_token: token_text_for(&header, "tokenizer.ggml.bos_token_id"),
        eos_token: token_text_for(&header, "tokenizer.ggml.eos_token_id"),
        now: None,
    };
    let text = render_chat_template(&source, &messages, &opts)?;
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    // At a terminal, the prompt's control characters are escaped (see `escape`); piped or
    // redirected, it is the template's output as it is.
    let text = if std::io::IsTerminal::is_terminal(&out) {
        crate::escape::lines(&text).into_owned()
    } else {
        text
    };
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| format!("stdout: {e}"))?;
    Ok(())
}
