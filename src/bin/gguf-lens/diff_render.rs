//! What `diff` prints for any pair of formats: the options, one compared tensor, the shared text
//! lines, the values table and the verdict. Used by `diff` (two GGUF files) and `diff_cross`
//! (any pairing with safetensors), so neither imports the other.

use std::fmt::Write;

use gguf_lens::compare::Metrics;
use serde_json::{json, Value as Json};

use crate::{exit_2, write_stdout, Failure};

pub struct Options<'a> {
    pub a: &'a str,
    pub b: &'a str,
    pub values: bool,
    pub tensors: Vec<&'a str>,
    pub json: bool,
    /// Hugging Face llama names of the safetensors side read as GGUF names.
    pub llama_names: bool,
}

/// One compared tensor.
pub struct Compared {
    pub name: String,
    pub type_a: String,
    pub type_b: String,
    pub shape: Vec<u64>,
    pub metrics: Metrics,
}

/// Prints the report; exit 0 when identical, else 1 ("files differ").
pub fn finish(text: &str, identical: bool) -> Result<(), Failure> {
    write_stdout(text.as_bytes()).map_err(exit_2("standard output"))?;
    if identical {
        Ok(())
    } else {
        Err(Failure::Differ)
    }
}

pub fn metrics_json(c: &Compared) -> Json {
    let m = &c.metrics;
    json!({
        "name": c.name,
        "type_a": c.type_a,
        "type_b": c.type_b,
        "shape": c.shape,
        "elements": m.elements,
        "count": m.count,
        "rmse": m.rmse,
        "max_abs": m.max_abs,
        "mean_abs": m.mean_abs,
        "rel_rmse": m.rel_rmse,
        "cosine": m.cosine,
        "nan_mismatch": m.nan_mismatch,
        "inf_mismatch": m.inf_mismatch,
        "identical": m.is_identical(),
    })
}

/// `<heading>: N same, N changed, N only in A, N only in B`.
pub fn metadata_line(out: &mut String, heading: &str, same: u64, [changed, a, b]: [usize; 3]) {
    let _ = writeln!(
        out,
        "\n{heading}: {same} same, {changed} changed, {a} only in A, {b} only in B"
    );
}

/// `<heading>: N matching (same name and shape), N only in A, N only in B, N shape changes, N
/// type changes`.
pub fn tensors_line(
    out: &mut String,
    heading: &str,
    [matching, only_a, only_b]: [usize; 3],
    [shapes, types]: [usize; 2],
) {
    let _ = writeln!(
        out,
        "\n{heading}: {matching} matching (same name and shape), {only_a} only in A, {only_b} only in B, {shapes} shape changes, {types} type changes",
    );
}

/// The values table of `diff --values`.
pub fn values_text(out: &mut String, compared: &[Compared]) {
    if compared.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nvalues (over pairs where both are finite):");
    let _ = writeln!(
        out,
        "  {:<32} {:<13} {:>11} {:>11} {:>11} {:>11} {:>12} {:>5} {:>5}",
        "tensor", "types", "rmse", "max|a-b|", "mean|a-b|", "rmse/rms(a)", "cosine", "NaN≠", "Inf≠"
    );
    for c in compared {
        let m = &c.metrics;
        let num = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.4e}"));
        let _ = writeln!(
            out,
            "  {:<32} {:<13} {:>11} {:>11} {:>11} {:>11} {:>12} {:>5} {:>5}",
            c.name,
            format!("{}/{}", c.type_a, c.type_b),
            num(m.rmse),
            num(m.max_abs),
            num(m.mean_abs),
            num(m.rel_rmse),
            m.cosine.map_or("-".to_string(), |v| format!("{v:.9}")),
            m.nan_mismatch,
            m.inf_mismatch
        );
    }
}

/// The last line: `identical` or `files differ`.
pub fn verdict_text(out: &mut String, identical: bool) {
    let verdict = if identical {
        "identical"
    } else {
        "files differ"
    };
    let _ = writeln!(out, "\n{verdict}");
}
