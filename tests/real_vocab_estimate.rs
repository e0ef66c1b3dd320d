//! The header-length estimate on real vocabularies: the first 64 KiB (what the npm package
//! reads first) of llama.cpp's own vocabulary GGUFs, with the whole files' sizes and data
//! offsets as gguf-py read them (fixtures/make_vocab_prefixes.py). The package then asks for
//! max(at_least, estimate × 1.05 + 32 KiB) (js/prefix.js): that must hold the whole header
//! (two requests in all) and stay within 1.1 × data offset + 64 KiB.

use gguf_lens::{parse, ParseStatus};
use serde_json::Value;

const DIR: &str = "fixtures/real/prefix";
const SLACK_FRACTION: f64 = 0.05;
const SLACK_BYTES: f64 = 32.0 * 1024.0;

fn cases() -> Vec<(String, Value)> {
    let text = std::fs::read_to_string(format!("{DIR}/expected.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc.as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[test]
fn second_read_holds_the_whole_header_within_the_byte_budget() {
    let cases = cases();
    assert_eq!(cases.len(), 4);
    for (name, expected) in cases {
        let prefix = std::fs::read(format!("{DIR}/ggml-vocab-{name}.64k")).unwrap();
        let file_size = expected["file_size"].as_u64().unwrap();
        let data_offset = expected["data_offset"].as_u64().unwrap() as f64;
        let ParseStatus::NeedMore { at_least, estimate } = parse(&prefix, Some(file_size)).unwrap()
        else {
            panic!("{name}: 64 KiB cannot hold the vocabulary");
        };
        let second = (at_least as f64).max(estimate as f64 * (1.0 + SLACK_FRACTION) + SLACK_BYTES);
        let budget = 1.1 * data_offset + 65536.0;
        assert!(
            second >= data_offset.min(file_size as f64),
            "{name}: second read to {second} stops before the header's end {data_offset}"
        );
        assert!(
            second <= budget,
            "{name}: second read to {second} is over 1.1 x {data_offset} + 64 KiB"
        );
    }
}
