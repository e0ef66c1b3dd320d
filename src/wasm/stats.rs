//! Tensor statistics in wasm: the core's `StatsJob`, fed quantized bytes that are dequantized
//! here piece by piece (no f32 value crosses into JS), pass by pass; the histogram is exact over
//! `[min, max]` and the percentiles exact, as `gguf-lens stats` computes them.

use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::{js_error, ModelHeader};
use crate::stats::{Pass, StatsJob, StatsRequest};

/// One tensor's statistics being computed: `pass()` says which pass the next chunks are for
/// (`moments`, `histogram`, `percentiles`, then `done`); feed every row of the range once per
/// pass (moments: chunks starting on multiples of `cellRows()` from the first row), then call
/// `finishPass()`.
#[wasm_bindgen]
pub struct TensorStatsJob {
    job: StatsJob,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StatsJs {
    count: f64,
    finite_count: f64,
    nan_count: f64,
    inf_count: f64,
    pos_inf_count: f64,
    neg_inf_count: f64,
    zero_count: f64,
    min: Option<f32>,
    max: Option<f32>,
    mean: Option<f64>,
    std: Option<f64>,
    histogram: HistogramJs,
    /// `{ p1, p50, p99 }`, null when not asked for or without finite values.
    percentiles: Option<PercentilesJs>,
}

#[derive(Serialize)]
struct HistogramJs {
    edges: Vec<f64>,
    counts: Vec<f64>,
}

#[derive(Serialize)]
struct PercentilesJs {
    p1: f64,
    p50: f64,
    p99: f64,
}

#[wasm_bindgen]
impl TensorStatsJob {
    /// Statistics of rows `[first_row, end_row)` of `row_len` values each, with `bins` histogram
    /// bins (0: none) and, when `percentiles`, p1/p50/p99.
    #[wasm_bindgen(constructor)]
    pub fn new(
        first_row: f64,
        end_row: f64,
        row_len: f64,
        bins: u32,
        percentiles: bool,
    ) -> TensorStatsJob {
        let request = StatsRequest {
            bins: bins as usize,
            percentiles,
        };
        TensorStatsJob {
            job: StatsJob::new(first_row as u64..end_row as u64, row_len as u64, request),
        }
    }

    /// `"moments"`, `"histogram"` or `"done"`.
    pub fn pass(&self) -> String {
        match self.job.pass() {
            Pass::Moments => "moments",
            Pass::Histogram => "histogram",
            Pass::Done => "done",
        }
        .to_string()
    }

    /// Rows per chunk: whole grid cells, about `max_elements` values.
    #[wasm_bindgen(js_name = chunkRows)]
    pub fn chunk_rows(&self, max_elements: f64) -> f64 {
        self.job.chunk_rows(max_elements.max(1.0) as u64) as f64
    }

    /// Dequantizes `bytes`, whole rows of tensor `name` of `header` starting at `first_row`, and
    /// adds their values to the pass.
    #[wasm_bindgen(js_name = addRows)]
    pub fn add_rows(
        &mut self,
        header: &ModelHeader,
        name: &str,
        first_row: f64,
        bytes: &[u8],
    ) -> Result<(), JsError> {
        let tensor = header.gguf()?.tensor(name).map_err(js_error)?;
        super::whole_rows(name, tensor.row_bytes(), bytes.len())?;
        // Piece by piece into a small buffer (no chunk-sized f32 array).
        crate::stats::add_gguf_rows(
            &mut self.job,
            header.gguf()?,
            tensor,
            crate::Kernel::best(),
            first_row as u64,
            bytes,
        )
        .map_err(js_error)
    }

    /// `addRows` over bytes `offset..offset + len` of `buffer`, which JS filled in place (no
    /// copy).
    #[wasm_bindgen(js_name = addRowsFrom)]
    pub fn add_rows_from(
        &mut self,
        header: &ModelHeader,
        name: &str,
        first_row: f64,
        buffer: &ByteBuffer,
        offset: u32,
        len: u32,
    ) -> Result<(), JsError> {
        let (start, end) = (
            offset as usize,
            (offset as usize).saturating_add(len as usize),
        );
        let bytes = buffer.bytes.get(start..end).ok_or_else(|| {
            JsError::new(&format!(
                "bytes {start}..{end} asked of a {}-byte buffer",
                buffer.bytes.len()
            ))
        })?;
        self.add_rows(header, name, first_row, bytes)
    }

    /// Adds values already in f32 (a safetensors checkpoint's rows).
    pub fn add(&mut self, first_row: f64, values: &[f32]) -> Result<(), JsError> {
        self.job.add(first_row as u64, values).map_err(js_error)
    }

    /// The rows cut into at most `n` runs of whole grid cells, for `n` workers: a flat
    /// `[start0, end0, start1, end1, …]`.
    pub fn parts(&self, n: u32) -> Vec<f64> {
        self.job
            .parts(n as usize)
            .into_iter()
            .flat_map(|r| [r.start as f64, r.end as f64])
            .collect()
    }

    /// An empty part of the current pass, as plain data for another worker
    /// (`TensorStatsJob.fromState` there, `toState` back, `absorb` here).
    #[wasm_bindgen(js_name = forkState)]
    pub fn fork_state(&self) -> Result<JsValue, JsError> {
        state_to_js(&self.job.fork())
    }

    /// This job as plain data (a Map, arrays, numbers) that survives `postMessage`.
    #[wasm_bindgen(js_name = toState)]
    pub fn to_state(&self) -> Result<JsValue, JsError> {
        state_to_js(&self.job)
    }

    /// A job from `toState`'s data.
    #[wasm_bindgen(js_name = fromState)]
    pub fn from_state(state: JsValue) -> Result<TensorStatsJob, JsError> {
        let job = serde_wasm_bindgen::from_value(state)
            .map_err(|e| JsError::new(&format!("statistics state: {e}")))?;
        Ok(TensorStatsJob { job })
    }

    /// Takes a part's counts back (from `forkState` → `fromState` in a worker → `toState`).
    pub fn absorb(&mut self, part: TensorStatsJob) {
        self.job.absorb(part.job);
    }

    /// Ends the pass (throws when the moments pass missed rows).
    #[wasm_bindgen(js_name = finishPass)]
    pub fn finish_pass(&mut self) -> Result<(), JsError> {
        self.job.finish_pass().map_err(js_error)
    }

    /// `{ count, finiteCount, nanCount, infCount, posInfCount, negInfCount, zeroCount, min, max,
    /// mean, std, histogram: { edges, counts }, percentiles: { p1, p50, p99 } | null }`.
    pub fn result(&self) -> JsValue {
        let r = self.job.report();
        let m = r.moments;
        let range = m.range();
        let (edges, counts) = r.histogram.as_ref().map_or((Vec::new(), Vec::new()), |h| {
            (
                h.edges().to_vec(),
                h.counts().iter().map(|&c| c as f64).collect(),
            )
        });
        let percentile = |ps: &[(f64, f64)], p: f64| {
            ps.iter()
                .find(|(q, _)| *q == p)
                .map_or(f64::NAN, |(_, v)| *v)
        };
        let value = StatsJs {
            count: m.count as f64,
            finite_count: m.finite as f64,
            nan_count: m.nan as f64,
            inf_count: (m.pos_inf + m.neg_inf) as f64,
            pos_inf_count: m.pos_inf as f64,
            neg_inf_count: m.neg_inf as f64,
            zero_count: m.zeros as f64,
            min: range.map(|r| r.0),
            max: range.map(|r| r.1),
            mean: r.mean,
            std: r.std,
            histogram: HistogramJs { edges, counts },
            percentiles: r.percentiles.as_deref().map(|ps| PercentilesJs {
                p1: percentile(ps, 1.0),
                p50: percentile(ps, 50.0),
                p99: percentile(ps, 99.0),
            }),
        };
        super::to_js(&value)
    }
}

/// Bytes held in wasm memory that JS fills in place (a view of `memory.buffer` at `ptr`, taken
/// afresh after any call that may grow the memory), so a file read lands where the kernels read
/// it, with no copy through a JS buffer.
#[wasm_bindgen]
pub struct ByteBuffer {
    bytes: Vec<u8>,
}

#[wasm_bindgen]
impl ByteBuffer {
    /// `len` zero bytes (at most 1 GiB).
    #[wasm_bindgen(constructor)]
    pub fn new(len: u32) -> Result<ByteBuffer, JsError> {
        if len > 1 << 30 {
            return Err(JsError::new(&format!("a {len}-byte buffer is over 1 GiB")));
        }
        Ok(ByteBuffer {
            bytes: vec![0; len as usize],
        })
    }

    /// The address of the first byte in wasm memory.
    pub fn ptr(&self) -> u32 {
        self.bytes.as_ptr() as usize as u32
    }
}

fn state_to_js(job: &StatsJob) -> Result<JsValue, JsError> {
    job.serialize(&serde_wasm_bindgen::Serializer::new())
        .map_err(|e| JsError::new(&format!("statistics state: {e}")))
}
