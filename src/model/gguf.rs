//! A GGUF model as llama.cpp loads it: one file, or the shards of a split model
//! (`name-00001-of-00003.gguf` …). Metadata comes from the first shard (llama.cpp's split
//! convention: `split.no`, `split.count`, `split.tensors.count` there), tensors from every shard.
//! The CLI, the comparison views and (through wasm) the JS package read split models through it.

use super::Summary;
use crate::error::{Error, ErrorKind, Result};
use crate::gguf::{GgufFile, TensorInfo};
#[cfg(doc)]
use crate::safetensors::is_plain_file_name;
use crate::safetensors::not_plain_file_name;

/// One GGUF model over its shards, in order.
#[derive(Debug)]
pub struct GgufModel {
    shards: Vec<GgufFile>,
}

impl GgufModel {
    /// The shards of one model, in order. When the first shard has `split.count`, the number of
    /// shards must equal it and each shard's `split.no` (when present) its position; when it has
    /// `split.tensors.count`, the tensors of all shards must add up to it; no tensor name may
    /// repeat across shards.
    pub fn from_shards(shards: Vec<GgufFile>) -> Result<GgufModel> {
        let mut check = SplitCheck::default();
        for shard in &shards {
            check.add(shard)?;
        }
        check.finish()?;
        Ok(GgufModel { shards })
    }

    /// A single-file model.
    pub fn single(file: GgufFile) -> GgufModel {
        GgufModel { shards: vec![file] }
    }

    /// Adds the next shard without [`SplitCheck`]: for a front end that runs the check on
    /// shards it holds apart (the wasm API).
    pub fn push_shard(&mut self, file: GgufFile) {
        self.shards.push(file);
    }

    /// Every shard, in order (one for a single file).
    pub fn shards(&self) -> &[GgufFile] {
        &self.shards
    }

    /// The shard whose metadata describes the model.
    pub fn first(&self) -> &GgufFile {
        &self.shards[0]
    }

    /// The summary over every shard (see [`Summary::of_gguf_shards`]).
    pub fn summary(&self) -> Summary {
        let shards: Vec<&GgufFile> = self.shards.iter().collect();
        Summary::of_gguf_shards(&shards)
    }

    /// Every tensor with the index of the shard holding it, in shard then file order.
    pub fn tensors(&self) -> impl Iterator<Item = (usize, &TensorInfo)> + '_ {
        self.shards
            .iter()
            .enumerate()
            .flat_map(|(i, s)| s.tensors().iter().map(move |t| (i, t)))
    }

    /// The tensor named `name` and the index of its shard.
    pub fn tensor(&self, name: &str) -> Result<(usize, &TensorInfo)> {
        self.shards
            .iter()
            .enumerate()
            .find_map(|(i, s)| s.tensor(name).ok().map(|t| (i, t)))
            .ok_or_else(|| {
                Error::new(ErrorKind::NoSuchTensor {
                    name: name.to_string(),
                })
            })
    }
}

/// Checks, shard by shard in order, that GGUF files form one model (see
/// [`GgufModel::from_shards`]); the wasm API runs the same check on shards it holds apart.
#[derive(Debug, Default)]
pub struct SplitCheck {
    shards: usize,
    /// The first shard's `split.count` and `split.tensors.count`.
    count: Option<u64>,
    tensors_count: Option<u64>,
    tensors: u64,
    /// Tensor name → shard index, to refuse a name in two shards.
    names: std::collections::HashMap<String, usize>,
}

impl SplitCheck {
    /// The next shard.
    pub fn add(&mut self, shard: &GgufFile) -> Result<()> {
        let i = self.shards;
        if i == 0 {
            self.count = shard.get("split.count").and_then(|v| v.as_u64());
            self.tensors_count = shard.get("split.tensors.count").and_then(|v| v.as_u64());
        }
        if let Some(no) = shard.get("split.no").and_then(|v| v.as_u64()) {
            if no != i as u64 {
                return Err(bad_split(i, format!("split.no is {no}, expected {i}")));
            }
        }
        for t in shard.tensors() {
            if let Some(before) = self.names.insert(t.name().to_string(), i) {
                return Err(bad_split(
                    i,
                    format!("tensor {} is also in shard {}", t.name(), before + 1),
                ));
            }
        }
        self.tensors += shard.tensors().len() as u64;
        self.shards += 1;
        Ok(())
    }

    /// After the last shard: the counts the first shard announced.
    pub fn finish(&self) -> Result<()> {
        match self.count {
            None if self.shards == 0 => return Err(bad_split(0, "no shards".to_string())),
            None if self.shards > 1 => {
                return Err(bad_split(
                    0,
                    format!(
                        "{} shards given but the first has no split.count",
                        self.shards
                    ),
                ))
            }
            Some(count) if count != self.shards as u64 => {
                return Err(bad_split(
                    0,
                    format!(
                        "split.count is {count} but {} shards were given",
                        self.shards
                    ),
                ))
            }
            _ => {}
        }
        match self.tensors_count {
            Some(want) if want != self.tensors => Err(bad_split(
                0,
                format!(
                    "split.tensors.count is {want} but the shards hold {} tensors",
                    self.tensors
                ),
            )),
            _ => Ok(()),
        }
    }
}

fn bad_split(index: usize, message: String) -> Error {
    Error::new(ErrorKind::BadSplit {
        shard: format!("{} of the model", index + 1),
        message,
    })
}

/// The paths of every shard when `path` names one shard of a split model by llama.cpp's rule
/// (`PREFIX-NNNNN-of-MMMMM.gguf`, five digits each, 1 ≤ N ≤ M), in order; None otherwise.
/// Only the file name is read: every shard's name is a plain file name (see
/// [`is_plain_file_name`]) in `path`'s directory, else a [`ErrorKind::BadSplit`] naming it.
pub fn split_paths(path: &str) -> Result<Option<Vec<String>>> {
    let path = std::path::Path::new(path);
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return Ok(None);
    };
    let Some(names) = split_names(name) else {
        return Ok(None);
    };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    names
        .into_iter()
        .map(|shard| match not_plain_file_name(&shard) {
            Some(why) => Err(Error::new(ErrorKind::BadSplit {
                shard: format!("{shard:?}"),
                message: format!("not a plain file name ({why})"),
            })),
            None => Ok(match dir {
                Some(dir) => dir.join(&shard).to_string_lossy().into_owned(),
                None => shard,
            }),
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

/// Every shard's file name when `name` (a file name) is one of them.
fn split_names(name: &str) -> Option<Vec<String>> {
    let stem = name.strip_suffix(".gguf")?;
    let (rest, total) = stem.rsplit_once("-of-")?;
    let (prefix, number) = rest.rsplit_once('-')?;
    let five_digits = |s: &str| s.len() == 5 && s.bytes().all(|b| b.is_ascii_digit());
    if !five_digits(number) || !five_digits(total) {
        return None;
    }
    let (number, total): (u32, u32) = (number.parse().ok()?, total.parse().ok()?);
    if number == 0 || number > total {
        return None;
    }
    Some(
        (1..=total)
            .map(|i| format!("{prefix}-{i:05}-of-{total:05}.gguf"))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_names_follow_llama_cpp() {
        assert_eq!(
            split_paths("dir/m-Q4_K-00002-of-00003.gguf")
                .unwrap()
                .unwrap(),
            [
                "dir/m-Q4_K-00001-of-00003.gguf",
                "dir/m-Q4_K-00002-of-00003.gguf",
                "dir/m-Q4_K-00003-of-00003.gguf"
            ]
        );
        for none in [
            "m.gguf",
            "m-0001-of-0003.gguf",
            "m-00004-of-00003.gguf",
            "m-00000-of-00003.gguf",
            "m-00001-of-00003.bin",
            // The pattern is read in the file name only, never across directories.
            "a-00001-of-00002.gguf/b.gguf",
        ] {
            assert_eq!(split_paths(none).unwrap(), None, "{none}");
        }
    }

    #[test]
    fn split_names_stay_in_the_directory() {
        // The name part only varies by its numbers: a prefix that is not a plain name is
        // refused, naming the shard.
        let err = split_paths("dir/https:evil:1-00001-of-00002.gguf").unwrap_err();
        assert!(
            err.to_string().contains("https:evil:1-00001-of-00002.gguf"),
            "{err}"
        );
        assert!(err.to_string().contains("not a plain file name"), "{err}");
        assert!(split_paths("C:m-00001-of-00002.gguf").is_err());
        assert_eq!(
            split_paths("m-00001-of-00002.gguf").unwrap().unwrap(),
            ["m-00001-of-00002.gguf", "m-00002-of-00002.gguf"]
        );
    }
}
