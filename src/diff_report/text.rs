//! The report for a terminal (`gguf-lens diff`).

use std::fmt::Write;

use super::{change_text, field_text, tensor_text, DiffReport, Metadata, ValueRow};

pub(super) fn render(r: &DiffReport) -> String {
    let mut out = String::new();
    if r.logical {
        let _ = writeln!(out, "A: {} ({})", r.a.path, r.a.format);
        let _ = writeln!(out, "B: {} ({})", r.b.path, r.b.format);
    } else {
        let _ = writeln!(out, "A: {}\nB: {}", r.a.path, r.b.path);
    }
    let _ = writeln!(out, "\nsummary (* differs):");
    for f in &r.summary {
        let mark = if f.differs() { '*' } else { ' ' };
        let _ = writeln!(
            out,
            "{mark} {:<18} {:<30} {}",
            f.name,
            field_text(f.name, &f.a),
            field_text(f.name, &f.b)
        );
    }
    metadata(&mut out, &r.metadata);
    let t = &r.tensors;
    let _ = writeln!(
        out,
        "\n{}: {} matching (same name and shape), {} only in A, {} only in B, {} shape changes, {} type changes",
        if r.logical {
            "tensors (by name; logical row-major shapes, GGUF dims reversed)"
        } else {
            "tensors"
        },
        t.matching.len(),
        t.only_a.len(),
        t.only_b.len(),
        t.shape_changes.len(),
        t.type_changes.len(),
    );
    for (label, list) in [("only in A", &t.only_a), ("only in B", &t.only_b)] {
        for e in list {
            let _ = writeln!(out, "  {label}  {}", tensor_text(e));
        }
    }
    for s in &t.shape_changes {
        let _ = writeln!(out, "  shape      {} {:?} -> {:?}", s.name, s.a, s.b);
    }
    for (a, b, n) in &t.transitions {
        let _ = writeln!(out, "  type       {a} -> {b}: {n} tensors");
    }
    if let (Some(ma), Some(mb)) = (&r.a.quant_mix, &r.b.quant_mix) {
        let _ = writeln!(out, "\nquant mix:");
        for (label, mix) in [("A", ma), ("B", mb)] {
            let mix: Vec<String> = mix
                .iter()
                .map(|m| {
                    format!(
                        "{} {} ({:.1}%)",
                        m.type_name,
                        m.tensors,
                        100.0 * m.byte_share
                    )
                })
                .collect();
            let _ = writeln!(out, "  {label}  {}", mix.join(", "));
        }
    }
    values(&mut out, r.values.as_deref().unwrap_or_default());
    for (name, reason) in &r.skipped {
        let _ = writeln!(out, "  skipped    {name}: {reason}");
    }
    let verdict = if r.identical {
        "identical"
    } else {
        "files differ"
    };
    let _ = writeln!(out, "\n{verdict}");
    out
}

fn counts(out: &mut String, heading: &str, same: u64, [changed, a, b]: [usize; 3]) {
    let _ = writeln!(
        out,
        "\n{heading}: {same} same, {changed} changed, {a} only in A, {b} only in B"
    );
}

fn metadata(out: &mut String, m: &Metadata) {
    match m {
        Metadata::NotCompared => {
            let _ = writeln!(
                out,
                "\nmetadata: not compared (GGUF key-values and safetensors __metadata__ differ in kind)"
            );
        }
        Metadata::Gguf {
            same,
            only_a,
            only_b,
            changed,
        } => {
            let n = [changed.len(), only_a.len(), only_b.len()];
            counts(out, "metadata", *same, n);
            for (label, list) in [("only in A", only_a), ("only in B", only_b)] {
                for e in list {
                    let shown = e.value.as_ref().map_or("", |v| v.preview.as_str());
                    let _ = writeln!(out, "  {label}  {} = {shown}", e.key);
                }
            }
            for c in changed {
                let _ = writeln!(out, "  changed    {}", change_text(c));
            }
        }
        Metadata::Strings {
            same,
            only_a,
            only_b,
            changed,
        } => {
            let n = [changed.len(), only_a.len(), only_b.len()];
            counts(out, "metadata (__metadata__)", *same, n);
            for (label, list) in [("only in A", only_a), ("only in B", only_b)] {
                for (k, v) in list {
                    let _ = writeln!(out, "  {label}  {k} = {v:?}");
                }
            }
            for (k, va, vb) in changed {
                let _ = writeln!(out, "  changed    {k}: {va:?} -> {vb:?}");
            }
        }
    }
}

/// The values table (nothing when no tensor was compared).
fn values(out: &mut String, rows: &[ValueRow]) {
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nvalues (over pairs where both are finite):");
    let _ = writeln!(
        out,
        "  {:<32} {:<13} {:>11} {:>11} {:>11} {:>11} {:>12} {:>5} {:>5}",
        "tensor", "types", "rmse", "max|a-b|", "mean|a-b|", "rmse/rms(a)", "cosine", "NaN≠", "Inf≠"
    );
    for c in rows {
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
