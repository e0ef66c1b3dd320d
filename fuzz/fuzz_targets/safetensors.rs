//! A safetensors checkpoint as the CLI opens it: its quantization config, each shard's header
//! read from a seekable file (`SafetensorsFile::read_header`), the `Checkpoint` over the shards
//! with GPTQ layers discovered across them (`gptq::discover`), its summary and model view, then
//! rows of every plain tensor and every GPTQ layer dequantized from the shard that holds each
//! part. The input is sections cut at `\n--8<--\n`: first the config (`q` + a
//! quantize_config.json, `c` + a config.json, anything else: none), then up to four shards
//! (the corpus starts from fixtures/gptq and fixtures/diff, see scripts/fuzz.sh).
#![no_main]

use std::io::Cursor;

use gguf_lens::model::Checkpoint;
use gguf_lens::compare::ModelView;
use gguf_lens::gptq::{dequantize_rows, CheckpointFormat, LayerParts, QuantConfig, V1Zeros};
use gguf_lens::safetensors::{self, to_f32, SafetensorsFile};
use gguf_lens_fuzz::sections;
use libfuzzer_sys::fuzz_target;

/// Dequantize at most this many elements per call, to keep runs fast.
const MAX_ELEMENTS: u64 = 1 << 14;

fn slice(data: &[u8], range: std::ops::Range<u64>) -> &[u8] {
    &data[range.start as usize..range.end as usize]
}

/// The first and the last row of each plain tensor, through `rows_range`.
fn plain_rows(file: &SafetensorsFile, data: &[u8]) {
    for t in file.tensors() {
        assert!(
            file.data_range(t).end <= data.len() as u64,
            "tensors lie in the file"
        );
        if !t.dtype().is_plain() || t.row_len() > MAX_ELEMENTS || t.n_rows() == 0 {
            continue;
        }
        for row in [0, t.n_rows() - 1] {
            let range = file.rows_range(t, row..row + 1).expect("the row exists");
            let mut out = vec![0f32; t.row_len() as usize];
            to_f32(t.dtype(), t.name(), slice(data, range), &mut out)
                .expect("sizes were validated");
        }
        assert!(
            file.rows_range(t, 0..t.n_rows() + 1).is_err(),
            "past the last row"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let parts = sections(data, 5);
    let config = match parts[0].split_first() {
        Some((b'q', json)) => QuantConfig::from_quantize_config(json).ok(),
        Some((b'c', json)) => QuantConfig::from_config_json(json).ok().flatten(),
        _ => None,
    };
    let mut files = Vec::new();
    let mut bytes = Vec::new();
    for shard in &parts[1..] {
        if let Ok(safetensors::ParseStatus::NeedMore { at_least }) =
            safetensors::parse(shard, Some(shard.len() as u64))
        {
            panic!("the whole file was given, yet it needs {at_least} bytes");
        }
        let Ok(file) = SafetensorsFile::read_header(&mut Cursor::new(shard), shard.len() as u64)
        else {
            continue;
        };
        plain_rows(&file, shard);
        files.push(file);
        bytes.push(*shard);
    }
    if files.is_empty() {
        return;
    }
    let c = Checkpoint::new(files, config);
    let _ = c.summary();
    let _ = ModelView::checkpoint(&c);
    for e in c.layer_errors() {
        assert!(!e.to_string().contains('\n'), "an error is one line");
    }
    let format = c.checkpoint_format();
    for layer in c.layers() {
        let _ = c.layer_bytes(layer);
        let part = |suffix: &str| {
            let (i, t) = c
                .tensor(&layer.part(suffix))
                .expect("a layer has its parts");
            slice(bytes[i], c.shards()[i].data_range(t))
        };
        let parts = LayerParts {
            qweight: part("qweight"),
            qzeros: part("qzeros"),
            scales: part("scales"),
            g_idx: layer.has_g_idx.then(|| part("g_idx")),
        };
        if layer.in_features > MAX_ELEMENTS || layer.out_features == 0 {
            continue;
        }
        let last = layer.out_features - 1;
        for (rows, v1) in [
            (0..1, V1Zeros::Unmasked),
            (last..last + 1, V1Zeros::Wrapping),
        ] {
            let mut out = vec![0f32; layer.in_features as usize];
            let _ = dequantize_rows(layer, &parts, format, v1, rows, &mut out);
        }
        for f in [CheckpointFormat::V1, CheckpointFormat::V2] {
            let mut out = vec![0f32; layer.in_features as usize];
            let _ = dequantize_rows(layer, &parts, f, V1Zeros::Unmasked, 0..1, &mut out);
        }
    }
});
