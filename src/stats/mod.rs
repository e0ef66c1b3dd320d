//! Statistics of tensor values: counts, range, mean and standard deviation, a histogram with
//! numpy's bin rule over exactly `[min, max]`, and exact percentiles, computed in two passes
//! straight from the dequantized pieces and merged in a fixed order (the same bits for any chunk
//! size, thread count or number of workers). [`StatsJob`] is the engine; [`run_native`] drives it
//! over any row reader on every core; `tensor_stats` runs it over a model's tensor.

mod affine;
mod codes;
mod counted;
mod histogram;
mod job;
mod kernels;
mod layout;
mod moments;
mod pass2;
mod percentiles;
mod planes;
mod quantized;
mod scaled;
mod state;
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
mod tensor;
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
mod threads;

pub use histogram::Histogram;
pub use job::{Pass, StatsJob, StatsReport, StatsRequest, CELL_ELEMENTS, PIECE};
pub use moments::Moments;
pub use percentiles::PERCENTILES;
pub use quantized::add_gguf_rows;
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub use tensor::{tensor_stats, Reading, TensorStats};
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub use threads::{run_native, ReadRows};
