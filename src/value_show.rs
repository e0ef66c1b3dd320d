//! A GGUF metadata value shown two ways: as JSON (complete; non-finite floats as strings,
//! nested arrays with their item type and length) and as a short one-line preview. Shared by
//! `inspect` and the diff report so a value reads the same everywhere.

use serde_json::{json, Value as Json};

use crate::gguf::{ArrayView, Value};

/// Longest value shown inline before it is cut.
const MAX_SHOWN: usize = 80;
/// Array elements shown inline.
const ARRAY_PREVIEW: usize = 5;

/// JSON has no NaN or infinities: they become the strings `NaN`, `Infinity`, `-Infinity`.
pub fn float_json(value: f64) -> Json {
    if value.is_nan() {
        Json::from("NaN")
    } else if value.is_infinite() {
        Json::from(if value > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        Json::from(value)
    }
}

/// The value in full; a string that is not UTF-8 adds a warning and is shown lossily.
pub fn value_json(value: &Value<'_>, warnings: &mut Vec<String>) -> Json {
    match value {
        Value::U8(v) => Json::from(*v),
        Value::I8(v) => Json::from(*v),
        Value::U16(v) => Json::from(*v),
        Value::I16(v) => Json::from(*v),
        Value::U32(v) => Json::from(*v),
        Value::I32(v) => Json::from(*v),
        Value::U64(v) => Json::from(*v),
        Value::I64(v) => Json::from(*v),
        Value::F32(v) => float_json(f64::from(*v)),
        Value::F64(v) => float_json(*v),
        Value::Bool(v) => Json::from(*v),
        Value::String(s) => {
            if let Err(err) = s.to_str() {
                warnings.push(format!("{err} (shown with U+FFFD replacements)"));
            }
            Json::from(s.to_string_lossy().into_owned())
        }
        Value::Array(array) => array_json(array, warnings),
    }
}

fn array_json(array: &ArrayView<'_>, warnings: &mut Vec<String>) -> Json {
    Json::Array(
        array
            .iter()
            .map(|item| match &item {
                Value::Array(inner) => json!({
                    "item_type": inner.item_type().name(),
                    "len": inner.len(),
                    "value": array_json(inner, warnings),
                }),
                other => value_json(other, warnings),
            })
            .collect(),
    )
}

/// One line: strings quoted, arrays as `type[len] [first items, ...]`, cut at 80 characters.
pub fn preview(value: &Value<'_>) -> String {
    let text = match value {
        Value::String(s) => format!("{:?}", s.to_string_lossy()),
        Value::Array(array) => {
            let items: Vec<String> = array
                .iter()
                .take(ARRAY_PREVIEW)
                .map(|v| preview(&v))
                .collect();
            let more = if array.len() > ARRAY_PREVIEW {
                ", ..."
            } else {
                ""
            };
            format!(
                "{}[{}] [{}{more}]",
                array.item_type().name(),
                array.len(),
                items.join(", ")
            )
        }
        Value::U8(v) => v.to_string(),
        Value::I8(v) => v.to_string(),
        Value::U16(v) => v.to_string(),
        Value::I16(v) => v.to_string(),
        Value::U32(v) => v.to_string(),
        Value::I32(v) => v.to_string(),
        Value::U64(v) => v.to_string(),
        Value::I64(v) => v.to_string(),
        Value::F32(v) => v.to_string(),
        Value::F64(v) => v.to_string(),
        Value::Bool(v) => v.to_string(),
    };
    if text.chars().count() > MAX_SHOWN {
        let cut: String = text.chars().take(MAX_SHOWN).collect();
        format!("{cut}…")
    } else {
        text
    }
}
