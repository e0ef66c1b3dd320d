//! A model from native files: [`open`] takes the path a user gives (a `.gguf`, any shard of a
//! split model, a `.safetensors`, a `model.safetensors.index.json`) and finds everything else
//! (the split's other shards, the index's shards, a GPTQ or MLX config beside them).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::rows::{ReadSeek, Shards};
use super::{detect, split_paths, Checkpoint, Format, GgufModel, Model};
use crate::bnb::BnbConfig;
use crate::ct::CtConfig;
use crate::error::{Error, Result};
use crate::fp8::Fp8Config;
use crate::gguf::{read_header, read_range};
use crate::gptq::QuantConfig;
use crate::mlx::MlxQuantization;
use crate::mxfp4::Mxfp4Config;
use crate::safetensors::{SafetensorsFile, ShardIndex};

/// A model opened from files, with the files.
#[derive(Debug)]
pub struct Opened {
    pub model: Model,
    pub files: Files,
}

/// The files of an opened model.
#[derive(Debug)]
pub struct Files {
    /// The file the user named (a shard, or a shard index).
    pub path: PathBuf,
    /// Every shard's path, in the model's shard order.
    pub shards: Vec<PathBuf>,
    /// Every shard's size in bytes when opened.
    pub sizes: Vec<u64>,
    /// The quantization config's file name (in the directory of `path`), when one was read.
    pub config_source: Option<String>,
}

impl Files {
    /// Shard `i`'s file name.
    pub fn shard_name(&self, i: usize) -> String {
        self.shards[i]
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    }

    /// Every file read: the one named, the shards, and the config's (an output must be none).
    pub fn inputs(&self) -> Vec<PathBuf> {
        let mut paths = vec![self.path.clone()];
        paths.extend(self.shards.iter().filter(|&p| p != &self.path).cloned());
        if let Some(config) = &self.config_source {
            paths.push(self.path.parent().unwrap_or(Path::new(".")).join(config));
        }
        paths
    }
}

impl Shards for Files {
    fn open(&self, shard: usize) -> Result<Box<dyn ReadSeek + '_>> {
        let path = &self.shards[shard];
        let file = File::open(path).map_err(|e| in_file(path, Error::from(e)))?;
        Ok(Box::new(file))
    }
}

fn in_file(path: &Path, error: Error) -> Error {
    Error::in_file(&path.to_string_lossy(), error)
}

/// Opens `path` as the format [`detect`] reads in its first bytes and name. A GGUF error names
/// the shard it is about; a checkpoint's error names `path`. A `.qweight` whose layer does not
/// fit is an error.
pub fn open(path: &str) -> Result<Opened> {
    let mut head = Vec::new();
    if let Ok(file) = File::open(path) {
        let _ = file.take(9).read_to_end(&mut head);
    }
    match detect(path, &head) {
        Format::Gguf => open_gguf(path),
        Format::Safetensors => open_checkpoint(path).map_err(|e| Error::in_file(path, e)),
    }
}

/// A GGUF file, or every shard of the split model `path` names one shard of (read from the
/// shard names by llama.cpp's rule; see [`split_paths`]).
fn open_gguf(path: &str) -> Result<Opened> {
    let paths = split_paths(path)?.unwrap_or_else(|| vec![path.to_string()]);
    let (mut shards, mut sizes) = (Vec::new(), Vec::new());
    for shard in &paths {
        let name = |e| Error::in_file(shard, e);
        let mut reader = File::open(shard).map_err(|e| name(e.into()))?;
        let size = reader.metadata().map_err(|e| name(e.into()))?.len();
        shards.push(read_header(&mut reader, size).map_err(name)?);
        sizes.push(size);
    }
    let model = GgufModel::from_shards(shards)?;
    Ok(Opened {
        model: Model::Gguf(model),
        files: Files {
            path: PathBuf::from(path),
            shards: paths.into_iter().map(PathBuf::from).collect(),
            sizes,
            config_source: None,
        },
    })
}

/// A `.safetensors` file, or an index's shards (beside it), with the GPTQ config (or config.json's
/// MLX `quantization`) beside them.
fn open_checkpoint(path: &str) -> Result<Opened> {
    let path = Path::new(path);
    let dir = path.parent().unwrap_or(Path::new("."));
    let (paths, index) = if path.to_string_lossy().ends_with(".json") {
        let index = ShardIndex::from_bytes(&std::fs::read(path)?)?;
        let paths: Vec<PathBuf> = index.shards().into_iter().map(|n| dir.join(n)).collect();
        (paths, Some(index))
    } else {
        (vec![path.to_path_buf()], None)
    };
    let (mut files, mut sizes) = (Vec::new(), Vec::new());
    for shard in &paths {
        let mut file = File::open(shard)?;
        let size = file.metadata()?.len();
        files.push(SafetensorsFile::read_header(&mut file, size)?);
        sizes.push(size);
    }
    let (mut config_source, config) = find_config(dir)?.unzip();
    let mut checkpoint = Checkpoint::new(files, config);
    let config_json = dir.join("config.json");
    if config_json.exists() {
        let bytes = std::fs::read(config_json)?;
        let mlx = MlxQuantization::from_config_json(&bytes)?;
        let fp8 = Fp8Config::from_config_json(&bytes)?;
        let ct = CtConfig::from_config_json(&bytes)?;
        let mxfp4 = Mxfp4Config::from_config_json(&bytes)?;
        let bnb = BnbConfig::from_config_json(&bytes)?;
        if mlx.is_some() || fp8.is_some() || ct.is_some() || mxfp4.is_some() || bnb.is_some() {
            config_source.get_or_insert_with(|| "config.json".to_string());
        }
        if mlx.is_some() {
            checkpoint.set_mlx(mlx);
        }
        if fp8.is_some() {
            checkpoint.set_fp8(fp8);
        }
        if ct.is_some() {
            checkpoint.set_ct(ct);
        }
        if mxfp4.is_some() {
            checkpoint.set_mxfp4(mxfp4);
        }
        if bnb.is_some() {
            checkpoint.set_bnb(bnb);
        }
    }
    // bitsandbytes layers are described by a small JSON stored as a tensor: read each.
    let mut states = Vec::new();
    for (shard, t) in checkpoint.bnb_state_tensors() {
        crate::bnb::check_state_size(t.name(), t.n_bytes())?;
        let mut file = File::open(&paths[shard])?;
        let range = checkpoint.shards()[shard].data_range(t);
        states.push((t.name().to_string(), read_range(&mut file, range)?));
    }
    if !states.is_empty() {
        checkpoint.set_bnb_states(states);
    }
    if let Some(err) = checkpoint.layer_errors().first() {
        return Err(err.clone());
    }
    checkpoint.set_index(index);
    Ok(Opened {
        model: Model::Safetensors(Box::new(checkpoint)),
        files: Files {
            path: path.to_path_buf(),
            shards: paths,
            sizes,
            config_source,
        },
    })
}

/// `quantize_config.json` beside the file, else a GPTQ `quantization_config` in `config.json`.
fn find_config(dir: &Path) -> Result<Option<(String, QuantConfig)>> {
    let quantize = dir.join("quantize_config.json");
    if quantize.exists() {
        let config = QuantConfig::from_quantize_config(&std::fs::read(quantize)?)?;
        return Ok(Some(("quantize_config.json".to_string(), config)));
    }
    let config = dir.join("config.json");
    if config.exists() {
        if let Some(q) = QuantConfig::from_config_json(&std::fs::read(config)?)? {
            return Ok(Some(("config.json".to_string(), q)));
        }
    }
    Ok(None)
}
