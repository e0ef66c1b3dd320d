//! `gguf-lens set`: rewrite a GGUF's metadata into a new file, tensor data copied untouched.

use std::path::PathBuf;

use gguf_lens::edit::{edit_file, from_json, typed, Edits, NewValue};
use gguf_lens::gguf::read_header;

use crate::Failure;

/// Write IN's tensors with edited metadata to OUT (never the same file). OUT is written to a
/// temporary name in its directory and renamed at the end. For a split model, edit the first
/// shard (`-00001-of-N.gguf`): it holds the metadata.
///
/// Example: gguf-lens set in.gguf out.gguf --set general.name=string:"My model"
///   --set-json tokenizer.ggml.eos_token_id=2 --remove general.url --chat-template t.jinja
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Input GGUF file.
    input: PathBuf,
    /// Output file (must not be IN).
    output: PathBuf,
    /// KEY=TYPE:VALUE with TYPE one of uint8 int8 uint16 int16 uint32 int32 uint64 int64
    /// float32 float64 bool string.
    #[arg(long = "set", value_name = "KEY=TYPE:VALUE")]
    set: Vec<String>,
    /// KEY=JSON: the value takes the existing key's type (arrays keep their item type). For a new
    /// key: string → string, true/false → bool, integer → int32 (int64 when too big), other
    /// number → float32; an array takes the type of its first item.
    #[arg(long = "set-json", value_name = "KEY=JSON")]
    set_json: Vec<String>,
    /// Remove KEY.
    #[arg(long = "remove", value_name = "KEY")]
    remove: Vec<String>,
    /// Replace tokenizer.chat_template with this file's text.
    #[arg(long = "chat-template", value_name = "FILE")]
    chat_template: Option<PathBuf>,
}

pub fn run(args: &Args) -> Result<(), Failure> {
    let fail = Failure::Error;
    let mut file_in = std::fs::File::open(&args.input)
        .map_err(|e| fail(format!("{}: {e}", args.input.display())))?;
    let size = file_in.metadata().map_err(|e| fail(e.to_string()))?.len();
    let header = read_header(&mut file_in, size)
        .map_err(|e| fail(format!("{}: {e}", args.input.display())))?;
    let mut edits = Edits {
        remove: args.remove.clone(),
        ..Default::default()
    };
    for spec in &args.set {
        let (key, rest) = spec
            .split_once('=')
            .ok_or_else(|| Failure::Usage(format!("--set {spec}: expected KEY=TYPE:VALUE")))?;
        let (ty, text) = rest
            .split_once(':')
            .ok_or_else(|| Failure::Usage(format!("--set {spec}: expected KEY=TYPE:VALUE")))?;
        edits.set.push((key.to_string(), typed(key, ty, text)?));
    }
    for spec in &args.set_json {
        let (key, json) = spec
            .split_once('=')
            .ok_or_else(|| Failure::Usage(format!("--set-json {spec}: expected KEY=JSON")))?;
        let v: serde_json::Value =
            serde_json::from_str(json).map_err(|e| fail(format!("{key}: bad JSON: {e}")))?;
        let value = from_json(&header, key, &v, None)?;
        edits.set.push((key.to_string(), value));
    }
    if let Some(path) = &args.chat_template {
        if gguf_lens::atomic_write::same_file(path, &args.output) {
            return Err(fail(format!(
                "{}: the chat template and the output are the same file",
                args.output.display()
            )));
        }
        let text =
            std::fs::read_to_string(path).map_err(|e| fail(format!("{}: {e}", path.display())))?;
        edits
            .set
            .push(("tokenizer.chat_template".into(), NewValue::String(text)));
    }
    Ok(edit_file(&args.input, &args.output, &edits)?)
}
