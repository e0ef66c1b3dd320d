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

use gguf_lens::compare::{Layout, ModelView};
use gguf_lens::gguf::{read_header, GgufFile, RowReader, TensorInfo};
use gguf_lens::gptq::V1Zeros;
use gguf_lens::model::{split_paths, GgufModel};
use gguf_lens::{Kernel, Result};

use crate::checkpoint::Checkpoint;
use crate::st_dequant::StTensor;
use crate::{is_safetensors, named, open, Failure};

pub enum Model {
    /// One GGUF file, or every shard of a split model (one reader per shard, in order).
    Gguf {
        readers: Vec<File>,
        model: GgufModel,
        /// Each shard's path (threads open their own handles).
        paths: Vec<String>,
    },
    Safetensors(Box<Checkpoint>),
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

impl Model {
    /// Opens `path` as a GGUF file or a safetensors checkpoint; errors name the file.
    /// A path named as a shard of a split model (`…-00001-of-00003.gguf`) opens every shard.
    pub fn open(path: &str) -> std::result::Result<Model, Failure> {
        if is_safetensors(path) {
            let checkpoint = Checkpoint::open(path).map_err(named(path))?;
            return Ok(Model::Safetensors(Box::new(checkpoint)));
        }
        let (readers, model, paths) = open_gguf(path)?;
        Ok(Model::Gguf {
            readers,
            model,
            paths,
        })
    }

    pub fn format(&self) -> &'static str {
        match self {
            Model::Gguf { .. } => "gguf",
            Model::Safetensors(_) => "safetensors",
        }
    }

    /// The core's view of the model for comparing across formats (logical shapes, type names).
    pub fn view(&self) -> ModelView<'_> {
        match self {
            Model::Gguf { model, .. } => {
                let shards: Vec<&GgufFile> = model.shards().iter().collect();
                ModelView::gguf(&shards, Layout::Logical)
            }
            Model::Safetensors(c) => ModelView::checkpoint(&c.model),
        }
    }

    /// Every tensor with its logical shape: a GGUF file's in file order, a checkpoint's sorted
    /// by name (header order is a JSON object's, and shards split it); see [`ModelView`].
    pub fn tensors(&self) -> Vec<Entry> {
        self.view()
            .tensors
            .into_iter()
            .map(|t| Entry {
                type_name: t.ty.name().to_string(),
                name: t.name,
                shape: t.shape,
                file_name: None,
            })
            .collect()
    }

    /// A reader of `name`'s rows (a GPTQ layer: v1 zeros read `unmasked`, as `dequant`'s
    /// default).
    pub fn rows(&mut self, name: &str, kernel: Kernel) -> Result<Rows<'_>> {
        let inner = match self {
            Model::Gguf { readers, model, .. } => {
                let (shard, tensor) = model.tensor(name)?;
                let file = &model.shards()[shard];
                Inner::Gguf {
                    reader: &mut readers[shard],
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

    /// The logical (row-major) shape.
    pub fn shape(&self) -> Vec<u64> {
        match &self.inner {
            Inner::Gguf { tensor, .. } => tensor.dims().iter().rev().copied().collect(),
            Inner::St { tensor, .. } => tensor.shape(),
        }
    }

    /// Values per row.
    pub fn row_len(&self) -> u64 {
        match &self.inner {
            Inner::Gguf { tensor, .. } => tensor.row_len(),
            Inner::St { tensor, .. } => tensor.row_len(),
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

/// A GGUF file, or every shard of the split model `path` names one shard of (read from the
/// shard names by llama.cpp's rule; see [`split_paths`]), with one reader and the path of each
/// shard. An error names the shard it is about.
pub fn open_gguf(path: &str) -> std::result::Result<(Vec<File>, GgufModel, Vec<String>), Failure> {
    let paths = split_paths(path)?.unwrap_or_else(|| vec![path.to_string()]);
    let mut readers = Vec::with_capacity(paths.len());
    let mut shards = Vec::with_capacity(paths.len());
    for shard in &paths {
        let (mut reader, size) = open(shard)?;
        let file = read_header(&mut reader, size).map_err(named(shard))?;
        readers.push(reader);
        shards.push(file);
    }
    let model = GgufModel::from_shards(shards)?;
    Ok((readers, model, paths))
}
