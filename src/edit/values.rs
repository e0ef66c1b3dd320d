//! New metadata values from what users type: `TYPE:TEXT` on the command line, or a JSON value
//! (from the CLI's `--set-json` or from JavaScript) that takes the existing key's type.

use super::bad_edit;
use super::NewValue;
use crate::error::Result;
use crate::gguf::{GgufFile, Value, ValueType};

/// `text` as a value of the spec type named `ty` (uint8 … float64, bool, string).
pub fn typed(key: &str, ty: &str, text: &str) -> Result<NewValue> {
    let bad = |e: String| bad_edit(format!("{key}: {text:?} is not a {ty}: {e}"));
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
            return Err(bad_edit(format!(
                "{key}: unknown type {other:?} (uint8 … float64, bool, string)"
            )))
        }
    })
}

/// The spec name of a scalar type, as [`typed`] takes it.
pub fn type_name(t: ValueType) -> &'static str {
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

/// The type a new key gets from a JSON value.
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

fn json_item(key: &str, ty: &str, v: &serde_json::Value) -> Result<NewValue> {
    let text = match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(_) | serde_json::Value::Object(_) | serde_json::Value::Null => {
            return Err(bad_edit(format!("{key}: {v} is not a {ty}")))
        }
        other => other.to_string(),
    };
    typed(key, ty, &text)
}

/// A JSON value for `key` of `file`: with `ty` (a scalar type name; for an array, its items'),
/// else the existing key's type (arrays keep their item type), else guessed: string → string,
/// true/false → bool, integer → int32 (int64 when too big), other number → float32; an array
/// takes the type of its first item.
pub fn from_json(
    file: &GgufFile,
    key: &str,
    v: &serde_json::Value,
    ty: Option<&str>,
) -> Result<NewValue> {
    let existing = file.get(key);
    match (v, &existing) {
        (serde_json::Value::Array(items), existing) => {
            let item_type = match (ty, existing) {
                (Some(t), _) => t,
                (None, Some(Value::Array(a))) => type_name(a.item_type()),
                (None, Some(other)) => {
                    return Err(bad_edit(format!(
                        "{key}: is a {}, not an array",
                        other.value_type().name()
                    )))
                }
                (None, None) => items.first().map(guessed_type).unwrap_or("string"),
            };
            let items = items
                .iter()
                .map(|i| json_item(key, item_type, i))
                .collect::<Result<Vec<_>>>()?;
            let zero = match item_type {
                "string" => "",
                "bool" => "false",
                _ => "0",
            };
            let t = typed(key, item_type, zero)?.value_type();
            Ok(NewValue::Array(t, items))
        }
        (_, _) if ty.is_some() => json_item(key, ty.unwrap_or("string"), v),
        (_, Some(Value::Array(_))) => {
            Err(bad_edit(format!("{key}: is an array, give a JSON array")))
        }
        (_, Some(e)) => json_item(key, type_name(e.value_type()), v),
        (_, None) => json_item(key, guessed_type(v), v),
    }
}
