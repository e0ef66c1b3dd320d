//! A safetensors checkpoint as one model's storage: one file or the shards of a sharded one
//! (with its shard index when opened through one), its quantization configs (GPTQ's, MLX's,
//! FP8's) and the GPTQ, MLX and FP8 layers found across every shard. It owns tensor lookup, layer grouping,
//! the logical tensor list and its [`Summary`] (type mix with a quantized layer counted as one
//! type: `GPTQ-<bits>bit`, `MLX-<bits>bit-g<group>`; the configs as a `CheckpointDetail`).

use std::collections::{HashMap, HashSet};

use super::summary::{
    ratio, BnbSummary, CheckpointDetail, CtSummary, Detail, Fp8Summary, GptqSummary, MlxSummary,
    Mxfp4Summary, Summary, TypeShare,
};
use super::{Format, TensorEntry, TensorType};
use crate::bnb::{self, BnbConfig, BnbLayer};
use crate::ct::{self, CtConfig, CtLayer};
use crate::error::Error;
use crate::fp8::{self, Fp8Config, Fp8Layer};
use crate::gptq::{self, CheckpointFormat, GptqLayer, QuantConfig, TensorShape};
use crate::mlx::{self, MlxLayer, MlxQuantization};
use crate::mxfp4::{self, Mxfp4Config, Mxfp4Layer};
use crate::safetensors::{SafetensorsFile, ShardIndex, Tensor};

/// The stored parts of a GPTQ layer, listed under the layer's `<layer>.weight` instead.
const GPTQ_PARTS: [&str; 4] = ["qweight", "qzeros", "scales", "g_idx"];
/// The stored parts of an MLX layer; its `weight` is listed (in logical shape), not these.
const MLX_PARTS: [&str; 3] = ["weight", "scales", "biases"];
/// The stored parts of an FP8 block-scaled layer; its `weight` is listed (dequantized).
const FP8_PARTS: [&str; 2] = ["weight", "weight_scale_inv"];
/// The stored parts of a compressed-tensors layer (`weight` for the naive formats).
const CT_PARTS: [&str; 5] = [
    "weight",
    "weight_packed",
    "weight_scale",
    "weight_shape",
    "weight_zero_point",
];
/// The stored parts of an MXFP4 tensor, suffixed to its name (`<name>_blocks`).
const MXFP4_PARTS: [&str; 2] = ["_blocks", "_scales"];
/// The stored parts of a bitsandbytes 4-bit layer, suffixed to `<path>.weight` (the quant
/// state, named by its quant type, is added per layer).
const BNB_PARTS: [&str; 5] = [
    "",
    ".absmax",
    ".quant_map",
    ".nested_absmax",
    ".nested_quant_map",
];

/// One checkpoint over its shards, in order.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    shards: Vec<SafetensorsFile>,
    config: Option<QuantConfig>,
    layers: Vec<GptqLayer>,
    /// config.json's MLX `quantization`, if any.
    mlx: Option<MlxQuantization>,
    mlx_layers: Vec<MlxLayer>,
    /// config.json's `quantization_config` with `quant_method: fp8`, if any.
    fp8: Option<Fp8Config>,
    fp8_layers: Vec<Fp8Layer>,
    /// config.json's `quantization_config` with `quant_method: compressed-tensors`, if any.
    ct: Option<CtConfig>,
    ct_layers: Vec<CtLayer>,
    /// config.json's `quantization_config` with `quant_method: mxfp4`, if any.
    mxfp4: Option<Mxfp4Config>,
    mxfp4_layers: Vec<Mxfp4Layer>,
    /// config.json's `quantization_config` with `quant_method: bitsandbytes`, if any.
    bnb: Option<BnbConfig>,
    /// The bytes of each `*.weight.quant_state.bitsandbytes__*` tensor read so far (its JSON).
    bnb_states: HashMap<String, Vec<u8>>,
    bnb_layers: Vec<BnbLayer>,
    /// Why `<prefix>.qweight` (GPTQ) or `<prefix>.scales` (MLX) tensors that are not layers
    /// were left out.
    layer_errors: Vec<Error>,
    /// Tensor name → shard (the first shard holding it).
    index: HashMap<String, usize>,
    /// The shard index the checkpoint was opened through, if any.
    shard_index: Option<ShardIndex>,
}

impl Checkpoint {
    /// A checkpoint from its shards in order, with the quantization config (if any); GPTQ
    /// layers are found at once, their parts looked up in any shard.
    pub fn new(shards: Vec<SafetensorsFile>, config: Option<QuantConfig>) -> Checkpoint {
        let mut index = HashMap::new();
        for (i, shard) in shards.iter().enumerate() {
            for t in shard.tensors() {
                index.entry(t.name().to_string()).or_insert(i);
            }
        }
        let mut checkpoint = Checkpoint {
            shards,
            config: None,
            layers: Vec::new(),
            mlx: None,
            mlx_layers: Vec::new(),
            fp8: None,
            fp8_layers: Vec::new(),
            ct: None,
            ct_layers: Vec::new(),
            mxfp4: None,
            mxfp4_layers: Vec::new(),
            bnb: None,
            bnb_states: HashMap::new(),
            bnb_layers: Vec::new(),
            layer_errors: Vec::new(),
            index,
            shard_index: None,
        };
        checkpoint.set_config(config);
        checkpoint
    }

    /// Adds the next shard (its tensors looked up after those of the shards before it) and
    /// finds the GPTQ layers again, parts in any shard.
    pub fn add_shard(&mut self, file: SafetensorsFile) {
        let i = self.shards.len();
        for t in file.tensors() {
            self.index.entry(t.name().to_string()).or_insert(i);
        }
        self.shards.push(file);
        self.find_layers();
    }

    /// Replaces the GPTQ quantization config and finds the layers again with it.
    pub fn set_config(&mut self, config: Option<QuantConfig>) {
        self.config = config;
        self.find_layers();
    }

    /// Replaces the MLX quantization config (config.json's `quantization`) and finds the
    /// layers again with it.
    pub fn set_mlx(&mut self, mlx: Option<MlxQuantization>) {
        self.mlx = mlx;
        self.find_layers();
    }

    /// Replaces the FP8 quantization config and finds the layers again with it.
    pub fn set_fp8(&mut self, fp8: Option<Fp8Config>) {
        self.fp8 = fp8;
        self.find_layers();
    }

    /// Replaces the compressed-tensors config and finds the layers again with it.
    pub fn set_ct(&mut self, ct: Option<CtConfig>) {
        self.ct = ct;
        self.find_layers();
    }

    /// Replaces the MXFP4 config and finds the tensors again with it.
    pub fn set_mxfp4(&mut self, mxfp4: Option<Mxfp4Config>) {
        self.mxfp4 = mxfp4;
        self.find_layers();
    }

    /// Replaces the bitsandbytes config.
    pub fn set_bnb(&mut self, bnb: Option<BnbConfig>) {
        self.bnb = bnb;
        self.find_layers();
    }

    /// The `*.weight.quant_state.bitsandbytes__*` tensors whose bytes (a small JSON each) the
    /// bitsandbytes layers need, with their shards, not given yet ([`Checkpoint::set_bnb_states`]).
    pub fn bnb_state_tensors(&self) -> Vec<(usize, &Tensor)> {
        self.tensors()
            .filter(|(_, t)| bnb::state_of(t.name()).is_some())
            .filter(|(_, t)| !self.bnb_states.contains_key(t.name()))
            .collect()
    }

    /// Gives the bytes of quant-state tensors (name, bytes) and finds the layers again.
    pub fn set_bnb_states(&mut self, states: impl IntoIterator<Item = (String, Vec<u8>)>) {
        self.bnb_states.extend(states);
        self.find_layers();
    }

    /// GPTQ layers (by `.qweight`), MLX layers (by `.scales`, with an MLX config), FP8 layers
    /// (by `.weight_scale_inv`, with an FP8 config).
    fn find_layers(&mut self) {
        let lookup = |name: &str| {
            self.tensor(name).map(|(_, t)| TensorShape {
                dtype: t.dtype(),
                shape: t.shape(),
            })
        };
        let short = |name: &str| self.tensor(name).map(|(_, t)| (t.dtype(), t.shape()));
        let names = || {
            self.shards
                .iter()
                .flat_map(|s| s.tensors())
                .map(|t| t.name())
        };
        let mut errors = Vec::new();
        let gptq_found = gptq::discover(names(), lookup, self.config.as_ref());
        let layers = match &self.config {
            Some(_) => sort_out(gptq_found, &mut errors),
            // Without a GPTQ config a `.qweight` is a layer only when the shapes fix bits and
            // group size (GptqLayer::new); any other `.qweight` set stays plain tensors.
            None => gptq_found.into_iter().filter_map(Result::ok).collect(),
        };
        let mlx_layers = match &self.mlx {
            Some(q) => sort_out(mlx::discover(names(), short, q), &mut errors),
            None => sort_out(mlx::infer(names(), short), &mut errors),
        };
        let fp8_layers = match &self.fp8 {
            Some(config) => sort_out(fp8::discover(names(), short, config), &mut errors),
            // Without config.json: the one block side all FP8 pairs fit; the pairs that do
            // not fit it stay plain tensors.
            None => match fp8::infer_block(names(), short) {
                Some(Ok(block)) => {
                    let config = Fp8Config {
                        block,
                        not_converted: Vec::new(),
                        activation_scheme: None,
                    };
                    fp8::discover(names(), short, &config)
                        .into_iter()
                        .filter_map(Result::ok)
                        .collect()
                }
                Some(Err(err)) => {
                    errors.push(err);
                    Vec::new()
                }
                None => Vec::new(),
            },
        };
        let ct_layers = match &self.ct {
            Some(scheme) => sort_out(ct::discover(names(), short, scheme), &mut errors),
            None => Vec::new(),
        };
        let mxfp4_layers = match &self.mxfp4 {
            Some(_) => sort_out(mxfp4::discover(names(), short), &mut errors),
            // Without config.json: every `_blocks` / `_scales` pair that fits gpt-oss's layout
            // (U8, 16-byte blocks, one e8m0 per block) is one; the others stay plain tensors.
            None => mxfp4::discover(names(), short)
                .into_iter()
                .filter_map(Result::ok)
                .collect(),
        };
        let bnb_layers = sort_out(
            bnb::discover(names(), short, |n| {
                self.bnb_states.get(n).map(Vec::as_slice)
            }),
            &mut errors,
        );
        self.ct_layers = ct_layers;
        self.mxfp4_layers = mxfp4_layers;
        self.bnb_layers = bnb_layers;
        self.layers = layers;
        self.mlx_layers = mlx_layers;
        self.fp8_layers = fp8_layers;
        self.layer_errors = errors;
    }

    pub fn shards(&self) -> &[SafetensorsFile] {
        &self.shards
    }

    /// Sets the shard index whose shards (in its order) are this checkpoint's: a plain tensor
    /// is then read only from the shard the index names for it ([`Checkpoint::find`]).
    pub fn set_index(&mut self, index: Option<ShardIndex>) {
        self.shard_index = index;
    }

    /// The shard index the checkpoint was opened through.
    pub fn shard_index(&self) -> Option<&ShardIndex> {
        self.shard_index.as_ref()
    }

    pub fn config(&self) -> Option<&QuantConfig> {
        self.config.as_ref()
    }

    /// The config's checkpoint format (v1 without a config).
    pub fn checkpoint_format(&self) -> CheckpointFormat {
        self.config
            .as_ref()
            .map_or(CheckpointFormat::V1, |c| c.checkpoint_format)
    }

    /// The MLX quantization config.
    pub fn mlx(&self) -> Option<&MlxQuantization> {
        self.mlx.as_ref()
    }

    /// The MLX layers, in tensor order.
    pub fn mlx_layers(&self) -> &[MlxLayer] {
        &self.mlx_layers
    }

    /// The MLX layer `name` reads: by its path, or `<path>.weight` (the stored packed words,
    /// read as the layer's values).
    pub fn mlx_layer(&self, name: &str) -> Option<&MlxLayer> {
        let path = name.strip_suffix(".weight");
        self.mlx_layers
            .iter()
            .find(|l| l.name == name || Some(l.name.as_str()) == path)
    }

    /// The FP8 quantization config.
    pub fn fp8(&self) -> Option<&Fp8Config> {
        self.fp8.as_ref()
    }

    /// The FP8 block-scaled layers, in tensor order.
    pub fn fp8_layers(&self) -> &[Fp8Layer] {
        &self.fp8_layers
    }

    /// The FP8 layer `name` reads: by its path, or `<path>.weight` (the stored fp8 values,
    /// read scaled).
    pub fn fp8_layer(&self, name: &str) -> Option<&Fp8Layer> {
        let path = name.strip_suffix(".weight");
        self.fp8_layers
            .iter()
            .find(|l| l.name == name || Some(l.name.as_str()) == path)
    }

    /// The compressed-tensors config.
    pub fn ct(&self) -> Option<&CtConfig> {
        self.ct.as_ref()
    }

    /// The compressed-tensors layers, in tensor order.
    pub fn ct_layers(&self) -> &[CtLayer] {
        &self.ct_layers
    }

    /// The compressed-tensors layer `name` reads: by its path, or `<path>.weight`.
    pub fn ct_layer(&self, name: &str) -> Option<&CtLayer> {
        let path = name.strip_suffix(".weight");
        self.ct_layers
            .iter()
            .find(|l| l.name == name || Some(l.name.as_str()) == path)
    }

    /// The MXFP4 config.
    pub fn mxfp4(&self) -> Option<&Mxfp4Config> {
        self.mxfp4.as_ref()
    }

    /// The MXFP4 tensors, in tensor order.
    pub fn mxfp4_layers(&self) -> &[Mxfp4Layer] {
        &self.mxfp4_layers
    }

    /// The MXFP4 tensor `name` names (its logical name, without `_blocks`).
    pub fn mxfp4_layer(&self, name: &str) -> Option<&Mxfp4Layer> {
        self.mxfp4_layers.iter().find(|l| l.name == name)
    }

    /// Bytes of an MXFP4 tensor's stored parts.
    pub fn mxfp4_layer_bytes(&self, layer: &Mxfp4Layer) -> u64 {
        MXFP4_PARTS
            .iter()
            .filter_map(|part| self.tensor(&format!("{}{part}", layer.name)))
            .map(|(_, t)| t.n_bytes())
            .fold(0, u64::saturating_add)
    }

    /// The bitsandbytes config.
    pub fn bnb(&self) -> Option<&BnbConfig> {
        self.bnb.as_ref()
    }

    /// The bitsandbytes 4-bit layers, in tensor order.
    pub fn bnb_layers(&self) -> &[BnbLayer] {
        &self.bnb_layers
    }

    /// The bitsandbytes layer `name` reads: by its path, or `<path>.weight`.
    pub fn bnb_layer(&self, name: &str) -> Option<&BnbLayer> {
        let path = name.strip_suffix(".weight");
        self.bnb_layers
            .iter()
            .find(|l| l.name == name || Some(l.name.as_str()) == path)
    }

    /// The names of a bitsandbytes layer's stored parts.
    fn bnb_part_names(layer: &BnbLayer) -> impl Iterator<Item = String> + '_ {
        BNB_PARTS
            .iter()
            .map(|part| format!("{}.weight{part}", layer.name))
            .chain([format!(
                "{}{}",
                layer.name,
                bnb::state_suffix(layer.quant_type)
            )])
    }

    /// Bytes of a bitsandbytes layer's stored parts.
    pub fn bnb_layer_bytes(&self, layer: &BnbLayer) -> u64 {
        Self::bnb_part_names(layer)
            .filter_map(|name| self.tensor(&name))
            .map(|(_, t)| t.n_bytes())
            .fold(0, u64::saturating_add)
    }

    /// Bytes of a compressed-tensors layer's stored parts.
    pub fn ct_layer_bytes(&self, layer: &CtLayer) -> u64 {
        self.parts_bytes(&layer.name, &CT_PARTS)
    }

    /// Bytes of the stored parts `<name>.<part>` there are.
    fn parts_bytes(&self, name: &str, parts: &[&str]) -> u64 {
        parts
            .iter()
            .filter_map(|part| self.tensor(&format!("{name}.{part}")))
            .map(|(_, t)| t.n_bytes())
            .fold(0, u64::saturating_add)
    }

    /// Bytes of an FP8 layer's stored parts.
    pub fn fp8_layer_bytes(&self, layer: &Fp8Layer) -> u64 {
        self.parts_bytes(&layer.name, &FP8_PARTS)
    }

    /// Bytes of an MLX layer's stored parts.
    pub fn mlx_layer_bytes(&self, layer: &MlxLayer) -> u64 {
        self.parts_bytes(&layer.name, &MLX_PARTS)
    }

    /// The names of the stored parts of every GPTQ and MLX layer (listed under the layer).
    fn part_names(&self) -> HashSet<String> {
        let gptq = self
            .layers
            .iter()
            .flat_map(|l| GPTQ_PARTS.map(|part| l.part(part)));
        let mlx = self
            .mlx_layers
            .iter()
            .flat_map(|l| MLX_PARTS.map(|part| format!("{}.{part}", l.name)));
        let fp8 = self
            .fp8_layers
            .iter()
            .flat_map(|l| FP8_PARTS.map(|part| format!("{}.{part}", l.name)));
        let ct = self
            .ct_layers
            .iter()
            .flat_map(|l| CT_PARTS.map(|part| format!("{}.{part}", l.name)));
        let mx = self
            .mxfp4_layers
            .iter()
            .flat_map(|l| MXFP4_PARTS.map(|part| format!("{}{part}", l.name)));
        let bnb = self.bnb_layers.iter().flat_map(Self::bnb_part_names);
        gptq.chain(mlx)
            .chain(fp8)
            .chain(ct)
            .chain(mx)
            .chain(bnb)
            .collect()
    }

    /// The GPTQ layers, in tensor order.
    pub fn layers(&self) -> &[GptqLayer] {
        &self.layers
    }

    /// Why `<prefix>.qweight` (GPTQ) or `<prefix>.scales` (MLX) tensors that are not layers
    /// were left out.
    pub fn layer_errors(&self) -> &[Error] {
        &self.layer_errors
    }

    /// Every stored tensor with its shard, in shard then header order.
    pub fn tensors(&self) -> impl Iterator<Item = (usize, &Tensor)> + '_ {
        self.shards
            .iter()
            .enumerate()
            .flat_map(|(i, s)| s.tensors().iter().map(move |t| (i, t)))
    }

    /// The stored tensor `name` and its shard.
    pub fn tensor(&self, name: &str) -> Option<(usize, &Tensor)> {
        let &shard = self.index.get(name)?;
        self.shards[shard].get(name).map(|t| (shard, t))
    }

    /// The stored tensor `name` to read and its shard: as [`Checkpoint::tensor`], but None when
    /// the shard index (whose shards are this checkpoint's, in order) names another shard for it.
    pub fn find(&self, name: &str) -> Option<(usize, &Tensor)> {
        let (i, t) = self.tensor(name)?;
        match &self.shard_index {
            Some(index) if index.shard_of(name) != index.shards().get(i).copied() => None,
            _ => Some((i, t)),
        }
    }

    /// The GPTQ layer `name` reads: by its prefix, or `<prefix>.weight` when no stored tensor
    /// has that name.
    pub fn layer(&self, name: &str) -> Option<&GptqLayer> {
        let by_prefix = |n: &str| self.layers.iter().find(|l| l.name == n);
        by_prefix(name).or_else(|| {
            let base = name.strip_suffix(".weight")?;
            if self.index.contains_key(name) {
                return None;
            }
            by_prefix(base)
        })
    }

    /// Bytes of a layer's stored parts.
    pub fn layer_bytes(&self, layer: &GptqLayer) -> u64 {
        GPTQ_PARTS
            .iter()
            .filter_map(|part| self.tensor(&layer.part(part)))
            .map(|(_, t)| t.n_bytes())
            .fold(0, u64::saturating_add)
    }

    /// The plain tensors plus, in place of its parts, one `<layer>.weight` per GPTQ layer
    /// (shape `[out_features, in_features]`, type `GPTQ-<bits>bit`), per MLX layer (the
    /// stored shape with its last dimension unpacked, type `MLX-<bits>bit-g<group>`) and per
    /// FP8 layer (`[out, in]`, type `FP8-E4M3-block<side>`), sorted by
    /// name (header order is a JSON object's, and shards split it).
    pub fn logical_tensors(&self) -> Vec<TensorEntry> {
        let layers = &self.layers;
        let parts = self.part_names();
        let mut tensors: Vec<TensorEntry> = self
            .mlx_layers
            .iter()
            .map(|l| TensorEntry {
                name: format!("{}.weight", l.name),
                ty: TensorType::Named(l.type_name()),
                shape: l.shape.clone(),
            })
            .collect();
        tensors.extend(self.fp8_layers.iter().map(|l| TensorEntry {
            name: format!("{}.weight", l.name),
            ty: TensorType::Named(l.type_name()),
            shape: vec![l.out_features, l.in_features],
        }));
        tensors.extend(self.ct_layers.iter().map(|l| TensorEntry {
            name: format!("{}.weight", l.name),
            ty: TensorType::Named(l.type_name()),
            shape: vec![l.out_features, l.in_features],
        }));
        tensors.extend(self.mxfp4_layers.iter().map(|l| TensorEntry {
            name: l.name.clone(),
            ty: TensorType::Named(l.type_name()),
            shape: l.shape(),
        }));
        tensors.extend(self.bnb_layers.iter().map(|l| TensorEntry {
            name: format!("{}.weight", l.name),
            ty: TensorType::Named(l.type_name()),
            shape: l.shape.clone(),
        }));
        for t in self.shards.iter().flat_map(|s| s.tensors()) {
            if let Some(layer) = t
                .name()
                .strip_suffix(".qweight")
                .and_then(|n| layers.iter().find(|l| l.name == n))
            {
                tensors.push(TensorEntry {
                    name: format!("{}.weight", layer.name),
                    ty: TensorType::Named(layer.type_name()),
                    shape: vec![layer.out_features, layer.in_features],
                });
            } else if !parts.contains(t.name()) {
                tensors.push(TensorEntry {
                    name: t.name().to_string(),
                    ty: TensorType::Named(t.dtype().name().to_string()),
                    shape: t.shape().to_vec(),
                });
            }
        }
        tensors.sort_by(|x, y| x.name.cmp(&y.name));
        tensors
    }

    /// The summary: tensor count, parameters (a quantized layer by its logical shape), bytes,
    /// type mix (a quantized layer as one tensor of its type), and the quantization configs.
    pub fn summary(&self) -> Summary {
        let parts = self.part_names();
        let mut mix: Vec<TypeShare> = Vec::new();
        let mut add = |type_name: String, elements: u64, bytes: u64| {
            let i = match mix.iter().position(|m| m.ty.name() == type_name) {
                Some(i) => i,
                None => {
                    mix.push(TypeShare {
                        ty: TensorType::Named(type_name),
                        tensors: 0,
                        elements: 0,
                        bytes: 0,
                        byte_share: 0.0,
                    });
                    mix.len() - 1
                }
            };
            let m = &mut mix[i];
            m.tensors += 1;
            m.elements = m.elements.saturating_add(elements);
            m.bytes = m.bytes.saturating_add(bytes);
        };
        for l in &self.layers {
            let elements = l.out_features.saturating_mul(l.in_features);
            add(l.type_name(), elements, self.layer_bytes(l));
        }
        for l in &self.mlx_layers {
            let elements = l.n_rows().saturating_mul(l.row_len());
            add(l.type_name(), elements, self.mlx_layer_bytes(l));
        }
        for l in &self.fp8_layers {
            let elements = l.out_features.saturating_mul(l.in_features);
            add(l.type_name(), elements, self.fp8_layer_bytes(l));
        }
        for l in &self.ct_layers {
            let elements = l.out_features.saturating_mul(l.in_features);
            add(l.type_name(), elements, self.ct_layer_bytes(l));
        }
        for l in &self.mxfp4_layers {
            add(l.type_name(), l.n_elements(), self.mxfp4_layer_bytes(l));
        }
        for l in &self.bnb_layers {
            add(l.type_name(), l.n_elements(), self.bnb_layer_bytes(l));
        }
        for (_, t) in self.tensors().filter(|(_, t)| !parts.contains(t.name())) {
            add(t.dtype().name().to_string(), t.n_elements(), t.n_bytes());
        }
        let tensor_bytes = self
            .tensors()
            .map(|(_, t)| t.n_bytes())
            .fold(0, u64::saturating_add);
        let parameter_count = mix.iter().map(|m| m.elements).fold(0, u64::saturating_add);
        for m in &mut mix {
            m.byte_share = ratio(m.bytes as f64, tensor_bytes as f64);
        }
        // Stable: equal sizes keep first-seen order.
        mix.sort_by_key(|m| std::cmp::Reverse(m.bytes));
        let c = self.config.as_ref();
        let first = self.layers.first();
        let gptq = (!self.layers.is_empty() || c.is_some()).then(|| GptqSummary {
            layers: self.layers.len() as u64,
            bits: c.and_then(|c| c.bits).or(first.map(|l| l.bits)),
            group_size: c
                .and_then(|c| c.group_size)
                .or(first.and_then(|l| i64::try_from(l.group_size).ok())),
            desc_act: c.and_then(|c| c.desc_act),
            sym: c.and_then(|c| c.sym),
            checkpoint_format: self.checkpoint_format(),
        });
        let mlx = self.mlx.as_ref().map(|q| MlxSummary {
            layers: self.mlx_layers.len() as u64,
            bits: q.default.bits,
            group_size: q.default.group_size,
            overrides: self
                .mlx_layers
                .iter()
                .filter(|l| (l.bits, l.group_size) != (q.default.bits, q.default.group_size))
                .count() as u64,
        });
        let fp8 = match (&self.fp8, self.fp8_layers.first()) {
            (Some(c), _) => Some(Fp8Summary {
                layers: self.fp8_layers.len() as u64,
                block: c.block,
                not_converted: c.not_converted.clone(),
            }),
            // Detected without a config: every layer has the one inferred block.
            (None, Some(l)) => Some(Fp8Summary {
                layers: self.fp8_layers.len() as u64,
                block: l.block,
                not_converted: Vec::new(),
            }),
            (None, None) => None,
        };
        let ct = self.ct.as_ref().map(|scheme| CtSummary {
            layers: self.ct_layers.len() as u64,
            scheme: scheme.clone(),
        });
        let mxfp4 = (self.mxfp4.is_some() || !self.mxfp4_layers.is_empty()).then(|| Mxfp4Summary {
            layers: self.mxfp4_layers.len() as u64,
            inferred: self.mxfp4.is_none(),
            not_converted: self
                .mxfp4
                .as_ref()
                .map(|c| c.not_converted.clone())
                .unwrap_or_default(),
        });
        let bnb = (self.bnb.is_some() || !self.bnb_layers.is_empty()).then(|| BnbSummary {
            layers: self.bnb_layers.len() as u64,
            config: self.bnb.clone(),
        });
        Summary {
            format: Format::Safetensors,
            tensor_count: self.tensors().count() as u64,
            parameter_count,
            tensor_bytes,
            bits_per_weight: ratio(tensor_bytes as f64 * 8.0, parameter_count as f64),
            type_mix: mix,
            file_type_label: None,
            detail: Detail::Checkpoint(CheckpointDetail {
                gptq,
                mlx,
                fp8,
                ct,
                mxfp4,
                bnb,
            }),
        }
    }
}

/// The layers found, with each refusal moved to `errors`.
fn sort_out<L>(
    found: impl IntoIterator<Item = Result<L, Error>>,
    errors: &mut Vec<Error>,
) -> Vec<L> {
    let mut layers = Vec::new();
    for f in found {
        match f {
            Ok(layer) => layers.push(layer),
            Err(err) => errors.push(err),
        }
    }
    layers
}
