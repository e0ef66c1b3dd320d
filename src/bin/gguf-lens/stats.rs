//! `stats FILE TENSOR [--rows A:B] [--bins N] [--json]`, FILE a GGUF file or a safetensors
//! checkpoint (TENSOR resolved as `dequant` does): two streaming passes over the rows, the
//! first for the moments and counts (the core's `Stats`), the second for a histogram over
//! exactly [min, max] of the finite values (the core's `Histogram`, numpy's bin rule).

use std::fmt::Write;
use std::ops::Range;

use gguf_lens::model::{open, Opened};
use gguf_lens::stats::{tensor_stats, Reading, StatsReport, StatsRequest};
use gguf_lens::Kernel;
use serde_json::{json, Value as Json};

use crate::{json_line, named, write_stdout, Failure};

const DEFAULT_BINS: usize = 32;
/// Most bins accepted: the histogram is printed whole.
const MAX_BINS: usize = 1 << 16;
/// Width of the longest histogram bar, in character cells.
const BAR_WIDTH: usize = 40;

/// Statistics of a tensor's values: min/max/mean/std, NaN/Inf/zero counts and a histogram.
///
/// min, max, mean, std (population, of the finite values), NaN/+Inf/-Inf/zero counts and a
/// histogram over [min, max] of the finite values (numpy's rule:
/// bin i holds edge_i <= x < edge_i+1, the last bin also max), exact p1/p50/p99. Two streaming
/// passes over the rows, on every core.
///
/// Exit 0, 1 on a bad file, tensor or request (one `error:` line), 2 on bad usage.
///
///   gguf-lens stats model.gguf blk.0.ffn_down.weight --bins 64
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// A .gguf, a .safetensors or a model.safetensors.index.json
    pub file: String,
    /// The tensor (for safetensors also a GPTQ, MLX or FP8 layer, dequantized as `dequant` does)
    pub tensor: String,
    /// Only rows A..B (A inclusive, B exclusive)
    #[arg(long, value_name = "A:B", value_parser = crate::parse_rows)]
    pub rows: Option<Range<u64>>,
    /// Histogram bins
    #[arg(long, default_value_t = DEFAULT_BINS, value_parser = parse_bins)]
    pub bins: usize,
    /// One JSON document on stdout
    #[arg(long)]
    pub json: bool,
    /// Skip the exact p1/p50/p99 (they cost little: counted in the same two passes)
    #[arg(long)]
    pub no_percentiles: bool,
    /// Threads reading and dequantizing (default: every core; the result is the same)
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Values per chunk read (tests and benchmarks; the result does not depend on it)
    #[arg(long, hide = true, default_value_t = STATS_CHUNK_ELEMENTS)]
    pub chunk_elements: u64,
}

/// Values a thread reads per step: 256K keeps the quantized bytes (~0.3 MB of Q8_0) in L2
/// between the read and the job's passes over them.
const STATS_CHUNK_ELEMENTS: u64 = 1 << 18;

fn parse_bins(text: &str) -> Result<usize, String> {
    text.parse()
        .ok()
        .filter(|n| (1..=MAX_BINS).contains(n))
        .ok_or_else(|| format!("--bins takes a number 1..={MAX_BINS}, got {text:?}"))
}

struct Options<'a> {
    path: &'a str,
    name: &'a str,
    rows: Option<Range<u64>>,
    bins: usize,
    json: bool,
}

pub fn run(args: &Args) -> Result<(), Failure> {
    let opts = Options {
        path: &args.file,
        name: &args.tensor,
        rows: args.rows.clone(),
        bins: args.bins,
        json: args.json,
    };
    let path = opts.path;
    let kernel = Kernel::auto().map_err(|e| Failure::Error(e.to_string()))?;
    let request = StatsRequest {
        bins: opts.bins,
        percentiles: !args.no_percentiles,
    };
    let reading = Reading {
        threads: crate::threads(args.threads),
        chunk_elements: args.chunk_elements.max(1),
        kernel,
    };
    let Opened { model, files } = open(path)?;
    let format = model.format().name();
    let found = tensor_stats(
        &model,
        &files,
        opts.name,
        opts.rows.clone(),
        request,
        reading,
    )
    .map_err(named(path))?;
    let (report, type_name, shape, rows) = (found.report, found.type_name, found.shape, found.rows);
    let report = Report {
        opts: &opts,
        format,
        type_name: &type_name,
        shape: &shape,
        rows,
        stats: &report,
    };
    let text = if opts.json {
        json_line(&report.json())
    } else {
        report.text()
    };
    write_stdout(text.as_bytes())
}

struct Report<'a> {
    opts: &'a Options<'a>,
    format: &'static str,
    type_name: &'a str,
    shape: &'a [u64],
    rows: Range<u64>,
    stats: &'a StatsReport,
}

impl Report<'_> {
    fn json(&self) -> Json {
        let s = self.stats;
        let m = &s.moments;
        let histogram = s.histogram.as_ref().map(|h| {
            json!({
                "bins": h.counts().len(),
                "edges": h.edges(),
                "counts": h.counts(),
            })
        });
        let percentiles = s.percentiles.as_ref().map(|ps| {
            ps.iter()
                .map(|(p, v)| (format!("p{p}"), json!(v)))
                .collect::<serde_json::Map<String, Json>>()
        });
        let range = m.range();
        json!({
            "file": self.opts.path,
            "tensor": self.opts.name,
            "format": self.format,
            "type": self.type_name,
            "shape": self.shape,
            "rows": [self.rows.start, self.rows.end],
            "elements": m.count,
            "finite": m.finite,
            "nan": m.nan,
            "pos_inf": m.pos_inf,
            "neg_inf": m.neg_inf,
            "zeros": m.zeros,
            "min": range.map(|r| r.0),
            "max": range.map(|r| r.1),
            "mean": s.mean,
            "std": s.std,
            "percentiles": percentiles,
            "histogram": histogram,
        })
    }

    fn text(&self) -> String {
        let s = self.stats;
        let m = &s.moments;
        let mut out = String::new();
        let shape: Vec<String> = self.shape.iter().map(u64::to_string).collect();
        let _ = writeln!(
            out,
            "{} in {}: {} [{}], rows {}..{}",
            crate::escape::shown(self.opts.name),
            crate::escape::shown(self.opts.path),
            self.type_name,
            shape.join(", "),
            self.rows.start,
            self.rows.end
        );
        let _ = writeln!(
            out,
            "elements {}  finite {}  NaN {}  +Inf {}  -Inf {}  zeros {}",
            m.count, m.finite, m.nan, m.pos_inf, m.neg_inf, m.zeros
        );
        let show = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.6e}"));
        let range = m.range();
        let _ = writeln!(
            out,
            "min {}  max {}  mean {}  std {}",
            show(range.map(|r| f64::from(r.0))),
            show(range.map(|r| f64::from(r.1))),
            show(s.mean),
            show(s.std)
        );
        if let Some(ps) = &s.percentiles {
            let shown: Vec<String> = ps
                .iter()
                .map(|(p, v)| format!("p{p} {}", show(Some(*v))))
                .collect();
            let _ = writeln!(out, "{}", shown.join("  "));
        }
        let Some(h) = &s.histogram else {
            let _ = writeln!(out, "no finite values: no histogram");
            return out;
        };
        let n = h.counts().len();
        let _ = writeln!(out, "histogram ({n} bins over [min, max]):");
        let top = h.counts().iter().copied().max().unwrap_or(0).max(1);
        for (i, &count) in h.counts().iter().enumerate() {
            let close = if i + 1 == n { ']' } else { ')' };
            let _ = writeln!(
                out,
                "  [{:>13.6e}, {:>13.6e}{close} {:<width$} {count}",
                h.edges()[i],
                h.edges()[i + 1],
                bar(count, top),
                width = BAR_WIDTH
            );
        }
        out
    }
}

/// A bar of `count / top` of `BAR_WIDTH` cells, in eighths of a cell.
fn bar(count: u64, top: u64) -> String {
    const EIGHTHS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    let eighths = (count as u128 * (BAR_WIDTH as u128 * 8) / top as u128) as usize;
    let mut bar = "█".repeat(eighths / 8);
    if eighths % 8 > 0 {
        bar.push(EIGHTHS[eighths % 8]);
    }
    bar
}
