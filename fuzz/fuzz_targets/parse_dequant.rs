//! Any bytes: parse as a whole file and as a prefix of unknown length, walk every metadata
//! value, and dequantize every tensor. Nothing may panic, hang or allocate past the input.
#![no_main]

use gguf_lens::gguf::{parse, ArrayView, ParseStatus, Value};
use gguf_lens::GgufFile;
use libfuzzer_sys::fuzz_target;

/// Dequantize at most this many elements per tensor, to keep runs fast.
const MAX_ELEMENTS: u64 = 1 << 16;

fn walk(value: &Value<'_>, depth: u32) {
    match value {
        Value::String(s) => {
            let _ = s.to_str();
        }
        Value::Array(array) => walk_array(array, depth),
        _ => {}
    }
}

fn walk_array(array: &ArrayView<'_>, depth: u32) {
    for item in array.iter() {
        walk(&item, depth + 1);
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(ParseStatus::NeedMore { at_least, .. }) = parse(data, None) {
        assert!(at_least > data.len() as u64);
    }
    let Ok(file) = GgufFile::from_bytes(data) else { return };
    for (_, value) in file.metadata() {
        walk(&value, 0);
    }
    for tensor in file.tensors() {
        if tensor.n_elements() > MAX_ELEMENTS {
            continue;
        }
        let bytes = file.tensor_data(data, tensor).expect("validated tensors lie inside the file");
        let mut out = vec![0f32; tensor.n_elements() as usize];
        let _ = file.dequantize_rows(tensor, bytes, &mut out);
        if tensor.n_rows() > 0 {
            let rows = file.rows_range(tensor, 0..1).expect("row 0 exists");
            assert!(rows.end <= data.len() as u64);
        }
    }
});
