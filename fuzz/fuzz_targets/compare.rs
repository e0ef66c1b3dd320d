//! `gguf-lens diff` and npm `compareReport` on two fuzzed models: each side a GGUF file, else a
//! safetensors checkpoint; the report (`DiffReport::build`) with the values of every matching
//! GGUF tensor compared (`compare_tensor`, in small row chunks), rendered as text, JSON and
//! Markdown; and `HeaderDiff::of`. The input is A, `\n--8<--\n`, B (the corpus starts from
//! fixtures/diff); with no B, A is compared with itself.
//!
//! Property: a model compared with itself is identical, headers and values.
#![no_main]

use std::io::Cursor;

use gguf_lens::checkpoint::Checkpoint;
use gguf_lens::compare::{compare_tensor, HeaderDiff, TensorSource};
use gguf_lens::diff_report::{DiffReport, Format, Input, Source, ValueRow};
use gguf_lens::safetensors::SafetensorsFile;
use gguf_lens::{GgufFile, Kernel};
use gguf_lens_fuzz::sections;
use libfuzzer_sys::fuzz_target;

/// Compare values only of tensors this small, in chunks this big.
const MAX_ELEMENTS: u64 = 1 << 14;
const CHUNK: u64 = 256;

enum Model {
    Gguf(GgufFile),
    Checkpoint(Checkpoint),
}

fn open(bytes: &[u8]) -> Option<Model> {
    if let Ok(f) = GgufFile::from_bytes(bytes) {
        return Some(Model::Gguf(f));
    }
    let f = SafetensorsFile::from_bytes(bytes).ok()?;
    Some(Model::Checkpoint(Checkpoint::new(vec![f], None)))
}

fn input<'a>(path: &'a str, m: &'a Model) -> Input<'a> {
    Input {
        path,
        source: match m {
            Model::Gguf(f) => Source::Gguf(vec![f]),
            Model::Checkpoint(c) => Source::Checkpoint(c),
        },
        renames: Default::default(),
    }
}

fn report(a: (&Model, &[u8]), b: (&Model, &[u8])) -> DiffReport {
    let report = DiffReport::build(&input("a", a.0), &input("b", b.0), Default::default());
    let mut rows = Vec::new();
    if let (Model::Gguf(fa), Model::Gguf(fb)) = (a.0, b.0) {
        for name in &report.tensors.matching {
            let (Ok(ta), Ok(tb)) = (fa.tensor(name), fb.tensor(name)) else {
                panic!("{name}: a matching tensor is in both");
            };
            if ta.n_elements() > MAX_ELEMENTS {
                continue;
            }
            let metrics = compare_tensor(
                TensorSource {
                    reader: &mut Cursor::new(a.1),
                    file: fa,
                    tensor: ta,
                },
                TensorSource {
                    reader: &mut Cursor::new(b.1),
                    file: fb,
                    tensor: tb,
                },
                Kernel::best(),
                CHUNK,
            );
            if let Ok(metrics) = metrics {
                rows.push(ValueRow {
                    name: name.clone(),
                    type_a: ta.ggml_type().name().to_string(),
                    type_b: tb.ggml_type().name().to_string(),
                    shape: ta.shape(),
                    metrics,
                });
            }
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
    if let Model::Gguf(f) = &a {
        assert!(HeaderDiff::of(f, f).is_identical(), "its header too");
    }
    if let Some(bytes) = parts.get(1) {
        if let Some(b) = open(bytes) {
            let _ = report((&a, parts[0]), (&b, bytes));
            if let (Model::Gguf(fa), Model::Gguf(fb)) = (&a, &b) {
                let _ = HeaderDiff::of(fa, fb);
            }
        }
    }
});
