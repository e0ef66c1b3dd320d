//! `gguf-lens set`: rewrite a GGUF's metadata into a new file, tensor data copied untouched.

use std::path::PathBuf;

use gguf_lens::edit::{edit_file, Edits, NewValue};
use gguf_lens::gguf::{read_header, Value, ValueType};

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

fn typed(key: &str, ty: &str, text: &str) -> Result<NewValue, String> {
    let bad = |e: String| format!("{key}: {text:?} is not a {ty}: {e}");
    Ok(match ty {
        "uint8" => NewValue::U8(text.parse().map_err(|e| bad(format!("{e}")))?),
        "int8" => NewValue::I8(text.parse().map_err(|e| bad(format!("{e}")))?),
        "uint16" => NewValue::U16(text.parse().map_err(|e| bad(format!("{e}")))?),
        "int16" => NewValue::I16(text.parse().map_err(|e| bad(format!("{e}")))?),
        "uint32" => NewValue::U32(text.parse().map_err(|e| bad(format!("{e}")))?),
        "int32" => NewValue::I32(text.parse().map_err(|e| bad(format!("{e}")))?),
        "uint64" => NewValue::U64(text.parse().map_err(|e| bad(format!("{e}")))?),
        "int64" => NewValue::I64(text.parse().map_err(|e| bad(format!("{e}")))?),
        "float32" => NewValue::F32(text.parse().map_err(|e| bad(format!("{e}")))?),
        "float64" => NewValue::F64(text.parse().map_err(|e| bad(format!("{e}")))?),
        "bool" => NewValue::Bool(text.parse().map_err(|e| bad(format!("{e}")))?),
        "string" => NewValue::String(text.to_string()),
        other => {
            return Err(format!(
                "{key}: unknown type {other:?} (uint8 … float64, bool, string)"
            ))
        }
    })
}

/// The spec name of a scalar type, as `typed` takes it.
fn type_name(t: ValueType) -> &'static str {
    match t {
        ValueType::U8 => "uint8",
        ValueType::I8 => "int8",
        ValueType::U16 => "uint16",
        ValueType::I16 => "int16",
        ValueType::U32 => "uint32",
        ValueType::I32 => "int32",
        ValueType::U64 => "uint64",
        ValueType::I64 => "int64",
        ValueType::F32 => "float32",
        ValueType::F64 => "float64",
        ValueType::Bool => "bool",
        ValueType::String | ValueType::Array => "string",
    }
}

fn guessed_type(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Bool(_) => "bool",
        serde_json::Value::Number(n) if n.as_i64().is_some_and(|i| i32::try_from(i).is_ok()) => {
            "int32"
        }
        serde_json::Value::Number(n) if n.as_i64().is_some() => "int64",
        serde_json::Value::Number(_) => "float32",
        _ => "string",
    }
}

fn json_item(key: &str, ty: &str, v: &serde_json::Value) -> Result<NewValue, String> {
    let text = match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(_) | serde_json::Value::Object(_) | serde_json::Value::Null => {
            return Err(format!("{key}: {v} is not a {ty}"))
        }
        other => other.to_string(),
    };
    typed(key, ty, &text)
}

pub fn run(args: &Args) -> Result<(), Failure> {
    let fail = Failure::Fatal;
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
            .ok_or_else(|| fail(format!("--set {spec}: expected KEY=TYPE:VALUE")))?;
        let (ty, text) = rest
            .split_once(':')
            .ok_or_else(|| fail(format!("--set {spec}: expected KEY=TYPE:VALUE")))?;
        edits
            .set
            .push((key.to_string(), typed(key, ty, text).map_err(fail)?));
    }
    for spec in &args.set_json {
        let (key, json) = spec
            .split_once('=')
            .ok_or_else(|| fail(format!("--set-json {spec}: expected KEY=JSON")))?;
        let v: serde_json::Value =
            serde_json::from_str(json).map_err(|e| fail(format!("{key}: bad JSON: {e}")))?;
        let existing = header.get(key);
        let value = match (&v, &existing) {
            (serde_json::Value::Array(items), existing) => {
                let item_type = match existing {
                    Some(Value::Array(a)) => type_name(a.item_type()),
                    Some(other) => {
                        return Err(fail(format!(
                            "{key}: is a {}, not an array",
                            other.value_type().name()
                        )))
                    }
                    None => items.first().map(guessed_type).unwrap_or("string"),
                };
                let items = items
                    .iter()
                    .map(|i| json_item(key, item_type, i))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(fail)?;
                let t = typed(
                    key,
                    item_type,
                    if item_type == "string" {
                        ""
                    } else if item_type == "bool" {
                        "false"
                    } else {
                        "0"
                    },
                )
                .map_err(fail)?
                .value_type();
                NewValue::Array(t, items)
            }
            (_, Some(Value::Array(_))) => {
                return Err(fail(format!("{key}: is an array, give a JSON array")))
            }
            (_, Some(e)) => json_item(key, type_name(e.value_type()), &v).map_err(fail)?,
            (_, None) => json_item(key, guessed_type(&v), &v).map_err(fail)?,
        };
        edits.set.push((key.to_string(), value));
    }
    if let Some(path) = &args.chat_template {
        let text =
            std::fs::read_to_string(path).map_err(|e| fail(format!("{}: {e}", path.display())))?;
        edits
            .set
            .push(("tokenizer.chat_template".into(), NewValue::String(text)));
    }
    edit_file(&args.input, &args.output, &edits).map_err(fail)
}
