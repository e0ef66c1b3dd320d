// openSafetensors: a safetensors checkpoint, plain or quantized, as a Model (model.js) with its
// Checkpoint (below). The header is parsed in wasm from a prefix (the first 8 bytes give its exact
// length: at most 2 requests); the quantization config comes from the options or from
// quantize_config.json / config.json beside the file; tensor rows and quantized layers are
// fetched on demand and converted / dequantized in wasm.
import { loadWasm } from './wasm.js';
import { toSource, importNodeFs, openBounded, siblingOf, fetchTextBounded, MAX_TEXT_BYTES } from './sources.js';
import { readGrowingPrefix } from './prefix.js';
import { rowsOf, progressCounter, runStatsJob, outputArray, Model } from './model.js';
import { eachChunkAhead, rowsPerRead } from './read-rows.js';
import { errorMessage } from './sources.js';
/** @import { SafetensorsOptions, GgufInput, GptqLayer, BnbConfig, BnbLayer, CtConfig, CtLayer, Mxfp4Layer, Fp8Config, Fp8Layer, MlxLayer, MlxQuantization, QuantConfig, QuantErrorOptions, QuantErrorReport, ReadOptions, SafetensorsSummary, SafetensorsTensorInfo, ScalarEntry, StatsOptions, TensorStats } from './types.js' */
/** @import { AnyOpenOptions, Source } from './internal.js' */
/** @import { SafetensorsHeader, Wasm } from './bindings.js' */
/** @import { ChunkOptions, SafetensorsModel } from './model.js' */
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
 * MXFP4, bitsandbytes 4-bit), reading only its header (at most 2 requests; a bitsandbytes
 * checkpoint's quant states, a small JSON tensor per layer, one request each), and finds its
 * quantized layers and their config. A URL or Node path naming `model.safetensors.index.json` opens every shard
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
      const shardOptions = { ...options, signal, findConfig: false, shardOfIndex: true };
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
    const model = /** @type {SafetensorsModel} */ (new Model(await wasmReady, header, source, {}, new Checkpoint(header, options)));
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
 * A stored tensor's info (throws if absent): a checkpoint's model lists safetensors infos.
 * @param {Model} model
 * @param {string} name
 */
function stored(model, name) {
  return /** @type {SafetensorsTensorInfo} */ (model._tensor(name));
}

/**
 * A checkpoint's part of its `Model` (model.js): the quantized layers the core found in the
 * header (GPTQ, MLX, FP8, compressed-tensors, MXFP4, bitsandbytes) and the config that makes them, and how a
 * tensor or layer is read as f32 rows. The model holds one and passes itself to the readers
 * (its shards, sources and tensors).
 * @internal
 */
export class Checkpoint {
  /** The index's "metadata" (e.g. total_size), for a sharded checkpoint.
   * @type {Record<string, unknown> | undefined} */
  indexMetadata;
  /** @type {GptqLayer[]} */
  gptqLayers;
  /** Why some `.qweight` (GPTQ) or `.scales` (MLX) tensors are not layers. @type {string[]} */
  gptqLayerErrors;
  /** @type {MlxLayer[]} */
  mlxLayers;
  /** @type {MlxQuantization | null} */
  mlxQuantization;
  /** @type {Fp8Layer[]} */
  fp8Layers;
  /** @type {Fp8Config | null} */
  fp8Config;
  /** @type {CtLayer[]} */
  ctLayers;
  /** @type {CtConfig | null} */
  ctConfig;
  /** @type {Mxfp4Layer[]} */
  mxfp4Layers;
  /** @type {{ modulesToNotConvert: string[] } | null} */
  mxfp4Config;
  /** @type {BnbLayer[]} */
  bnbLayers;
  /** @type {BnbConfig | null} */
  bnbConfig;
  /** The GPTQ config (quantize_config.json's, or config.json's quantization_config).
   * @type {QuantConfig | null} */
  quantConfig;
  /** Where the config came from (a URL, path, or "options.quantizeConfig"); null if none.
   * @type {string | null} */
  quantConfigSource;
  /** Set when a config found beside the file could not be used. @type {string | undefined} */
  quantConfigError;
  /** The first shard's header: the core checkpoint of every shard (addShard).
   * @type {SafetensorsHeader} */
  header;
  /** @type {'llama.cpp' | 'gptqmodel'} */
  v1Zeros;
  /** The last GPTQ layer read, its parts in wasm memory.
   * @type {{ name: string, data: import('./wasm/gguf_lens.js').GptqLayerData } | undefined} */
  _lastLayer;
  /** @type {Map<string, GptqLayer>} */
  _layerIndex;
  /** @type {Map<string, MlxLayer>} */
  _mlxIndex;
  /** @type {Map<string, Fp8Layer>} */
  _fp8Index;
  /** @type {Map<string, CtLayer>} */
  _ctIndex;
  /** Paths of the pack-quantized layers whose `weight_shape` values were checked.
   * @type {Set<string>} */
  _ctShapeChecked;
  /** @type {Map<string, Mxfp4Layer>} */
  _mxfp4Index;
  /** @type {Map<string, BnbLayer>} */
  _bnbIndex;
  /** Paths of the bitsandbytes layers whose stored `quant_map` was checked.
   * @type {Set<string>} */
  _bnbMapChecked;

  /**
   * @param {SafetensorsHeader} header
   * @param {AnyOpenOptions} [options]
   */
  constructor(header, options = {}) {
    this.header = header;
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
    this.bnbLayers = [];
    this._bnbIndex = new Map();
    this.bnbConfig = null;
    this._bnbMapChecked = new Set();
    this._setLayers();
    this.v1Zeros = options.v1Zeros ?? 'llama.cpp';
  }

  /**
   * Becomes the checkpoint of a sharded checkpoint's shards (`model`, joined to them already),
   * checked against the index's weight map: the core checkpoint in this header holds every shard
   * (GPTQ layers may straddle them).
   * @param {Model} model
   * @param {Model[]} models the shards, `model` first
   * @param {{ shards: string[], weightMap: [string, string][], metadata?: Record<string, unknown> }} index
   * @param {string | URL} input the index's URL or path, for errors
   */
  joinIndex(model, models, index, input) {
    for (const m of models.slice(1)) this.header.addShard(m.header);
    for (const [tensor, shard] of index.weightMap) {
      const t = model._tensorIndex.get(tensor);
      if (!t || index.shards[t.shard] !== shard) throw new Error(`gguf-lens: ${input}: ${tensor} is not in ${shard}`);
    }
    this.indexMetadata = index.metadata;
    this._setLayers();
  }

  /** The GPTQ, MLX, FP8, compressed-tensors, MXFP4 and bitsandbytes layers the core found (across every shard), with the reasons for misfits. */
  _setLayers() {
    this.gptqLayers = this.header.gptqLayers();
    this._layerIndex = new Map(this.gptqLayers.map((l) => [l.name, l]));
    this.gptqLayerErrors = this.header.gptqLayerErrors();
    this.mlxLayers = this.header.mlxLayers();
    this._mlxIndex = new Map(this.mlxLayers.map((l) => [l.path, l]));
    this.mlxQuantization = this.header.mlxQuantization();
    this.fp8Layers = this.header.fp8Layers();
    this._fp8Index = new Map(this.fp8Layers.map((l) => [l.path, l]));
    this.fp8Config = this.header.fp8Config();
    this.ctLayers = this.header.ctLayers();
    this._ctIndex = new Map(this.ctLayers.map((l) => [l.path, l]));
    this.ctConfig = this.header.ctConfig();
    this._ctShapeChecked = new Set();
    this.mxfp4Layers = this.header.mxfp4Layers();
    this._mxfp4Index = new Map(this.mxfp4Layers.map((l) => [l.name, l]));
    this.mxfp4Config = this.header.mxfp4Config();
    this.bnbLayers = this.header.bnbLayers();
    this._bnbIndex = new Map(this.bnbLayers.map((l) => [l.path, l]));
    this.bnbConfig = this.header.bnbConfig();
    this._bnbMapChecked = new Set();
  }

  /**
   * Reads the quant states (a small JSON tensor each) the bitsandbytes layers are described by,
   * every shard's, and finds the layers again with them, as the core's open does. Throws on a
   * quant state larger than the core reads.
   * @param {Model} model
   * @param {AnyOpenOptions} options
   */
  async loadBnbStates(model, options) {
    /** @type {string[]} */
    let names;
    try {
      names = this.header.bnbStateTensors();
    } catch (err) {
      throw new Error(`gguf-lens: ${errorMessage(err)}`, { cause: err });
    }
    if (names.length === 0) return;
    /** @type {Uint8Array[]} */
    const states = [];
    // A few requests at a time (one per layer, each a few hundred bytes).
    for (let i = 0; i < names.length; i += 8) {
      states.push(...await Promise.all(names.slice(i, i + 8).map((name) => {
        const t = stored(model, name);
        return model.shards[t.shard].source.read(t.offset, t.offset + t.nBytes, options.signal);
      })));
    }
    const all = new Uint8Array(states.reduce((n, b) => n + b.length, 0));
    let at = 0;
    for (const b of states) { all.set(b, at); at += b.length; }
    this.header.setBnbStates(names, all, new Float64Array(states.map((b) => b.length)));
    this._setLayers();
  }

  /**
   * Sets the config from options, else from quantize_config.json then config.json beside the input.
   * @param {readonly { name: string }[]} tensors the model's (every shard's)
   * @param {unknown} input
   * @param {AnyOpenOptions} options
   */
  async loadConfig(tensors, input, options) {
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
    // MXFP4 tensors a `_blocks`, bitsandbytes layers a `.weight.quant_state.bitsandbytes__<type>`.
    const quantized = (/** @type {{ name: string }} */ t) => /\.(qweight|scales|weight_scale_inv|weight_scale)$|_blocks$|\.weight\.quant_state\.bitsandbytes__\w+$/.test(t.name);
    if (options.findConfig === false || !tensors.some(quantized)) return;
    for (const [file, kind] of [['quantize_config.json', 'quantize_config'], ['config.json', 'config']]) {
      const where = besideInput(input, file);
      if (!where) return;
      const text = await fetchText(where, options, { optional: true });
      if (text === undefined) continue;
      try {
        this._setConfig(text, kind, where);
      } catch (err) {
        // A config found by guessing that is not GPTQ's or MLX's (or not JSON) is reported, not fatal.
        this.quantConfigError = /** @type {Error} */ (err).message;
        continue;
      }
      if (this._anyConfig()) return;
    }
  }

  /**
   * @param {string} text a config's JSON
   * @param {string} kind 'quantize_config' or 'config'
   * @param {string} where where it came from, for errors and quantConfigSource
   */
  _setConfig(text, kind, where) {
    try {
      this.quantConfig = this.header.setQuantConfig(text, kind);
    } catch (err) {
      throw new Error(`gguf-lens: ${where}: ${errorMessage(err)}`, { cause: err });
    }
    this._lastLayer?.data.free();
    this._lastLayer = undefined;
    this._setLayers();
    this.quantConfigSource = this._anyConfig() ? where : null;
  }

  /** Whether a quantization config (GPTQ, MLX, FP8, compressed-tensors, MXFP4 or bitsandbytes) is set. */
  _anyConfig() {
    return Boolean(this.quantConfig || this.mlxQuantization || this.fp8Config || this.ctConfig || this.mxfp4Config || this.bnbConfig);
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
   */
  _layerNamed(name) {
    const prefix = this.header.layerNamed(name);
    return prefix === undefined ? undefined : this._layerIndex.get(prefix);
  }

  /** The MLX layer `name` reads (its `<path>.weight`, or the path), or undefined (the core's rule).
   * @param {string} name
   */
  _mlxNamed(name) {
    const path = this.header.mlxLayerNamed(name);
    return path === undefined ? undefined : this._mlxIndex.get(path);
  }

  /** The FP8 layer `name` reads (its `<path>.weight`, or the path), or undefined (the core's rule).
   * @param {string} name
   */
  _fp8Named(name) {
    const path = this.header.fp8LayerNamed(name);
    return path === undefined ? undefined : this._fp8Index.get(path);
  }

  /** The MXFP4 tensor `name` names, or undefined (the core's rule).
   * @param {string} name
   */
  _mxfp4Named(name) {
    const found = this.header.mxfp4LayerNamed(name);
    return found === undefined ? undefined : this._mxfp4Index.get(found);
  }

  /** The compressed-tensors layer `name` reads (its `<path>.weight`, or the path), or undefined (the core's rule).
   * @param {string} name
   */
  _ctNamed(name) {
    const path = this.header.ctLayerNamed(name);
    return path === undefined ? undefined : this._ctIndex.get(path);
  }

  /** The bitsandbytes layer `name` reads (its `<path>.weight`, or the path), or undefined (the core's rule).
   * @param {string} name
   */
  _bnbNamed(name) {
    const path = this.header.bnbLayerNamed(name);
    return path === undefined ? undefined : this._bnbIndex.get(path);
  }

  /** The layer read by row ranges of its parts (compressed-tensors, bitsandbytes, MXFP4, FP8,
   * MLX) that `name` names, if any (in the core's order).
   * @param {string} name
   */
  _rangeLayer(name) {
    return this._ctNamed(name) ?? this._bnbNamed(name) ?? this._mxfp4Named(name) ?? this._fp8Named(name) ?? this._mlxNamed(name);
  }

  /**
   * What reading `name` reads: a layer read by row ranges of its parts, a GPTQ layer (by prefix
   * or `<prefix>.weight`), or a stored tensor; with the name its read takes and its row-major
   * shape (a GPTQ layer's [out, in]).
   * @param {Model} model
   * @param {string} name
   * @returns {{ info: SafetensorsTensorInfo | GptqLayer | MlxLayer | Fp8Layer | CtLayer | Mxfp4Layer | BnbLayer, read: string, shape: number[] }}
   */
  readable(model, name) {
    const ranged = this._rangeLayer(name);
    if (ranged) return { info: ranged, read: ranged.name, shape: ranged.shape };
    const layer = this._layerNamed(name);
    if (layer) return { info: layer, read: layer.name, shape: [layer.outFeatures, layer.inFeatures] };
    const info = stored(model, name);
    return { info, read: name, shape: info.shape };
  }

  /**
   * The rows `name` reads (as readable's info), for the readers.
   * @param {Model} model
   * @param {string} name
   */
  _rowsOf(model, name) {
    return this._rangeLayer(name) ?? this._layerNamed(name) ?? stored(model, name);
  }

  /**
   * Rows [a, b) (default: all) as f32: a stored tensor converted as torch does, a GPTQ layer
   * (by prefix) dequantized to [outFeatures, inFeatures] rows, or an MLX layer (by
   * `<path>.weight`) dequantized to its logical rows.
   * @param {Model} model
   * @param {string} name
   * @param {ReadOptions & { v1Zeros?: 'llama.cpp' | 'gptqmodel' }} options
   * @returns {Promise<Float32Array>}
   */
  async readTensor(model, name, options) {
    const t = this._rowsOf(model, name);
    const [a, b] = rowsOf(t, options.rows);
    const out = outputArray(options.into, (b - a) * t.rowLength);
    await this.eachChunk(model, name, a, b, options, (values, first) => out.set(values, (first - a) * t.rowLength));
    return out;
  }

  /**
   * Streaming statistics of rows [a, b) (default: all) of a tensor or GPTQ layer.
   * @param {Model} model
   * @param {string} name
   * @param {StatsOptions & { v1Zeros?: 'llama.cpp' | 'gptqmodel' }} options
   * @returns {Promise<TensorStats>}
   */
  async tensorStats(model, name, options) {
    const t = this._rowsOf(model, name);
    const [a, b] = rowsOf(t, options.rows);
    const rowLength = t.rowLength;
    // Values reach wasm as f32 here (checkpoint dtypes are converted in JS or per layer).
    return runStatsJob(model.wasm, { rowLength, rowBytes: 4 * rowLength }, a, b, options,
      (job, chunkOptions, /** @type {(values: Float32Array, first: number) => void} */ keep) => this.eachChunk(model, name, a, b, chunkOptions, (values, first) => {
        job.add(first, values);
        keep(values, first);
      }), (job, values, first) => job.add(first, values));
  }

  /**
   * The error of quantizing rows [a, b) (default: all) of a tensor or GPTQ layer to each ggml
   * type, bit-exact to ggml's quantizers without an importance matrix: as `Model.quantError` does a GGUF tensor.
   * @param {Model} model
   * @param {string} name
   * @param {QuantErrorOptions & { v1Zeros?: 'llama.cpp' | 'gptqmodel' }} options
   * @returns {Promise<QuantErrorReport>}
   */
  async quantError(model, name, options) {
    const t = this._rowsOf(model, name);
    const [a, b] = rowsOf(t, options.rows);
    const job = new model.wasm.QuantErrorJob(options.types ?? [], t.rowLength);
    try {
      await this.eachChunk(model, name, a, b, options, (values) => job.add(values));
      return job.result();
    } finally {
      job.free();
    }
  }

  /**
   * Calls consume(values, firstRow) for consecutive row chunks of [a, b).
   * @param {Model} model
   * @param {string} name
   * @param {number} a
   * @param {number} b
   * @param {StChunkOptions} options
   * @param {(values: Float32Array, first: number) => void} consume
   */
  async eachChunk(model, name, a, b, options, consume) {
    const chunkBytes = options.chunkBytes ?? CHUNK_BYTES;
    const ct = this._ctNamed(name);
    if (ct) {
      await this._checkCtShape(model, ct, options);
      const span = (/** @type {(path: string, first: number, last: number) => Float64Array} */ f) =>
        (/** @type {number} */ first, /** @type {number} */ last) => Array.from(f.call(this.header, ct.path, first, last));
      const parts = [
        { t: stored(model, ct.parts.weight), rows: (/** @type {number} */ first, /** @type {number} */ last) => [first, last] },
        { t: stored(model, ct.parts.weightScale), rows: span(this.header.ctScaleRows) },
      ];
      if (ct.parts.weightZeroPoint) parts.push({ t: stored(model, ct.parts.weightZeroPoint), rows: span(this.header.ctZeroRows) });
      const none = new Uint8Array(0);
      await this._eachRangeChunk(model, ct, parts, a, b, options, (first, [w, s, z], out) => this.header.dequantizeCtInto(ct.path, first, w, s, z ?? none, out), consume);
      return;
    }
    const bnb = this._bnbNamed(name);
    if (bnb) {
      await this._checkBnbQuantMap(model, bnb, options);
      // Elements of each part (bytes of `.weight`, entries of the scales) the rows use.
      const range = (/** @type {number} */ at) => (/** @type {number} */ first, /** @type {number} */ last) =>
        Array.from(this.header.bnbPartRanges(bnb.path, first, last).subarray(at, at + 2));
      const parts = [
        { t: stored(model, bnb.parts.weight), rows: range(0), elements: true },
        { t: stored(model, bnb.parts.absmax), rows: range(2), elements: true },
      ];
      if (bnb.parts.nestedAbsmax && bnb.parts.nestedQuantMap) {
        parts.push({ t: stored(model, bnb.parts.nestedAbsmax), rows: range(4), elements: true });
        parts.push({ t: stored(model, bnb.parts.nestedQuantMap), rows: () => [0, 256], elements: true });
      }
      const none = new Uint8Array(0);
      await this._eachRangeChunk(model, bnb, parts, a, b, options,
        (first, [w, s, n, m], out) => this.header.dequantizeBnbInto(bnb.path, first, w, s, n ?? none, m ?? none, out), consume);
      return;
    }
    const mx = this._mxfp4Named(name);
    if (mx) {
      // A logical row reads every stored row of its expert: the parts of whole experts.
      const k = mx.groups * 32;
      const experts = (/** @type {number} */ first, /** @type {number} */ last) => [Math.floor(first / k), Math.floor((last - 1) / k) + 1];
      const per = (/** @type {number} */ n) => (/** @type {number} */ first, /** @type {number} */ last) => experts(first, last).map((e) => e * n);
      const parts = [
        { t: stored(model, mx.parts.blocks), rows: per(mx.rowsPerExpert * mx.groups) },
        { t: stored(model, mx.parts.scales), rows: per(mx.rowsPerExpert) },
      ];
      await this._eachRangeChunk(model, mx, parts, a, b, options, (first, [w, s], out) => this.header.dequantizeMxfp4Into(mx.name, first, w, s, out), consume);
      return;
    }
    const fp8 = this._fp8Named(name);
    if (fp8) {
      const scaleRows = (/** @type {number} */ first, /** @type {number} */ last) => Array.from(this.header.fp8ScaleRows(fp8.path, first, last));
      const parts = [
        { t: stored(model, fp8.parts.weight), rows: (/** @type {number} */ first, /** @type {number} */ last) => [first, last] },
        { t: stored(model, fp8.parts.weightScaleInv), rows: scaleRows },
      ];
      await this._eachRangeChunk(model, fp8, parts, a, b, options, (first, [w, s], out) => this.header.dequantizeFp8Into(fp8.path, first, w, s, out), consume);
      return;
    }
    const mlx = this._mlxNamed(name);
    if (mlx) {
      const parts = [mlx.parts.weight, mlx.parts.scales, mlx.parts.biases].map((p) => stored(model, p));
      const same = (/** @type {number} */ first, /** @type {number} */ last) => [first, last];
      await this._eachRangeChunk(model, mlx, parts.map((t) => ({ t, rows: same })), a, b, options, (first, [w, s, z], out) => this.header.dequantizeMlxInto(mlx.path, first, w, s, z, out), consume);
      return;
    }
    const layer = this._layerNamed(name);
    if (layer) {
      if (a === b) return;
      const data = await this._layerData(model, layer, options);
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
    const t = stored(model, name);
    const rowBytes = t.rowBytes;
    if (!t.plain || rowBytes === null) throw new Error(`gguf-lens: tensor ${name} has dtype ${t.type}, which is not read as f32`);
    const shard = model.shards[t.shard];
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
   * Calls consume(values, firstRow) for consecutive row chunks of [a, b) of an MLX, FP8,
   * compressed-tensors, MXFP4 or bitsandbytes layer: each chunk's rows of its parts (`rows` maps
   * the layer's rows to a part's; to its elements with `elements`) fetched by Range (the next
   * chunk while one is dequantized), then `dequantize(first, bytes, out)`.
   * @param {Model} model
   * @param {MlxLayer | Fp8Layer | CtLayer | Mxfp4Layer | BnbLayer} layer
   * @param {{ t: SafetensorsTensorInfo, rows: (first: number, last: number) => number[], elements?: boolean }[]} parts
   * @param {number} a
   * @param {number} b
   * @param {StChunkOptions} options
   * @param {(first: number, bytes: Uint8Array[], out: Float32Array) => void} dequantize
   * @param {(values: Float32Array, first: number) => void} consume
   */
  async _eachRangeChunk(model, layer, parts, a, b, options, dequantize, consume) {
    const chunkBytes = options.chunkBytes ?? CHUNK_BYTES;
    const rowsPerChunk = Math.max(1, options.rowsPerChunk ?? rowsPerRead(4 * layer.rowLength, chunkBytes, b - a));
    // A part's rows shared by consecutive chunks (an MXFP4 expert) are fetched once; a scale
    // row shared by two chunks of other rows is fetched for each.
    const spans = (/** @type {number} */ first, /** @type {number} */ last) => parts.map(({ rows }) => rows(first, last));
    // Bytes of one row, or of one element with `elements`.
    const unit = parts.map(({ t, elements }) => (elements ? (t.nElements ? t.nBytes / t.nElements : 0) : t.rowBytes ?? 0));
    let total = 0;
    /** @type {number[][] | null} */
    let before = null;
    for (let first = a; first < b; first += rowsPerChunk) {
      const now = spans(first, Math.min(b, first + rowsPerChunk));
      now.forEach(([p, q], i) => { if (!(before && before[i][0] === p && before[i][1] === q)) total += (q - p) * unit[i]; });
      before = now;
    }
    const progress = progressCounter(options.onProgress, total);
    /** @type {({ p: number, q: number, bytes: Promise<Uint8Array> } | null)[]} */
    const last = parts.map(() => null);
    const fetchRows = (/** @type {number} */ first, /** @type {number} */ end) => Promise.all(parts.map(({ t, rows, elements }, i) => {
      const shard = model.shards[t.shard];
      const [p, q] = rows(first, end);
      const held = last[i];
      if (held && held.p === p && held.q === q) return held.bytes;
      const [start, stop] = elements ? [t.offset + p * unit[i], t.offset + q * unit[i]] : shard.header.rowsRange(t.name, p, q);
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
   * @param {Model} model
   * @param {CtLayer} layer
   * @param {StChunkOptions} options
   */
  async _checkCtShape(model, layer, options) {
    const part = layer.parts.weightShape;
    if (!part || this._ctShapeChecked.has(layer.path)) return;
    const t = stored(model, part);
    const bytes = await model.shards[t.shard].source.read(t.offset, t.offset + t.nBytes, options.signal);
    try {
      this.header.checkCtWeightShape(layer.path, bytes);
    } catch (err) {
      throw new Error(`gguf-lens: ${errorMessage(err)}`, { cause: err });
    }
    this._ctShapeChecked.add(layer.path);
  }

  /**
   * Checks a bitsandbytes layer's stored `quant_map` (64 bytes, fetched once) is its quant
   * type's code book, as the core does when it reads one.
   * @param {Model} model
   * @param {BnbLayer} layer
   * @param {StChunkOptions} options
   */
  async _checkBnbQuantMap(model, layer, options) {
    if (this._bnbMapChecked.has(layer.path)) return;
    const t = stored(model, layer.parts.quantMap);
    const bytes = await model.shards[t.shard].source.read(t.offset, t.offset + t.nBytes, options.signal);
    try {
      this.header.checkBnbQuantMap(layer.path, bytes);
    } catch (err) {
      throw new Error(`gguf-lens: ${errorMessage(err)}`, { cause: err });
    }
    this._bnbMapChecked.add(layer.path);
  }

  /**
   * The layer's parts in wasm memory; the last layer read is kept (an inspector reads rows, then statistics).
   * @param {Model} model
   * @param {GptqLayer} layer
   * @param {StChunkOptions} options
   */
  async _layerData(model, layer, options) {
    if (this._lastLayer?.name === layer.name) return this._lastLayer.data;
    const parts = await this._layerParts(model, layer, options);
    const data = this.header.gptqLayerData(layer.name, parts.qweight, parts.qzeros, parts.scales, parts.g_idx);
    this._lastLayer?.data.free();
    this._lastLayer = { name: layer.name, data };
    return data;
  }

  /**
   * The whole data of a layer's parts (qweight's columns are the output rows: strided).
   * @param {Model} model
   * @param {GptqLayer} layer
   * @param {StChunkOptions} options
   * @returns {Promise<Record<string, Uint8Array>>}
   */
  async _layerParts(model, layer, options) {
    const names = /** @type {[string, string][]} */ (Object.entries(layer.parts));
    const total = names.reduce((sum, [, part]) => sum + stored(model, part).nBytes, 0);
    const progress = progressCounter(options.onProgress, total);
    const bytes = await Promise.all(names.map(([, part]) => {
      const t = stored(model, part);
      return model.shards[t.shard].source.read(t.offset, t.offset + t.nBytes, options.signal, progress);
    }));
    return Object.fromEntries(names.map(([key], i) => [key, bytes[i]]));
  }

  /** Frees the GPTQ layer kept in wasm memory (the model frees the headers). */
  close() {
    this._lastLayer?.data.free();
    this._lastLayer = undefined;
  }
}
