//! Reading a whole tensor through `Model::rows` the way the layer tests check it.

use gguf_lens::gptq::V1Zeros;
use gguf_lens::model::{Model, Shards};
use gguf_lens::quant::Kernel;

/// Every row of `name`, in chunks of `step` rows, alternating between two readers (so a
/// reader's state from one chunk cannot leak into the next).
pub fn read_all(model: &Model, shards: &dyn Shards, name: &str, step: u64) -> Vec<f32> {
    let kernel = Kernel::auto().unwrap();
    let mut first = model
        .rows(name, shards, kernel, V1Zeros::default())
        .unwrap();
    let mut second = first.another().unwrap();
    let (n, mut start, mut out) = (first.n_rows(), 0, Vec::new());
    while start < n {
        let end = (start + step).min(n);
        let reader = if (start / step) % 2 == 0 {
            &mut first
        } else {
            &mut second
        };
        out.extend_from_slice(reader.read(start..end).unwrap());
        start = end;
    }
    out
}

/// Tensor `name`'s f32 values in the safetensors file at `path`, decoded here from the bytes.
pub fn expected_f32(path: &std::path::Path, name: &str) -> Vec<f32> {
    let bytes = std::fs::read(path).unwrap();
    let file = gguf_lens::safetensors::SafetensorsFile::from_bytes(&bytes).unwrap();
    let t = file.get(name).unwrap();
    assert_eq!(t.dtype().name(), "F32");
    let r = file.data_range(t);
    bytes[r.start as usize..r.end as usize]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

/// The checkpoint a test opened (a GGUF model fails the test).
pub fn checkpoint(opened: &gguf_lens::model::Opened) -> &gguf_lens::model::Checkpoint {
    match &opened.model {
        Model::Safetensors(c) => c,
        Model::Gguf(_) => panic!("a checkpoint"),
    }
}

pub fn bits(values: &[f32]) -> Vec<u32> {
    values.iter().map(|v| v.to_bits()).collect()
}
