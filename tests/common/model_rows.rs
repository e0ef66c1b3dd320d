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
