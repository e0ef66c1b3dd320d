//! The report as Markdown (`gguf-lens diff --format markdown`, the viewer's Compare export):
//! the text report's facts as headed tables, long values previewed (the JSON has them whole).

use std::fmt::Write;

use super::{change_text, field_text, DiffReport, Metadata, TensorRow};
use crate::compare::METADATA_NOT_COMPARED;

/// Escapes what Markdown or a table cell would read as syntax; a line break becomes a space.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            // `[` alone stops a link; `>` and `#` only matter at a line's start, which a cell
            // or a heading's text never is.
            '\\' | '`' | '*' | '_' | '[' | '<' | '|' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A table with header `head`, or `none` when there is no row.
fn table(out: &mut String, head: &[&str], rows: Vec<Vec<String>>) {
    if rows.is_empty() {
        out.push_str("none\n\n");
        return;
    }
    let _ = writeln!(out, "| {} |", head.join(" | "));
    let _ = writeln!(out, "|{}|", vec!["---"; head.len()].join("|"));
    for row in rows {
        let cells: Vec<String> = row.iter().map(|c| escape(c)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out.push('\n');
}

/// `4096×11008`, outermost first; `scalar` for no dimension.
fn shape(s: &[u64]) -> String {
    if s.is_empty() {
        return "scalar".into();
    }
    let dims: Vec<String> = s.iter().map(u64::to_string).collect();
    dims.join("×")
}

fn tensor_rows(list: &[TensorRow]) -> Vec<Vec<String>> {
    list.iter()
        .map(|t| {
            let name = match &t.file_name {
                Some(f) => format!("{} (in the file: {f})", t.name),
                None => t.name.clone(),
            };
            vec![name, t.type_name.clone(), shape(&t.shape)]
        })
        .collect()
}

pub(super) fn render(r: &DiffReport) -> String {
    let mut out = String::new();
    let verdict = if r.identical {
        "identical"
    } else {
        "files differ"
    };
    let _ = writeln!(out, "# gguf-lens diff: {verdict}\n");
    for (label, s) in [("A", &r.a), ("B", &r.b)] {
        let _ = writeln!(out, "- {label}: {} ({})", escape(&s.path), s.format);
    }
    out.push_str("\n## Summary\n\n");
    let rows = r
        .summary
        .iter()
        .map(|f| {
            let mark = if f.differs() { "≠" } else { "" };
            vec![
                f.name.to_string(),
                field_text(f.name, &f.a),
                field_text(f.name, &f.b),
                mark.to_string(),
            ]
        })
        .collect();
    table(&mut out, &["field", "A", "B", "differs"], rows);
    metadata(&mut out, &r.metadata);
    let t = &r.tensors;
    let logical = if r.logical {
        "; logical row-major shapes, GGUF dims reversed"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "## Tensors ({} matching by name and shape{logical})\n",
        t.matching.len()
    );
    out.push_str("### Only in A\n\n");
    table(
        &mut out,
        &["tensor", "type", "shape"],
        tensor_rows(&t.only_a),
    );
    out.push_str("### Only in B\n\n");
    table(
        &mut out,
        &["tensor", "type", "shape"],
        tensor_rows(&t.only_b),
    );
    out.push_str("### Shape changes\n\n");
    let rows = t
        .shape_changes
        .iter()
        .map(|s| vec![s.name.clone(), shape(&s.a), shape(&s.b)])
        .collect();
    table(&mut out, &["tensor", "A", "B"], rows);
    out.push_str("### Type changes\n\n");
    let rows = t
        .transitions
        .iter()
        .map(|(a, b, n)| vec![a.clone(), b.clone(), n.to_string()])
        .collect();
    table(&mut out, &["A", "B", "tensors"], rows);
    if let (Some(ma), Some(mb)) = (&r.a.quant_mix, &r.b.quant_mix) {
        out.push_str("## Quant mix\n\n");
        let mut types: Vec<&str> = ma.iter().map(|m| m.type_name.as_str()).collect();
        for m in mb {
            if !types.contains(&m.type_name.as_str()) {
                types.push(&m.type_name);
            }
        }
        let cells = |mix: &[super::MixRow], ty: &str| match mix.iter().find(|m| m.type_name == ty) {
            Some(m) => vec![
                m.tensors.to_string(),
                m.bytes.to_string(),
                format!("{:.1}%", 100.0 * m.byte_share),
            ],
            None => vec!["-".into(), "-".into(), "-".into()],
        };
        let rows = types
            .iter()
            .map(|ty| {
                let mut row = vec![ty.to_string()];
                row.extend(cells(ma, ty));
                row.extend(cells(mb, ty));
                row
            })
            .collect();
        let head = [
            "type",
            "A tensors",
            "A bytes",
            "A share",
            "B tensors",
            "B bytes",
            "B share",
        ];
        table(&mut out, &head, rows);
    }
    if let Some(values) = &r.values {
        let _ = writeln!(
            out,
            "## Values ({} of {} matching tensors compared; over pairs where both are finite)\n",
            values.len(),
            t.matching.len()
        );
        let num = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.4e}"));
        let rows = values
            .iter()
            .map(|c| {
                let m = &c.metrics;
                vec![
                    c.name.clone(),
                    c.type_a.clone(),
                    c.type_b.clone(),
                    num(m.rmse),
                    num(m.max_abs),
                    num(m.mean_abs),
                    num(m.rel_rmse),
                    m.cosine.map_or("-".to_string(), |v| format!("{v:.9}")),
                    format!("{} / {}", m.nan_mismatch, m.inf_mismatch),
                ]
            })
            .collect();
        let head = [
            "tensor",
            "A",
            "B",
            "RMSE",
            "max abs",
            "mean abs",
            "RMSE / RMS(a)",
            "cosine",
            "NaN / Inf mismatches",
        ];
        table(&mut out, &head, rows);
    }
    if !r.skipped.is_empty() {
        out.push_str("### Skipped\n\n");
        let rows = r
            .skipped
            .iter()
            .map(|(n, why)| vec![n.clone(), why.clone()])
            .collect();
        table(&mut out, &["tensor", "reason"], rows);
    }
    out
}

fn metadata(out: &mut String, m: &Metadata) {
    let (heading, same, only, changed): (_, _, [Vec<Vec<String>>; 2], Vec<Vec<String>>) = match m {
        Metadata::NotCompared => {
            let _ = writeln!(out, "## Metadata\n\n{}\n", escape(METADATA_NOT_COMPARED));
            return;
        }
        Metadata::Gguf {
            same,
            only_a,
            only_b,
            changed,
        } => {
            let rows = |list: &[super::KeyEntry]| {
                list.iter()
                    .map(|e| {
                        let v = e.value.as_ref().map_or("", |v| v.preview.as_str());
                        vec![e.key.clone(), v.to_string()]
                    })
                    .collect()
            };
            let changed = changed
                .iter()
                .map(|c| {
                    let text = change_text(c);
                    let change = text.strip_prefix(&format!("{}: ", c.key)).unwrap_or(&text);
                    vec![c.key.clone(), change.to_string()]
                })
                .collect();
            ("Metadata", same, [rows(only_a), rows(only_b)], changed)
        }
        Metadata::Strings {
            same,
            only_a,
            only_b,
            changed,
        } => {
            let rows = |list: &[(String, String)]| {
                list.iter()
                    .map(|(k, v)| vec![k.clone(), format!("{v:?}")])
                    .collect()
            };
            let changed = changed
                .iter()
                .map(|(k, a, b)| vec![k.clone(), format!("{a:?} -> {b:?}")])
                .collect();
            (
                "Metadata (__metadata__)",
                same,
                [rows(only_a), rows(only_b)],
                changed,
            )
        }
    };
    let _ = writeln!(
        out,
        "## {} ({same} same, {} changed, {} only in A, {} only in B)\n",
        escape(heading),
        changed.len(),
        only[0].len(),
        only[1].len()
    );
    let [only_a, only_b] = only;
    out.push_str("### Only in A\n\n");
    table(out, &["key", "value"], only_a);
    out.push_str("### Only in B\n\n");
    table(out, &["key", "value"], only_b);
    out.push_str("### Changed\n\n");
    table(out, &["key", "change"], changed);
}
