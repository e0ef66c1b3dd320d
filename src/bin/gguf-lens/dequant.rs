//! `dequant FILE TENSOR -o OUT [--rows A:B]`: a tensor's values as raw little-endian f32.

use std::ops::Range;
use std::path::Path;
use std::sync::mpsc;

use gguf_lens::gguf::row_chunks;
use gguf_lens::gptq::V1Zeros;
use gguf_lens::model::{open, Model, Opened};
use gguf_lens::quant::AlignedF32;
use gguf_lens::Kernel;

use crate::output::write_f32s;
use crate::Failure;

/// A tensor's values (or a row range's) as raw little-endian f32, bit for bit as ggml does.
///
/// Exit 0, 1 on a bad file or tensor (nothing is written), 2 on bad usage.
///
///   gguf-lens dequant model.gguf blk.0.attn_q.weight -o q.f32 --rows 0:16
///   python -c "import numpy; print(numpy.fromfile('q.f32', '<f4')[:8])"
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// A .gguf, a .safetensors or a model.safetensors.index.json
    pub file: String,
    /// The tensor; for safetensors also a GPTQ layer (e.g. model.layers.0.self_attn.q_proj),
    /// dequantized to f32 [out_features, in_features], or an MLX or FP8 block-scaled layer's
    /// <path>.weight, dequantized to its logical shape
    pub tensor: String,
    /// Where the f32 values go
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: String,
    /// Only rows A..B (A inclusive, B exclusive)
    #[arg(long, value_name = "A:B", value_parser = crate::parse_rows)]
    pub rows: Option<Range<u64>>,
    /// GPTQ v1 checkpoints: how a stored zero of 2^bits-1 is read (unmasked: 2^bits, as
    /// llama.cpp; wrapping: 0, as GPTQModel)
    #[arg(long, value_name = "MODE", value_parser = parse_v1_zeros)]
    pub v1_zeros: Option<V1Zeros>,
    /// Threads reading and dequantizing (default: every core; the output is the same)
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Values per chunk read (tests and benchmarks; the result does not depend on it)
    #[arg(long, hide = true, default_value_t = CHUNK_ELEMENTS)]
    pub chunk_elements: u64,
}

/// Values per chunk: 1 MiB of f32, so a thread's output buffer (and the quantized bytes it comes
/// from) stays in its L2 cache between the kernel's stores and the write. 16 MiB chunks spilled
/// to L3/DRAM and made every kernel store-bound: one thread took twice the CPU time end to end.
const CHUNK_ELEMENTS: u64 = 1 << 18;

fn parse_v1_zeros(text: &str) -> Result<V1Zeros, String> {
    match text {
        "unmasked" => Ok(V1Zeros::Unmasked),
        "wrapping" => Ok(V1Zeros::Wrapping),
        _ => Err("--v1-zeros takes unmasked or wrapping".to_string()),
    }
}

pub fn run(args: &Args) -> Result<(), Failure> {
    let (path, name) = (args.file.as_str(), args.tensor.as_str());
    let Opened { model, files } = open(path)?;
    if args.v1_zeros.is_some() && !matches!(model, Model::Safetensors(_)) {
        return Err(Failure::Usage(
            "--v1-zeros is for GPTQ safetensors checkpoints".to_string(),
        ));
    }
    let kernel = Kernel::auto()?;
    let v1 = args.v1_zeros.unwrap_or_default();
    let mut first = model.rows(name, &files, kernel, v1)?;
    let rows = args.rows.clone().unwrap_or(0..first.n_rows());
    // Validates the range before anything is written.
    first.check_rows(rows.clone())?;
    let inputs = files.inputs();
    let inputs: Vec<&Path> = inputs.iter().map(|p| p.as_path()).collect();
    let mut output = crate::output::create(&args.output, &inputs)?;
    let out = output.file();
    let threads = crate::threads(args.threads);
    let step = first.rows_per_chunk(args.chunk_elements.max(1));
    let chunks: Vec<Range<u64>> = row_chunks(rows, step).collect();
    let out_path = args.output.as_str();
    let write_err = |e: std::io::Error| Failure::Error(format!("{out_path}: write failed: {e}"));
    if threads <= 1 || chunks.len() <= 1 {
        let mut values = AlignedF32::new();
        for chunk in &chunks {
            first.read_aligned(chunk.clone(), &mut values)?;
            write_f32s(out, values.as_slice()).map_err(write_err)?;
        }
        return output.commit().map_err(write_err);
    }
    // Thread t dequantizes chunks t, t + T, …; this thread writes them in order. Buffers go
    // back to their thread, so memory stays about two chunks per thread.
    std::thread::scope(|scope| -> Result<(), Failure> {
        let mut lanes = Vec::new();
        let mut workers = Vec::new();
        for t in 0..threads {
            let (full_tx, full_rx) = mpsc::sync_channel::<AlignedF32>(1);
            let (empty_tx, empty_rx) = mpsc::channel::<AlignedF32>();
            let chunks = &chunks;
            // Each thread reads through its own handle (a GPTQ layer's parts are shared).
            let mut reader = first.another()?;
            workers.push(scope.spawn(move || -> Result<(), Failure> {
                for chunk in chunks.iter().skip(t).step_by(threads) {
                    let mut values = empty_rx.try_recv().unwrap_or_default();
                    reader.read_aligned(chunk.clone(), &mut values)?;
                    if full_tx.send(values).is_err() {
                        break; // the writer stopped on a write error and reports it
                    }
                }
                Ok(())
            }));
            lanes.push((full_rx, empty_tx));
        }
        let mut written = Ok(());
        for i in 0..chunks.len() {
            let (full, empty) = &lanes[i % threads];
            let Ok(values) = full.recv() else { break }; // that thread failed: joined below
            written = write_f32s(out, values.as_slice());
            if written.is_err() {
                break;
            }
            let _ = empty.send(values);
        }
        drop(lanes); // unblocks threads still sending after a write error
        for worker in workers {
            worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        }
        written.map_err(write_err)
    })?;
    output.commit().map_err(write_err)
}
