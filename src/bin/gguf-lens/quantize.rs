//! `gguf-lens quantize`: rewrite a GGUF with its weight matrices quantized to one type, bit-exact
//! to ggml's quantizers (no importance matrix), like `llama-quantize --pure`.

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::PathBuf;

use gguf_lens::atomic_write::same_file;
use gguf_lens::edit::{build_header_with_tensors, Edits, NewTensor, NewValue};
use gguf_lens::gguf::{read_header, row_chunks, Endian, GgufFile, RowReader, TensorInfo};
use gguf_lens::quant::Kernel;
use gguf_lens::quantize::{
    llama_fallback, llama_file_type, llama_quantizes, quantize_row, quantized_size, shifted,
    SUPPORTED,
};
use gguf_lens::types::GgmlType;
use gguf_lens::ErrorKind;

use crate::escape::shown;
use crate::output::Output;
use crate::Failure;

/// Quantize IN's weight matrices to TYPE into OUT (never the same file). Every tensor of 2 dims
/// or more that llama.cpp would quantize (named `*weight`, not a norm, router, embedding of
/// positions...) whose rows are whole blocks of TYPE and whose values are F32, F16 or BF16 is
/// quantized (with --fallback, llama.cpp's fallback type when they are not); every other tensor
/// is copied as it is and listed on stderr. Metadata is copied
/// with general.file_type and general.quantization_version set. Bit-exact to ggml's
/// ggml_quantize_chunk without an importance matrix; a block too large for an f16 scale is an
/// error (ggml would write an infinite scale).
///
/// TYPE: F32 F16 BF16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_NL IQ4_XS TQ1_0
/// TQ2_0 MXFP4. The IQ1/IQ2/IQ3 types need an importance matrix and are not offered.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Input GGUF file (one file; for a split model, merge it first).
    input: PathBuf,
    /// Output file (must not be IN).
    output: PathBuf,
    /// Target type.
    #[arg(long = "type", value_name = "TYPE")]
    ty: String,
    /// Keep 1-D tensors as they are. This is always done (llama.cpp quantizes only tensors of 2
    /// dims or more); the flag states it explicitly.
    #[arg(long)]
    keep_1d: bool,
    /// Threads quantizing (default: every core; the output is the same).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Quantize a matrix whose rows are not whole blocks of TYPE to the type llama.cpp falls
    /// back to, as `llama-quantize --pure` does (Q2_K, Q3_K, TQ1_0, TQ2_0 -> Q4_0; Q4_K -> Q5_0;
    /// Q5_K -> Q5_1; Q6_K -> Q8_0; IQ4_XS -> IQ4_NL; F16 when that does not fit either), instead
    /// of keeping it as it is. Needed for llama.cpp's bytes on models with rows of 384, 768...
    #[arg(long)]
    fallback: bool,
}

/// Values read and quantized per step: bounds memory (16 MiB of f32).
const CHUNK_ELEMENTS: u64 = 4 << 20;

/// What happens to one tensor.
struct Plan<'f> {
    tensor: &'f TensorInfo,
    /// The new type, or None when copied; then `why` says why.
    quantize: Option<GgmlType>,
    why: &'static str,
    offset: u64,
    size: u64,
}

fn parse_type(name: &str) -> Result<GgmlType, String> {
    let ty = GgmlType::from_name(name).ok_or_else(|| format!("--type {name}: unknown type"))?;
    if ty != GgmlType::F32 && !SUPPORTED.contains(&ty) {
        return Err(format!(
            "--type {ty}: not supported (IQ1/IQ2/IQ3 types need an importance matrix; \
             see docs/quantize.md)"
        ));
    }
    Ok(ty)
}

fn plan<'f>(file: &'f GgufFile, ty: GgmlType, fallback: bool) -> Result<Vec<Plan<'f>>, String> {
    let align = file.alignment();
    let mut offset = 0u64;
    let mut plans = Vec::with_capacity(file.tensors().len());
    let mut tensors: Vec<&TensorInfo> = file.tensors().iter().collect();
    // llama.cpp writes tensors ordered by layer (`blk.N.`; others first), then by name.
    tensors.sort_by(|a, b| {
        (layer_of(a.name()), a.name().as_bytes()).cmp(&(layer_of(b.name()), b.name().as_bytes()))
    });
    for tensor in tensors {
        let source_ok = matches!(
            tensor.ggml_type(),
            GgmlType::F32 | GgmlType::F16 | GgmlType::BF16
        );
        let target = if fallback {
            llama_fallback(ty, tensor.row_len())
        } else {
            ty
        };
        let (quantize, why) = if !llama_quantizes(tensor.name(), tensor.dims().len()) {
            (
                None,
                "llama.cpp keeps it (1-D, a norm, a router or similar)",
            )
        } else if !source_ok {
            (None, "not F32, F16 or BF16")
        } else if tensor.row_len() % u64::from(target.block_size()) != 0 {
            (
                None,
                "its rows are not whole blocks of the type (see --fallback)",
            )
        } else {
            (Some(target), "")
        };
        let size = match quantize {
            Some(ty) => ty
                .bytes_for(tensor.n_elements())
                .ok_or_else(|| format!("{}: size overflows", tensor.name()))?,
            None => tensor.n_bytes(),
        };
        plans.push(Plan {
            tensor,
            quantize,
            why,
            offset,
            size,
        });
        // Each tensor's data starts aligned, as ggml's writer pads it.
        offset = size
            .checked_next_multiple_of(align)
            .and_then(|s| offset.checked_add(s))
            .ok_or("data section size overflows")?;
    }
    Ok(plans)
}

pub fn run(args: &Args) -> Result<(), Failure> {
    let fail = Failure::Error;
    let ty = parse_type(&args.ty).map_err(Failure::Usage)?;
    let shown_in = args.input.display().to_string();
    let mut input = File::open(&args.input).map_err(|e| fail(format!("{shown_in}: {e}")))?;
    let size = input
        .metadata()
        .map_err(|e| fail(format!("{shown_in}: {e}")))?
        .len();
    if same_file(&args.input, &args.output) {
        return Err(fail(format!(
            "{}: input and output are the same file",
            args.output.display()
        )));
    }
    let file = read_header(&mut input, size).map_err(|e| fail(format!("{shown_in}: {e}")))?;
    if file.endian() == Endian::Big {
        return Err(fail(format!(
            "{shown_in}: big-endian files cannot be quantized"
        )));
    }
    let plans = plan(&file, ty, args.fallback).map_err(|e| fail(format!("{shown_in}: {e}")))?;
    let file_type = llama_file_type(ty).unwrap_or(0);
    // As llama.cpp: both keys removed and appended (ggml's gguf_set_* moves a key to the
    // end), split keys dropped.
    let remove = [
        "general.quantization_version",
        "general.file_type",
        "split.no",
        "split.count",
        "split.tensors.count",
    ]
    .iter()
    .filter(|k| file.get(k).is_some())
    .map(|k| k.to_string())
    .collect();
    let edits = Edits {
        set: vec![
            ("general.quantization_version".into(), NewValue::U32(2)),
            ("general.file_type".into(), NewValue::U32(file_type)),
        ],
        remove,
    };
    let infos: Vec<NewTensor> = plans
        .iter()
        .map(|p| NewTensor {
            name: p.tensor.name().to_string(),
            dims: p.tensor.dims().to_vec(),
            ty: p.quantize.unwrap_or(p.tensor.ggml_type()),
            offset: p.offset,
        })
        .collect();
    let header = build_header_with_tensors(&file, &edits, &infos)
        .map_err(|e| fail(format!("{shown_in}: {e}")))?;

    let shown_out = args.output.display().to_string();
    // Its errors name the output.
    let mut output =
        Output::create(&args.output, &[&args.input]).map_err(|e| fail(e.to_string()))?;
    let threads = crate::threads(args.threads);
    let kernel = Kernel::auto().map_err(|e| fail(e.to_string()))?;
    {
        let mut out = BufWriter::with_capacity(1 << 20, output.file());
        let io = |e: std::io::Error| fail(format!("{shown_out}: {e}"));
        out.write_all(&header).map_err(io)?;
        let mut written = 0u64;
        for p in &plans {
            // Padding up to this tensor's offset (zeros, as ggml writes).
            let pad = p
                .offset
                .checked_sub(written)
                .and_then(|pad| usize::try_from(pad).ok())
                .ok_or_else(|| fail(format!("{shown_in}: tensor offsets out of order")))?;
            out.write_all(&vec![0u8; pad]).map_err(io)?;
            match p.quantize {
                None => copy_tensor(&file, p.tensor, &mut input, &mut out)
                    .map_err(|e| fail(format!("{shown_in}: {}: {e}", p.tensor.name())))?,
                Some(ty) => {
                    quantize_tensor(&file, p.tensor, ty, kernel, threads, &mut input, &mut out)
                        .map_err(|e| fail(format!("{shown_in}: {}: {e}", p.tensor.name())))?
                }
            }
            written = p.offset + p.size;
        }
        out.flush().map_err(io)?;
    }
    // Synced, renamed and the directory synced; its errors name the output.
    output.commit().map_err(|e| fail(e.to_string()))?;

    let quantized = plans.iter().filter(|p| p.quantize == Some(ty)).count();
    let fell_back = plans
        .iter()
        .filter(|p| p.quantize.is_some_and(|t| t != ty))
        .count();
    let fell_back = match fell_back {
        0 => String::new(),
        n => format!(" ({n} more to a fallback type)"),
    };
    eprintln!(
        "{}: {quantized} of {} tensors quantized to {ty}{fell_back}, general.file_type = {file_type}",
        shown(&shown_out),
        plans.len()
    );
    for p in plans.iter() {
        if let Some(other) = p.quantize.filter(|&t| t != ty) {
            eprintln!(
                "  {} to {other}: its rows of {} are not whole blocks of {ty} (llama.cpp's fallback)",
                shown(p.tensor.name()),
                p.tensor.row_len()
            );
        }
    }
    for p in plans.iter().filter(|p| p.quantize.is_none()) {
        eprintln!(
            "  kept {} ({}): {}",
            shown(p.tensor.name()),
            p.tensor.ggml_type(),
            shown(p.why)
        );
    }
    Ok(())
}

fn copy_tensor(
    file: &GgufFile,
    tensor: &TensorInfo,
    input: &mut File,
    out: &mut impl Write,
) -> Result<(), String> {
    let range = file.tensor_range(tensor);
    input
        .seek(SeekFrom::Start(range.start))
        .map_err(|e| e.to_string())?;
    let len = range.end - range.start;
    let copied = std::io::copy(&mut input.take(len), out).map_err(|e| e.to_string())?;
    if copied != len {
        return Err(format!("file ends after {copied} of {len} bytes"));
    }
    Ok(())
}

fn quantize_tensor(
    file: &GgufFile,
    tensor: &TensorInfo,
    ty: GgmlType,
    kernel: Kernel,
    threads: usize,
    input: &mut File,
    out: &mut impl Write,
) -> Result<(), String> {
    let row_len = usize::try_from(tensor.row_len()).map_err(|e| e.to_string())?;
    let mut reader = RowReader::new(file, tensor, kernel);
    let step = reader.rows_per_chunk(CHUNK_ELEMENTS);
    let mut bytes = Vec::new();
    for rows in row_chunks(0..tensor.n_rows(), step) {
        let first_row = rows.start;
        let values = reader.read(input, rows).map_err(|e| e.to_string())?;
        bytes.resize(
            quantized_size(ty, values.len()).map_err(|e| e.to_string())?,
            0,
        );
        quantize_parallel(ty, values, row_len, &mut bytes, threads).map_err(|e| match e.kind {
            ErrorKind::ScaleOverflow {
                block, scale_bits, ..
            } => {
                let per_row = (row_len / ty.block_size() as usize).max(1);
                format!(
                    "row {}: a block scale of {:e} overflows f16 (values too large for {ty})",
                    first_row + (block / per_row) as u64,
                    f32::from_bits(scale_bits)
                )
            }
            ErrorKind::NotFinite {
                index, value_bits, ..
            } => format!(
                "row {}: cannot quantize {} to {ty}",
                first_row + (index / row_len.max(1)) as u64,
                f32::from_bits(value_bits)
            ),
            _ => e.to_string(),
        })?;
        out.write_all(&bytes).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Quantizes whole rows, split over `threads` (each block is independent, so the bytes do not
/// depend on the split). A block index in an error counts from the chunk's start.
fn quantize_parallel(
    ty: GgmlType,
    values: &[f32],
    row_len: usize,
    dst: &mut [u8],
    threads: usize,
) -> Result<(), gguf_lens::Error> {
    let rows = values.len() / row_len.max(1);
    let threads = threads.clamp(1, rows.max(1));
    if threads == 1 {
        return quantize_row(ty, values, dst);
    }
    let row_bytes = dst.len() / rows.max(1);
    let rows_per = rows.div_ceil(threads);
    let parts: Vec<(Range<usize>, &[f32], &mut [u8])> = values
        .chunks(rows_per * row_len)
        .zip(dst.chunks_mut(rows_per * row_bytes))
        .enumerate()
        .map(|(i, (v, d))| (i * rows_per..(i + 1) * rows_per, v, d))
        .collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = parts
            .into_iter()
            .map(|(rows, v, d)| {
                s.spawn(move || {
                    quantize_row(ty, v, d).map_err(|e| shifted(e, rows.start * row_len))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                // A panic in a quantizer is never expected; reported as unsupported.
                h.join()
                    .unwrap_or(Err(gguf_lens::Error::new(ErrorKind::CannotQuantize { ty })))
            })
            .collect::<Result<Vec<()>, _>>()
            .map(|_| ())
    })
}

/// The layer of a `blk.N.` tensor as llama.cpp's `sscanf(name, "blk.%d.")` reads it, or -1.
fn layer_of(name: &str) -> i64 {
    let Some(rest) = name.strip_prefix("blk.") else {
        return -1;
    };
    let rest = rest.trim_start();
    let (sign, digits) = match rest.as_bytes().first() {
        Some(b'-') => (-1, &rest[1..]),
        Some(b'+') => (1, &rest[1..]),
        _ => (1, rest),
    };
    let end = digits
        .bytes()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(digits.len());
    if end == 0 {
        return -1;
    }
    // Saturates where sscanf's int would overflow (undefined in C; no real model has it).
    digits[..end]
        .parse::<i64>()
        .map_or(i64::MAX, |n| n.min(i64::from(i32::MAX)))
        * sign
}
