//! A safetensors checkpoint for JS: `parseSafetensors` gives the one `ModelHeader` (see
//! `wasm/mod.rs`) over one file, holding the core's `Checkpoint` (shards added with
//! `addShard`), so GPTQ, MLX, FP8, compressed-tensors, MXFP4 and bitsandbytes layers, the configs and the
//! summary come from the core, once, whatever the number of shards. The methods here are a
//! checkpoint's own; on a GGUF handle they throw.

use js_sys::{Float64Array, Object};
use wasm_bindgen::prelude::*;

use super::{js_error, safetensors_js, set, to_js, ModelHeader};
use crate::bnb::BnbConfig;
use crate::ct::CtConfig;
use crate::fp8::Fp8Config;
use crate::gptq::{CheckpointFormat, GptqLayer, LayerParts, QuantConfig, V1Zeros};
use crate::mlx::MlxQuantization;
use crate::model::{Checkpoint, Model};
use crate::mxfp4::Mxfp4Config;
use crate::safetensors::SafetensorsFile;

/// Parses a safetensors header from `prefix`, the first bytes of a file of `file_size` bytes
/// (undefined when unknown). Returns a `ModelHeader`, or `{ needMore }` (the least prefix
/// length that holds the header: exact once the first 8 bytes are in). Throws on a bad file.
#[wasm_bindgen(js_name = parseSafetensors)]
pub fn parse_safetensors(prefix: &[u8], file_size: Option<f64>) -> Result<JsValue, JsError> {
    let file_size = file_size.map(|size| size as u64);
    match crate::safetensors::parse(prefix, file_size).map_err(js_error)? {
        crate::safetensors::ParseStatus::Complete(file) => Ok(ModelHeader {
            model: Model::Safetensors(Box::new(Checkpoint::new(vec![file], None))),
        }
        .into()),
        crate::safetensors::ParseStatus::NeedMore { at_least } => {
            let result = Object::new();
            set(&result, "needMore", at_least as f64);
            Ok(result.into())
        }
    }
}

/// A safetensors handle: tensors and plain-tensor conversion of this file; layers, configs
/// and summary of the checkpoint it starts (itself, plus the shards added after it).
impl ModelHeader {
    /// The checkpoint, or an error naming the format the handle holds.
    pub(super) fn checkpoint(&self) -> Result<&Checkpoint, JsError> {
        match &self.model {
            Model::Safetensors(c) => Ok(c),
            Model::Gguf(_) => Err(not_a_checkpoint()),
        }
    }

    fn checkpoint_mut(&mut self) -> Result<&mut Checkpoint, JsError> {
        match &mut self.model {
            Model::Safetensors(c) => Ok(c),
            Model::Gguf(_) => Err(not_a_checkpoint()),
        }
    }

    /// This file's header (the checkpoint's first shard).
    fn st_file(&self) -> Result<&SafetensorsFile, JsError> {
        Ok(&self.checkpoint()?.shards()[0])
    }

    fn fp8(&self, path: &str) -> Result<&crate::fp8::Fp8Layer, JsError> {
        (self.checkpoint()?.fp8_layers().iter())
            .find(|l| l.name == path)
            .ok_or_else(|| JsError::new(&format!("no FP8 layer named {path}")))
    }

    fn mxfp4(&self, name: &str) -> Result<&crate::mxfp4::Mxfp4Layer, JsError> {
        (self.checkpoint()?.mxfp4_layer(name))
            .ok_or_else(|| JsError::new(&format!("no MXFP4 tensor named {name}")))
    }

    fn bnb(&self, path: &str) -> Result<&crate::bnb::BnbLayer, JsError> {
        (self.checkpoint()?.bnb_layers().iter())
            .find(|l| l.name == path)
            .ok_or_else(|| JsError::new(&format!("no bitsandbytes layer named {path}")))
    }

    fn ct(&self, path: &str) -> Result<&crate::ct::CtLayer, JsError> {
        (self.checkpoint()?.ct_layers().iter())
            .find(|l| l.name == path)
            .ok_or_else(|| JsError::new(&format!("no compressed-tensors layer named {path}")))
    }

    fn layer(&self, name: &str) -> Result<&GptqLayer, JsError> {
        self.checkpoint()?
            .layers()
            .iter()
            .find(|l| l.name == name)
            .ok_or_else(|| JsError::new(&format!("no GPTQ layer named {name}")))
    }
}

#[wasm_bindgen]
impl ModelHeader {
    /// Tensors of this file in header order: `{ name, type (the dtype), typeId (-1), shape (outermost first),
    /// nElements, offset (absolute), relativeOffset, nBytes, rowLength, nRows, rowBytes (null
    /// for sub-byte dtypes), plain (whether toF32 converts it) }`.
    pub fn tensors(&self) -> Result<JsValue, JsError> {
        Ok(safetensors_js::tensors_to_js(self.st_file()?))
    }

    /// Converts `bytes`, whole rows of plain tensor `name`, into `out` (exactly their length),
    /// as torch's `.to(torch.float32)` does.
    #[wasm_bindgen(js_name = toF32Into)]
    pub fn to_f32_into(&self, name: &str, bytes: &[u8], out: &mut [f32]) -> Result<(), JsError> {
        let tensor = self.st_file()?.tensor(name).map_err(js_error)?;
        crate::safetensors::to_f32(tensor.dtype(), name, bytes, out).map_err(js_error)
    }

    /// Like `toF32Into`, into a new Float32Array.
    #[wasm_bindgen(js_name = toF32)]
    pub fn to_f32(&self, name: &str, bytes: &[u8]) -> Result<Vec<f32>, JsError> {
        let tensor = self.st_file()?.tensor(name).map_err(js_error)?;
        let size = (tensor.dtype().bits() / 8).max(1) as usize;
        let mut out = vec![0f32; bytes.len() / size];
        crate::safetensors::to_f32(tensor.dtype(), name, bytes, &mut out).map_err(js_error)?;
        Ok(out)
    }

    /// Adds the next shard of a sharded checkpoint (a copy of its header): GPTQ layers are
    /// found again with parts in any shard.
    #[wasm_bindgen(js_name = addShard)]
    pub fn add_shard(&mut self, shard: &ModelHeader) -> Result<(), JsError> {
        let file = shard.st_file()?.clone();
        self.checkpoint_mut()?.add_shard(file);
        Ok(())
    }

    /// Sets the quantization config from the text of `quantize_config.json` (`kind`
    /// "quantize_config") or of a transformers `config.json` (`kind` "config"; one without a
    /// gptq `quantization_config` sets none; its MLX `quantization`, FP8, compressed-tensors,
    /// MXFP4 and bitsandbytes `quantization_config`, if any, are set too, as `mlxQuantization`,
    /// `fp8Config`, `ctConfig`, `mxfp4Config` and `bnbConfig`), and
    /// finds the layers again with them. Returns the GPTQ config (as
    /// `quantConfig`). Throws on malformed JSON or an unsupported config.
    #[wasm_bindgen(js_name = setQuantConfig)]
    pub fn set_quant_config(&mut self, text: &str, kind: &str) -> Result<JsValue, JsError> {
        let (config, mlx, fp8, ct, mxfp4, bnb) = match kind {
            "config" => (
                QuantConfig::from_config_json(text.as_bytes()).map_err(js_error)?,
                MlxQuantization::from_config_json(text.as_bytes()).map_err(js_error)?,
                Fp8Config::from_config_json(text.as_bytes()).map_err(js_error)?,
                CtConfig::from_config_json(text.as_bytes()).map_err(js_error)?,
                Mxfp4Config::from_config_json(text.as_bytes()).map_err(js_error)?,
                BnbConfig::from_config_json(text.as_bytes()).map_err(js_error)?,
            ),
            _ => (
                Some(QuantConfig::from_quantize_config(text.as_bytes()).map_err(js_error)?),
                None,
                None,
                None,
                None,
                None,
            ),
        };
        let c = self.checkpoint_mut()?;
        c.set_config(config);
        c.set_mlx(mlx);
        c.set_fp8(fp8);
        c.set_ct(ct);
        c.set_mxfp4(mxfp4);
        c.set_bnb(bnb);
        self.quant_config()
    }

    /// config.json's MLX `quantization`: `{ mode, bits, groupSize, layers: { [path]:
    /// { bits, groupSize } | false } }`, or null when none is set.
    #[wasm_bindgen(js_name = mlxQuantization)]
    pub fn mlx_quantization(&self) -> Result<JsValue, JsError> {
        Ok(safetensors_js::mlx_quantization_to_js(
            self.checkpoint()?.mlx(),
        ))
    }

    /// MLX layers (one per `<path>.scales` the config quantizes whose parts fit): `{ name
    /// (`<path>.weight`), path, type (`MLX-<bits>bit-g<group>`), bits, groupSize, shape
    /// (logical), nRows, rowLength, nElements, scalesDtype, parts: { weight, scales, biases },
    /// nBytes }`.
    #[wasm_bindgen(js_name = mlxLayers)]
    pub fn mlx_layers(&self) -> Result<JsValue, JsError> {
        Ok(safetensors_js::mlx_layers_to_js(self.checkpoint()?))
    }

    /// config.json's FP8 `quantization_config`: `{ fmt, weightBlockSize, modulesToNotConvert,
    /// activationScheme }`, or null when none is set.
    #[wasm_bindgen(js_name = fp8Config)]
    pub fn fp8_config(&self) -> Result<JsValue, JsError> {
        Ok(safetensors_js::fp8_config_to_js(self.checkpoint()?.fp8()))
    }

    /// FP8 block-scaled layers (one per `<path>.weight_scale_inv` whose weight fits): `{ name
    /// (`<path>.weight`), path, type (`FP8-E4M3-block<side>`), shape ([out, in]), block, nRows,
    /// rowLength, nElements, scaleDtype, parts: { weight, weightScaleInv }, nBytes }`.
    #[wasm_bindgen(js_name = fp8Layers)]
    pub fn fp8_layers(&self) -> Result<JsValue, JsError> {
        Ok(safetensors_js::fp8_layers_to_js(self.checkpoint()?))
    }

    /// The path of the FP8 layer `name` reads (`<path>.weight` or the path), if any.
    #[wasm_bindgen(js_name = fp8LayerNamed)]
    pub fn fp8_layer_named(&self, name: &str) -> Result<Option<String>, JsError> {
        Ok(self.checkpoint()?.fp8_layer(name).map(|l| l.name.clone()))
    }

    /// The scale rows `[start, end]` that rows `first..end` of FP8 layer `path` use.
    #[wasm_bindgen(js_name = fp8ScaleRows)]
    pub fn fp8_scale_rows(
        &self,
        path: &str,
        first: f64,
        end: f64,
    ) -> Result<Float64Array, JsError> {
        let layer = self.fp8(path)?;
        let rows = layer.scale_rows(first as u64..end as u64);
        Ok(Float64Array::from(
            &[rows.start as f64, rows.end as f64][..],
        ))
    }

    /// Dequantizes rows `first..` of FP8 layer `path` into `out` (whole rows of `rowLength`) as
    /// transformers' `Fp8Dequantize` does, from the stored bytes of exactly those rows of its
    /// weight and of the scale rows they use (`fp8ScaleRows`). Throws on sizes that do not fit
    /// or a NaN / infinite scale.
    #[wasm_bindgen(js_name = dequantizeFp8Into)]
    pub fn dequantize_fp8_into(
        &self,
        path: &str,
        first: f64,
        weight: &[u8],
        scales: &[u8],
        out: &mut [f32],
    ) -> Result<(), JsError> {
        let layer = self.fp8(path)?;
        crate::fp8::dequantize_rows(layer, first as u64, weight, scales, out).map_err(js_error)
    }

    /// config.json's MXFP4 `quantization_config`: `{ modulesToNotConvert }`, or null.
    #[wasm_bindgen(js_name = mxfp4Config)]
    pub fn mxfp4_config(&self) -> Result<JsValue, JsError> {
        Ok(safetensors_js::mxfp4_config_to_js(
            self.checkpoint()?.mxfp4(),
        ))
    }

    /// MXFP4 tensors (one per `<name>_blocks` whose `<name>_scales` fits): `{ name, path (the
    /// same), type ("MXFP4"), shape ([experts, groups·32, rows]), experts, rowsPerExpert,
    /// groups, nRows, rowLength, nElements, parts: { blocks, scales }, nBytes }`.
    #[wasm_bindgen(js_name = mxfp4Layers)]
    pub fn mxfp4_layers(&self) -> Result<JsValue, JsError> {
        Ok(safetensors_js::mxfp4_layers_to_js(self.checkpoint()?))
    }

    /// The name of the MXFP4 tensor `name` names, if any.
    #[wasm_bindgen(js_name = mxfp4LayerNamed)]
    pub fn mxfp4_layer_named(&self, name: &str) -> Result<Option<String>, JsError> {
        Ok(self.checkpoint()?.mxfp4_layer(name).map(|l| l.name.clone()))
    }

    /// Dequantizes logical rows `first..` of MXFP4 tensor `name` into `out` (whole rows of
    /// `rowLength`) as transformers' `convert_moe_packed_tensors`, from the stored bytes of the
    /// whole experts those rows lie in (of `_blocks` and `_scales`). Throws on sizes that do
    /// not fit or a NaN (255) scale.
    #[wasm_bindgen(js_name = dequantizeMxfp4Into)]
    pub fn dequantize_mxfp4_into(
        &self,
        name: &str,
        first: f64,
        blocks: &[u8],
        scales: &[u8],
        out: &mut [f32],
    ) -> Result<(), JsError> {
        let layer = self.mxfp4(name)?;
        crate::mxfp4::dequantize_rows(layer, first as u64, blocks, scales, out).map_err(js_error)
    }

    /// config.json's bitsandbytes 4-bit `quantization_config`: `{ quantType, doubleQuant,
    /// modulesToNotConvert }`, or null.
    #[wasm_bindgen(js_name = bnbConfig)]
    pub fn bnb_config(&self) -> Result<JsValue, JsError> {
        Ok(safetensors_js::bnb_config_to_js(self.checkpoint()?.bnb()))
    }

    /// bitsandbytes 4-bit layers (one per `<path>.weight.quant_state.bitsandbytes__*` whose
    /// bytes were given, `setBnbStates`, and whose parts fit): `{ name (`<path>.weight`), path,
    /// type (`NF4-b64`, `FP4-b32-dq`, ...), quantType, blocksize, dtype, doubleQuant, shape
    /// (logical), nRows, rowLength, nElements, parts: { weight, absmax, quantMap, quantState,
    /// nestedAbsmax?, nestedQuantMap? }, nBytes }`.
    #[wasm_bindgen(js_name = bnbLayers)]
    pub fn bnb_layers(&self) -> Result<JsValue, JsError> {
        Ok(safetensors_js::bnb_layers_to_js(self.checkpoint()?))
    }

    /// The quant-state tensors (every shard's) whose bytes the bitsandbytes layers still need.
    /// Throws on one larger than the core reads (`MAX_STATE_BYTES`).
    #[wasm_bindgen(js_name = bnbStateTensors)]
    pub fn bnb_state_tensors(&self) -> Result<Vec<String>, JsError> {
        let c = self.checkpoint()?;
        (c.bnb_state_tensors().into_iter())
            .map(|(_, t)| {
                crate::bnb::check_state_size(t.name(), t.n_bytes()).map_err(js_error)?;
                Ok(t.name().to_string())
            })
            .collect()
    }

    /// Gives the bytes of quant-state tensors `names` (`bytes` their contents one after the
    /// other, `lengths` each one's) and finds the bitsandbytes layers again.
    #[wasm_bindgen(js_name = setBnbStates)]
    pub fn set_bnb_states(
        &mut self,
        names: Vec<String>,
        bytes: &[u8],
        lengths: Vec<f64>,
    ) -> Result<(), JsError> {
        if names.len() != lengths.len() {
            return Err(JsError::new("setBnbStates: one length per name"));
        }
        let mut states = Vec::with_capacity(names.len());
        let mut at = 0usize;
        for (name, &len) in names.into_iter().zip(&lengths) {
            let end = (at as u64).saturating_add(len as u64);
            if len < 0.0 || end > bytes.len() as u64 {
                return Err(JsError::new(&format!(
                    "setBnbStates: {len} bytes for {name} past the {} given",
                    bytes.len()
                )));
            }
            states.push((name, bytes[at..end as usize].to_vec()));
            at = end as usize;
        }
        self.checkpoint_mut()?.set_bnb_states(states);
        Ok(())
    }

    /// The path of the bitsandbytes layer `name` reads (`<path>.weight` or the path), if any.
    #[wasm_bindgen(js_name = bnbLayerNamed)]
    pub fn bnb_layer_named(&self, name: &str) -> Result<Option<String>, JsError> {
        Ok(self.checkpoint()?.bnb_layer(name).map(|l| l.name.clone()))
    }

    /// The elements of each part that rows `first..end` of bitsandbytes layer `path` use:
    /// `[weight start, end, absmax start, end, nested_absmax start, end]` (bytes of `.weight`,
    /// entries of the others; the nested pair `[0, 0]` without double quantization).
    #[wasm_bindgen(js_name = bnbPartRanges)]
    pub fn bnb_part_ranges(
        &self,
        path: &str,
        first: f64,
        end: f64,
    ) -> Result<Float64Array, JsError> {
        let layer = self.bnb(path)?;
        let rows = first as u64..end as u64;
        let w = layer.weight_bytes(rows.clone());
        let a = layer.blocks(rows);
        let n = layer.nested_blocks(a.clone());
        let ranges = [w.start, w.end, a.start, a.end, n.start, n.end].map(|v| v as f64);
        Ok(Float64Array::from(&ranges[..]))
    }

    /// Checks the stored `quant_map` of bitsandbytes layer `path` (its 64 bytes) is the quant
    /// type's code book, as the core does before it reads one. Throws otherwise.
    #[wasm_bindgen(js_name = checkBnbQuantMap)]
    pub fn check_bnb_quant_map(&self, path: &str, bytes: &[u8]) -> Result<(), JsError> {
        crate::bnb::check_quant_map(self.bnb(path)?, bytes).map_err(js_error)
    }

    /// Dequantizes rows `first..` of bitsandbytes layer `path` into `out` (whole rows of
    /// `rowLength`) as bitsandbytes' `dequantize_4bit` does, from the stored elements
    /// `bnbPartRanges` names (and the whole `nested_quant_map`; both nested parts empty
    /// without double quantization). Throws on sizes that do not fit or a scale that is not
    /// finite.
    #[wasm_bindgen(js_name = dequantizeBnbInto)]
    #[allow(clippy::too_many_arguments)]
    pub fn dequantize_bnb_into(
        &self,
        path: &str,
        first: f64,
        weight: &[u8],
        absmax: &[u8],
        nested_absmax: &[u8],
        nested_quant_map: &[u8],
        out: &mut [f32],
    ) -> Result<(), JsError> {
        let parts = crate::bnb::BnbParts {
            weight,
            absmax,
            nested_absmax,
            nested_quant_map,
        };
        crate::bnb::dequantize_rows(self.bnb(path)?, first as u64, &parts, out).map_err(js_error)
    }

    /// config.json's compressed-tensors `quantization_config` (its one weight scheme): `{
    /// format, numBits, type, strategy, groupSize, symmetric, inputActivationBits, ignore,
    /// label }`, or null when none is set.
    #[wasm_bindgen(js_name = ctConfig)]
    pub fn ct_config(&self) -> Result<JsValue, JsError> {
        Ok(safetensors_js::ct_config_to_js(self.checkpoint()?.ct()))
    }

    /// compressed-tensors layers (one per `<path>.weight_scale` whose parts fit): `{ name
    /// (`<path>.weight`), path, type (`CT-W<bits>A<act>-g<group>` ...), format, bits, strategy,
    /// groupSize, symmetric, shape ([out, in]), nRows, rowLength, nElements, scaleDtype, parts:
    /// { weight, weightScale, weightShape?, weightZeroPoint? }, nBytes }`.
    #[wasm_bindgen(js_name = ctLayers)]
    pub fn ct_layers(&self) -> Result<JsValue, JsError> {
        Ok(safetensors_js::ct_layers_to_js(self.checkpoint()?))
    }

    /// The path of the compressed-tensors layer `name` reads (`<path>.weight` or the path).
    #[wasm_bindgen(js_name = ctLayerNamed)]
    pub fn ct_layer_named(&self, name: &str) -> Result<Option<String>, JsError> {
        Ok(self.checkpoint()?.ct_layer(name).map(|l| l.name.clone()))
    }

    /// The scale rows `[start, end]` that rows `first..end` of compressed-tensors layer `path`
    /// use (`[0, 1]` for a tensor scale).
    #[wasm_bindgen(js_name = ctScaleRows)]
    pub fn ct_scale_rows(&self, path: &str, first: f64, end: f64) -> Result<Float64Array, JsError> {
        let rows = self.ct(path)?.scale_rows(first as u64..end as u64);
        Ok(Float64Array::from(
            &[rows.start as f64, rows.end as f64][..],
        ))
    }

    /// The zero-point rows `[start, end]` (packed words down each column) that rows
    /// `first..end` of asymmetric compressed-tensors layer `path` use.
    #[wasm_bindgen(js_name = ctZeroRows)]
    pub fn ct_zero_rows(&self, path: &str, first: f64, end: f64) -> Result<Float64Array, JsError> {
        let rows = self.ct(path)?.zero_rows(first as u64..end as u64);
        Ok(Float64Array::from(
            &[rows.start as f64, rows.end as f64][..],
        ))
    }

    /// Checks the stored values of pack-quantized layer `path`'s `weight_shape` (its bytes)
    /// against the logical shape its packed weight and scales give. Throws on a misfit.
    #[wasm_bindgen(js_name = checkCtWeightShape)]
    pub fn check_ct_weight_shape(&self, path: &str, bytes: &[u8]) -> Result<(), JsError> {
        let layer = self.ct(path)?;
        let name = format!("{path}.weight_shape");
        let (_, t) = (self.checkpoint()?.tensor(&name))
            .ok_or_else(|| JsError::new(&format!("no tensor named {name}")))?;
        crate::ct::check_weight_shape_header(layer, t.dtype(), t.shape()).map_err(js_error)?;
        crate::ct::check_weight_shape(layer, bytes).map_err(js_error)
    }

    /// Dequantizes rows `first..` of compressed-tensors layer `path` into `out` (whole rows of
    /// `rowLength`) as the package's `decompress` does, from the stored bytes of exactly those
    /// rows of its weight, of the scale rows (`ctScaleRows`) and zero-point rows (`ctZeroRows`;
    /// empty when symmetric) they use. Throws on sizes that do not fit or a NaN / infinite scale.
    #[wasm_bindgen(js_name = dequantizeCtInto)]
    pub fn dequantize_ct_into(
        &self,
        path: &str,
        first: f64,
        weight: &[u8],
        scales: &[u8],
        zeros: &[u8],
        out: &mut [f32],
    ) -> Result<(), JsError> {
        let layer = self.ct(path)?;
        crate::ct::dequantize_rows(layer, first as u64, weight, scales, zeros, out)
            .map_err(js_error)
    }

    /// The path of the MLX layer `name` reads (`<path>.weight` or the path), if any.
    #[wasm_bindgen(js_name = mlxLayerNamed)]
    pub fn mlx_layer_named(&self, name: &str) -> Result<Option<String>, JsError> {
        Ok(self.checkpoint()?.mlx_layer(name).map(|l| l.name.clone()))
    }

    /// Dequantizes rows `first..` of MLX layer `path` into `out` (whole rows of `rowLength`) as
    /// `mx.dequantize` does, from the stored bytes of exactly those rows of its weight, scales
    /// and biases. Throws on sizes that do not fit or a NaN / infinite scale or bias.
    #[wasm_bindgen(js_name = dequantizeMlxInto)]
    pub fn dequantize_mlx_into(
        &self,
        path: &str,
        first: f64,
        weight: &[u8],
        scales: &[u8],
        biases: &[u8],
        out: &mut [f32],
    ) -> Result<(), JsError> {
        let layer = (self.checkpoint()?.mlx_layers().iter())
            .find(|l| l.name == path)
            .ok_or_else(|| JsError::new(&format!("no MLX layer named {path}")))?;
        crate::mlx::dequantize_rows(layer, first as u64, weight, scales, biases, out)
            .map_err(js_error)
    }

    /// `{ bits, groupSize, descAct, sym, checkpointFormat }` (null fields when the config has
    /// none), or null when no config is set.
    #[wasm_bindgen(js_name = quantConfig)]
    pub fn quant_config(&self) -> Result<JsValue, JsError> {
        Ok(safetensors_js::config_to_js(self.checkpoint()?.config()))
    }

    /// GPTQ layers (one per `<prefix>.qweight` whose parts fit): `{ name, bits, groupSize,
    /// inFeatures, outFeatures, nGroups, hasGIdx, actOrder (the config's desc_act, null
    /// without a config), checkpointFormat, scalesDtype, parts: { qweight, qzeros, scales,
    /// g_idx? }, nBytes (of every part) }` (tensor names).
    #[wasm_bindgen(js_name = gptqLayers)]
    pub fn gptq_layers(&self) -> Result<JsValue, JsError> {
        Ok(safetensors_js::layers_to_js(self.checkpoint()?))
    }

    /// The prefix of the GPTQ layer `name` reads: `name` itself, or `<prefix>.weight` when no
    /// stored tensor of any shard has that name (the core's rule, as the CLI resolves it).
    #[wasm_bindgen(js_name = layerNamed)]
    pub fn layer_named(&self, name: &str) -> Result<Option<String>, JsError> {
        Ok(self.checkpoint()?.layer(name).map(|l| l.name.clone()))
    }

    /// Why `<prefix>.qweight` (GPTQ) or `<prefix>.scales` (MLX) tensors that are not layers
    /// were left out (one line each).
    #[wasm_bindgen(js_name = gptqLayerErrors)]
    pub fn gptq_layer_errors(&self) -> Result<Vec<String>, JsError> {
        Ok((self.checkpoint()?.layer_errors().iter())
            .map(|e| e.to_string())
            .collect())
    }

    /// Keeps the whole data of GPTQ layer `name`'s parts in wasm memory, to dequantize any of
    /// its rows without copying them again.
    #[wasm_bindgen(js_name = gptqLayerData)]
    pub fn gptq_layer_data(
        &self,
        name: &str,
        qweight: Vec<u8>,
        qzeros: Vec<u8>,
        scales: Vec<u8>,
        g_idx: Option<Vec<u8>>,
    ) -> Result<GptqLayerData, JsError> {
        Ok(GptqLayerData {
            layer: self.layer(name)?.clone(),
            format: self.checkpoint()?.checkpoint_format(),
            qweight,
            qzeros,
            scales,
            g_idx,
        })
    }
}

/// The data of one GPTQ layer's parts, held in wasm memory (from `gptqLayerData`).
#[wasm_bindgen]
pub struct GptqLayerData {
    layer: GptqLayer,
    format: CheckpointFormat,
    qweight: Vec<u8>,
    qzeros: Vec<u8>,
    scales: Vec<u8>,
    g_idx: Option<Vec<u8>>,
}

#[wasm_bindgen]
impl GptqLayerData {
    /// Dequantizes output features `first..end` into `out` (`(end - first) * inFeatures`
    /// floats, row-major [out, in]). `wrapping` reads v1 zeros as GPTQModel does ((stored + 1)
    /// mod 2^bits) instead of llama.cpp's stored + 1.
    #[wasm_bindgen(js_name = dequantizeInto)]
    pub fn dequantize_into(
        &self,
        first: f64,
        end: f64,
        wrapping: bool,
        out: &mut [f32],
    ) -> Result<(), JsError> {
        let parts = LayerParts {
            qweight: &self.qweight,
            qzeros: &self.qzeros,
            scales: &self.scales,
            g_idx: self.g_idx.as_deref(),
        };
        let v1 = if wrapping {
            V1Zeros::Wrapping
        } else {
            V1Zeros::Unmasked
        };
        crate::gptq::dequantize_rows(
            &self.layer,
            &parts,
            self.format,
            v1,
            first as u64..end as u64,
            out,
        )
        .map_err(js_error)
    }
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ShardIndexJs<'a> {
    weight_map: &'a [(String, String)],
    shards: Vec<&'a str>,
    metadata: &'a serde_json::Map<String, serde_json::Value>,
}

/// A `model.safetensors.index.json`: `{ weightMap: [[tensor, shard file]], shards (in order
/// of first mention), metadata }`. Throws on a bad index (shards must be plain file names).
fn not_a_checkpoint() -> JsError {
    JsError::new(
        "a GGUF model has no safetensors checkpoint (shards, quantization configs, layers)",
    )
}

#[wasm_bindgen(js_name = parseShardIndex)]
pub fn parse_shard_index(bytes: &[u8]) -> Result<JsValue, JsError> {
    let index = crate::safetensors::ShardIndex::from_bytes(bytes).map_err(js_error)?;
    Ok(to_js(&ShardIndexJs {
        weight_map: index.weight_map(),
        shards: index.shards(),
        metadata: index.metadata(),
    }))
}
