//! A safetensors checkpoint as the CLI sees it: one `.safetensors` file or a sharded one through
//! its `model.safetensors.index.json`, plus the GPTQ quantization config found beside it.

use std::fs::File;
use std::path::{Path, PathBuf};

use gguf_lens::gguf::read_range;
use gguf_lens::gptq::{find_layers, GptqLayer, QuantConfig, TensorShape};
use gguf_lens::safetensors::{SafetensorsFile, ShardIndex, Tensor};
use gguf_lens::{Error, ErrorKind, Result};

/// One safetensors file with its parsed header.
pub struct Shard {
    pub path: PathBuf,
    pub name: String,
    pub size: u64,
    pub file: SafetensorsFile,
}

pub struct Checkpoint {
    pub shards: Vec<Shard>,
    pub index: Option<ShardIndex>,
    /// The config and the file it came from.
    pub config: Option<(String, QuantConfig)>,
    pub layers: Vec<GptqLayer>,
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

fn open_shard(path: &Path) -> Result<Shard> {
    let mut file = File::open(path)?;
    let size = file.metadata()?.len();
    let header = SafetensorsFile::read_header(&mut file, size)?;
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    Ok(Shard {
        path: path.to_path_buf(),
        name,
        size,
        file: header,
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

impl Checkpoint {
    pub fn open(path: &str) -> Result<Checkpoint> {
        let path = Path::new(path);
        let dir = path.parent().unwrap_or(Path::new("."));
        let (shards, index) = if path.to_string_lossy().ends_with(".json") {
            let index = ShardIndex::from_bytes(&std::fs::read(path)?)?;
            let shards = index
                .shards()
                .into_iter()
                .map(|name| open_shard(&dir.join(name)))
                .collect::<Result<Vec<_>>>()?;
            (shards, Some(index))
        } else {
            (vec![open_shard(path)?], None)
        };
        let config = find_config(dir)?;
        let mut checkpoint = Checkpoint {
            shards,
            index,
            config,
            layers: Vec::new(),
        };
        checkpoint.layers = checkpoint.find_layers()?;
        Ok(checkpoint)
    }

    /// The shard holding `name` (per the index when there is one) and the tensor.
    pub fn find(&self, name: &str) -> Option<(&Shard, &Tensor)> {
        let shard_name = self.index.as_ref().map(|i| i.shard_of(name));
        self.shards
            .iter()
            .filter(|s| shard_name.map_or(true, |n| n == Some(s.name.as_str())))
            .find_map(|s| s.file.get(name).map(|t| (s, t)))
    }

    fn find_layers(&self) -> Result<Vec<GptqLayer>> {
        let config = self.config.as_ref().map(|c| &c.1);
        if self.shards.len() == 1 {
            return find_layers(&self.shards[0].file, config);
        }
        let lookup = |name: &str| {
            self.find(name).map(|(_, t)| TensorShape {
                dtype: t.dtype(),
                shape: t.shape(),
            })
        };
        self.shards
            .iter()
            .flat_map(|s| s.file.tensors())
            .filter_map(|t| t.name().strip_suffix(".qweight"))
            .map(|name| GptqLayer::new(name, lookup, config))
            .collect()
    }

    /// The GPTQ layer named `name` (or `name` minus a `.weight` suffix).
    pub fn layer(&self, name: &str) -> Option<&GptqLayer> {
        let base = name.strip_suffix(".weight").unwrap_or(name);
        self.layers
            .iter()
            .find(|l| l.name == name || l.name == base)
    }

    /// Reads `range` (absolute) of the shard's file.
    pub fn read(&self, shard: &Shard, range: std::ops::Range<u64>) -> Result<Vec<u8>> {
        read_range(&mut File::open(&shard.path)?, range)
    }

    /// Reads a whole tensor by name.
    pub fn read_tensor(&self, name: &str) -> Result<Vec<u8>> {
        let (shard, t) = self.find(name).ok_or_else(|| {
            Error::new(ErrorKind::NoSuchTensor {
                name: name.to_string(),
            })
        })?;
        self.read(shard, shard.file.data_range(t))
    }
}
