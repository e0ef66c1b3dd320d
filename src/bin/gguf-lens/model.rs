//! A model file for `stats` and `diff`: a GGUF file or a safetensors checkpoint, its tensors
//! listed with their logical shape, and any of them read as f32 rows.
//!
//! Logical shapes are row-major, outermost first: a safetensors shape as stored, a GGUF shape
//! reversed (GGUF lists ggml's `[ne0, ne1, ...]`, innermost first), so a GGUF `[4096, 11008]`
//! and a safetensors `[11008, 4096]` are the same logical `[11008, 4096]`. A row is the last
//! logical dimension in both (`ne0`), so rows line up across formats.
//!
//! A checkpoint's tensors are its plain tensors plus one `<layer>.weight` of logical shape
//! `[out_features, in_features]` and type `GPTQ-<bits>bit` per GPTQ layer, in place of the
//! layer's `qweight`, `qzeros`, `scales` and `g_idx` (resolved as `dequant` resolves names),
//! sorted by name.

use std::fs::File;
use std::ops::Range;

use gguf_lens::gguf::{read_header, GgufFile, RowReader, TensorInfo};
use gguf_lens::gptq::V1Zeros;
use gguf_lens::{Kernel, Result};

use crate::checkpoint::Checkpoint;
use crate::st_dequant::{gptq_type_name, StTensor};
use crate::{exit_2, fatal, is_safetensors, open, Failure};

pub enum Model {
    Gguf { reader: File, file: GgufFile },
    Safetensors(Checkpoint),
}

/// A tensor as `diff` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub type_name: String,
    /// Row-major, outermost first (see the module's doc).
    pub shape: Vec<u64>,
    /// The name in the file when `name` is another (`diff --llama-names`).
    pub file_name: Option<String>,
}

/// The GPTQ parts listed under their layer's `<layer>.weight` instead.
const GPTQ_PARTS: [&str; 4] = ["qweight", "qzeros", "scales", "g_idx"];

impl Model {
    /// Opens `path` as a GGUF file or a safetensors checkpoint; errors name the file (exit 2).
    pub fn open(path: &str) -> std::result::Result<Model, Failure> {
        if is_safetensors(path) {
            let checkpoint = Checkpoint::open(path).map_err(fatal(path))?;
            return Ok(Model::Safetensors(checkpoint));
        }
        let (mut reader, size) = open(path).map_err(exit_2(path))?;
        let file = read_header(&mut reader, size).map_err(fatal(path))?;
        Ok(Model::Gguf { reader, file })
    }

    pub fn format(&self) -> &'static str {
        match self {
            Model::Gguf { .. } => "gguf",
            Model::Safetensors(_) => "safetensors",
        }
    }

    /// Every tensor with its logical shape: a GGUF file's in file order, a checkpoint's sorted
    /// by name (header order is a JSON object's, and shards split it).
    pub fn tensors(&self) -> Vec<Entry> {
        match self {
            Model::Gguf { file, .. } => file
                .tensors()
                .iter()
                .map(|t| Entry {
                    name: t.name().to_string(),
                    type_name: t.ggml_type().name().to_string(),
                    shape: t.dims().iter().rev().copied().collect(),
                    file_name: None,
                })
                .collect(),
            Model::Safetensors(c) => {
                let is_part = |name: &str| {
                    name.rsplit_once('.').is_some_and(|(layer, part)| {
                        GPTQ_PARTS.contains(&part) && c.layers.iter().any(|l| l.name == layer)
                    })
                };
                let mut out = Vec::new();
                for t in c.shards.iter().flat_map(|s| s.file.tensors()) {
                    if let Some(layer) = t
                        .name()
                        .strip_suffix(".qweight")
                        .and_then(|n| c.layers.iter().find(|l| l.name == n))
                    {
                        out.push(Entry {
                            name: format!("{}.weight", layer.name),
                            type_name: gptq_type_name(layer),
                            shape: vec![layer.out_features, layer.in_features],
                            file_name: None,
                        });
                    } else if !is_part(t.name()) {
                        out.push(Entry {
                            name: t.name().to_string(),
                            type_name: t.dtype().name().to_string(),
                            shape: t.shape().to_vec(),
                            file_name: None,
                        });
                    }
                }
                out.sort_by(|x, y| x.name.cmp(&y.name));
                out
            }
        }
    }

    /// `__metadata__` of a checkpoint (shards in order, the first value of a key kept); None
    /// for GGUF.
    pub fn st_metadata(&self) -> Option<Vec<(String, String)>> {
        let Model::Safetensors(c) = self else {
            return None;
        };
        let mut out: Vec<(String, String)> = Vec::new();
        for (key, value) in c.shards.iter().flat_map(|s| s.file.metadata()) {
            if !out.iter().any(|(k, _)| k == key) {
                out.push((key.clone(), value.clone()));
            }
        }
        Some(out)
    }

    /// A reader of `name`'s rows (a GPTQ layer: v1 zeros read `unmasked`, as `dequant`'s
    /// default).
    pub fn rows(&mut self, name: &str, kernel: Kernel) -> Result<Rows<'_>> {
        let inner = match self {
            Model::Gguf { reader, file } => {
                let file: &GgufFile = file;
                let tensor = file.tensor(name)?;
                Inner::Gguf {
                    reader,
                    file,
                    tensor,
                    rows: RowReader::new(file, tensor, kernel),
                }
            }
            Model::Safetensors(c) => Inner::St {
                tensor: StTensor::resolve(c, name, V1Zeros::default())?,
                values: Vec::new(),
            },
        };
        Ok(Rows { inner })
    }
}

enum Inner<'m> {
    Gguf {
        reader: &'m mut File,
        file: &'m GgufFile,
        tensor: &'m TensorInfo,
        rows: RowReader<'m>,
    },
    St {
        tensor: StTensor<'m>,
        values: Vec<f32>,
    },
}

/// One tensor's values, row by row.
pub struct Rows<'m> {
    inner: Inner<'m>,
}

impl Rows<'_> {
    /// The type name: ggml's, the safetensors dtype's or `GPTQ-<bits>bit`.
    pub fn type_name(&self) -> String {
        match &self.inner {
            Inner::Gguf { tensor, .. } => tensor.ggml_type().name().to_string(),
            Inner::St { tensor, .. } => tensor.type_name(),
        }
    }

    /// The shape as the file gives it: GGUF order for GGUF, row-major for safetensors.
    pub fn file_shape(&self) -> Vec<u64> {
        match &self.inner {
            Inner::Gguf { tensor, .. } => tensor.dims().to_vec(),
            Inner::St { tensor, .. } => tensor.shape(),
        }
    }

    /// The logical (row-major) shape.
    pub fn shape(&self) -> Vec<u64> {
        match &self.inner {
            Inner::Gguf { tensor, .. } => tensor.dims().iter().rev().copied().collect(),
            Inner::St { tensor, .. } => tensor.shape(),
        }
    }

    pub fn n_rows(&self) -> u64 {
        match &self.inner {
            Inner::Gguf { tensor, .. } => tensor.n_rows(),
            Inner::St { tensor, .. } => tensor.n_rows(),
        }
    }

    /// Rows per chunk of at most `max_elements` values (at least one row).
    pub fn rows_per_chunk(&self, max_elements: u64) -> u64 {
        match &self.inner {
            Inner::Gguf { rows, .. } => rows.rows_per_chunk(max_elements),
            Inner::St { tensor, .. } => tensor.rows_per_chunk(max_elements),
        }
    }

    /// Checks that `rows` can be read.
    pub fn check_rows(&self, rows: Range<u64>) -> Result<()> {
        match &self.inner {
            Inner::Gguf { file, tensor, .. } => file.rows_range(tensor, rows).map(|_| ()),
            Inner::St { tensor, .. } => tensor.check_rows(rows),
        }
    }

    /// The values of rows `rows`.
    pub fn read(&mut self, rows: Range<u64>) -> Result<&[f32]> {
        match &mut self.inner {
            Inner::Gguf {
                reader, rows: r, ..
            } => r.read(*reader, rows),
            Inner::St { tensor, values } => {
                tensor.read_rows(rows, values)?;
                Ok(values)
            }
        }
    }
}
