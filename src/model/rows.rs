//! A tensor of any storage as f32 rows: a GGUF tensor (dequantized as ggml does), a plain
//! safetensors tensor (rows: its last dimension), a GPTQ layer (rows: output features,
//! `[out_features, in_features]`), an MLX layer (rows: its last logical dimension) or an FP8
//! block-scaled layer (rows: output features), the last two read by row ranges of their parts.
//! The bytes come from a [`Shards`].

use std::io::{Cursor, Read, Seek};
use std::ops::Range;
use std::sync::Arc;

use super::{Checkpoint, GgufModel};
use crate::bnb::{BnbLayer, BnbParts};
use crate::ct::{CtFormat, CtLayer};
use crate::error::{Error, ErrorKind, Result};
use crate::fp8::Fp8Layer;
use crate::gguf::{read_range, read_range_into, GgufFile, RowReader, TensorInfo};
use crate::gptq::{dequantize_rows, CheckpointFormat, GptqLayer, LayerParts, V1Zeros};
use crate::mlx::MlxLayer;
use crate::mxfp4::Mxfp4Layer;
use crate::quant::{AlignedF32, Kernel};
use crate::safetensors::{to_f32, SafetensorsFile, Tensor};

/// A reader of one shard's bytes.
pub trait ReadSeek: Read + Seek + Send {}
impl<T: Read + Seek + Send> ReadSeek for T {}

/// Where a model's bytes are: one reader per shard, opened on demand (each reader of a tensor
/// opens its own, so threads read side by side).
pub trait Shards: Sync {
    /// A reader of shard `shard` (0 for a single file), positioned anywhere.
    fn open(&self, shard: usize) -> Result<Box<dyn ReadSeek + '_>>;
}

/// Shards held in memory, in order.
impl<T: AsRef<[u8]> + Sync> Shards for Vec<T> {
    fn open(&self, shard: usize) -> Result<Box<dyn ReadSeek + '_>> {
        let bytes = self.get(shard).ok_or_else(|| {
            Error::new(ErrorKind::InvalidRequest {
                message: format!("no shard {shard}"),
            })
        })?;
        Ok(Box::new(Cursor::new(bytes.as_ref())))
    }
}

/// The parts of a GPTQ layer, read whole (shared by the readers of one layer).
struct GptqParts {
    qweight: Vec<u8>,
    qzeros: Vec<u8>,
    scales: Vec<u8>,
    g_idx: Option<Vec<u8>>,
    format: CheckpointFormat,
    v1: V1Zeros,
}

/// One stored part of an MLX or FP8 layer, read by rows: its file and tensor, this reader's handle of its shard, and
/// the bytes last read.
struct PartRows<'m> {
    file: &'m SafetensorsFile,
    tensor: &'m Tensor,
    input: Input<'m>,
    bytes: Vec<u8>,
}

impl<'m> PartRows<'m> {
    fn new(c: &'m Checkpoint, name: String, shards: &'m dyn Shards) -> Result<PartRows<'m>> {
        let Some((shard, tensor)) = c.tensor(&name) else {
            return Err(Error::new(ErrorKind::NoSuchTensor { name }));
        };
        Ok(PartRows {
            file: &c.shards()[shard],
            tensor,
            input: open(shards, shard)?,
            bytes: Vec::new(),
        })
    }

    fn another(&self, shards: &'m dyn Shards) -> Result<PartRows<'m>> {
        Ok(PartRows {
            file: self.file,
            tensor: self.tensor,
            input: open(shards, self.input.shard)?,
            bytes: Vec::new(),
        })
    }

    /// Reads the elements `elements` of the part, whatever its shape (a bitsandbytes part
    /// is a flat run of bytes or scales).
    fn read_elements(&mut self, elements: Range<u64>) -> Result<()> {
        let size = u64::from(self.tensor.dtype().bits() / 8);
        let n = self.tensor.n_elements();
        if elements.start > elements.end || elements.end > n || size == 0 {
            return Err(Error::new(ErrorKind::BadRowRange {
                name: self.tensor.name().to_string(),
                start: elements.start,
                end: elements.end,
                rows: n,
            }));
        }
        let base = self.file.data_range(self.tensor).start;
        let range = base + elements.start * size..base + elements.end * size;
        read_range_into(&mut self.input.reader, range, &mut self.bytes)
    }

    /// Reads the stored rows `rows` (an MLX part's rows are the layer's, its last dimension
    /// packed or grouped; an FP8 scale's rows are blocks of rows).
    fn read(&mut self, rows: Range<u64>) -> Result<()> {
        let range = self.file.rows_range(self.tensor, rows)?;
        read_range_into(&mut self.input.reader, range, &mut self.bytes)
    }
}

/// A stored tensor's shard and this reader's handle of it.
struct Input<'m> {
    shard: usize,
    reader: Box<dyn ReadSeek + 'm>,
}

enum Source<'m> {
    Gguf {
        file: &'m GgufFile,
        tensor: &'m TensorInfo,
        rows: RowReader<'m>,
        input: Input<'m>,
    },
    Plain {
        file: &'m SafetensorsFile,
        tensor: &'m Tensor,
        bytes: Vec<u8>,
        input: Input<'m>,
    },
    Gptq {
        layer: &'m GptqLayer,
        parts: Arc<GptqParts>,
    },
    Mlx {
        layer: &'m MlxLayer,
        weight: PartRows<'m>,
        scales: PartRows<'m>,
        biases: PartRows<'m>,
    },
    Fp8 {
        layer: &'m Fp8Layer,
        weight: PartRows<'m>,
        scales: PartRows<'m>,
    },
    Ct {
        layer: &'m CtLayer,
        weight: PartRows<'m>,
        scales: PartRows<'m>,
        zeros: Option<PartRows<'m>>,
    },
    Bnb {
        layer: &'m BnbLayer,
        weight: PartRows<'m>,
        absmax: PartRows<'m>,
        /// `.nested_absmax` and `.nested_quant_map` (read whole, once) with double quantization.
        nested: Option<(PartRows<'m>, PartRows<'m>)>,
    },
    Mxfp4 {
        layer: &'m Mxfp4Layer,
        blocks: PartRows<'m>,
        scales: PartRows<'m>,
        /// The experts whose parts `blocks` and `scales` hold (a logical row reads every
        /// stored row of its expert, so an expert is read once for all its row chunks).
        loaded: Option<Range<u64>>,
    },
}

/// One tensor's values, row by row, through its own reader of the shard holding it.
pub struct Rows<'m> {
    source: Source<'m>,
    shards: &'m dyn Shards,
    values: AlignedF32,
}

impl<'m> Rows<'m> {
    pub(super) fn gguf(
        model: &'m GgufModel,
        name: &str,
        shards: &'m dyn Shards,
        kernel: Kernel,
    ) -> Result<Rows<'m>> {
        let (shard, tensor) = model.tensor(name)?;
        let file = &model.shards()[shard];
        Ok(Rows {
            source: Source::Gguf {
                file,
                tensor,
                rows: RowReader::new(file, tensor, kernel),
                input: open(shards, shard)?,
            },
            shards,
            values: AlignedF32::new(),
        })
    }

    /// An MLX layer first (its `<path>.weight` is stored, packed), then a plain tensor, else a
    /// GPTQ layer (whose parts are read here).
    pub(super) fn checkpoint(
        c: &'m Checkpoint,
        name: &str,
        shards: &'m dyn Shards,
        v1: V1Zeros,
    ) -> Result<Rows<'m>> {
        if let Some(layer) = c.ct_layer(name) {
            let part = |p: &str| PartRows::new(c, format!("{}.{p}", layer.name), shards);
            if layer.scheme.format == CtFormat::Packed {
                check_weight_shape(c, layer, shards)?;
            }
            return Ok(Rows {
                source: Source::Ct {
                    layer,
                    weight: part(layer.weight_part())?,
                    scales: part("weight_scale")?,
                    zeros: match layer.scheme.symmetric {
                        true => None,
                        false => Some(part("weight_zero_point")?),
                    },
                },
                shards,
                values: AlignedF32::new(),
            });
        }
        if let Some(layer) = c.bnb_layer(name) {
            let part = |p: &str| PartRows::new(c, format!("{}.weight{p}", layer.name), shards);
            let mut quant_map = part(".quant_map")?;
            quant_map.read_elements(0..16)?;
            crate::bnb::check_quant_map(layer, &quant_map.bytes)?;
            let nested = match layer.nested {
                Some(_) => {
                    let mut map = part(".nested_quant_map")?;
                    map.read_elements(0..256)?;
                    Some((part(".nested_absmax")?, map))
                }
                None => None,
            };
            return Ok(Rows {
                source: Source::Bnb {
                    layer,
                    weight: part("")?,
                    absmax: part(".absmax")?,
                    nested,
                },
                shards,
                values: AlignedF32::new(),
            });
        }
        if let Some(layer) = c.mxfp4_layer(name) {
            let part = |p: &str| PartRows::new(c, format!("{}{p}", layer.name), shards);
            return Ok(Rows {
                source: Source::Mxfp4 {
                    layer,
                    blocks: part("_blocks")?,
                    scales: part("_scales")?,
                    loaded: None,
                },
                shards,
                values: AlignedF32::new(),
            });
        }
        if let Some(layer) = c.fp8_layer(name) {
            let part = |p: &str| PartRows::new(c, format!("{}.{p}", layer.name), shards);
            return Ok(Rows {
                source: Source::Fp8 {
                    layer,
                    weight: part("weight")?,
                    scales: part("weight_scale_inv")?,
                },
                shards,
                values: AlignedF32::new(),
            });
        }
        if let Some(layer) = c.mlx_layer(name) {
            let part = |p: &str| PartRows::new(c, format!("{}.{p}", layer.name), shards);
            return Ok(Rows {
                source: Source::Mlx {
                    layer,
                    weight: part("weight")?,
                    scales: part("scales")?,
                    biases: part("biases")?,
                },
                shards,
                values: AlignedF32::new(),
            });
        }
        if let Some((shard, tensor)) = c.find(name) {
            return Ok(Rows {
                source: Source::Plain {
                    file: &c.shards()[shard],
                    tensor,
                    bytes: Vec::new(),
                    input: open(shards, shard)?,
                },
                shards,
                values: AlignedF32::new(),
            });
        }
        let layer = c.layer(name).ok_or_else(|| {
            Error::new(ErrorKind::NoSuchTensor {
                name: name.to_string(),
            })
        })?;
        let read = |part: &str| -> Result<Vec<u8>> {
            let name = layer.part(part);
            let Some((i, t)) = c.tensor(&name) else {
                return Err(Error::new(ErrorKind::NoSuchTensor { name }));
            };
            read_range(&mut shards.open(i)?, c.shards()[i].data_range(t))
        };
        let parts = GptqParts {
            qweight: read("qweight")?,
            qzeros: read("qzeros")?,
            scales: read("scales")?,
            g_idx: match layer.has_g_idx {
                true => Some(read("g_idx")?),
                false => None,
            },
            format: c.checkpoint_format(),
            v1,
        };
        Ok(Rows {
            source: Source::Gptq {
                layer,
                parts: Arc::new(parts),
            },
            shards,
            values: AlignedF32::new(),
        })
    }

    /// Another reader of the same tensor, with its own handle of the shard (a GPTQ layer's
    /// parts are shared, not read again): one per thread.
    pub fn another(&self) -> Result<Rows<'m>> {
        let source = match &self.source {
            Source::Gguf {
                file,
                tensor,
                rows,
                input,
            } => Source::Gguf {
                file,
                tensor,
                rows: RowReader::new(file, tensor, rows.kernel()),
                input: open(self.shards, input.shard)?,
            },
            Source::Plain {
                file,
                tensor,
                input,
                ..
            } => Source::Plain {
                file,
                tensor,
                bytes: Vec::new(),
                input: open(self.shards, input.shard)?,
            },
            Source::Gptq { layer, parts } => Source::Gptq {
                layer,
                parts: Arc::clone(parts),
            },
            Source::Mlx {
                layer,
                weight,
                scales,
                biases,
            } => Source::Mlx {
                layer,
                weight: weight.another(self.shards)?,
                scales: scales.another(self.shards)?,
                biases: biases.another(self.shards)?,
            },
            Source::Fp8 {
                layer,
                weight,
                scales,
            } => Source::Fp8 {
                layer,
                weight: weight.another(self.shards)?,
                scales: scales.another(self.shards)?,
            },
            Source::Ct {
                layer,
                weight,
                scales,
                zeros,
            } => Source::Ct {
                layer,
                weight: weight.another(self.shards)?,
                scales: scales.another(self.shards)?,
                zeros: match zeros {
                    Some(z) => Some(z.another(self.shards)?),
                    None => None,
                },
            },
            Source::Bnb {
                layer,
                weight,
                absmax,
                nested,
            } => Source::Bnb {
                layer,
                weight: weight.another(self.shards)?,
                absmax: absmax.another(self.shards)?,
                nested: match nested {
                    Some((outer, map)) => {
                        let mut map2 = map.another(self.shards)?;
                        map2.bytes.clone_from(&map.bytes);
                        Some((outer.another(self.shards)?, map2))
                    }
                    None => None,
                },
            },
            Source::Mxfp4 {
                layer,
                blocks,
                scales,
                ..
            } => Source::Mxfp4 {
                layer,
                blocks: blocks.another(self.shards)?,
                scales: scales.another(self.shards)?,
                loaded: None,
            },
        };
        Ok(Rows {
            source,
            shards: self.shards,
            values: AlignedF32::new(),
        })
    }

    /// The type name: ggml's, the safetensors dtype's, `GPTQ-<bits>bit`,
    /// `MLX-<bits>bit-g<group>` or `FP8-E4M3-block<side>`.
    pub fn type_name(&self) -> String {
        match &self.source {
            Source::Gguf { tensor, .. } => tensor.ggml_type().name().to_string(),
            Source::Plain { tensor, .. } => tensor.dtype().name().to_string(),
            Source::Gptq { layer, .. } => layer.type_name(),
            Source::Mlx { layer, .. } => layer.type_name(),
            Source::Fp8 { layer, .. } => layer.type_name(),
            Source::Ct { layer, .. } => layer.type_name(),
            Source::Mxfp4 { layer, .. } => layer.type_name(),
            Source::Bnb { layer, .. } => layer.type_name(),
        }
    }

    /// The logical (row-major) shape.
    pub fn shape(&self) -> Vec<u64> {
        match &self.source {
            Source::Gguf { tensor, .. } => tensor.shape(),
            Source::Plain { tensor, .. } => tensor.shape().to_vec(),
            Source::Gptq { layer, .. } => vec![layer.out_features, layer.in_features],
            Source::Mlx { layer, .. } => layer.shape.clone(),
            Source::Fp8 { layer, .. } => vec![layer.out_features, layer.in_features],
            Source::Ct { layer, .. } => vec![layer.out_features, layer.in_features],
            Source::Mxfp4 { layer, .. } => layer.shape(),
            Source::Bnb { layer, .. } => layer.shape.clone(),
        }
    }

    /// Values per row.
    pub fn row_len(&self) -> u64 {
        match &self.source {
            Source::Gguf { tensor, .. } => tensor.row_len(),
            Source::Plain { tensor, .. } => tensor.row_len(),
            Source::Gptq { layer, .. } => layer.in_features,
            Source::Mlx { layer, .. } => layer.row_len(),
            Source::Fp8 { layer, .. } => layer.in_features,
            Source::Ct { layer, .. } => layer.in_features,
            Source::Mxfp4 { layer, .. } => layer.row_len(),
            Source::Bnb { layer, .. } => layer.row_len(),
        }
    }

    pub fn n_rows(&self) -> u64 {
        match &self.source {
            Source::Gguf { tensor, .. } => tensor.n_rows(),
            Source::Plain { tensor, .. } => tensor.n_rows(),
            Source::Gptq { layer, .. } => layer.out_features,
            Source::Mlx { layer, .. } => layer.n_rows(),
            Source::Fp8 { layer, .. } => layer.out_features,
            Source::Ct { layer, .. } => layer.out_features,
            Source::Mxfp4 { layer, .. } => layer.n_rows(),
            Source::Bnb { layer, .. } => layer.n_rows(),
        }
    }

    /// Rows per chunk of at most `max_elements` values (at least one row).
    pub fn rows_per_chunk(&self, max_elements: u64) -> u64 {
        (max_elements / self.row_len().max(1)).max(1)
    }

    /// The GGUF tensor and its file, when the rows are one (for readers fed from its bytes).
    pub fn gguf_tensor(&self) -> Option<(&'m GgufFile, &'m TensorInfo)> {
        match self.source {
            Source::Gguf { file, tensor, .. } => Some((file, tensor)),
            _ => None,
        }
    }

    /// Checks that `rows` can be read: in range, and a type that converts to f32.
    pub fn check_rows(&self, rows: Range<u64>) -> Result<()> {
        match &self.source {
            Source::Gguf { file, tensor, .. } => file.rows_range(tensor, rows).map(|_| ()),
            Source::Plain { file, tensor, .. } => {
                file.rows_range(tensor, rows)?;
                if !tensor.dtype().is_plain() {
                    return Err(Error::new(ErrorKind::UnsupportedDtype {
                        name: tensor.name().to_string(),
                        dtype: tensor.dtype().name(),
                    }));
                }
                Ok(())
            }
            Source::Gptq { layer, .. } => within(rows, layer.out_features, || layer.name.clone()),
            Source::Mlx { weight, .. } | Source::Fp8 { weight, .. } | Source::Ct { weight, .. } => {
                weight.file.rows_range(weight.tensor, rows).map(|_| ())
            }
            Source::Bnb { layer, .. } => {
                within(rows, layer.n_rows(), || format!("{}.weight", layer.name))
            }
            Source::Mxfp4 { layer, .. } => within(rows, layer.n_rows(), || layer.name.clone()),
        }
    }

    /// The stored bytes of rows `rows` of a GGUF tensor, read into `bytes` (for readers that
    /// work on the quantized blocks); an error for other storages.
    pub fn read_gguf_bytes(&mut self, rows: Range<u64>, bytes: &mut Vec<u8>) -> Result<()> {
        let Source::Gguf {
            file,
            tensor,
            input,
            ..
        } = &mut self.source
        else {
            return Err(Error::new(ErrorKind::InvalidRequest {
                message: "not a GGUF tensor".to_string(),
            }));
        };
        read_range_into(&mut input.reader, file.rows_range(tensor, rows)?, bytes)
    }

    /// The values of rows `rows`.
    pub fn read(&mut self, rows: Range<u64>) -> Result<&[f32]> {
        let mut values = std::mem::take(&mut self.values);
        let read = self.read_aligned(rows, &mut values);
        self.values = values;
        read?;
        Ok(self.values.as_slice())
    }

    /// Reads rows `rows` into `values` (resized to their count; cache-line aligned): for callers
    /// that keep or hand over the buffer, e.g. to a writer thread.
    pub fn read_aligned(&mut self, rows: Range<u64>, values: &mut AlignedF32) -> Result<()> {
        match &mut self.source {
            Source::Gguf {
                rows: reader,
                input,
                ..
            } => reader.read_aligned(&mut input.reader, rows, values),
            Source::Plain {
                file,
                tensor,
                bytes,
                input,
            } => {
                let out = values.resize(elements(rows.clone(), tensor.row_len())?)?;
                read_range_into(&mut input.reader, file.rows_range(tensor, rows)?, bytes)?;
                to_f32(tensor.dtype(), tensor.name(), bytes, out)
            }
            Source::Gptq { layer, parts: p } => {
                let out = values.resize(elements(rows.clone(), layer.in_features)?)?;
                let parts = LayerParts {
                    qweight: &p.qweight,
                    qzeros: &p.qzeros,
                    scales: &p.scales,
                    g_idx: p.g_idx.as_deref(),
                };
                dequantize_rows(layer, &parts, p.format, p.v1, rows, out)
            }
            Source::Mlx {
                layer,
                weight,
                scales,
                biases,
            } => {
                let out = values.resize(elements(rows.clone(), layer.row_len())?)?;
                for part in [&mut *weight, &mut *scales, &mut *biases] {
                    part.read(rows.clone())?;
                }
                let (w, s, b) = (&weight.bytes, &scales.bytes, &biases.bytes);
                crate::mlx::dequantize_rows(layer, rows.start, w, s, b, out)
            }
            Source::Fp8 {
                layer,
                weight,
                scales,
            } => {
                let out = values.resize(elements(rows.clone(), layer.in_features)?)?;
                weight.read(rows.clone())?;
                scales.read(layer.scale_rows(rows.clone()))?;
                crate::fp8::dequantize_rows(layer, rows.start, &weight.bytes, &scales.bytes, out)
            }
            Source::Ct {
                layer,
                weight,
                scales,
                zeros,
            } => {
                let out = values.resize(elements(rows.clone(), layer.in_features)?)?;
                weight.read(rows.clone())?;
                scales.read(layer.scale_rows(rows.clone()))?;
                let z: &[u8] = match zeros {
                    Some(z) => {
                        z.read(layer.zero_rows(rows.clone()))?;
                        &z.bytes
                    }
                    None => &[],
                };
                crate::ct::dequantize_rows(layer, rows.start, &weight.bytes, &scales.bytes, z, out)
            }
            Source::Bnb {
                layer,
                weight,
                absmax,
                nested,
            } => {
                let out = values.resize(elements(rows.clone(), layer.row_len())?)?;
                weight.read_elements(layer.weight_bytes(rows.clone()))?;
                let blocks = layer.blocks(rows.clone());
                absmax.read_elements(blocks.clone())?;
                let (outer, map): (&[u8], &[u8]) = match nested {
                    Some((outer, map)) => {
                        outer.read_elements(layer.nested_blocks(blocks))?;
                        (&outer.bytes, &map.bytes)
                    }
                    None => (&[], &[]),
                };
                let parts = BnbParts {
                    weight: &weight.bytes,
                    absmax: &absmax.bytes,
                    nested_absmax: outer,
                    nested_quant_map: map,
                };
                crate::bnb::dequantize_rows(layer, rows.start, &parts, out)
            }
            Source::Mxfp4 {
                layer,
                blocks,
                scales,
                loaded,
            } => {
                let out = values.resize(elements(rows.clone(), layer.row_len())?)?;
                let experts = layer.experts_of(rows.clone());
                let held = loaded.as_ref().is_some_and(|l| *l == experts);
                if !held {
                    *loaded = None;
                    blocks.read(layer.block_rows(experts.clone()))?;
                    scales.read(layer.scale_rows(experts.clone()))?;
                    *loaded = Some(experts);
                }
                crate::mxfp4::dequantize_rows(layer, rows.start, &blocks.bytes, &scales.bytes, out)
            }
        }
    }
}

/// A pack-quantized layer's `weight_shape` values against the shape its headers give (the
/// model holds headers only, so the values are read here, once per reader).
fn check_weight_shape(c: &Checkpoint, layer: &CtLayer, shards: &dyn Shards) -> Result<()> {
    let name = format!("{}.weight_shape", layer.name);
    let Some((i, t)) = c.tensor(&name) else {
        return Err(Error::new(ErrorKind::NoSuchTensor { name }));
    };
    crate::ct::check_weight_shape_header(layer, t.dtype(), t.shape())?;
    let bytes = read_range(&mut shards.open(i)?, c.shards()[i].data_range(t))?;
    crate::ct::check_weight_shape(layer, &bytes)
}

fn open<'m>(shards: &'m dyn Shards, shard: usize) -> Result<Input<'m>> {
    Ok(Input {
        shard,
        reader: shards.open(shard)?,
    })
}

/// The values in `rows` rows of `row_len`, as a buffer length.
fn elements(rows: Range<u64>, row_len: u64) -> Result<usize> {
    let n = rows.end.saturating_sub(rows.start).saturating_mul(row_len);
    usize::try_from(n).map_err(|_| {
        Error::new(ErrorKind::TooMany {
            what: "row chunk elements".to_string(),
            count: n,
            limit: usize::MAX as u64,
        })
    })
}

/// `rows` within `0..n` (start ≤ end ≤ n), else the one row-range error naming the tensor.
fn within(rows: Range<u64>, n: u64, name: impl FnOnce() -> String) -> Result<()> {
    if rows.start > rows.end || rows.end > n {
        return Err(Error::new(ErrorKind::BadRowRange {
            name: name(),
            start: rows.start,
            end: rows.end,
            rows: n,
        }));
    }
    Ok(())
}
