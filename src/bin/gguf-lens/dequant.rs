//! `dequant FILE TENSOR -o OUT [--rows A:B]`: a tensor's values as raw little-endian f32.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::ops::Range;

use gguf_lens::gguf::{read_header, row_chunks, RowReader};
use gguf_lens::gptq::V1Zeros;
use gguf_lens::{Error, Kernel};

use crate::checkpoint::Checkpoint;
use crate::{is_safetensors, open, st_dequant, Failure, CHUNK_ELEMENTS};

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
    /// dequantized to f32 [out_features, in_features]
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
}

fn parse_v1_zeros(text: &str) -> Result<V1Zeros, String> {
    match text {
        "unmasked" => Ok(V1Zeros::Unmasked),
        "wrapping" => Ok(V1Zeros::Wrapping),
        _ => Err("--v1-zeros takes unmasked or wrapping".to_string()),
    }
}

pub fn run(args: &Args) -> Result<(), Failure> {
    let (path, name, output) = (args.file.as_str(), args.tensor.as_str(), &args.output);
    let rows = args.rows.clone();
    if is_safetensors(path) {
        let checkpoint = Checkpoint::open(path)?;
        st_dequant::dequant(
            &checkpoint,
            name,
            rows,
            args.v1_zeros.unwrap_or_default(),
            output,
        )?;
        return Ok(());
    }
    if args.v1_zeros.is_some() {
        return Err(Failure::Usage(
            "--v1-zeros is for GPTQ safetensors checkpoints".to_string(),
        ));
    }
    let kernel = Kernel::auto()?;
    let (mut reader, size) = open(path)?;
    let file = read_header(&mut reader, size)?;
    let tensor = file.tensor(name)?;
    let rows = rows.unwrap_or(0..tensor.n_rows());
    // Validates the range before anything is written.
    file.rows_range(tensor, rows.clone())?;
    let out_file = File::create(output).map_err(|e| Failure::File(Error::from(e)))?;
    let mut out = BufWriter::new(out_file);
    let mut rows_reader = RowReader::new(&file, tensor, kernel);
    for chunk in row_chunks(rows, rows_reader.rows_per_chunk(CHUNK_ELEMENTS)) {
        for v in rows_reader.read(&mut reader, chunk)? {
            out.write_all(&v.to_le_bytes())
                .map_err(|e| Failure::File(Error::from(e)))?;
        }
    }
    out.flush().map_err(|e| Failure::File(Error::from(e)))
}
