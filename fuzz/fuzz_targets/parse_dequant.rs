//! Any bytes: parse as a whole file and as a prefix of unknown length, walk every metadata
//! value, and dequantize every tensor; the same bytes as a safetensors file (plain tensors and
//! GPTQ layers); lint the bytes. Nothing may panic, hang or allocate past the input.
#![no_main]

use gguf_lens::gguf::{parse, ArrayView, ParseStatus, Value};
use gguf_lens::gptq::{dequantize_rows, find_layers, CheckpointFormat, LayerParts, V1Zeros};
use gguf_lens::safetensors::{self, to_f32, SafetensorsFile};
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

fn slice(data: &[u8], range: std::ops::Range<u64>) -> &[u8] {
    &data[range.start as usize..range.end as usize]
}

fn safetensors(data: &[u8]) {
    if let Ok(safetensors::ParseStatus::NeedMore { at_least }) = safetensors::parse(data, None) {
        assert!(at_least > data.len() as u64);
    }
    let Ok(file) = SafetensorsFile::from_bytes(data) else {
        return;
    };
    for t in file.tensors() {
        let range = file.data_range(t);
        assert!(
            range.end <= data.len() as u64,
            "validated tensors lie inside the file"
        );
        if t.n_elements() <= MAX_ELEMENTS && t.dtype().is_plain() {
            let mut out = vec![0f32; t.n_elements() as usize];
            to_f32(t.dtype(), t.name(), slice(data, range), &mut out)
                .expect("sizes were validated");
        }
    }
    let Ok(layers) = find_layers(&file, None) else {
        return;
    };
    for layer in layers {
        let part = |suffix: &str| {
            file.get(&layer.part(suffix))
                .map(|t| slice(data, file.data_range(t)))
        };
        let (Some(qweight), Some(qzeros), Some(scales)) =
            (part("qweight"), part("qzeros"), part("scales"))
        else {
            panic!("a layer has its parts");
        };
        let parts = LayerParts {
            qweight,
            qzeros,
            scales,
            g_idx: part("g_idx"),
        };
        let rows = layer.out_features.min(4);
        if rows * layer.in_features > MAX_ELEMENTS {
            continue;
        }
        let mut out = vec![0f32; (rows * layer.in_features) as usize];
        let _ = dequantize_rows(
            &layer,
            &parts,
            CheckpointFormat::V1,
            V1Zeros::Wrapping,
            0..rows,
            &mut out,
        );
    }
}

fuzz_target!(|data: &[u8]| {
    safetensors(data);
    // Lint: any bytes give a report (a refused header is one finding), never a panic or hang.
    let report = gguf_lens::lint::lint_bytes(data, data.len() as u64);
    assert!(report.need_more.is_none(), "the whole file was given");
    if let Ok(ParseStatus::NeedMore { at_least, .. }) = parse(data, None) {
        assert!(at_least > data.len() as u64);
    }
    let Ok(file) = GgufFile::from_bytes(data) else {
        return;
    };
    for (_, value) in file.metadata() {
        walk(&value, 0);
    }
    for tensor in file.tensors() {
        if tensor.n_elements() > MAX_ELEMENTS {
            continue;
        }
        let bytes = file
            .tensor_data(data, tensor)
            .expect("validated tensors lie inside the file");
        let mut out = vec![0f32; tensor.n_elements() as usize];
        let _ = file.dequantize_rows(tensor, bytes, &mut out);
        if tensor.n_rows() > 0 {
            let rows = file.rows_range(tensor, 0..1).expect("row 0 exists");
            assert!(rows.end <= data.len() as u64);
        }
    }
});
