//! Runs a [`StatsJob`] natively on several threads: each pass's rows are cut into one run of
//! whole grid cells per thread, each thread reads and feeds its own part, and the parts are
//! absorbed in order (the job's result does not depend on how many threads there were).

use std::ops::Range;

use super::job::{Pass, StatsJob};
use crate::error::Result;
use crate::gguf::row_chunks;

/// A source of a tensor's values, one per thread (its own buffers and file handle).
pub trait ReadRows {
    /// Adds the values of rows `rows` to `job` ([`StatsJob::add`], or [`StatsJob::add_with`] to
    /// dequantize piece by piece into a small buffer as the job reads them).
    fn add_to(&mut self, job: &mut StatsJob, rows: Range<u64>) -> Result<()>;
}

/// Runs `job` to the end on `threads` threads (at least one), reading at most about
/// `chunk_elements` values at a time with readers from `new_reader`.
pub fn run_native<R, F>(
    job: &mut StatsJob,
    threads: usize,
    chunk_elements: u64,
    new_reader: F,
) -> Result<()>
where
    R: ReadRows,
    F: Fn() -> Result<R> + Sync,
{
    let threads = threads.max(1);
    while job.pass() != Pass::Done {
        let parts = job.parts(threads);
        let step = job.chunk_rows(chunk_elements);
        let forks: Vec<Result<StatsJob>> = if parts.len() <= 1 {
            parts
                .into_iter()
                .map(|rows| feed(job.fork(), rows, step, &new_reader))
                .collect()
        } else {
            let template = &*job;
            crate::threads::run_each(
                parts,
                |rows| feed(template.fork(), rows, step, &new_reader),
                || (),
            )
            .0
        };
        for part in forks {
            job.absorb(part?);
        }
        job.finish_pass()?;
    }
    Ok(())
}

/// One thread's part: its rows read chunk by chunk and fed to a fork of the job.
fn feed<R: ReadRows>(
    mut part: StatsJob,
    rows: Range<u64>,
    step: u64,
    new_reader: &impl Fn() -> Result<R>,
) -> Result<StatsJob> {
    let mut reader = new_reader()?;
    for chunk in row_chunks(rows, step) {
        reader.add_to(&mut part, chunk)?;
    }
    Ok(part)
}
