//! Metadata editing as `gguf-lens set` and npm `editPlan` do it: edits from typed text
//! (`typed`, the CLI's `--set KEY=TYPE:VALUE`), from JSON (`from_json`, `--set-json` and JS) and
//! removals, planned with `edit::plan` on a fuzzed GGUF file. The input is
//! `[edits length u16 LE][edits][GGUF file]` (the corpus starts from fixtures' GGUF files).
//!
//! Property: the planned file (header, then its pieces of the input) parses back, every edited
//! key reads back as set, every removed key is gone, every other key and every tensor (info and
//! data) is unchanged.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use gguf_lens::edit::{from_json, plan, typed, Edits};
use gguf_lens::GgufFile;
use gguf_lens_fuzz::Meta;
use libfuzzer_sys::fuzz_target;

const TYPES: [&str; 13] = [
    "uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64", "float32", "float64",
    "bool", "string", "list",
];

#[derive(Debug, Arbitrary)]
enum Key {
    /// The file's key at this index (modulo the count).
    Existing(u16),
    New(String),
    Alignment,
}

#[derive(Debug, Arbitrary)]
enum Op {
    Remove(Key),
    Typed(Key, u8, String),
    Json(Key, String, Option<u8>),
}

fn key_name(file: &GgufFile, key: &Key) -> String {
    match key {
        Key::Existing(i) => {
            let n = file.metadata_len().max(1);
            file.metadata()
                .nth(usize::from(*i) % n)
                .map_or_else(|| "general.name".to_string(), |(k, _)| k.to_string())
        }
        Key::New(s) => s.clone(),
        Key::Alignment => "general.alignment".to_string(),
    }
}

fn edits_of(file: &GgufFile, ops: &[Op]) -> Edits {
    let mut edits = Edits::default();
    for op in ops.iter().take(16) {
        match op {
            Op::Remove(k) => edits.remove.push(key_name(file, k)),
            Op::Typed(k, ty, text) => {
                let key = key_name(file, k);
                if let Ok(v) = typed(&key, TYPES[usize::from(*ty) % TYPES.len()], text) {
                    edits.set.push((key, v));
                }
            }
            Op::Json(k, json, ty) => {
                let key = key_name(file, k);
                let Ok(doc) = serde_json::from_str::<serde_json::Value>(json) else {
                    continue;
                };
                let ty = ty.map(|t| TYPES[usize::from(t) % TYPES.len()]);
                if let Ok(v) = from_json(file, &key, &doc, ty) {
                    edits.set.push((key, v));
                }
            }
        }
    }
    edits
}

fuzz_target!(|data: &[u8]| {
    let [a, b, rest @ ..] = data else {
        return;
    };
    let len = usize::from(u16::from_le_bytes([*a, *b])).min(rest.len());
    let (ops, bytes) = rest.split_at(len);
    let Ok(file) = GgufFile::from_bytes(bytes) else {
        return;
    };
    let ops: Vec<Op> = Unstructured::new(ops).arbitrary().unwrap_or_default();
    let edits = edits_of(&file, &ops);
    let Ok(p) = plan(&file, bytes.len() as u64, &edits) else {
        return;
    };
    let mut out = p.header.clone();
    for piece in &p.pieces {
        match piece.from {
            Some(from) => {
                let end = from
                    .checked_add(piece.len)
                    .expect("a piece ends before 2^64");
                assert!(end <= bytes.len() as u64, "a piece lies inside the input");
                out.extend_from_slice(&bytes[from as usize..end as usize]);
            }
            None => out.resize(out.len() + piece.len as usize, 0),
        }
    }
    assert_eq!(out.len() as u64, p.len, "the plan's length is its parts'");
    let edited =
        GgufFile::from_bytes(&out).unwrap_or_else(|e| panic!("the edited file parses back: {e}"));

    // What each key should be: the input's, minus removals, then the sets in order.
    let mut want: Vec<(String, Meta)> = file
        .metadata()
        .map(|(k, v)| (k.to_string(), Meta::of(&v)))
        .collect();
    want.retain(|(k, _)| !edits.remove.contains(k));
    for (k, v) in &edits.set {
        let v = Meta::of_new(v);
        match want.iter_mut().find(|(name, _)| name == k) {
            Some(slot) => slot.1 = v,
            None => want.push((k.clone(), v)),
        }
    }
    let got: Vec<(String, Meta)> = edited
        .metadata()
        .map(|(k, v)| (k.to_string(), Meta::of(&v)))
        .collect();
    assert_eq!(got.len(), want.len(), "keys: got {got:?}, want {want:?}");
    for ((gk, gv), (wk, wv)) in got.iter().zip(&want) {
        assert_eq!(gk, wk, "keys keep their order");
        assert!(gv.same(wv), "{gk}: got {gv:?}, want {wv:?}");
    }
    assert_eq!(edited.tensors().len(), file.tensors().len());
    for (t, e) in file.tensors().iter().zip(edited.tensors()) {
        assert_eq!(t.name(), e.name());
        assert_eq!(t.dims(), e.dims());
        assert_eq!(t.ggml_type(), e.ggml_type());
        let before = file.tensor_data(bytes, t).expect("validated");
        let after = edited.tensor_data(&out, e).expect("validated");
        assert!(before == after, "{}: data unchanged", t.name());
    }
});
