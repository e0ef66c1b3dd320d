//! Statistics of one tensor of a [`Model`], whatever its storage, on several threads: a GGUF
//! tensor fed from its quantized bytes ([`add_gguf_rows`]), any other as f32 rows.

use std::ops::Range;
use std::sync::Mutex;

use super::job::{StatsJob, StatsReport, StatsRequest};
use super::quantized::add_gguf_rows;
use super::threads::{run_native, ReadRows};
use crate::error::Result;
use crate::gptq::V1Zeros;
use crate::model::{Model, Rows, Shards};
use crate::quant::Kernel;

/// What [`tensor_stats`] found, with what it read.
#[derive(Debug, Clone)]
pub struct TensorStats {
    pub report: StatsReport,
    /// ggml's type name, the safetensors dtype's or `GPTQ-<bits>bit`.
    pub type_name: String,
    /// Logical (row-major) shape.
    pub shape: Vec<u64>,
    /// The rows read.
    pub rows: Range<u64>,
}

/// How [`tensor_stats`] reads: threads, values per chunk read (at least one row), kernel. The
/// result does not depend on the first two.
#[derive(Debug, Clone, Copy)]
pub struct Reading {
    pub threads: usize,
    pub chunk_elements: u64,
    pub kernel: Kernel,
}

/// The statistics of rows `rows` (all when None) of tensor `name` (a GPTQ layer by its prefix
/// or `<prefix>.weight`, v1 zeros read as `dequant`'s default), read from `shards`.
pub fn tensor_stats(
    model: &Model,
    shards: &dyn Shards,
    name: &str,
    rows: Option<Range<u64>>,
    request: StatsRequest,
    reading: Reading,
) -> Result<TensorStats> {
    let Reading {
        threads,
        chunk_elements,
        kernel,
    } = reading;
    let first = model.rows(name, shards, kernel, V1Zeros::default())?;
    let rows = rows.unwrap_or(0..first.n_rows());
    first.check_rows(rows.clone())?;
    let (type_name, shape) = (first.type_name(), first.shape());
    let mut job = StatsJob::new(rows.clone(), first.row_len(), request);
    // Each thread reads through its own reader (a GPTQ layer's parts are shared).
    let first = Mutex::new(first);
    run_native(&mut job, threads, chunk_elements.max(1), || {
        let rows = first.lock().unwrap_or_else(|e| e.into_inner()).another()?;
        Ok(Reader {
            rows,
            kernel,
            bytes: Vec::new(),
        })
    })?;
    Ok(TensorStats {
        report: job.report(),
        type_name,
        shape,
        rows,
    })
}

struct Reader<'m> {
    rows: Rows<'m>,
    kernel: Kernel,
    bytes: Vec<u8>,
}

impl ReadRows for Reader<'_> {
    fn add_to(&mut self, job: &mut StatsJob, rows: Range<u64>) -> Result<()> {
        let first = rows.start;
        match self.rows.gguf_tensor() {
            Some((file, tensor)) => {
                self.rows.read_gguf_bytes(rows, &mut self.bytes)?;
                add_gguf_rows(job, file, tensor, self.kernel, first, &self.bytes)
            }
            None => job.add(first, self.rows.read(rows)?),
        }
    }
}
