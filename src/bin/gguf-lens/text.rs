//! `inspect`: a readable summary for people at a terminal.

use std::fmt::Write;

use gguf_lens::ct::{CtFormat, CtStrategy};
use gguf_lens::model::{file_type_label, Checkpoint, Files, GgufModel};
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
    if let Some(guess) = summary.gguf().and_then(|d| d.file_type_by_tensor_mix) {
        let label = file_type_label(guess).unwrap_or("?");
        let _ = writeln!(out, "file type by tensor mix: {label}");
    }
    if summary.parameter_count > 0 {
        let _ = writeln!(
            out,
            "\nquant mix ({} elements, {:.3} bits per weight):",
            summary.parameter_count, summary.bits_per_weight
        );
        for share in &summary.type_mix {
            let _ = writeln!(
                out,
                "  {:<8} {:>5} tensors {:>14} elements {:>14} bytes {:>6.2}%",
                share.ty.name(),
                share.tensors,
                share.elements,
                share.bytes,
                100.0 * share.byte_share
            );
        }
    }
    out
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// `inspect` of a safetensors checkpoint.
pub fn checkpoint_text(c: &Checkpoint, files: &Files) -> String {
    let mut out = String::new();
    if let Some(index) = c.shard_index() {
        let _ = writeln!(
            out,
            "safetensors index: {} tensors in {} shards",
            index.weight_map().len(),
            c.shards().len()
        );
    }
    for (i, file) in c.shards().iter().enumerate() {
        let _ = writeln!(
            out,
            "safetensors {}: {} bytes, header {} bytes, data at byte {}",
            shown(&files.shard_name(i)),
            files.sizes[i],
            file.header_len(),
            file.data_offset()
        );
        for (k, v) in file.metadata() {
            let _ = writeln!(out, "  metadata {} = {}", shown(k), shown(&v.to_string()));
        }
    }
    match c.config() {
        Some(q) => {
            let source = files.config_source.as_deref().unwrap_or_default();
            let _ = writeln!(
                out,
                "\nquantization (GPTQ, {source}): bits {}, group_size {}, desc_act {}, sym {}, checkpoint_format {}",
                opt(q.bits),
                opt(q.group_size),
                opt(q.desc_act),
                opt(q.sym),
                q.checkpoint_format.name()
            );
        }
        None if c.mlx().is_some()
            || c.fp8().is_some()
            || c.ct().is_some()
            || c.mxfp4().is_some()
            || c.bnb().is_some()
            || !c.bnb_layers().is_empty()
            || !c.mxfp4_layers().is_empty()
            || !c.layers().is_empty()
            || !c.fp8_layers().is_empty()
            || !c.mlx_layers().is_empty() => {}
        None => {
            let _ = writeln!(
                out,
                "\nquantization: no quantize_config.json or GPTQ / MLX / FP8 / compressed-tensors / MXFP4 config.json beside the file"
            );
        }
    }
    if let Some(q) = c.fp8() {
        let source = files.config_source.as_deref().unwrap_or_default();
        let _ = writeln!(
            out,
            "\nquantization (FP8 E4M3, {source}): blocks of {} x {}, not converted: {}",
            q.block[0],
            q.block[1],
            if q.not_converted.is_empty() {
                "-".to_string()
            } else {
                shown(&q.not_converted.join(", ")).into_owned()
            }
        );
    }
    if let Some(q) = c.bnb() {
        let source = files.config_source.as_deref().unwrap_or_default();
        let _ = writeln!(
            out,
            "\nquantization (bitsandbytes 4-bit, {source}): {}{}, not converted: {}",
            q.quant_type.name(),
            if q.double_quant {
                ", double-quantized scales"
            } else {
                ""
            },
            if q.not_converted.is_empty() {
                "-".to_string()
            } else {
                shown(&q.not_converted.join(", ")).into_owned()
            }
        );
    } else if !c.bnb_layers().is_empty() {
        let _ = writeln!(
            out,
            "\nquantization (bitsandbytes 4-bit): inferred from the layers' quant-state tensors (no config.json)"
        );
    }
    if c.config().is_none() && !c.layers().is_empty() {
        let _ = writeln!(
            out,
            "\nquantization (GPTQ): inferred from the tensor shapes (bits and group size per layer; no config)"
        );
    }
    if let (None, Some(l)) = (c.fp8(), c.fp8_layers().first()) {
        let _ = writeln!(
            out,
            "\nquantization (FP8): inferred from the tensor shapes (block {}x{}; no config.json)",
            l.block[0], l.block[1]
        );
    }
    if c.mlx().is_none() && !c.mlx_layers().is_empty() {
        let _ = writeln!(
            out,
            "\nquantization (MLX): inferred from the tensor shapes (bits and group size per layer; no config.json)"
        );
    }
    if c.mxfp4().is_none() && !c.mxfp4_layers().is_empty() {
        let _ = writeln!(
            out,
            "\nquantization (MXFP4): inferred from the tensor names and shapes (_blocks / _scales; no config.json)"
        );
    }
    if let Some(q) = c.mxfp4() {
        let source = files.config_source.as_deref().unwrap_or_default();
        let _ = writeln!(
            out,
            "\nquantization (MXFP4, {source}): blocks of 32 FP4 values with e8m0 scales, not converted: {}",
            if q.not_converted.is_empty() {
                "-".to_string()
            } else {
                shown(&q.not_converted.join(", ")).into_owned()
            }
        );
    }
    if let Some(q) = c.ct() {
        let source = files.config_source.as_deref().unwrap_or_default();
        let by = match q.strategy {
            CtStrategy::Tensor => "per tensor".to_string(),
            CtStrategy::Channel => "per channel".to_string(),
            CtStrategy::Group(g) => format!("group_size {g}"),
        };
        let _ = writeln!(
            out,
            "\nquantization (compressed-tensors {}, {source}): {} {}-bit weights, {by}, {}; ignore: {}",
            q.format.name(),
            if q.format == CtFormat::Float { "float" } else { "int" },
            q.bits,
            if q.symmetric { "symmetric" } else { "asymmetric" },
            if q.ignore.is_empty() {
                "-".to_string()
            } else {
                shown(&q.ignore.join(", ")).into_owned()
            }
        );
    }
    if let Some(q) = c.mlx() {
        let source = files.config_source.as_deref().unwrap_or_default();
        let _ = writeln!(
            out,
            "\nquantization (MLX, {source}): bits {}, group_size {}, mode affine; {} layer entries",
            q.default.bits,
            q.default.group_size,
            q.layers.len()
        );
    }
    let n = c.tensors().count();
    let _ = writeln!(out, "\ntensors ({n}):");
    for (i, file) in c.shards().iter().enumerate() {
        for t in file.tensors() {
            let shape: Vec<String> = t.shape().iter().map(u64::to_string).collect();
            let shard = if c.shard_index().is_some() {
                format!("  ({})", shown(&files.shard_name(i)))
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "  {:<48} {:<7} [{}] {} bytes{shard}",
                shown(t.name()),
                t.dtype().name(),
                shape.join(", "),
                t.n_bytes()
            );
        }
    }
    if !c.layers().is_empty() {
        let _ = writeln!(
            out,
            "\nGPTQ layers ({}), dequantized to f32 [out, in]:",
            c.layers().len()
        );
        for l in c.layers() {
            let groups = if l.has_g_idx {
                format!("{} groups by g_idx", l.n_groups)
            } else {
                format!("{} groups of {}", l.n_groups, l.group_size)
            };
            let _ = writeln!(
                out,
                "  {:<48} {}-bit [{}, {}], {groups}, scales {}",
                shown(&l.name),
                l.bits,
                l.out_features,
                l.in_features,
                l.scales_dtype.name()
            );
        }
    }
    if !c.mlx_layers().is_empty() {
        let n = c.mlx_layers().len();
        let _ = writeln!(out, "\nMLX layers ({n}), dequantized to f32:");
        for l in c.mlx_layers() {
            let shape: Vec<String> = l.shape.iter().map(u64::to_string).collect();
            let _ = writeln!(
                out,
                "  {:<48} {} [{}], scales and biases {}",
                shown(&format!("{}.weight", l.name)),
                l.type_name(),
                shape.join(", "),
                l.scales_dtype.name()
            );
        }
    }
    if !c.fp8_layers().is_empty() {
        let n = c.fp8_layers().len();
        let _ = writeln!(out, "\nFP8 layers ({n}), dequantized to f32 [out, in]:");
        for l in c.fp8_layers() {
            let _ = writeln!(
                out,
                "  {:<48} {} [{}, {}], weight_scale_inv {}",
                shown(&format!("{}.weight", l.name)),
                l.type_name(),
                l.out_features,
                l.in_features,
                l.scale_dtype.name()
            );
        }
    }
    if !c.ct_layers().is_empty() {
        let n = c.ct_layers().len();
        let _ = writeln!(
            out,
            "\ncompressed-tensors layers ({n}), dequantized to f32 [out, in]:"
        );
        for l in c.ct_layers() {
            let _ = writeln!(
                out,
                "  {:<48} {} [{}, {}], weight_scale {}",
                shown(&format!("{}.weight", l.name)),
                l.type_name(),
                l.out_features,
                l.in_features,
                l.scale_dtype.name()
            );
        }
    }
    if !c.bnb_layers().is_empty() {
        let n = c.bnb_layers().len();
        let _ = writeln!(
            out,
            "\nbitsandbytes layers ({n}), dequantized to f32 (as bitsandbytes' dequantize_4bit, in the layer's dtype):"
        );
        for l in c.bnb_layers() {
            let shape: Vec<String> = l.shape.iter().map(u64::to_string).collect();
            let _ = writeln!(
                out,
                "  {:<48} {} [{}] {}, from {}.weight and its quant state",
                shown(&format!("{}.weight", l.name)),
                l.type_name(),
                shape.join(", "),
                l.dtype.name(),
                shown(&l.name)
            );
        }
    }
    if !c.mxfp4_layers().is_empty() {
        let n = c.mxfp4_layers().len();
        let _ = writeln!(
            out,
            "\nMXFP4 tensors ({n}), dequantized to f32 [experts, in, out] (as transformers loads them):"
        );
        for l in c.mxfp4_layers() {
            let shape: Vec<String> = l.shape().iter().map(u64::to_string).collect();
            let _ = writeln!(
                out,
                "  {:<48} {} [{}], from {}_blocks and {}_scales",
                shown(&l.name),
                l.type_name(),
                shape.join(", "),
                shown(&l.name),
                shown(&l.name)
            );
        }
    }
    out
}
