//! `dequant` for safetensors: a GPTQ layer (by its prefix or `<prefix>.weight`) or a plain
//! tensor, to raw little-endian f32, rows being output features / the last dimension.
//! [`StTensor`] is that name resolution and row reader, shared with `stats` and `diff`.

use std::ops::Range;

use gguf_lens::compare::gptq_type_name;
use gguf_lens::gptq::{dequantize_rows, CheckpointFormat, GptqLayer, LayerParts, V1Zeros};
use gguf_lens::safetensors::{to_f32, SafetensorsFile, Tensor};
use gguf_lens::{Error, ErrorKind, Result};

use crate::checkpoint::{Checkpoint, Shard};
use crate::CHUNK_ELEMENTS;

/// The parts of a GPTQ layer, read whole.
struct GptqParts {
    qweight: Vec<u8>,
    qzeros: Vec<u8>,
    scales: Vec<u8>,
    g_idx: Option<Vec<u8>>,
    format: CheckpointFormat,
    v1: V1Zeros,
}

enum Source<'c> {
    Plain(&'c Shard, &'c SafetensorsFile, &'c Tensor),
    Gptq(&'c GptqLayer, GptqParts),
}

/// A tensor of a checkpoint as f32 rows: a plain tensor by its name (rows: the last dimension)
/// or a GPTQ layer by its prefix or `<prefix>.weight` (rows: output features, f32 `[out, in]`).
pub struct StTensor<'c> {
    checkpoint: &'c Checkpoint,
    source: Source<'c>,
}

impl<'c> StTensor<'c> {
    /// Resolves `name`: a plain tensor first, else a GPTQ layer (whose parts are read here).
    pub fn resolve(c: &'c Checkpoint, name: &str, v1: V1Zeros) -> Result<StTensor<'c>> {
        if let Some((shard, file, t)) = c.find(name) {
            return Ok(StTensor {
                checkpoint: c,
                source: Source::Plain(shard, file, t),
            });
        }
        let layer = c.layer(name).ok_or_else(|| {
            Error::new(ErrorKind::NoSuchTensor {
                name: name.to_string(),
            })
        })?;
        let parts = GptqParts {
            qweight: c.read_tensor(&layer.part("qweight"))?,
            qzeros: c.read_tensor(&layer.part("qzeros"))?,
            scales: c.read_tensor(&layer.part("scales"))?,
            g_idx: match layer.has_g_idx {
                true => Some(c.read_tensor(&layer.part("g_idx"))?),
                false => None,
            },
            format: c.model.checkpoint_format(),
            v1,
        };
        Ok(StTensor {
            checkpoint: c,
            source: Source::Gptq(layer, parts),
        })
    }

    /// The dtype name, or `GPTQ-<bits>bit` for a layer.
    pub fn type_name(&self) -> String {
        match &self.source {
            Source::Plain(_, _, t) => t.dtype().name().to_string(),
            Source::Gptq(layer, _) => gptq_type_name(layer),
        }
    }

    /// The shape, row-major: the tensor's, or `[out_features, in_features]` for a layer.
    pub fn shape(&self) -> Vec<u64> {
        match &self.source {
            Source::Plain(_, _, t) => t.shape().to_vec(),
            Source::Gptq(layer, _) => vec![layer.out_features, layer.in_features],
        }
    }

    pub fn n_rows(&self) -> u64 {
        match &self.source {
            Source::Plain(_, _, t) => t.n_rows(),
            Source::Gptq(layer, _) => layer.out_features,
        }
    }

    pub fn row_len(&self) -> u64 {
        match &self.source {
            Source::Plain(_, _, t) => t.row_len(),
            Source::Gptq(layer, _) => layer.in_features,
        }
    }

    /// Rows per chunk of at most `max_elements` values (at least one row).
    pub fn rows_per_chunk(&self, max_elements: u64) -> u64 {
        (max_elements / self.row_len().max(1)).max(1)
    }

    /// Checks that `rows` can be read: in range, and a dtype that converts to f32.
    pub fn check_rows(&self, rows: Range<u64>) -> Result<()> {
        match &self.source {
            Source::Plain(_, file, t) => {
                file.rows_range(t, rows)?;
                if !t.dtype().is_plain() {
                    return Err(Error::new(ErrorKind::UnsupportedDtype {
                        name: t.name().to_string(),
                        dtype: t.dtype().name(),
                    }));
                }
            }
            Source::Gptq(layer, _) => {
                if rows.start > rows.end || rows.end > layer.out_features {
                    return Err(Error::new(ErrorKind::BadRowRange {
                        name: layer.name.clone(),
                        start: rows.start,
                        end: rows.end,
                        rows: layer.out_features,
                    }));
                }
            }
        }
        Ok(())
    }

    /// Reads rows `rows` as f32 into `out` (resized to fit).
    pub fn read_rows(&self, rows: Range<u64>, out: &mut Vec<f32>) -> Result<()> {
        let n = (rows.end - rows.start).saturating_mul(self.row_len());
        let n = usize::try_from(n).map_err(|_| {
            Error::new(ErrorKind::TooMany {
                what: "row chunk elements".to_string(),
                count: n,
                limit: usize::MAX as u64,
            })
        })?;
        out.clear();
        out.resize(n, 0f32);
        match &self.source {
            Source::Plain(shard, file, t) => {
                let bytes = self.checkpoint.read(shard, file.rows_range(t, rows)?)?;
                to_f32(t.dtype(), t.name(), &bytes, out)
            }
            Source::Gptq(layer, p) => {
                let parts = LayerParts {
                    qweight: &p.qweight,
                    qzeros: &p.qzeros,
                    scales: &p.scales,
                    g_idx: p.g_idx.as_deref(),
                };
                dequantize_rows(layer, &parts, p.format, p.v1, rows, out)
            }
        }
    }
}

/// Writes rows `rows` (all when None) of `name` to the file `output`, created only once the
/// request is known to be valid.
pub fn dequant(
    c: &Checkpoint,
    name: &str,
    rows: Option<Range<u64>>,
    v1: V1Zeros,
    output: &str,
) -> Result<()> {
    let tensor = StTensor::resolve(c, name, v1)?;
    let rows = rows.unwrap_or(0..tensor.n_rows());
    tensor.check_rows(rows.clone())?;
    let inputs = c.input_paths();
    let inputs: Vec<&std::path::Path> = inputs.iter().map(|p| p.as_path()).collect();
    let mut out = crate::output::create(output, &inputs)?;
    let mut values = Vec::new();
    for chunk in gguf_lens::gguf::row_chunks(rows, tensor.rows_per_chunk(CHUNK_ELEMENTS)) {
        tensor.read_rows(chunk, &mut values)?;
        crate::output::write_f32s(out.file(), &values)?;
    }
    Ok(out.commit()?)
}
