// openSafetensors: a safetensors checkpoint, plain or GPTQ. The header is parsed in wasm from a
// prefix (the first 8 bytes give its exact length: at most 2 requests); the quantization config
// comes from the options or from quantize_config.json / config.json beside the file; tensor rows
// and GPTQ layers are fetched on demand and converted / dequantized in wasm.
import { loadWasm } from './wasm.js';
import { toSource, importNodeFs, openBounded, siblingOf, fetchTextBounded, MAX_TEXT_BYTES } from './sources.js';
import { readGrowingPrefix } from './prefix.js';
import { rowsOf, progressCounter, runStatsJob, outputArray, knownSize, ShardedModel } from './model.js';
import { eachChunkAhead, rowsPerRead } from './read-rows.js';
import { errorMessage } from './sources.js';
/** @import { SafetensorsOptions, GgufInput, GptqLayer, CtConfig, CtLayer, Mxfp4Layer, Fp8Config, Fp8Layer, MlxLayer, MlxQuantization, QuantConfig, QuantErrorOptions, QuantErrorReport, ReadOptions, SafetensorsSummary, SafetensorsTensorInfo, ScalarEntry, StatsOptions, TensorStats } from './types.js' */
/** @import { AnyOpenOptions, Source, Writable } from './internal.js' */
/** @import { SafetensorsHeader, Wasm } from './bindings.js' */
/** @import { ChunkOptions } from './model.js' */
/** @typedef {ChunkOptions & { v1Zeros?: 'llama.cpp' | 'gptqmodel' }} StChunkOptions */

/** First read of a safetensors file: most headers fit. */
export const SAFETENSORS_FIRST_READ_BYTES = 256 * 1024;
/** Bytes fetched per request for plain tensors; GPTQ layers dequantize this many output bytes at a time. */
const CHUNK_BYTES = 8 * 1024 * 1024;
/** The core's limit on a safetensors header (its JSON, 100 MB), plus the 8-byte length. */
const SAFETENSORS_MAX_HEADER = 100_000_000 + 8;

const isNode = typeof process !== 'undefined' && !!process.versions?.node;

/**
 * Opens a safetensors checkpoint (plain or quantized: GPTQ, MLX, FP8, compressed-tensors,
 * MXFP4), reading only its header (at most 2 requests), and finds its quantized layers and
 * their config. A URL or Node path naming `model.safetensors.index.json` opens every shard
 * beside it as one model (GPTQ layers whose parts straddle shards included).
 * @param {GgufInput} input a URL, File/Blob, ArrayBuffer/Uint8Array, Node path or {byteLength, slice}
 * @param {SafetensorsOptions} [options] openGguf's options, plus `quantizeConfig` / `config` (objects, JSON
 *   text is not accepted: pass URLs as strings or URL objects), `v1Zeros` ('llama.cpp' default, or
 *   'gptqmodel') and `findConfig` (default true: look beside a URL or path)
 * @returns {Promise<SafetensorsModel>}
 */
export async function openSafetensors(input, options = {}) {
  if (isIndexName(input)) return openIndex(input, options);
  return openSafetensorsSource(input, await toSource(input, options), options);
}

/**
 * Whether `input` names a shard index (`model.safetensors.index.json`).
 * @param {unknown} input
 * @returns {input is string | URL}
 * @internal
 */
export function isIndexName(input) {
  return (typeof input === 'string' || input instanceof URL) && /\.safetensors\.index\.json$/i.test(String(input).split(/[?#]/)[0]);
}

/**
 * A sharded checkpoint: the index, then every shard's header (in parallel), as one model.
 * @param {string | URL} input
 * @param {AnyOpenOptions} options
 */
async function openIndex(input, options) {
  const wasm = await loadWasm();
  /** @type {{ shards: string[], weightMap: [string, string][], metadata?: Record<string, unknown> }} */
  let index;
  try {
    index = wasm.parseShardIndex(new TextEncoder().encode(/** @type {string} */ (await fetchText(input, options, { optional: false }))));
  } catch (err) {
    throw new Error(`gguf-lens: ${input}: ${errorMessage(err)}`, { cause: err });
  }
  // Names from the file: plain file names beside the index, on its origin, or refused.
  const where = index.shards.map((/** @type {string} */ shard) => siblingOf(String(input), shard, 'shard'));
  const models = await openBounded(where,
    // Never an index again (a crafted one naming itself would recurse).
    async (shard, _i, signal) => {
      const shardOptions = { ...options, signal, findConfig: false };
      return openSafetensorsSource(shard, await toSource(shard, shardOptions), shardOptions);
    }, { signal: options.signal });
  try {
    const [first] = models;
    first._joinIndex(models, index, input);
    await first._loadConfig(input, options);
    return first;
  } catch (err) {
    models[0]?._ownShardOnly();
    for (const m of models) await m.close();
    throw err;
  }
}

/**
 * openSafetensors on an already made source (open() passes one it has read from).
 * @param {unknown} input what the source was made from (for a config beside it)
 * @param {Source} source
 * @param {AnyOpenOptions} [options]
 * @returns {Promise<SafetensorsModel>}
 * @internal
 */
export async function openSafetensorsSource(input, source, options = {}) {
  const wasmReady = loadWasm();
  wasmReady.catch(() => {}); // a failed load is reported where it is awaited
  try {
    const header = await readHeader(wasmReady, source, options);
    const model = new SafetensorsModel(await wasmReady, header, source, options);
    try {
      await model._loadConfig(input, options);
    } catch (err) {
      header.free();
      throw err;
    }
    return model;
  } catch (err) {
    await source.close();
    throw err;
  }
}

/**
 * @param {Promise<Wasm>} wasmReady
 * @param {Source} source
 * @param {AnyOpenOptions} options
 * @returns {Promise<SafetensorsHeader>}
 */
function readHeader(wasmReady, source, options) {
  const firstRead = options.firstReadBytes ?? SAFETENSORS_FIRST_READ_BYTES;
  const parse = async (/** @type {Uint8Array} */ prefix) => (await wasmReady).parseSafetensors(prefix, source.byteLength);
  return readGrowingPrefix(source, options, firstRead, parse, 'safetensors header', SAFETENSORS_MAX_HEADER);
}

/**
 * Text of a config given as a URL (fetched) or a Node path; undefined when it is not there (404, ENOENT).
 * @param {string | URL} where
 * @param {AnyOpenOptions} options
 * @param {{ optional: boolean }} how
 * @returns {Promise<string | undefined>}
 */
async function fetchText(where, options, { optional }) {
  const text = String(where);
  if (isNode && !/^(https?|blob|data):/i.test(text)) {
    const { readFile, stat } = await importNodeFs();
    try {
      const path = /^file:/i.test(text) ? new URL(text) : text;
      const { size } = await stat(path);
      if (size > MAX_TEXT_BYTES) throw new Error(`${size} bytes, more than ${MAX_TEXT_BYTES} for a shard index or config`);
      return await readFile(path, 'utf8');
    } catch (err) {
      if (optional && /** @type {{ code?: unknown }} */ (err).code === 'ENOENT') return undefined;
      throw new Error(`gguf-lens: cannot read ${text}: ${errorMessage(err)}`, { cause: err });
    }
  }
  let answer;
  try {
    answer = await fetchTextBounded(text, options);
  } catch (err) {
    if (options.signal?.aborted) throw err;
    if (optional) return undefined;
    throw new Error(`gguf-lens: cannot fetch ${text}: ${errorMessage(err)}`, { cause: err });
  }
  if (answer.text === undefined) {
    if (optional) return undefined; // 404 (or any refusal): no config there
    throw new Error(`gguf-lens: ${text}: HTTP ${answer.status}`);
  }
  return answer.text;
}

/**
 * Where a config beside `input` would be, or undefined for inputs that are not a URL or path.
 * @param {unknown} input
 * @param {string} fileName
 */
function besideInput(input, fileName) {
  if (!(typeof input === 'string' || input instanceof URL)) return undefined;
  const text = String(input);
  if (/^(blob|data):/i.test(text)) return undefined;
  if (/^(https?|file):/i.test(text)) return new URL(fileName, text).href;
  if (!isNode) {
    // A relative URL, as fetch resolves it: against the page's or worker's location.
    try {
      return new URL(fileName, new URL(text, globalThis.location?.href)).href;
    } catch {
      return undefined;
    }
  }
  // A Node path.
  return text.slice(0, text.search(/[^/\\]*$/)) + fileName;
}

/**
 * A safetensors file: metadata, tensors, GPTQ layers, and reads of either as f32.
 * @extends {ShardedModel<SafetensorsModel, SafetensorsTensorInfo>}
 */
export class SafetensorsModel extends ShardedModel {
  // The fields, declared for the published types (the constructor and the layer and config
  // setters set them): what users read, read-only, and the internals, left out of the declarations
  // (marked internal: tsc's stripInternal).
  /** @readonly @type {'safetensors'} */
  format;
  /** Where the tensor data starts in the file. @readonly @type {number} */
  dataOffset;
  /** @readonly @type {number} */
  headerLength;
  /** `__metadata__` as entries, the shape of GgufModel.metadata (every value a string).
   * @readonly @type {(ScalarEntry & { value: string })[]} */
  metadata;
  /** The index's "metadata" (e.g. total_size), for a sharded checkpoint.
   * @readonly @type {Record<string, unknown> | undefined} */
  indexMetadata;
  /** @readonly @type {GptqLayer[]} */
  gptqLayers;
  /** Why some `.qweight` (GPTQ) or `.scales` (MLX) tensors are not layers. @readonly @type {string[]} */
  gptqLayerErrors;
  /** MLX layers, each read (dequantized as `mx.dequantize`) as its `<path>.weight`.
   * @readonly @type {MlxLayer[]} */
  mlxLayers;
  /** config.json's MLX `quantization` (quantConfigSource says where it came from).
   * @readonly @type {MlxQuantization | null} */
  mlxQuantization;
  /** FP8 block-scaled layers, each read (dequantized as transformers' `Fp8Dequantize`) as its
   * `<path>.weight`. @readonly @type {Fp8Layer[]} */
  fp8Layers;
  /** config.json's FP8 `quantization_config` (quantConfigSource says where it came from).
   * @readonly @type {Fp8Config | null} */
  fp8Config;
  /** compressed-tensors layers, each read (dequantized as the package's `decompress`) as its
   * `<path>.weight`. @readonly @type {CtLayer[]} */
  ctLayers;
  /** config.json's compressed-tensors `quantization_config` (quantConfigSource says where it
   * came from). @readonly @type {CtConfig | null} */
  ctConfig;
  /** gpt-oss MXFP4 tensors, each read (dequantized as transformers'
   * `convert_moe_packed_tensors`) as its `name`. @readonly @type {Mxfp4Layer[]} */
  mxfp4Layers;
  /** config.json's MXFP4 `quantization_config`. @readonly @type {{ modulesToNotConvert: string[] } | null} */
  mxfp4Config;
  /** The GPTQ config (quantize_config.json's, or config.json's quantization_config).
   * @readonly @type {QuantConfig | null} */
  quantConfig;
  /** Where the config came from (a URL, path, or "options.quantizeConfig"); null if none.
   * @readonly @type {string | null} */
  quantConfigSource;
  /** Set when a config found beside the file could not be used. @readonly @type {string | undefined} */
  quantConfigError;
  /** @internal @type {Wasm} */
  wasm;
  /** @internal @type {SafetensorsHeader} */
  header;
  /** @internal @type {Source} */
  source;
  /** @internal @type {'llama.cpp' | 'gptqmodel'} */
  v1Zeros;
  /** The last GPTQ layer read, its parts in wasm memory.
   * @internal @type {{ name: string, data: import('./wasm/gguf_lens.js').GptqLayerData } | undefined} */
  _lastLayer;
  /** @internal @type {Map<string, GptqLayer>} */
  _layerIndex;
  /** @internal @type {Map<string, MlxLayer>} */
  _mlxIndex;
  /** @internal @type {Map<string, Fp8Layer>} */
  _fp8Index;
  /** @internal @type {Map<string, CtLayer>} */
  _ctIndex;
  /** Paths of the pack-quantized layers whose `weight_shape` values were checked.
   * @internal @type {Set<string>} */
  _ctShapeChecked;
  /** @internal @type {Map<string, Mxfp4Layer>} */
  _mxfp4Index;

  /**
   * @internal
   * @param {Wasm} wasm
   * @param {SafetensorsHeader} header
   * @param {Source} source
   * @param {AnyOpenOptions} [options]
   */
  constructor(wasm, header, source, options = {}) {
    super();
    // Read-only to users (ShardedModel's fields); set here as there.
    const self = /** @type {Writable<this>} */ (this);
    this.wasm = wasm;
    this.header = header;
    this.source = source;
    this.format = 'safetensors';
    self.byteLength = knownSize(source);
    this.dataOffset = header.dataOffset;
    this.headerLength = header.headerLength;
    this.metadata = header.metadata().map((/** @type {{ key: string, value: string }} */ { key, value }) => ({ key, type: 'string', value }));
    self.tensors = header.tensors();
    for (const t of this.tensors) t.shard = 0;
    this._tensorIndex = new Map(this.tensors.map((t) => [t.name, t]));
    self.shards = [this];
    this.indexMetadata = undefined;
    this.quantConfig = null;
    this.quantConfigSource = null;
    this.quantConfigError = undefined;
    this._lastLayer = undefined;
    this.gptqLayers = [];
    this._layerIndex = new Map();
    this.gptqLayerErrors = [];
    this.mlxLayers = [];
    this._mlxIndex = new Map();
    this.mlxQuantization = null;
    this.fp8Layers = [];
    this._fp8Index = new Map();
    this.fp8Config = null;
    this.ctLayers = [];
    this._ctIndex = new Map();
    this.ctConfig = null;
    this._ctShapeChecked = new Set();
    this.mxfp4Layers = [];
    this._mxfp4Index = new Map();
    this.mxfp4Config = null;
    this._setLayers();
    this.v1Zeros = options.v1Zeros ?? 'llama.cpp';
  }

  /**
   * Becomes the model of a sharded checkpoint's shards (this one first), checked against the
   * index's weight map: the core checkpoint in this header holds every shard (GPTQ layers may
   * straddle them).
   * @param {SafetensorsModel[]} models
   * @param {{ shards: string[], weightMap: [string, string][], metadata?: Record<string, unknown> }} index
   * @param {string | URL} input the index's URL or path, for errors
   * @internal
   */
  _joinIndex(models, index, input) {
    // Read-only to users; set here as in the constructor.
    const self = /** @type {Writable<this>} */ (this);
    this._joinShards(models, models.map((m) => m.tensors), models.map((m) => m.byteLength));
    for (const m of models.slice(1)) this.header.addShard(m.header);
    for (const [tensor, shard] of index.weightMap) {
      const t = this._tensorIndex.get(tensor);
      if (!t || index.shards[t.shard] !== shard) throw new Error(`gguf-lens: ${input}: ${tensor} is not in ${shard}`);
    }
    self.indexMetadata = index.metadata;
    this._setLayers();
  }

  /**
   * A `__metadata__` value, or undefined (as GgufModel.get).
   * @param {string} key
   * @returns {string | undefined}
   */
  get(key) {
    return this.metadata.find((e) => e.key === key)?.value;
  }

  /** The GPTQ, MLX, FP8 and compressed-tensors layers the core found (across every shard), with the reasons for misfits. @internal */
  _setLayers() {
    // Read-only to users; set here as in the constructor.
    const self = /** @type {Writable<this>} */ (this);
    self.gptqLayers = this.header.gptqLayers();
    this._layerIndex = new Map(this.gptqLayers.map((l) => [l.name, l]));
    self.gptqLayerErrors = this.header.gptqLayerErrors();
    self.mlxLayers = this.header.mlxLayers();
    this._mlxIndex = new Map(this.mlxLayers.map((l) => [l.path, l]));
    self.mlxQuantization = this.header.mlxQuantization();
    self.fp8Layers = this.header.fp8Layers();
    this._fp8Index = new Map(this.fp8Layers.map((l) => [l.path, l]));
    self.fp8Config = this.header.fp8Config();
    self.ctLayers = this.header.ctLayers();
    this._ctIndex = new Map(this.ctLayers.map((l) => [l.path, l]));
    self.ctConfig = this.header.ctConfig();
    this._ctShapeChecked = new Set();
    self.mxfp4Layers = this.header.mxfp4Layers();
    this._mxfp4Index = new Map(this.mxfp4Layers.map((l) => [l.name, l]));
    self.mxfp4Config = this.header.mxfp4Config();
  }

  /**
   * Sets the config from options, else from quantize_config.json then config.json beside the input.
   * @param {unknown} input
   * @param {AnyOpenOptions} options
   * @internal
   */
  async _loadConfig(input, options) {
    /** @type {['quantizeConfig' | 'config', string][]} */
    const given = [['quantizeConfig', 'quantize_config'], ['config', 'config']];
    for (const [option, kind] of given) {
      const value = options[option];
      if (value === undefined || value === null) continue;
      const text = /** @type {string} */ (typeof value === 'string' || value instanceof URL
        ? await fetchText(value, options, { optional: false })
        : JSON.stringify(value));
      this._setConfig(text, kind, typeof value === 'object' && !(value instanceof URL) ? `options.${option}` : String(value));
      return;
    }
    // GPTQ layers have a `.qweight`, MLX layers a `.scales` (and GPTQ's too), FP8 layers a
    // `.weight_scale_inv`, compressed-tensors layers a `.weight_scale`.
    // MXFP4 tensors a `_blocks`.
    const quantized = (/** @type {SafetensorsTensorInfo} */ t) => /\.(qweight|scales|weight_scale_inv|weight_scale)$|_blocks$/.test(t.name);
    if (options.findConfig === false || !this.tensors.some(quantized)) return;
    for (const [file, kind] of [['quantize_config.json', 'quantize_config'], ['config.json', 'config']]) {
      const where = besideInput(input, file);
      if (!where) return;
      const text = await fetchText(where, options, { optional: true });
      if (text === undefined) continue;
      try {
        this._setConfig(text, kind, where);
      } catch (err) {
        // A config found by guessing that is not GPTQ's or MLX's (or not JSON) is reported, not fatal.
        /** @type {Writable<this>} */ (this).quantConfigError = /** @type {Error} */ (err).message;
        continue;
      }
      if (this._anyConfig()) return;
    }
  }

  /**
   * @param {string} text a config's JSON
   * @param {string} kind 'quantize_config' or 'config'
   * @param {string} where where it came from, for errors and quantConfigSource
   * @internal
   */
  _setConfig(text, kind, where) {
    // Read-only to users; set here as in the constructor.
    const self = /** @type {Writable<this>} */ (this);
    try {
      self.quantConfig = this.header.setQuantConfig(text, kind);
    } catch (err) {
      throw new Error(`gguf-lens: ${where}: ${errorMessage(err)}`, { cause: err });
    }
    this._lastLayer?.data.free();
    this._lastLayer = undefined;
    this._setLayers();
    self.quantConfigSource = this._anyConfig() ? where : null;
  }

  /** Whether a quantization config (GPTQ, MLX, FP8 or compressed-tensors) is set. @internal */
  _anyConfig() {
    return Boolean(this.quantConfig || this.mlxQuantization || this.fp8Config || this.ctConfig || this.mxfp4Config);
  }

  /**
   * A GPTQ layer by prefix, or undefined.
   * @param {string} name
   */
  gptqLayer(name) {
    return this._layerIndex.get(name);
  }

  /** The GPTQ layer `name` reads: by its prefix, or as `<prefix>.weight` when no stored tensor
   * has that name (the core's rule, as the CLI resolves it).
   * @param {string} name
   * @internal
   */
  _layerNamed(name) {
    const prefix = this.header.layerNamed(name);
    return prefix === undefined ? undefined : this._layerIndex.get(prefix);
  }

  /** The MLX layer `name` reads (its `<path>.weight`, or the path), or undefined (the core's rule).
   * @param {string} name
   * @internal
   */
  _mlxNamed(name) {
    const path = this.header.mlxLayerNamed(name);
    return path === undefined ? undefined : this._mlxIndex.get(path);
  }

  /** The FP8 layer `name` reads (its `<path>.weight`, or the path), or undefined (the core's rule).
   * @param {string} name
   * @internal
   */
  _fp8Named(name) {
    const path = this.header.fp8LayerNamed(name);
    return path === undefined ? undefined : this._fp8Index.get(path);
  }

  /** The MXFP4 tensor `name` names, or undefined (the core's rule).
   * @param {string} name
   * @internal
   */
  _mxfp4Named(name) {
    const found = this.header.mxfp4LayerNamed(name);
    return found === undefined ? undefined : this._mxfp4Index.get(found);
  }

  /** The compressed-tensors layer `name` reads (its `<path>.weight`, or the path), or undefined (the core's rule).
   * @param {string} name
   * @internal
   */
  _ctNamed(name) {
    const path = this.header.ctLayerNamed(name);
    return path === undefined ? undefined : this._ctIndex.get(path);
  }

  /** The layer read by row ranges of its parts (compressed-tensors, FP8, MLX) that `name`
   * names, if any (in the core's order).
   * @param {string} name
   * @internal
   */
  _rangeLayer(name) {
    return this._ctNamed(name) ?? this._mxfp4Named(name) ?? this._fp8Named(name) ?? this._mlxNamed(name);
  }

  /** The core's summary: GGUF's summary fields (null where a checkpoint has no such thing),
   * then dtypeMix (= quantMix), gptq, mlx and fp8.
   * @returns {SafetensorsSummary}
   */
  summary() {
    return this.header.summary(this.quantConfigSource ?? undefined);
  }

  /**
   * Rows [a, b) (default: all) as f32: a stored tensor converted as torch does, a GPTQ layer
   * (by prefix) dequantized to [outFeatures, inFeatures] rows, or an MLX layer (by
   * `<path>.weight`) dequantized to its logical rows.
   * @param {string} name
   * @param {ReadOptions & { v1Zeros?: 'llama.cpp' | 'gptqmodel' }} [options]
   * @returns {Promise<Float32Array>}
   */
  async readTensor(name, options = {}) {
    const t = this._rangeLayer(name) ?? this._layerNamed(name) ?? this.tensor(name);
    const [a, b] = rowsOf(t, options.rows);
    const out = outputArray(options.into, (b - a) * t.rowLength);
    await this._eachChunk(name, a, b, options, (values, first) => out.set(values, (first - a) * t.rowLength));
    return out;
  }

  /**
   * Streaming statistics of rows [a, b) (default: all) of a tensor or GPTQ layer.
   * @param {string} name
   * @param {StatsOptions & { v1Zeros?: 'llama.cpp' | 'gptqmodel' }} [options]
   * @returns {Promise<TensorStats>}
   */
  async tensorStats(name, options = {}) {
    const t = this._rangeLayer(name) ?? this._layerNamed(name) ?? this.tensor(name);
    const [a, b] = rowsOf(t, options.rows);
    const rowLength = t.rowLength;
    // Values reach wasm as f32 here (checkpoint dtypes are converted in JS or per layer).
    return runStatsJob(this.wasm, { rowLength, rowBytes: 4 * rowLength }, a, b, options,
      (job, chunkOptions, /** @type {(values: Float32Array, first: number) => void} */ keep) => this._eachChunk(name, a, b, chunkOptions, (values, first) => {
        job.add(first, values);
        keep(values, first);
      }), (job, values, first) => job.add(first, values));
  }

  /**
   * The error of quantizing rows [a, b) (default: all) of a tensor or GPTQ layer to each ggml
   * type, bit-exact to ggml's quantizers without an importance matrix: as `GgufModel.quantError`.
   * @param {string} name
   * @param {QuantErrorOptions & { v1Zeros?: 'llama.cpp' | 'gptqmodel' }} [options]
   * @returns {Promise<QuantErrorReport>}
   */
  async quantError(name, options = {}) {
    const t = this._rangeLayer(name) ?? this._layerNamed(name) ?? this.tensor(name);
    const [a, b] = rowsOf(t, options.rows);
    const job = new this.wasm.QuantErrorJob(options.types ?? [], t.rowLength);
    try {
      await this._eachChunk(name, a, b, options, (values) => job.add(values));
      return job.result();
    } finally {
      job.free();
    }
  }

  /**
   * Calls consume(values, firstRow) for consecutive row chunks of [a, b).
   * @param {string} name
   * @param {number} a
   * @param {number} b
   * @param {StChunkOptions} options
   * @param {(values: Float32Array, first: number) => void} consume
   * @internal
   */
  async _eachChunk(name, a, b, options, consume) {
    const chunkBytes = options.chunkBytes ?? CHUNK_BYTES;
    const ct = this._ctNamed(name);
    if (ct) {
      await this._checkCtShape(ct, options);
      const span = (/** @type {(path: string, first: number, last: number) => Float64Array} */ f) =>
        (/** @type {number} */ first, /** @type {number} */ last) => Array.from(f.call(this.header, ct.path, first, last));
      const parts = [
        { t: this.tensor(ct.parts.weight), rows: (/** @type {number} */ first, /** @type {number} */ last) => [first, last] },
        { t: this.tensor(ct.parts.weightScale), rows: span(this.header.ctScaleRows) },
      ];
      if (ct.parts.weightZeroPoint) parts.push({ t: this.tensor(ct.parts.weightZeroPoint), rows: span(this.header.ctZeroRows) });
      const none = new Uint8Array(0);
      await this._eachRangeChunk(ct, parts, a, b, options, (first, [w, s, z], out) => this.header.dequantizeCtInto(ct.path, first, w, s, z ?? none, out), consume);
      return;
    }
    const mx = this._mxfp4Named(name);
    if (mx) {
      // A logical row reads every stored row of its expert: the parts of whole experts.
      const k = mx.groups * 32;
      const experts = (/** @type {number} */ first, /** @type {number} */ last) => [Math.floor(first / k), Math.floor((last - 1) / k) + 1];
      const per = (/** @type {number} */ n) => (/** @type {number} */ first, /** @type {number} */ last) => experts(first, last).map((e) => e * n);
      const parts = [
        { t: this.tensor(mx.parts.blocks), rows: per(mx.rowsPerExpert * mx.groups) },
        { t: this.tensor(mx.parts.scales), rows: per(mx.rowsPerExpert) },
      ];
      await this._eachRangeChunk(mx, parts, a, b, options, (first, [w, s], out) => this.header.dequantizeMxfp4Into(mx.name, first, w, s, out), consume);
      return;
    }
    const fp8 = this._fp8Named(name);
    if (fp8) {
      const scaleRows = (/** @type {number} */ first, /** @type {number} */ last) => Array.from(this.header.fp8ScaleRows(fp8.path, first, last));
      const parts = [
        { t: this.tensor(fp8.parts.weight), rows: (/** @type {number} */ first, /** @type {number} */ last) => [first, last] },
        { t: this.tensor(fp8.parts.weightScaleInv), rows: scaleRows },
      ];
      await this._eachRangeChunk(fp8, parts, a, b, options, (first, [w, s], out) => this.header.dequantizeFp8Into(fp8.path, first, w, s, out), consume);
      return;
    }
    const mlx = this._mlxNamed(name);
    if (mlx) {
      const parts = [mlx.parts.weight, mlx.parts.scales, mlx.parts.biases].map((p) => this.tensor(p));
      const same = (/** @type {number} */ first, /** @type {number} */ last) => [first, last];
      await this._eachRangeChunk(mlx, parts.map((t) => ({ t, rows: same })), a, b, options, (first, [w, s, z], out) => this.header.dequantizeMlxInto(mlx.path, first, w, s, z, out), consume);
      return;
    }
    const layer = this._layerNamed(name);
    if (layer) {
      if (a === b) return;
      const data = await this._layerData(layer, options);
      const rowsPerChunk = Math.max(1, options.rowsPerChunk ?? rowsPerRead(4 * layer.inFeatures, chunkBytes, b - a));
      const wrapping = (options.v1Zeros ?? this.v1Zeros) === 'gptqmodel';
      for (let first = a; first < b; first += rowsPerChunk) {
        if (options.signal?.aborted) throw options.signal.reason;
        const last = Math.min(b, first + rowsPerChunk);
        const out = new Float32Array((last - first) * layer.inFeatures);
        data.dequantizeInto(first, last, wrapping, out);
        consume(out, first);
      }
      return;
    }
    const t = this.tensor(name);
    const rowBytes = t.rowBytes;
    if (!t.plain || rowBytes === null) throw new Error(`gguf-lens: tensor ${name} has dtype ${t.type}, which is not read as f32`);
    const shard = this.shards[t.shard];
    const rowsPerChunk = Math.max(1, options.rowsPerChunk ?? rowsPerRead(rowBytes, chunkBytes, b - a));
    const progress = progressCounter(options.onProgress, (b - a) * rowBytes);
    const fetchRows = (/** @type {number} */ first, /** @type {number} */ last) => {
      const [start, end] = shard.header.rowsRange(name, first, last);
      return shard.source.read(start, end, options.signal, progress);
    };
    await eachChunkAhead(a, b, rowsPerChunk, fetchRows, options.signal,
      (bytes, first) => consume(shard.header.toF32(name, bytes), first));
  }

  /**
   * Calls consume(values, firstRow) for consecutive row chunks of [a, b) of an MLX, FP8 or compressed-tensors layer:
   * each chunk's rows of its parts (`rows` maps the layer's rows to a part's) fetched by Range
   * (the next chunk while one is dequantized), then `dequantize(first, bytes, out)`.
   * @param {MlxLayer | Fp8Layer | CtLayer | Mxfp4Layer} layer
   * @param {{ t: SafetensorsTensorInfo, rows: (first: number, last: number) => number[] }[]} parts
   * @param {number} a
   * @param {number} b
   * @param {StChunkOptions} options
   * @param {(first: number, bytes: Uint8Array[], out: Float32Array) => void} dequantize
   * @param {(values: Float32Array, first: number) => void} consume
   * @internal
   */
  async _eachRangeChunk(layer, parts, a, b, options, dequantize, consume) {
    const chunkBytes = options.chunkBytes ?? CHUNK_BYTES;
    const rowsPerChunk = Math.max(1, options.rowsPerChunk ?? rowsPerRead(4 * layer.rowLength, chunkBytes, b - a));
    // A part's rows shared by consecutive chunks (an MXFP4 expert) are fetched once; a scale
    // row shared by two chunks of other rows is fetched for each.
    const spans = (/** @type {number} */ first, /** @type {number} */ last) => parts.map(({ rows }) => rows(first, last));
    let total = 0;
    /** @type {number[][] | null} */
    let before = null;
    for (let first = a; first < b; first += rowsPerChunk) {
      const now = spans(first, Math.min(b, first + rowsPerChunk));
      now.forEach(([p, q], i) => { if (!(before && before[i][0] === p && before[i][1] === q)) total += (q - p) * (parts[i].t.rowBytes ?? 0); });
      before = now;
    }
    const progress = progressCounter(options.onProgress, total);
    /** @type {({ p: number, q: number, bytes: Promise<Uint8Array> } | null)[]} */
    const last = parts.map(() => null);
    const fetchRows = (/** @type {number} */ first, /** @type {number} */ end) => Promise.all(parts.map(({ t, rows }, i) => {
      const shard = this.shards[t.shard];
      const [p, q] = rows(first, end);
      const held = last[i];
      if (held && held.p === p && held.q === q) return held.bytes;
      const [start, stop] = shard.header.rowsRange(t.name, p, q);
      const bytes = shard.source.read(start, stop, options.signal, progress);
      last[i] = { p, q, bytes };
      return bytes;
    }));
    await eachChunkAhead(a, b, rowsPerChunk, fetchRows, options.signal, (bytes, first, last) => {
      const out = new Float32Array((last - first) * layer.rowLength);
      dequantize(first, bytes, out);
      consume(out, first);
    });
  }

  /**
   * Checks a pack-quantized layer's stored `weight_shape` values (16 bytes, fetched once)
   * against the shape its packed weight and scales give, as the core does when it reads one.
   * @param {CtLayer} layer
   * @param {StChunkOptions} options
   * @internal
   */
  async _checkCtShape(layer, options) {
    const part = layer.parts.weightShape;
    if (!part || this._ctShapeChecked.has(layer.path)) return;
    const t = this.tensor(part);
    const bytes = await this.shards[t.shard].source.read(t.offset, t.offset + t.nBytes, options.signal);
    try {
      this.header.checkCtWeightShape(layer.path, bytes);
    } catch (err) {
      throw new Error(`gguf-lens: ${errorMessage(err)}`, { cause: err });
    }
    this._ctShapeChecked.add(layer.path);
  }

  /**
   * The layer's parts in wasm memory; the last layer read is kept (an inspector reads rows, then statistics).
   * @param {GptqLayer} layer
   * @param {StChunkOptions} options
   * @internal
   */
  async _layerData(layer, options) {
    if (this._lastLayer?.name === layer.name) return this._lastLayer.data;
    const parts = await this._layerParts(layer, options);
    const data = this.header.gptqLayerData(layer.name, parts.qweight, parts.qzeros, parts.scales, parts.g_idx);
    this._lastLayer?.data.free();
    this._lastLayer = { name: layer.name, data };
    return data;
  }

  /**
   * The whole data of a layer's parts (qweight's columns are the output rows: strided).
   * @param {GptqLayer} layer
   * @param {StChunkOptions} options
   * @returns {Promise<Record<string, Uint8Array>>}
   * @internal
   */
  async _layerParts(layer, options) {
    const names = /** @type {[string, string][]} */ (Object.entries(layer.parts));
    const total = names.reduce((sum, [, part]) => sum + this.tensor(part).nBytes, 0);
    const progress = progressCounter(options.onProgress, total);
    const bytes = await Promise.all(names.map(([, part]) => {
      const t = this.tensor(part);
      return this.shards[t.shard].source.read(t.offset, t.offset + t.nBytes, options.signal, progress);
    }));
    return Object.fromEntries(names.map(([key], i) => [key, bytes[i]]));
  }

  /** Frees the wasm header and closes the source. */
  async close() {
    this._lastLayer?.data.free();
    this._lastLayer = undefined;
    for (const shard of this.shards) {
      shard.header.free();
      await shard.source.close();
    }
  }
}
