//! A safetensors checkpoint as the CLI sees it: one `.safetensors` file or a sharded one through
//! its `model.safetensors.index.json`, plus the GPTQ quantization config found beside it.

use std::fs::File;
use std::path::{Path, PathBuf};

use gguf_lens::checkpoint::Checkpoint as Model;
use gguf_lens::gguf::read_range;
use gguf_lens::gptq::{GptqLayer, QuantConfig};
use gguf_lens::safetensors::{SafetensorsFile, ShardIndex, Tensor};
use gguf_lens::{Error, ErrorKind, Result};

/// Where one safetensors file is; its header is in the core model, by position.
pub struct Shard {
    pub path: PathBuf,
    pub name: String,
    pub size: u64,
}

pub struct Checkpoint {
    /// The file the user named (a shard or the index).
    pub path: PathBuf,
    pub shards: Vec<Shard>,
    pub index: Option<ShardIndex>,
    /// The file the quantization config came from.
    pub config_source: Option<String>,
    /// The core model: headers, config, GPTQ layers, lookup, summary.
    pub model: Model,
}

/// Whether `path` names a safetensors file or index: by extension, or by content (a length
/// followed by `{`) when the file is not GGUF.
pub fn is_safetensors(path: &str, head: &[u8]) -> bool {
    if head.starts_with(b"GGUF") {
        return false;
    }
    path.ends_with(".safetensors")
        || path.ends_with(".index.json")
        || (head.len() > 8 && head[8] == b'{' && head[..8].iter().skip(6).all(|&b| b == 0))
}

fn open_shard(path: &Path) -> Result<(Shard, SafetensorsFile)> {
    let mut file = File::open(path)?;
    let size = file.metadata()?.len();
    let header = SafetensorsFile::read_header(&mut file, size)?;
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let shard = Shard {
        path: path.to_path_buf(),
        name,
        size,
    };
    Ok((shard, header))
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

impl Checkpoint {
    /// Opens a file or an index's shards; a `.qweight` whose layer does not fit is an error.
    pub fn open(path: &str) -> Result<Checkpoint> {
        let path = Path::new(path);
        let dir = path.parent().unwrap_or(Path::new("."));
        let (opened, index) = if path.to_string_lossy().ends_with(".json") {
            let index = ShardIndex::from_bytes(&std::fs::read(path)?)?;
            let opened = index
                .shards()
                .into_iter()
                .map(|name| open_shard(&dir.join(name)))
                .collect::<Result<Vec<_>>>()?;
            (opened, Some(index))
        } else {
            (vec![open_shard(path)?], None)
        };
        let (source, config) = find_config(dir)?.unzip();
        let (shards, files): (Vec<Shard>, Vec<SafetensorsFile>) = opened.into_iter().unzip();
        let model = Model::new(files, config);
        if let Some(err) = model.layer_errors().first() {
            return Err(err.clone());
        }
        Ok(Checkpoint {
            path: path.to_path_buf(),
            shards,
            index,
            config_source: source,
            model,
        })
    }

    /// Every file read: the one named, the shards, and the config's (an output must be none).
    pub fn input_paths(&self) -> Vec<PathBuf> {
        let mut paths = vec![self.path.clone()];
        paths.extend(self.shards.iter().map(|s| s.path.clone()));
        if let Some(config) = &self.config_source {
            paths.push(self.path.parent().unwrap_or(Path::new(".")).join(config));
        }
        paths
    }

    /// The header of shard `i`.
    pub fn file(&self, i: usize) -> &SafetensorsFile {
        &self.model.shards()[i]
    }

    /// The shard holding `name` (the one the index names, when there is an index) and the
    /// tensor.
    pub fn find(&self, name: &str) -> Option<(&Shard, &SafetensorsFile, &Tensor)> {
        let (i, t) = self.model.tensor(name)?;
        let shard = &self.shards[i];
        match &self.index {
            Some(index) if index.shard_of(name) != Some(shard.name.as_str()) => None,
            _ => Some((shard, self.file(i), t)),
        }
    }

    /// The GPTQ layer named `name` (or `name` minus a `.weight` suffix).
    pub fn layer(&self, name: &str) -> Option<&GptqLayer> {
        self.model.layer(name)
    }

    /// The GPTQ layers, in tensor order.
    pub fn layers(&self) -> &[GptqLayer] {
        self.model.layers()
    }

    /// Reads `range` (absolute) of the shard's file.
    pub fn read(&self, shard: &Shard, range: std::ops::Range<u64>) -> Result<Vec<u8>> {
        read_range(&mut File::open(&shard.path)?, range)
    }

    /// Reads a whole tensor by name.
    pub fn read_tensor(&self, name: &str) -> Result<Vec<u8>> {
        let (i, t) = self.model.tensor(name).ok_or_else(|| {
            Error::new(ErrorKind::NoSuchTensor {
                name: name.to_string(),
            })
        })?;
        self.read(&self.shards[i], self.file(i).data_range(t))
    }
}
