//! `dequant` for safetensors: a GPTQ layer (by its prefix or `<prefix>.weight`) or a plain
//! tensor, to raw little-endian f32, rows being output features / the last dimension.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::ops::Range;

use gguf_lens::gptq::{dequantize_rows, CheckpointFormat, LayerParts, V1Zeros};
use gguf_lens::safetensors::to_f32;
use gguf_lens::{Error, ErrorKind, Result};

use crate::checkpoint::Checkpoint;

/// Rows converted per step for plain tensors.
const CHUNK_ELEMENTS: u64 = 4 << 20;

fn write_f32(out: &mut impl Write, values: &[f32]) -> Result<()> {
    for v in values {
        out.write_all(&v.to_le_bytes())?;
    }
    Ok(())
}

/// Creates the output file only once the request is known to be valid.
fn create(output: &str) -> Result<BufWriter<File>> {
    Ok(BufWriter::new(File::create(output)?))
}

/// Writes rows `rows` (all when None) of `name` to the file `output`.
pub fn dequant(
    c: &Checkpoint,
    name: &str,
    rows: Option<Range<u64>>,
    v1: V1Zeros,
    output: &str,
) -> Result<()> {
    if let Some((shard, t)) = c.find(name) {
        let rows = rows.unwrap_or(0..t.n_rows());
        shard.file.rows_range(t, rows.clone())?;
        if !t.dtype().is_plain() {
            return Err(Error::new(ErrorKind::UnsupportedDtype {
                name: name.to_string(),
                dtype: t.dtype().name(),
            }));
        }
        let out = &mut create(output)?;
        let per_chunk = (CHUNK_ELEMENTS / t.row_len().max(1)).max(1);
        let mut start = rows.start;
        let mut values = Vec::new();
        while start < rows.end {
            let end = rows.end.min(start + per_chunk);
            let bytes = c.read(shard, shard.file.rows_range(t, start..end)?)?;
            values.clear();
            values.resize(((end - start) * t.row_len()) as usize, 0f32);
            to_f32(t.dtype(), t.name(), &bytes, &mut values)?;
            write_f32(out, &values)?;
            start = end;
        }
        return Ok(out.flush()?);
    }
    let layer = c.layer(name).ok_or_else(|| {
        Error::new(ErrorKind::NoSuchTensor {
            name: name.to_string(),
        })
    })?;
    let rows = rows.unwrap_or(0..layer.out_features);
    let qweight = c.read_tensor(&layer.part("qweight"))?;
    let qzeros = c.read_tensor(&layer.part("qzeros"))?;
    let scales = c.read_tensor(&layer.part("scales"))?;
    let g_idx = match layer.has_g_idx {
        true => Some(c.read_tensor(&layer.part("g_idx"))?),
        false => None,
    };
    let parts = LayerParts {
        qweight: &qweight,
        qzeros: &qzeros,
        scales: &scales,
        g_idx: g_idx.as_deref(),
    };
    let format = c
        .config
        .as_ref()
        .map_or(CheckpointFormat::V1, |(_, q)| q.checkpoint_format);
    if rows.start > rows.end || rows.end > layer.out_features {
        return Err(Error::new(ErrorKind::BadRowRange {
            name: layer.name.clone(),
            start: rows.start,
            end: rows.end,
            rows: layer.out_features,
        }));
    }
    let out = &mut create(output)?;
    let per_chunk = (CHUNK_ELEMENTS / layer.in_features.max(1)).max(1);
    let mut values = Vec::new();
    let mut start = rows.start;
    while start < rows.end {
        let end = rows.end.min(start + per_chunk);
        values.clear();
        values.resize(((end - start) * layer.in_features) as usize, 0f32);
        dequantize_rows(layer, &parts, format, v1, start..end, &mut values)?;
        write_f32(out, &values)?;
        start = end;
    }
    Ok(out.flush()?)
}
