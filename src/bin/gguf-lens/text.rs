//! `inspect`: a readable summary for people at a terminal.

use std::collections::BTreeMap;
use std::fmt::Write;

use gguf_lens::gguf::Value;
use gguf_lens::{GgmlType, GgufFile};

/// Longest value shown inline before it is cut.
const MAX_SHOWN: usize = 80;
/// Array elements shown inline.
const ARRAY_PREVIEW: usize = 5;

pub fn inspect_text(file: &GgufFile, file_size: u64) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "GGUF v{} ({}-endian), {} bytes, alignment {}, data at byte {}",
        file.version(),
        file.endian().name(),
        file_size,
        file.alignment(),
        file.data_offset()
    );
    let _ = writeln!(out, "\nmetadata ({} keys):", file.metadata_len());
    for (key, value) in file.metadata() {
        let _ = writeln!(
            out,
            "  {key:<40} {:<8} {}",
            value.value_type().name(),
            preview(&value)
        );
    }
    let tensors = file.tensors();
    let _ = writeln!(out, "\ntensors ({}):", tensors.len());
    for t in tensors {
        let shape: Vec<String> = t.dims().iter().map(u64::to_string).collect();
        let _ = writeln!(
            out,
            "  {:<40} {:<8} [{}] {} bytes",
            t.name(),
            t.ggml_type().name(),
            shape.join(", "),
            t.n_bytes()
        );
    }
    let mut mix: BTreeMap<GgmlType, (u64, u64, u64)> = BTreeMap::new();
    for t in tensors {
        let entry = mix.entry(t.ggml_type()).or_default();
        entry.0 += 1;
        entry.1 += t.n_elements();
        entry.2 += t.n_bytes();
    }
    let total_bytes: u64 = mix.values().map(|m| m.2).sum();
    let total_elements: u64 = mix.values().map(|m| m.1).sum();
    if total_elements > 0 {
        let _ = writeln!(
            out,
            "\nquant mix ({} elements, {:.3} bits per weight):",
            total_elements,
            total_bytes as f64 * 8.0 / total_elements as f64
        );
        for (ty, (count, elements, bytes)) in mix {
            let _ = writeln!(
                out,
                "  {:<8} {count:>5} tensors {elements:>14} elements {bytes:>14} bytes {:>6.2}%",
                ty.name(),
                100.0 * bytes as f64 / total_bytes.max(1) as f64
            );
        }
    }
    out
}

fn preview(value: &Value<'_>) -> String {
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
