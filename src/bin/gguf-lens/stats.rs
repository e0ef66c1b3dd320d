//! `stats FILE TENSOR [--rows A:B] [--bins N] [--json]`, FILE a GGUF file or a safetensors
//! checkpoint (TENSOR resolved as `dequant` does): two streaming passes over the rows, the
//! first for the moments and counts (the core's `Stats`), the second for a histogram over
//! exactly [min, max] of the finite values (the core's `Histogram`, numpy's bin rule).

use std::fmt::Write;
use std::ops::Range;

use gguf_lens::gguf::row_chunks;
use gguf_lens::stats::{Histogram, Stats};
use gguf_lens::Kernel;
use serde_json::{json, Value as Json};

use crate::model::Model;
use crate::CHUNK_ELEMENTS;
use crate::{exit_2, fatal, json_line, write_stdout, Failure};

const DEFAULT_BINS: usize = 32;
/// Most bins accepted: the histogram is printed whole.
const MAX_BINS: usize = 1 << 16;
/// Width of the longest histogram bar, in character cells.
const BAR_WIDTH: usize = 40;

/// Statistics of a tensor's values: min/max/mean/std, NaN/Inf/zero counts and a histogram.
///
/// min, max, mean, std (population, of the finite values), NaN/+Inf/-Inf/zero counts and a
/// histogram over [min, max] of the finite values (numpy's rule:
/// bin i holds edge_i <= x < edge_i+1, the last bin also max). Two streaming passes over the rows.
///
/// Exit 0, or 2 on any error.
///
///   gguf-lens stats model.gguf blk.0.ffn_down.weight --bins 64
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// A .gguf, a .safetensors or a model.safetensors.index.json
    pub file: String,
    /// The tensor (for safetensors also a GPTQ layer, dequantized as `dequant` does)
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
}

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
    let kernel = Kernel::auto().map_err(|e| Failure::Fatal(e.to_string()))?;
    let mut model = Model::open(path)?;
    let format = model.format();
    let mut tensor = model.rows(opts.name, kernel).map_err(fatal(path))?;
    let rows = opts.rows.clone().unwrap_or(0..tensor.n_rows());
    tensor.check_rows(rows.clone()).map_err(fatal(path))?;
    let step = tensor.rows_per_chunk(CHUNK_ELEMENTS);
    let mut stats = Stats::without_histogram();
    for chunk in row_chunks(rows.clone(), step) {
        stats.add(tensor.read(chunk).map_err(fatal(path))?);
    }
    let mut histogram = match (stats.min(), stats.max()) {
        (Some(lo), Some(hi)) => Histogram::new(opts.bins, lo.into(), hi.into()),
        _ => None,
    };
    if let Some(h) = histogram.as_mut() {
        for chunk in row_chunks(rows.clone(), step) {
            h.add(tensor.read(chunk).map_err(fatal(path))?);
        }
    }
    let report = Report {
        opts: &opts,
        format,
        type_name: &tensor.type_name(),
        shape: &tensor.file_shape(),
        rows,
        stats: &stats,
        histogram: histogram.as_ref(),
    };
    let text = if opts.json {
        json_line(&report.json())
    } else {
        report.text()
    };
    write_stdout(text.as_bytes()).map_err(exit_2("standard output"))
}

struct Report<'a> {
    opts: &'a Options<'a>,
    format: &'static str,
    type_name: &'a str,
    shape: &'a [u64],
    rows: Range<u64>,
    stats: &'a Stats,
    histogram: Option<&'a Histogram>,
}

impl Report<'_> {
    fn json(&self) -> Json {
        let s = self.stats;
        let histogram = self.histogram.map(|h| {
            json!({
                "bins": h.counts().len(),
                "edges": h.edges(),
                "counts": h.counts(),
            })
        });
        json!({
            "file": self.opts.path,
            "tensor": self.opts.name,
            "format": self.format,
            "type": self.type_name,
            "shape": self.shape,
            "rows": [self.rows.start, self.rows.end],
            "elements": s.count(),
            "finite": s.finite_count(),
            "nan": s.nan_count(),
            "pos_inf": s.infinite_count() - s.neg_infinite_count(),
            "neg_inf": s.neg_infinite_count(),
            "zeros": s.zero_count(),
            "min": s.min(),
            "max": s.max(),
            "mean": s.mean(),
            "std": s.std_dev(),
            "histogram": histogram,
        })
    }

    fn text(&self) -> String {
        let s = self.stats;
        let mut out = String::new();
        let shape: Vec<String> = self.shape.iter().map(u64::to_string).collect();
        let _ = writeln!(
            out,
            "{} in {}: {} [{}], rows {}..{}",
            self.opts.name,
            self.opts.path,
            self.type_name,
            shape.join(", "),
            self.rows.start,
            self.rows.end
        );
        let _ = writeln!(
            out,
            "elements {}  finite {}  NaN {}  +Inf {}  -Inf {}  zeros {}",
            s.count(),
            s.finite_count(),
            s.nan_count(),
            s.infinite_count() - s.neg_infinite_count(),
            s.neg_infinite_count(),
            s.zero_count()
        );
        let show = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.6e}"));
        let _ = writeln!(
            out,
            "min {}  max {}  mean {}  std {}",
            show(s.min().map(f64::from)),
            show(s.max().map(f64::from)),
            show(s.mean()),
            show(s.std_dev())
        );
        let Some(h) = self.histogram else {
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
