//! The data section: the parser already refuses misaligned, overlapping and out-of-file tensor
//! data; what it accepts may still leave unused bytes between tensors (gguf-py and ggml write
//! each tensor right after the previous one's padding), or after the last one.

use super::Finding;
use crate::gguf::GgufFile;

pub(super) fn check(file: &GgufFile, shard: Option<u32>, findings: &mut Vec<Finding>) {
    let align = file.alignment();
    let mut by_offset: Vec<_> = file.tensors().iter().filter(|t| t.n_bytes() > 0).collect();
    by_offset.sort_by_key(|t| t.offset());
    // Where the next tensor should start: the previous end padded to the alignment.
    let mut expected = 0u64;
    let mut previous: Option<&str> = None;
    for t in &by_offset {
        if t.offset() > expected {
            let after = previous.map_or("the start of the data section".to_string(), |p| {
                format!("tensor {p}")
            });
            findings.push(
                Finding::warning(
                    "tensor-data-gap",
                    format!(
                        "{} unused bytes between {after} and this tensor's data (data offset {})",
                        t.offset() - expected,
                        t.offset()
                    ),
                )
                .at(Some(file.data_offset().saturating_add(expected)))
                .tensor(t.name())
                .in_shard(shard),
            );
        }
        // Parse checked offset + n_bytes against the file; saturate anyway.
        let end = t.offset().saturating_add(t.n_bytes());
        expected = expected.max(end.checked_next_multiple_of(align).unwrap_or(end));
        previous = Some(t.name());
    }
    let Some(size) = file.file_size() else {
        return;
    };
    let used_end = file.data_offset().saturating_add(expected);
    if !by_offset.is_empty() && size > used_end {
        findings.push(
            Finding::warning(
                "trailing-data",
                format!(
                    "{} bytes after the last tensor's data (and its padding) belong to no tensor",
                    size - used_end
                ),
            )
            .at(Some(used_end))
            .in_shard(shard),
        );
    }
}
