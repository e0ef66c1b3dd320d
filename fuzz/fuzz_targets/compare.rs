//! `gguf-lens diff` and npm `compareReport` on two fuzzed models: each side a GGUF file, else a
//! safetensors checkpoint (one `model::Model`); the report (`DiffReport::build`) with the values
//! of every matching tensor compared (`compare_rows`, in small row chunks), rendered as text,
//! JSON and Markdown; and `HeaderDiff::of`. The input is A, `\n--8<--\n`, B (the corpus starts
//! from fixtures/diff); with no B, A is compared with itself.
//!
//! Property: a model compared with itself is identical, headers and values.
#![no_main]

use gguf_lens::compare::{compare_rows, HeaderDiff};
use gguf_lens::diff_report::{DiffReport, Format, Input, ValueRow};
use gguf_lens::gptq::V1Zeros;
use gguf_lens::model::{Checkpoint, GgufModel, Model};
use gguf_lens::safetensors::SafetensorsFile;
use gguf_lens::{GgufFile, Kernel};
use gguf_lens_fuzz::sections;
use libfuzzer_sys::fuzz_target;

/// Compare values only of tensors this small, in chunks this big.
const MAX_ELEMENTS: u64 = 1 << 14;
const CHUNK: u64 = 256;

fn open(bytes: &[u8]) -> Option<Model> {
    if let Ok(f) = GgufFile::from_bytes(bytes) {
        return Some(Model::Gguf(GgufModel::single(f)));
    }
    let f = SafetensorsFile::from_bytes(bytes).ok()?;
    Some(Model::Safetensors(Box::new(Checkpoint::new(vec![f], None))))
}

fn input<'a>(path: &'a str, m: &'a Model) -> Input<'a> {
    Input {
        path,
        model: m,
        renames: Default::default(),
    }
}

fn report(a: (&Model, &[u8]), b: (&Model, &[u8])) -> DiffReport {
    let report = DiffReport::build(&input("a", a.0), &input("b", b.0), Default::default());
    let (sa, sb) = (vec![a.1], vec![b.1]);
    let mut rows = Vec::new();
    for name in &report.tensors.matching {
        let (kernel, v1) = (Kernel::best(), V1Zeros::default());
        let (Ok(mut ra), Ok(mut rb)) = (
            a.0.rows(name, &sa, kernel, v1),
            b.0.rows(name, &sb, kernel, v1),
        ) else {
            continue; // a tensor whose data the file does not hold
        };
        if ra.n_rows().saturating_mul(ra.row_len()) > MAX_ELEMENTS {
            continue;
        }
        if let Ok(metrics) = compare_rows(name, &mut ra, &mut rb, CHUNK) {
            rows.push(ValueRow {
                name: name.clone(),
                type_a: ra.type_name(),
                type_b: rb.type_name(),
                shape: ra.shape(),
                metrics,
            });
        }
    }
    let report = report.with_values(rows, true, Vec::new());
    for format in [Format::Text, Format::Json, Format::Markdown] {
        let _ = report.render(format);
    }
    report
}

fuzz_target!(|data: &[u8]| {
    let parts = sections(data, 2);
    let Some(a) = open(parts[0]) else {
        return;
    };
    let same = report((&a, parts[0]), (&a, parts[0]));
    assert!(same.identical, "a model is identical to itself: {same:?}");
    if let Model::Gguf(m) = &a {
        let f = m.first();
        assert!(HeaderDiff::of(f, f).is_identical(), "its header too");
    }
    if let Some(bytes) = parts.get(1) {
        if let Some(b) = open(bytes) {
            let _ = report((&a, parts[0]), (&b, bytes));
            if let (Model::Gguf(ma), Model::Gguf(mb)) = (&a, &b) {
                let _ = HeaderDiff::of(ma.first(), mb.first());
            }
        }
    }
});
