//! Hashing a GGUF file natively: the lanes are spread over threads by cost; while they hash one
//! batch of tensor bytes, this thread reads the next.

use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;

use super::{lanes, report, Algorithms, HashReport, Lane};
use crate::error::Result;
use crate::gguf::GgufFile;

/// Bytes read per batch (several small tensors share one).
const BATCH_BYTES: usize = 16 << 20;

/// Bytes of several tensors (or part of one): `segments` are ranges of `bytes`, each marked when
/// it is the last part of its tensor.
#[derive(Default)]
struct Batch {
    bytes: Vec<u8>,
    segments: Vec<(Range<usize>, bool)>,
}

/// Where the reading is: tensor index and bytes of it already read.
struct Cursor {
    ranges: Vec<Range<u64>>,
    tensor: usize,
    done_in_tensor: u64,
}

impl Cursor {
    /// Fills `batch` with the next bytes; false when all are read.
    fn fill<R: Read + Seek>(&mut self, reader: &mut R, batch: &mut Batch) -> Result<bool> {
        batch.bytes.clear();
        batch.segments.clear();
        while self.tensor < self.ranges.len() && batch.bytes.len() < BATCH_BYTES {
            let range = &self.ranges[self.tensor];
            let left = range.end - range.start - self.done_in_tensor;
            let room = (BATCH_BYTES - batch.bytes.len()) as u64;
            let take = left.min(room);
            let start = batch.bytes.len();
            let take_usize: usize = take.try_into().unwrap_or(usize::MAX);
            batch.bytes.resize(start + take_usize, 0);
            reader.seek(SeekFrom::Start(range.start + self.done_in_tensor))?;
            reader.read_exact(&mut batch.bytes[start..])?;
            self.done_in_tensor += take;
            let ends = self.done_in_tensor == range.end - range.start;
            batch.segments.push((start..start + take_usize, ends));
            if ends {
                self.tensor += 1;
                self.done_in_tensor = 0;
            }
        }
        Ok(!batch.segments.is_empty())
    }
}

fn process(group: &mut [Lane], batch: &Batch) {
    for lane in group.iter_mut() {
        for (range, ends) in &batch.segments {
            lane.update(&batch.bytes[range.clone()]);
            if *ends {
                lane.end_tensor();
            }
        }
    }
}

/// Spreads lanes over at most `threads` groups, the costliest first onto the least loaded.
fn groups(mut all: Vec<Lane>, threads: usize) -> Vec<Vec<Lane>> {
    let n = threads.clamp(1, all.len().max(1));
    all.sort_by_key(|lane| std::cmp::Reverse(lane.algorithm().cost()));
    let mut groups: Vec<(u32, Vec<Lane>)> = (0..n).map(|_| (0, Vec::new())).collect();
    for lane in all {
        let least = groups
            .iter_mut()
            .min_by_key(|(load, _)| *load)
            .expect("at least one group");
        least.0 += lane.algorithm().cost();
        least.1.push(lane);
    }
    groups.into_iter().map(|(_, lanes)| lanes).collect()
}

/// Hashes every tensor of `file` (read from `reader`, the whole file) on `threads` threads,
/// calling `progress(bytes done, bytes in all)` after each batch.
pub fn hash_file<R: Read + Seek + Send>(
    reader: &mut R,
    file: &GgufFile,
    algorithms: Algorithms,
    per_tensor: bool,
    threads: usize,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<HashReport> {
    let ranges: Vec<Range<u64>> = file
        .tensors()
        .iter()
        .map(|t| file.tensor_range(t))
        .collect();
    let names: Vec<String> = file
        .tensors()
        .iter()
        .map(|t| t.name().to_string())
        .collect();
    let total: u64 = ranges.iter().map(|r| r.end - r.start).sum();
    let mut groups = groups(lanes(algorithms, per_tensor), threads);
    let mut cursor = Cursor {
        ranges,
        tensor: 0,
        done_in_tensor: 0,
    };
    let mut batch = Batch::default();
    let mut next = Batch::default();
    let mut more = cursor.fill(reader, &mut batch)?;
    let mut done = 0u64;
    while more {
        if groups.len() == 1 {
            process(&mut groups[0], &batch);
            more = cursor.fill(reader, &mut next)?;
        } else {
            let current = &batch;
            let fill = || cursor.fill(reader, &mut next);
            more = crate::threads::run_each(
                groups.iter_mut().collect(),
                |group| process(group, current),
                fill,
            )
            .1?;
        }
        done += batch.bytes.len() as u64;
        progress(done, total);
        std::mem::swap(&mut batch, &mut next);
    }
    Ok(report(groups.into_iter().flatten().collect(), names))
}
