//! `inspect`: a readable summary for people at a terminal.

use std::fmt::Write;

use gguf_lens::model::GgufModel;
use gguf_lens::summary::file_type_label;
use gguf_lens::value_show::preview;

use crate::escape::shown;

/// `file_sizes`: each shard's size, in order.
pub fn inspect_text(model: &GgufModel, file_sizes: &[u64]) -> String {
    let mut out = String::new();
    let file = model.first();
    let split = model.shards().len() > 1;
    if split {
        let _ = writeln!(
            out,
            "GGUF v{} ({}-endian) split model: {} shards, {} bytes",
            file.version(),
            file.endian().name(),
            model.shards().len(),
            file_sizes.iter().sum::<u64>()
        );
    }
    for (i, (shard, size)) in model.shards().iter().zip(file_sizes).enumerate() {
        let head = if split {
            format!("  shard {}: ", i + 1)
        } else {
            format!(
                "GGUF v{} ({}-endian), ",
                shard.version(),
                shard.endian().name()
            )
        };
        let _ = writeln!(
            out,
            "{head}{size} bytes, alignment {}, data at byte {}{}",
            shard.alignment(),
            shard.data_offset(),
            if split {
                format!(", {} tensors", shard.tensors().len())
            } else {
                String::new()
            }
        );
    }
    let _ = writeln!(out, "\nmetadata ({} keys):", file.metadata_len());
    for (key, value) in file.metadata() {
        let _ = writeln!(
            out,
            "  {:<40} {:<8} {}",
            shown(key),
            value.value_type().name(),
            shown(&preview(&value))
        );
    }
    let tensors: Vec<_> = model.tensors().map(|(_, t)| t).collect();
    let _ = writeln!(
        out,
        "\ntensors ({}, shapes outermost first):",
        tensors.len()
    );
    for t in tensors {
        let shape: Vec<String> = t.shape().iter().map(u64::to_string).collect();
        let _ = writeln!(
            out,
            "  {:<40} {:<8} [{}] {} bytes",
            shown(t.name()),
            t.ggml_type().name(),
            shape.join(", "),
            t.n_bytes()
        );
    }
    let summary = model.summary();
    if let Some(label) = summary.file_type_label {
        let _ = writeln!(out, "\nfile type: {label}");
    }
    if let Some(guess) = summary.file_type_by_tensor_mix {
        let label = file_type_label(guess).unwrap_or("?");
        let _ = writeln!(out, "file type by tensor mix: {label}");
    }
    if summary.parameter_count > 0 {
        let _ = writeln!(
            out,
            "\nquant mix ({} elements, {:.3} bits per weight):",
            summary.parameter_count, summary.bits_per_weight
        );
        for share in &summary.quant_mix {
            let _ = writeln!(
                out,
                "  {:<8} {:>5} tensors {:>14} elements {:>14} bytes {:>6.2}%",
                share.ggml_type.name(),
                share.tensors,
                share.elements,
                share.bytes,
                100.0 * share.byte_share
            );
        }
    }
    out
}
