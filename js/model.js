// Model: the one model class, for GGUF files (single or split) and safetensors checkpoints
// (single or sharded; plain, GPTQ, MLX, FP8, compressed-tensors, MXFP4) alike. A parsed header
// (the wasm `ModelHeader`, over the core's `Model`) plus its byte source; tensor reads fetch only
// the requested rows, in chunks. A GGUF tensor's rows are dequantized in wasm a chunk at a time,
// copied once into the Float32Array; a checkpoint's reads go through its `Checkpoint`
// (safetensors.js: the layers its config makes and how each is read). What only GGUF has
// (tokenizer, chat template, edit, hash, lint, planner) throws one error on a checkpoint.
import { GgufEditor, hashModel } from './edit.js';
import { feedRowsFromFile, readsToMemory } from './stats-read.js';
import { loadWasm, wasmModule } from './wasm.js';
import { autoWorkers, isNode, nodeStatsWorkers } from './stats-node-pool.js';
import { browserStatsWorkers } from './stats-browser-pool.js';
import { canShareMemory, isShared, readOnWorkers, sharedFloat32Array } from './read-pool.js';
import { ReaderCache, eachChunkAhead, readerSize, readRows, rowsPerRead } from './read-rows.js';
import { askWorker, tellWorker, inputForWorkers } from './worker-protocol.js';
import { abortError } from './sources.js';
/** @import { Progress, BnbConfig, BnbLayer, ChatMessage, ChatTemplateOptions, CtConfig, CtLayer, Fp8Config, Fp8Layer, GptqLayer, HashOptions, LintReport, FitOptions, FitResult, MemoryPlan, MemoryPlanOptions, MetadataEntry, MlxLayer, MlxQuantization, Mxfp4Layer, QuantConfig, ScalarEntry, ArrayEntry, QuantErrorOptions, QuantErrorReport, ReadOptions, SafetensorsSummary, SafetensorsTensorInfo, SpecialToken, StatsOptions, Summary, TensorInfo, TensorReadOptions, TensorStats, TokenizeOptions } from './types.js' */
/** @import { ModelOrigin, Writable, OnBytes, OnProgress, PoolWorker, ReadableTensor, RowShape, Run, Source } from './internal.js' */
/** @import { GgufHeader, QuantErrorJob, TensorStatsJob, Wasm } from './bindings.js' */
/** @import { Checkpoint } from './safetensors.js' */

/** Bytes fetched per request when reading tensor data (memory stays ~2 chunks). */
export const CHUNK_BYTES = 8 * 1024 * 1024;

/** This thread's RowReader for readTensor, kept between calls. */
const readers = new ReaderCache();

/** Numbers per tensor in the header's tensorColumns(): typeId, nDims, 4 dims, then FIELDS. */
const TENSOR_FIELDS = 13;
const FIELDS = ['nElements', 'offset', 'relativeOffset', 'nBytes', 'rowLength', 'nRows', 'rowBytes'];

/** What a GGUF model lists for a checkpoint's layers: nothing (one frozen array for every list,
 * typed as the lists it stands for). */
const NO_LAYERS = /** @type {never[]} */ (Object.freeze([]));

/**
 * Tensor infos `{ name, type, typeId, shape, nElements, offset, relativeOffset, nBytes,
 * rowLength, nRows, rowBytes, shard: 0 }` (shape outermost first, ne innermost first) from the
 * header's columns.
 * @param {GgufHeader} header
 * @returns {TensorInfo[]}
 */
function tensorsOf(header) {
  const [names, types, numbers] = /** @type {[string[], string[], Float64Array]} */ (header.tensorColumns());
  return names.map((name, i) => {
    const at = i * TENSOR_FIELDS;
    // ggml's ne (innermost first) as stored; the public shape is outermost first (row-major).
    const ne = Array.from(numbers.subarray(at + 2, at + 2 + numbers[at + 1]));
    /** @type {Record<string, unknown>} */
    const tensor = { name, type: types[i], typeId: numbers[at], shape: [...ne].reverse(), ne };
    FIELDS.forEach((field, k) => { tensor[field] = numbers[at + 6 + k]; });
    tensor.shard = 0;
    return /** @type {TensorInfo} */ (/** @type {unknown} */ (tensor));
  });
}

/**
 * A model: a GGUF file (single or split) or a safetensors checkpoint (single or sharded, plain
 * or quantized). Its format is `format`; `GgufModel` and `SafetensorsModel` are this class under
 * the names of its formats (`Model<'gguf'>`, `Model<'safetensors'>` as types). Header facts,
 * metadata, tensors, and tensor reads for every format; the GGUF-only methods (tokenizer, chat
 * template, edit, hash, lint, planMemory, fit, specialTokens) throw one `TypeError` on a
 * checkpoint, and a checkpoint's layer lists (gptqLayers, mlxLayers, …) are empty and its
 * configs null on a GGUF model.
 * @template {'gguf' | 'safetensors'} [F='gguf' | 'safetensors'] the format
 */
export class Model {
  // The fields, declared for the published types (the constructor sets them): what users read,
  // read-only, and the internals, left out of the declarations (marked internal: tsc's stripInternal).
  /** 'gguf' or 'safetensors'. @readonly @type {F} */
  format;
  /** The shards' models (this one alone for a single file). @readonly @type {Model<F>[]} */
  shards;
  /** Every shard's tensors. @readonly @type {(F extends 'gguf' ? TensorInfo : SafetensorsTensorInfo)[]} */
  tensors;
  /** Total bytes (all shards). @readonly @type {number} */
  byteLength;
  /** The GGUF version (2 or 3); null for a checkpoint. @readonly @type {F extends 'gguf' ? number : null} */
  version;
  /** null for a checkpoint. @readonly @type {F extends 'gguf' ? 'little' | 'big' : null} */
  endian;
  /** null for a checkpoint. @readonly @type {F extends 'gguf' ? number : null} */
  alignment;
  /** Where the tensor data starts in the file. @readonly @type {number} */
  dataOffset;
  /** @readonly @type {number} */
  headerLength;
  /** The header's entries, an array's with its readers; a checkpoint's `__metadata__` (every
   * value a string). @readonly @type {F extends 'gguf' ? MetadataEntry[] : (ScalarEntry & { value: string })[]} */
  metadata;
  /** @internal @type {Wasm} */
  wasm;
  /** @internal @type {GgufHeader} */
  header;
  /** @internal @type {Source} */
  source;
  /** What a worker opens to read its part of a tensor (a URL, path, File or Blob, or the
   * shards'). @internal @type {ModelOrigin['input']} */
  input;
  /** The request options a worker can receive. @internal @type {ModelOrigin['openOptions']} */
  openOptions;
  /** A checkpoint's layers, config and readers (safetensors.js); null for GGUF.
   * @internal @type {Checkpoint | null} */
  _checkpoint;
  /** @internal @type {Map<string, TensorInfo | SafetensorsTensorInfo>} */
  _tensorIndex;
  /** @internal @type {Map<string, MetadataEntry>} */
  _metadataIndex;
  /** A split GGUF model's one handle over every shard (summary, lint, plan, fit; the core's
   * `ShardJoin`), else null: the header serves.
   * @internal @type {GgufHeader | null} */
  _joined;
  /** The id workers know this model by, once it has been sent to workers.
   * @internal @type {string | undefined} */
  _statsInputId;
  /** The workers that opened this model (model.close() closes their copies).
   * @internal @type {Set<PoolWorker> | undefined} */
  _statsWorkers;
  /** @internal @type {import('./wasm/gguf_lens.js').TokenizerJs | undefined} */
  _tokenizer;
  /** Set by preload(): every shard's header in the full module.
   * @internal @type {Promise<void> | undefined} */
  _full;

  /**
   * @internal
   * @param {Wasm} wasm
   * @param {GgufHeader} header
   * @param {Source} source
   * @param {ModelOrigin} [origin] what workers open this model from again
   * @param {Checkpoint | null} [checkpoint] a safetensors header's layers and config (null: GGUF)
   */
  constructor(wasm, header, source, origin = {}, checkpoint = null) {
    this.wasm = wasm;
    this.header = header;
    this.source = source;
    this._checkpoint = checkpoint;
    const gguf = checkpoint === null;
    this.format = /** @type {F} */ (gguf ? 'gguf' : 'safetensors');
    // The GGUF facts a checkpoint has no such thing as.
    const fact = (/** @type {() => unknown} */ read) => /** @type {any} */ (gguf ? read() : null);
    this.version = fact(() => header.version);
    this.endian = fact(() => header.endian);
    this.alignment = fact(() => header.alignment);
    this.dataOffset = header.dataOffset;
    this.headerLength = header.headerLength;
    this.byteLength = knownSize(source);
    /** @type {MetadataEntry[]} */
    const metadata = gguf
      ? header.metadata().map((/** @type {{ key: string, type: string, len: number }} */ entry) =>
        entry.type === 'array'
          ? {
            ...entry,
            // this.header, not header: preload() moves the header into the full module.
            items: (start = 0, end = entry.len) => this.header.arrayItems(entry.key, start, end),
            packed: () => this.header.arrayPacked(entry.key),
            findText: (/** @type {string} */ needle, { start = 0, limit = Infinity } = {}) => Array.from(this.header.arrayFindText(entry.key, needle, start, Math.min(limit, 2 ** 32 - 1))),
          }
          : entry)
      : header.metadata().map((/** @type {{ key: string, value: string }} */ { key, value }) => ({ key, type: 'string', value }));
    this.metadata = /** @type {any} */ (metadata);
    this._metadataIndex = new Map(metadata.map((entry) => [entry.key, entry]));
    /** @type {(TensorInfo | SafetensorsTensorInfo)[]} */
    const tensors = gguf ? tensorsOf(header) : header.tensors();
    for (const t of tensors) t.shard = 0;
    this.tensors = /** @type {any} */ (tensors);
    this._tensorIndex = new Map(tensors.map((t) => [t.name, t]));
    this.shards = [this];
    this.input = origin.input;
    this.openOptions = origin.openOptions;
    this._joined = null;
    this._statsInputId = undefined;
    this._statsWorkers = undefined;
    this._tokenizer = undefined;
    this._full = undefined;
  }

  /**
   * Becomes the model of every shard in `models` (this one first): their tensors, each with its
   * shard's index, and their bytes.
   * @param {Model<F>[]} models
   * @internal
   */
  _joinShards(models) {
    // Read-only to users; set here as in the constructor.
    const self = /** @type {Writable<this>} */ (this);
    self.shards = models;
    self.tensors = /** @type {any} */ (models.flatMap((m, shard) => m.tensors.map((t) => ({ ...t, shard }))));
    this._tensorIndex = new Map(this.tensors.map((t) => [t.name, t]));
    let total = 0;
    for (const m of models) total += m.byteLength;
    self.byteLength = total;
  }

  /** Back to its own shard alone, after joining shards failed (close() then closes only it).
   * @internal */
  _ownShardOnly() {
    /** @type {Writable<this>} */ (this).shards = [this];
  }

  /**
   * One GGUF model over the shards of a split file: metadata from the first, every shard's
   * tensors, the summary merged in wasm (the core's one definition, `SplitSummary`), the shards'
   * inputs for workers. Checked before anything changes: on a throw every shard is still its own
   * model, for the caller to close.
   * @param {Model<'gguf'>[]} models the shards, in order
   * @param {import('./bindings.js').CoreWasm} wasm the core module's exports (or the full one's)
   * @returns {Model<'gguf'>} the first, now the model of them all
   * @internal
   */
  static merge(models, wasm) {
    const joined = joinHeaders(wasm, models); // throws when a shard does not belong
    const [first] = models;
    first._joinSplit(models, joined);
    return first;
  }

  /**
   * A split GGUF model's join: the shards, their one handle, and every shard's input (what
   * workers open).
   * @param {Model<F>[]} models
   * @param {GgufHeader} joined
   * @internal
   */
  _joinSplit(models, joined) {
    this._joinShards(models);
    this._joined = joined;
    this.input = /** @type {import('./types.js').GgufInput[]} */ (models.map((m) => m.input));
  }

  /**
   * A sharded checkpoint's join (this model first), checked against the index's weight map.
   * @param {Model<F>[]} models
   * @param {{ shards: string[], weightMap: [string, string][], metadata?: Record<string, unknown> }} index
   * @param {string | URL} input the index's URL or path, for errors
   * @internal
   */
  _joinIndex(models, index, input) {
    this._joinShards(models);
    this._needCheckpoint('a shard index').joinIndex(this, models, index, input);
  }

  /**
   * Sets a checkpoint's quantization config: from options, else found beside `input`.
   * @param {unknown} input
   * @param {import('./internal.js').AnyOpenOptions} options
   * @internal
   */
  async _loadConfig(input, options) {
    const checkpoint = this._needCheckpoint('a quantization config');
    await checkpoint.loadConfig(this.tensors, input, options);
    // A shard's states are read once the index's model holds every shard.
    if (!options.shardOfIndex) await checkpoint.loadBnbStates(this, options);
  }

  /**
   * Loads the full wasm module (tokenizer, templates, dequantization, stats, …) and moves every
   * shard's header into it, once. Opening a GGUF parses in the small core module, so a summary
   * never waits for the full one; each method that needs it calls this first, and an app may
   * call it ahead (after showing the summary) so that the first tokenize or read does not wait.
   * (A checkpoint opens in the full module: nothing to do.)
   * @returns {Promise<void>}
   */
  preload() {
    this._full ??= (async () => {
      const wasm = await loadWasm();
      for (const shard of this.shards) shard._moveToFull(wasm);
      if (this._joined) {
        const joined = joinHeaders(wasm, this.shards);
        this._joined.free();
        this._joined = joined;
      }
      this.wasm = wasm;
    })();
    // A failed load (the module not found, offline) is tried again by the next call.
    this._full.catch(() => { this._full = undefined; });
    return this._full;
  }

  /**
   * This model's own header in the full module (`wasm`'s), parsed again from its bytes.
   * @param {Wasm} wasm
   * @internal
   */
  _moveToFull(wasm) {
    if (this.header.module === 'full') return;
    // The header's own bytes parse whole: a GgufHeader, never { needMore }.
    const header = /** @type {GgufHeader} */ (wasm.parseHeader(this.header.headerBytes(), this.source.byteLength));
    this.header.free();
    this.header = header;
    this.wasm = wasm;
  }

  /**
   * The checkpoint's part, or the one error of a checkpoint-only step on a GGUF model.
   * @param {string} what
   * @internal
   */
  _needCheckpoint(what) {
    if (!this._checkpoint) throw new TypeError(`gguf-lens: ${what} belongs to a safetensors checkpoint; this model is GGUF`);
    return this._checkpoint;
  }

  /** This model as GGUF's readers, pools and editor take it (on a GGUF model's paths only).
   * @returns {GgufModel}
   * @internal */
  _asGguf() {
    return /** @type {GgufModel} */ (/** @type {unknown} */ (this));
  }

  /**
   * The one error of a GGUF-only method called on a checkpoint.
   * @param {string} call
   * @internal
   */
  _ggufOnly(call) {
    if (this._checkpoint) throw new TypeError(`gguf-lens: ${call} needs a GGUF model; this is a safetensors checkpoint`);
  }

  /** The index's "metadata" (e.g. total_size) of a sharded checkpoint, else undefined.
   * @returns {Record<string, unknown> | undefined} */
  get indexMetadata() { return this._checkpoint?.indexMetadata; }
  /** A checkpoint's GPTQ layers ([] for GGUF). @returns {GptqLayer[]} */
  get gptqLayers() { return this._checkpoint?.gptqLayers ?? NO_LAYERS; }
  /** Why some `.qweight` (GPTQ) or `.scales` (MLX) tensors are not layers. @returns {string[]} */
  get gptqLayerErrors() { return this._checkpoint?.gptqLayerErrors ?? NO_LAYERS; }
  /** MLX layers, each read (dequantized as `mx.dequantize`) as its `<path>.weight`. @returns {MlxLayer[]} */
  get mlxLayers() { return this._checkpoint?.mlxLayers ?? NO_LAYERS; }
  /** config.json's MLX `quantization` (quantConfigSource says where it came from). @returns {MlxQuantization | null} */
  get mlxQuantization() { return this._checkpoint?.mlxQuantization ?? null; }
  /** FP8 block-scaled layers, each read (dequantized as transformers' `Fp8Dequantize`) as its
   * `<path>.weight`. @returns {Fp8Layer[]} */
  get fp8Layers() { return this._checkpoint?.fp8Layers ?? NO_LAYERS; }
  /** config.json's FP8 `quantization_config`. @returns {Fp8Config | null} */
  get fp8Config() { return this._checkpoint?.fp8Config ?? null; }
  /** compressed-tensors layers, each read (dequantized as the package's `decompress`) as its
   * `<path>.weight`. @returns {CtLayer[]} */
  get ctLayers() { return this._checkpoint?.ctLayers ?? NO_LAYERS; }
  /** config.json's compressed-tensors `quantization_config`. @returns {CtConfig | null} */
  get ctConfig() { return this._checkpoint?.ctConfig ?? null; }
  /** gpt-oss MXFP4 tensors, each read (dequantized as transformers' `convert_moe_packed_tensors`)
   * as its `name`. @returns {Mxfp4Layer[]} */
  get mxfp4Layers() { return this._checkpoint?.mxfp4Layers ?? NO_LAYERS; }
  /** config.json's MXFP4 `quantization_config`. @returns {{ modulesToNotConvert: string[] } | null} */
  get mxfp4Config() { return this._checkpoint?.mxfp4Config ?? null; }
  /** bitsandbytes 4-bit layers, each read (dequantized as bitsandbytes' `dequantize_4bit`) as its
   * `<path>.weight`. @returns {BnbLayer[]} */
  get bnbLayers() { return this._checkpoint?.bnbLayers ?? NO_LAYERS; }
  /** config.json's bitsandbytes `quantization_config`. @returns {BnbConfig | null} */
  get bnbConfig() { return this._checkpoint?.bnbConfig ?? null; }
  /** The GPTQ config (quantize_config.json's, or config.json's quantization_config). @returns {QuantConfig | null} */
  get quantConfig() { return this._checkpoint?.quantConfig ?? null; }
  /** Where a checkpoint's config came from (a URL, path, or "options.quantizeConfig"); null if none.
   * @returns {string | null} */
  get quantConfigSource() { return this._checkpoint?.quantConfigSource ?? null; }
  /** Set when a config found beside the file could not be used. @returns {string | undefined} */
  get quantConfigError() { return this._checkpoint?.quantConfigError; }

  /**
   * A GPTQ layer by prefix, or undefined (always for GGUF).
   * @param {string} name
   * @returns {GptqLayer | undefined}
   */
  gptqLayer(name) {
    return this._checkpoint?.gptqLayer(name);
  }

  /**
   * A tensor's info (throws if absent).
   * @param {string} name
   * @returns {F extends 'gguf' ? TensorInfo : SafetensorsTensorInfo}
   */
  tensor(name) {
    return /** @type {any} */ (this._tensor(name));
  }

  /**
   * A tensor's info, for this module's readers (throws if absent).
   * @param {string} name
   * @internal
   */
  _tensor(name) {
    const t = this._tensorIndex.get(name);
    if (!t) throw new Error(`gguf-lens: no tensor named ${name}`);
    return t;
  }

  /**
   * What reading `name` reads: a tensor, or a checkpoint's layer (an MLX, FP8, compressed-tensors
   * or MXFP4 layer by its `<path>.weight`, a GPTQ layer by its prefix or `<prefix>.weight`), with
   * the name its read takes and its row-major shape; `header` is the shard header whose core
   * dequantizes the stored rows (`ValueDiff.addRows`), null where rows are read as values.
   * @param {string} name
   * @returns {{ info: { nRows: number, rowLength: number, rowBytes?: number | null }, read: string, shape: number[], header: GgufHeader | null }}
   * @internal
   */
  _readable(name) {
    if (this._checkpoint) return { ...this._checkpoint.readable(this, name), header: null };
    const info = /** @type {TensorInfo} */ (this._tensor(name));
    return { info, read: name, shape: info.shape, header: this.shards[info.shard].header };
  }

  /**
   * The wasm headers that hold this model for the core (a CompareSide takes them in order):
   * every GGUF shard's, or a checkpoint's first (its core checkpoint holds every shard).
   * @returns {GgufHeader[]}
   * @internal
   */
  _coreHeaders() {
    return this._checkpoint ? [this.header] : this.shards.map((s) => s.header);
  }

  /**
   * The raw bytes of rows [a, b) (default: all rows) of a stored tensor.
   * @param {string} name
   * @param {ReadOptions} [options]
   * @returns {Promise<Uint8Array>}
   */
  async readTensorBytes(name, options = {}) {
    const t = this._tensor(name);
    const [a, b] = rowsOf(t, options.rows);
    const shard = this.shards[t.shard];
    const [start, end] = shard.header.rowsRange(name, a, b);
    return shard.source.read(start, end, options.signal, progressCounter(options.onProgress, end - start));
  }

  /** Bytes and requests this model's sources have served so far. */
  get ioStats() {
    const total = { requests: 0, bytes: 0 };
    for (const shard of this.shards) {
      total.requests += shard.source.stats.requests;
      total.bytes += shard.source.stats.bytes;
    }
    return total;
  }

  /**
   * A scalar's value, or a GGUF array's entry ({itemType, len, items(start, end)}); undefined
   * if absent. A checkpoint's `__metadata__` values are strings.
   * @param {string} key
   * @returns {F extends 'gguf' ? ScalarEntry['value'] | ArrayEntry | undefined : string | undefined}
   */
  get(key) {
    const entry = this._metadataIndex.get(key);
    // ScalarEntry's `type` is any other type name: 'array' is ArrayEntry's alone.
    return /** @type {any} */ (entry && (entry.type === 'array' ? /** @type {ArrayEntry} */ (entry) : /** @type {ScalarEntry} */ (entry).value));
  }

  /**
   * Architecture, parameter count, file type label, quant mix, bits per weight, hyper-parameters
   * (the core's one summary; a checkpoint's has null where it has no such thing, then dtypeMix,
   * gptq, mlx, fp8, ct, mxfp4, bnb).
   * @returns {F extends 'gguf' ? Summary : SafetensorsSummary}
   */
  summary() {
    if (this._joined) return this._joined.summary(undefined);
    return this.header.summary(this._checkpoint?.quantConfigSource ?? undefined);
  }

  /**
   * Every special-token id the metadata names (each `tokenizer.ggml.*_token_id` key llama.cpp
   * reads, and the `sep`/`pad` spellings it does not): [{ name, key, id, recognized }]. GGUF only.
   * @returns {SpecialToken[]}
   */
  specialTokens() {
    this._ggufOnly('specialTokens');
    return this.header.specialTokens();
  }

  /**
   * The id workers know this model by (they get a clone of its input with every request), with
   * the workers noted so that close() closes their copies too.
   * @param {PoolWorker[]} workers
   * @internal
   */
  _workerInputId(workers) {
    this._statsInputId ??= `${++nextJobId}:${Math.random()}`;
    this._statsWorkers ??= new Set();
    for (const w of workers) this._statsWorkers.add(w);
    return this._statsInputId;
  }

  /**
   * Rows [a, b) (default: all) of a tensor as f32: a GGUF tensor bit for bit as llama.cpp
   * dequantizes it; a checkpoint's tensor converted as torch does, a GPTQ layer (by prefix)
   * dequantized to [outFeatures, inFeatures] rows, an MLX, FP8, compressed-tensors, MXFP4 or bitsandbytes
   * layer (by `<path>.weight`) dequantized to its logical rows. A GGUF chunk is dequantized in
   * wasm a slice at a time and copied into the result (one copy, read-rows.js); `options.into`,
   * a Float32Array of at least that many values, is filled instead of a new array. With
   * `options.workers` (as for tensorStats; GGUF) the result is a new Float32Array over a
   * SharedArrayBuffer that the workers fill, each reading its own rows; an `into` over a
   * SharedArrayBuffer is filled by workers (by default, as tensorStats picks them). Where memory
   * cannot be shared (an `into` over an ArrayBuffer, a page not cross-origin isolated) this
   * thread reads.
   * @param {string} name
   * @param {TensorReadOptions & { v1Zeros?: 'llama.cpp' | 'gptqmodel' }} [options]
   * @returns {Promise<Float32Array>}
   */
  async readTensor(name, options = {}) {
    if (this._checkpoint) return this._checkpoint.readTensor(this, name, options);
    const t = /** @type {TensorInfo} */ (this._tensor(name));
    await this.preload();
    const [a, b] = rowsOf(t, options.rows);
    const n = (b - a) * t.rowLength;
    const workers = await readTensorWorkers(this._asGguf(), t, n, options);
    if (workers) {
      const out = options.into === undefined ? sharedFloat32Array(n) : outputArray(options.into, n);
      const progress = progressCounter(options.onProgress, (b - a) * t.rowBytes);
      return readOnWorkers(this._asGguf(), t, a, b, out, workers, {
        signal: options.signal, chunkBytes: options.chunkBytes ?? CHUNK_BYTES, onBytes: progress,
        inputId: this._workerInputId(workers), wasmModule: wasmModule(),
      });
    }
    const out = outputArray(options.into, n);
    const chunkBytes = options.chunkBytes ?? CHUNK_BYTES;
    const entry = readers.take(this.wasm, readerSize(t, b - a, chunkBytes));
    try {
      await readRows(this.wasm, this.shards[t.shard], t, a, b, out, a, {
        reader: entry.reader, chunkBytes, signal: options.signal,
        progress: progressCounter(options.onProgress, (b - a) * t.rowBytes),
      });
    } finally {
      readers.give(entry);
    }
    return out;
  }

  /**
   * Streaming statistics of rows [a, b) (default: all) of a tensor or checkpoint layer: min,
   * max, mean, std, counts, histogram. `options.workers` is GGUF's (a checkpoint reads on this thread).
   * @param {string} name
   * @param {StatsOptions & { v1Zeros?: 'llama.cpp' | 'gptqmodel' }} [options]
   * @returns {Promise<TensorStats>}
   */
  async tensorStats(name, options = {}) {
    if (this._checkpoint) return this._checkpoint.tensorStats(this, name, options);
    const t = /** @type {TensorInfo} */ (this._tensor(name));
    await this.preload();
    const [a, b] = rowsOf(t, options.rows);
    const shard = this.shards[t.shard];
    const header = shard.header;
    // Not told: one worker per core for a big tensor of a local file in Node, else this thread.
    const workers = options.workers ?? (workersCanOpen(this.input) ? await autoWorkers(shard.source, (b - a) * t.rowLength) : 0);
    if (typeof workers === 'number' && workers > 0) {
      checkWorkersCanOpen(this._asGguf(), 'tensorStats');
      return runStatsOnWorkers(this._asGguf(), t, a, b, { ...options, workers: await ownWorkers(workers) });
    }
    if (typeof workers === 'object' && workers.length) return runStatsOnWorkers(this._asGguf(), t, a, b, { ...options, workers });
    if (readsToMemory(shard.source, this.wasm)) {
      return runStatsJob(this.wasm, t, a, b, options, (job, chunkOptions) =>
        feedRowsFromFile(this.wasm, shard, t, a, b, chunkOptions.rowsPerChunk, job, options.signal,
          progressCounter(chunkOptions.onProgress, (b - a) * t.rowBytes)));
    }
    return runStatsJob(this.wasm, t, a, b, options, (job, chunkOptions, consume) =>
      this._eachChunk(t, a, b, chunkOptions, (bytes, first) => {
        job.addRows(header, name, first, bytes);
        consume(bytes, first);
      }), (job, bytes, first) => job.addRows(header, name, first, /** @type {Uint8Array} */ (bytes)));
  }

  /**
   * The error of quantizing rows [a, b) (default: all) of a tensor to each type, bit-exact to
   * ggml's quantizers without an importance matrix (`gguf-lens quant-error`): `{ results: [{
   * type, bitsPerWeight, nValues, rmse, maxAbsError, relativeRmse, cosine }], skipped: [{ type,
   * reason }] }`. `options.types`: ggml type names (default: every type gguf-lens quantizes to);
   * `options.sampleRows`: quantize about that many rows, in up to 64 runs spread evenly over
   * [a, b) (exact for those rows; `onProgress` counts rows). `options.workers`: as for
   * tensorStats (Workers running `gguf-lens/stats-worker`, or a number in Node): the rows are
   * shared among them, with the same result bit for bit (the sums are exact). A checkpoint's
   * tensor or layer is read as values on this thread (the same quantizers).
   * @param {string} name
   * @param {QuantErrorOptions & { v1Zeros?: 'llama.cpp' | 'gptqmodel' }} [options]
   * @returns {Promise<QuantErrorReport>}
   */
  async quantError(name, options = {}) {
    if (this._checkpoint) return this._checkpoint.quantError(this, name, options);
    const t = /** @type {TensorInfo} */ (this._tensor(name));
    await this.preload();
    const [a, b] = rowsOf(t, options.rows);
    const header = this.shards[t.shard].header;
    const job = new this.wasm.QuantErrorJob(options.types ?? [], t.rowLength);
    try {
      const runs = sampledRuns(a, b, options.sampleRows);
      // Progress in rows quantized (every type per row).
      const progress = progressCounter(options.onProgress, runs.reduce((n, [first, last]) => n + last - first, 0));
      /** @type {PoolWorker[] | number | undefined} */
      let workers = options.workers;
      if (asksWorkers(workers)) checkWorkersCanOpen(this._asGguf(), 'quantError');
      if (typeof workers === 'number' && workers > 0) workers = await ownWorkers(workers);
      if (typeof workers === 'object' && workers.length) {
        // The pool's module comes with its first use (a page's first summary does not pay for it).
        const { quantErrorOnWorkers } = await import('./quant-error-pool.js');
        return await quantErrorOnWorkers(this._asGguf(), t, runs, job, options.types ?? [], workers, {
          signal: options.signal, chunkBytes: options.chunkBytes ?? CHUNK_BYTES, onRows: progress,
          inputId: this._workerInputId(workers), wasmModule: wasmModule(),
        });
      }
      for (const [first, last] of runs) {
        await this._eachChunk(t, first, last, { ...options, onProgress: undefined }, (bytes) => job.addRows(header, name, bytes));
        if (options.signal?.aborted) throw abortError(options.signal);
        progress?.(last - first);
      }
      return job.result();
    } finally {
      job.free();
    }
  }

  /**
   * Reads rows [a, b) chunk by chunk (the next chunk is fetched while one is dequantized).
   * @param {ReadableTensor} t
   * @param {number} a
   * @param {number} b
   * @param {ChunkOptions} options
   * @param {(bytes: Uint8Array, first: number, last: number) => void} consume
   * @internal
   */
  async _eachChunk(t, a, b, options, consume) {
    const shard = this.shards[t.shard];
    const chunkBytes = options.chunkBytes ?? CHUNK_BYTES;
    const rowsPerChunk = Math.max(1, options.rowsPerChunk ?? rowsPerRead(t.rowBytes, chunkBytes, b - a));
    const progress = progressCounter(options.onProgress, (b - a) * t.rowBytes);
    const fetchRows = (/** @type {number} */ first, /** @type {number} */ last) => {
      const [start, end] = shard.header.rowsRange(t.name, first, last);
      return shard.source.read(start, end, options.signal, progress);
    };
    await eachChunkAhead(a, b, rowsPerChunk, fetchRows, options.signal, consume);
  }

  /** An editor of this file's metadata (a split model's: its first shard's): set, remove,
   * then toBlob() or toStream() for the new file.
   * @returns {Promise<GgufEditor>} */
  async edit() {
    this._ggufOnly('edit');
    await this.preload();
    return new GgufEditor(this._asGguf());
  }

  /** What is wrong with the file (the core's lint over every shard): `{ findings: [{ code,
   * severity: 'error' | 'warning' | 'info', message, offset?, key?, tensor?, shard? }], errors,
   * warnings, infos }`, errors first. Header only: nothing is read.
   * @returns {Promise<LintReport>}
   */
  async lint() {
    this._ggufOnly('lint');
    await this.preload();
    return (this._joined ?? this.header).lint();
  }

  /** What llama.cpp allocates to run this model (every shard of a split one): weights, KV cache
   * and compute buffer per device, the largest context and -ngl for a GPU budget, the
   * llama-server line; the fields of `gguf-lens memory --json`, camelCased. Throws llama.cpp's
   * refusals (a quantized V cache without flashAttn, …).
   * @param {MemoryPlanOptions} [options]
   * @returns {MemoryPlan}
   */
  planMemory(options = {}) {
    this._ggufOnly('planMemory');
    return (this._joined ?? this.header).planMemory(options);
  }

  /** The flags llama.cpp's llama-fit-params chooses for GPUs with `gpus` bytes free (each
   * keeping `margin`, default 1 GiB): `-c`, `-ngl`, `-ts`, `-ot`, and the per-device plan they
   * give; the fields of `gguf-lens fit --json`, camelCased.
   * @param {FitOptions} options
   * @returns {FitResult}
   */
  fit(options) {
    this._ggufOnly('fit');
    return (this._joined ?? this.header).fit(options);
  }

  /**
   * llama-gguf-hash's tensor-data digests (see hashModel in edit.js).
   * @param {HashOptions} [options]
   */
  async hash(options = {}) {
    this._ggufOnly('hash');
    await this.preload();
    return hashModel(this._asGguf(), options);
  }

  /** The file's tokenizer, built once on first use (throws one line when unsupported).
   * @param {string} call the method that needs it, for the error on a checkpoint
   * @internal */
  async _tok(call) {
    this._ggufOnly(call);
    await this.preload();
    if (!this._tokenizer) this._tokenizer = this.header.tokenizer();
    return this._tokenizer;
  }

  /**
   * Token ids as llama.cpp's llama_tokenize gives them with this file's vocabulary. `text` is a
   * string or UTF-8 bytes (invalid sequences handled as llama.cpp does). Options: addSpecial
   * (default true: BOS/EOS as the file says), parseSpecial (default false).
   * @param {string | Uint8Array} text
   * @param {TokenizeOptions} [options]
   * @returns {Promise<Int32Array>}
   */
  async tokenize(text, options = {}) {
    const bytes = typeof text === 'string' ? new TextEncoder().encode(text) : text;
    return (await this._tok('tokenize')).tokenize(bytes, options.addSpecial ?? true, options.parseSpecial ?? false);
  }

  /** The text of `ids`: their llama_token_to_piece pieces concatenated (control tokens unless
   * `special: false`), decoded as UTF-8 (invalid bytes as U+FFFD; `bytes: true` for the bytes).
   * (One signature, not overloads: tsc 7 drops an overload's doc from the declarations.)
   * @template {boolean} [B=false]
   * @param {ArrayLike<number>} ids
   * @param {{ special?: boolean, bytes?: B }} [options]
   * @returns {Promise<B extends true ? Uint8Array : string>}
   */
  async detokenize(ids, options = {}) {
    const bytes = (await this._tok('detokenize')).detokenize(Int32Array.from(ids), options.special ?? true);
    return /** @type {B extends true ? Uint8Array : string} */ (options.bytes ? bytes : new TextDecoder().decode(bytes));
  }

  /**
   * One token's piece (llama_token_to_piece, special = true unless told) as bytes.
   * @param {number} id
   * @param {{ special?: boolean }} [options]
   * @returns {Promise<Uint8Array>}
   */
  async tokenPiece(id, options = {}) {
    return (await this._tok('tokenPiece')).tokenToPiece(id, options.special ?? true);
  }

  /** Each id's piece as text (llama_token_to_piece, special = true unless told) and whether it is
   * a control token (llama.cpp's LLAMA_TOKEN_ATTR_CONTROL): what a viewer colours a token by.
   * @param {ArrayLike<number>} ids
   * @param {{ special?: boolean }} [options]
   */
  async tokenPieces(ids, options = {}) {
    const tok = await this._tok('tokenPieces');
    const decoder = new TextDecoder();
    /** @type {string[]} */
    const pieces = [];
    /** @type {boolean[]} */
    const control = [];
    for (const id of Array.from(ids)) {
      pieces.push(decoder.decode(tok.tokenToPiece(id, options.special ?? true)));
      control.push((tok.tokenAttr(id) & 8) !== 0);
    }
    return { pieces, control };
  }

  /**
   * The chat template rendered as transformers' apply_chat_template renders it (jinja2:
   * trim_blocks, lstrip_blocks, raise_exception, tojson, strftime_now; bos_token/eos_token from
   * the file). Options: tools, addGenerationPrompt, variables ({enable_thinking: false, ...}),
   * template (a template text instead of the file's). Throws one line on a template error.
   * @param {ChatMessage[]} messages
   * @param {ChatTemplateOptions} [options]
   * @returns {Promise<string>}
   */
  async renderChatTemplate(messages, options = {}) {
    this._ggufOnly('renderChatTemplate');
    await this.preload();
    return this.header.renderChatTemplate(messages, {
      tools: options.tools ?? null,
      addGenerationPrompt: options.addGenerationPrompt ?? false,
      variables: options.variables ?? {},
      template: options.template ?? null,
    });
  }

  /** Frees the wasm headers and closes file handles / open streams (statistics workers that
   * opened this model close their copy). */
  async close() {
    for (const w of this._statsWorkers ?? []) tellWorker(w, 'close', { inputId: this._statsInputId });
    this._statsWorkers = undefined;
    this._tokenizer?.free();
    this._tokenizer = undefined;
    this._checkpoint?.close();
    this._joined?.free();
    this._joined = null;
    for (const shard of this.shards) {
      shard.header.free();
      await shard.source.close();
    }
  }
}

/** @typedef {Model<'gguf'>} GgufModel A GGUF model (`Model` with `format: 'gguf'`). */
/** An alias of `Model` (the same class: `GgufModel === Model`, and `instanceof` holds for a model of either format). */
export const GgufModel = Model;
/** @typedef {Model<'safetensors'>} SafetensorsModel A safetensors checkpoint (`Model` with `format: 'safetensors'`). */
/** An alias of `Model` (the same class: `SafetensorsModel === Model`, and `instanceof` holds for a model of either format). */
export const SafetensorsModel = Model;

/**
 * One handle over the shards' headers, in order (the core's split check: throws when a shard
 * does not belong or some are missing).
 * @param {import('./bindings.js').CoreWasm | Wasm} wasm
 * @param {{ header: GgufHeader }[]} shards
 * @returns {GgufHeader}
 */
function joinHeaders(wasm, shards) {
  const join = new wasm.ShardJoin();
  try {
    for (const s of shards) join.add(s.header);
    return /** @type {GgufHeader} */ (join.finish());
  } finally {
    join.free();
  }
}

/**
 * A source's size once a header has been read from it: every source knows it by then (a URL
 * learns it from its first response).
 * @param {Source} source
 * @internal
 */
export function knownSize(source) {
  return /** @type {number} */ (source.byteLength);
}

/** Runs of rows covering [a, b): all of it, or with `sample` (a row count) up to 64 evenly
 * spaced runs of about sample / 64 rows each, so a sample sees the whole tensor, not its head.
 * @param {number} a
 * @param {number} b
 * @param {number | undefined} sample
 * @returns {Run[]}
 * @internal
 */
export function sampledRuns(a, b, sample) {
  if (sample === undefined || !(sample > 0) || sample >= b - a) return a < b ? [[a, b]] : [];
  const runs = Math.min(64, sample);
  const per = Math.max(1, Math.floor(sample / runs));
  const stride = (b - a) / runs;
  /** @type {Run[]} */
  const out = [];
  for (let i = 0; i < runs; i++) {
    const first = a + Math.floor(i * stride);
    out.push([first, Math.min(b, first + per)]);
  }
  return out;
}

/**
 * Checks a [a, b) row range of `t` (all rows when absent) and returns it.
 * @param {{ name: string, nRows: number }} t
 * @param {[number, number]} [rows]
 * @returns {Run}
 * @internal
 */
export function rowsOf(t, rows) {
  const [a, b] = rows ?? [0, t.nRows];
  if (!(Number.isInteger(a) && Number.isInteger(b) && a >= 0 && a <= b && b <= t.nRows)) {
    throw new RangeError(`gguf-lens: rows ${a}..${b} are outside ${t.name} (${t.nRows} rows)`);
  }
  return [a, b];
}

/**
 * `into` (checked to hold `n` values, and cut to them) or a new Float32Array of `n`.
 * @param {unknown} into
 * @param {number} n
 * @internal
 */
export function outputArray(into, n) {
  if (into === undefined) return new Float32Array(n);
  if (!(into instanceof Float32Array)) throw new TypeError('gguf-lens: readTensor `into` must be a Float32Array');
  if (into.length < n) throw new RangeError(`gguf-lens: readTensor \`into\` holds ${into.length} values, the rows need ${n}`);
  return into.length === n ? into : into.subarray(0, n);
}

/**
 * The workers readTensor fills a shared array on, or null for this thread: only when the result
 * may be shared (asked for with `workers`, or an `into` over a SharedArrayBuffer) and memory can
 * be shared here. `workers` as for tensorStats (a count, or Workers); an `into` over a
 * SharedArrayBuffer without it gets tensorStats' default.
 * @param {GgufModel} model
 * @param {TensorInfo} t
 * @param {number} n
 * @param {TensorReadOptions} options
 * @returns {Promise<PoolWorker[] | null>}
 */
async function readTensorWorkers(model, t, n, options) {
  const { into } = options;
  if (!canShareMemory()) return null;
  if (into !== undefined ? !isShared(into) : !asksWorkers(options.workers)) return null;
  const canOpen = workersCanOpen(model.input);
  const workers = options.workers ?? (canOpen ? await autoWorkers(model.shards[t.shard].source, n) : 0);
  if (!asksWorkers(workers)) return null;
  checkWorkersCanOpen(model, 'readTensor');
  return typeof workers === 'number' ? ownWorkers(workers) : workers;
}

/**
 * Whether a `workers` option asks for workers (a count above 0, or a non-empty list).
 * @param {PoolWorker[] | number | undefined} workers
 */
function asksWorkers(workers) {
  return typeof workers === 'number' ? workers > 0 : !!workers?.length;
}

/** Bytes of a tensor's chunks kept in memory between the statistics' passes (above: read again). @internal */
export const STATS_KEEP_BYTES = 256 << 20;

/**
 * Runs the wasm statistics job (exact histogram over [min, max], exact percentiles) over rows
 * [a, b): every pass feeds every row once. The first pass reads through `readPass(job,
 * chunkOptions, keep)`; when the tensor's bytes fit STATS_KEEP_BYTES and `replay` is given they
 * are kept and the later passes replay them with `replay(job, bytes, firstRow)`, else they are
 * read again.
 * @template {Uint8Array | Float32Array} C a chunk: bytes (a GGUF tensor's) or values
 * @param {Wasm} wasm
 * @param {{ rowLength: number, rowBytes: number }} t
 * @param {number} a
 * @param {number} b
 * @param {StatsOptions} options
 * @param {(job: TensorStatsJob, chunkOptions: ChunkOptions & { rowsPerChunk: number }, keep: (chunk: C, row: number) => void) => Promise<void>} readPass
 * @param {(job: TensorStatsJob, chunk: C, row: number) => void} [replay]
 * @returns {Promise<TensorStats>}
 * @internal
 */
export async function runStatsJob(wasm, t, a, b, options, readPass, replay) {
  const job = new wasm.TensorStatsJob(a, b, t.rowLength, options.bins ?? 64, options.percentiles ?? true);
  try {
    const chunkBytes = options.chunkBytes ?? CHUNK_BYTES;
    const rowsPerChunk = job.chunkRows(rowsPerRead(t.rowBytes, chunkBytes, b - a) * t.rowLength);
    /** @type {[C, number][] | null} */
    const keep = replay && (b - a) * (t.rowBytes ?? 4 * t.rowLength) <= STATS_KEEP_BYTES ? [] : null;
    let first = true;
    while (job.pass() !== 'done') {
      if (!first && keep && replay) {
        for (const [bytes, row] of keep) replay(job, bytes, row);
      } else {
        const chunkOptions = { ...options, rowsPerChunk, onProgress: first ? options.onProgress : undefined };
        await readPass(job, chunkOptions, (bytes, row) => { if (first && keep) keep.push([bytes, row]); });
      }
      if (options.signal?.aborted) throw abortError(options.signal);
      job.finishPass();
      first = false;
    }
    return job.result();
  } finally {
    job.free();
  }
}

let nextJobId = 0;

/**
 * Whether a worker can open a model from its `input` (a URL or path, a File or Blob, or a list).
 * @param {unknown} input
 */
function workersCanOpen(input) {
  return input !== undefined && input !== null && (typeof input !== 'object' || input instanceof Blob || Array.isArray(input));
}

/**
 * Throws the one error of a call asked to run on workers for a model they cannot open.
 * @param {GgufModel} model
 * @param {string} call
 */
function checkWorkersCanOpen(model, call) {
  if (!workersCanOpen(model.input)) {
    throw new TypeError(`gguf-lens: ${call} with workers needs a model opened from a URL, path, File or Blob (workers cannot reopen a buffer); pass workers: 0`);
  }
}

/**
 * `n` of the package's own workers: Node's worker_threads, or module workers in browsers.
 * @param {number} n
 * @returns {Promise<PoolWorker[]>}
 */
async function ownWorkers(n) {
  return isNode ? nodeStatsWorkers(n) : browserStatsWorkers(n);
}

/** Runs a local file's first pass is cut into (on workers, handed out a few at a time). */
const FINE_RUNS = 64;

/**
 * Cell-aligned runs of [a, b) for `workers` workers: one per worker, or for a local file
 * (`guided`) runs that shrink as the work left does (a quarter of it at first for two workers,
 * then less, down to 1/64 of the rows), so a worker slowed down by anything takes fewer and the
 * workers end together.
 * @param {TensorStatsJob} job
 * @param {number} workers
 * @param {boolean} guided
 * @returns {Run[]}
 */
function firstPassRuns(job, workers, guided) {
  const flat = job.parts(guided ? Math.max(FINE_RUNS, 4 * workers) : workers);
  /** @type {Run[]} */
  const fine = [];
  for (let i = 0; i * 2 < flat.length; i++) fine.push([flat[2 * i], flat[2 * i + 1]]);
  if (!guided) return fine;
  /** @type {Run[]} */
  const runs = [];
  for (let i = 0; i < fine.length;) {
    const take = Math.max(1, Math.ceil((fine.length - i) / (2 * workers)));
    runs.push([fine[i][0], fine[i + take - 1][1]]);
    i += take;
  }
  return runs;
}

/**
 * tensorStats on workers (`options.workers`: Workers running `gguf-lens/stats-worker`, or Node's
 * from nodeStatsWorkers). The first pass cuts the rows into runs of whole grid cells (one per
 * worker; for a local file, many, handed to whichever worker is free); each worker opens the
 * model from `model.input` (once), reads and dequantizes its runs and sends its part back; the
 * parts merge here. Each later pass sends every worker the runs it read (their bytes are still in
 * its memory). The same numbers as on one thread, bit for bit.
 * @param {GgufModel} model
 * @param {TensorInfo} t
 * @param {number} a
 * @param {number} b
 * @param {Omit<StatsOptions, 'workers'> & { workers: PoolWorker[] }} options
 * @returns {Promise<TensorStats>}
 */
async function runStatsOnWorkers(model, t, a, b, options) {
  const { workers, signal } = options;
  checkWorkersCanOpen(model, 'tensorStats');
  const wasm = model.wasm;
  const inputId = model._workerInputId(workers);
  const job = new wasm.TensorStatsJob(a, b, t.rowLength, options.bins ?? 64, options.percentiles ?? true);
  const jobId = ++nextJobId;
  let asked = 0;
  let over = false;
  let firstPass = true;
  const progress = progressCounter(options.onProgress, (b - a) * t.rowBytes);
  /**
   * @param {PoolWorker} worker
   * @param {object} message
   * @returns {Promise<Uint8Array>}
   */
  const ask = async (worker, message) => {
    const id = `${jobId}:${++asked}`;
    const reply = await askWorker(worker, 'stats', id, message, 'a statistics worker');
    return /** @type {Uint8Array} */ (reply.state);
  };
  const guided = typeof model.shards[t.shard].source?.readToMemory === 'function';
  /** @type {Run[][]} */
  const owned = workers.map(() => []);
  // Node's workers keep the process alive only while they work for us.
  for (const w of workers) w.ref?.();
  try {
    while (job.pass() !== 'done') {
      const state = job.forkState();
      const message = (/** @type {Run[]} */ runs, /** @type {object} */ more = {}) => ({
        jobId, input: inputForWorkers(model.input), inputId, openOptions: model.openOptions, name: t.name,
        runs, state, chunkBytes: options.chunkBytes ?? CHUNK_BYTES, wasmModule: wasmModule(), ...more,
      });
      // Each part is absorbed as it arrives (the merge is a sum, in any order), while the other
      // workers go on.
      const absorb = (/** @type {Uint8Array} */ part) => {
        if (!over) job.absorb(wasm.TensorStatsJob.fromState(part));
      };
      const send = (/** @type {number} */ i, /** @type {Run[]} */ runs) => ask(workers[i], message(runs)).then(absorb);
      if (firstPass) {
        // A run at a time to whichever worker is free; each worker adds its runs to a part it
        // holds and sends it back once at the end (a part can be megabytes: Q8_0's table).
        const runs = firstPassRuns(job, workers.length, guided);
        let next = 0;
        const serve = async (/** @type {number} */ i) => {
          while (next < runs.length && !over) {
            const run = runs[next++];
            owned[i].push(run);
            await ask(workers[i], message([run], { hold: true }));
            // Progress in bytes of the first pass, a run at a time.
            progress?.((run[1] - run[0]) * t.rowBytes);
          }
          if (owned[i].length && !over) absorb(await ask(workers[i], message([], { flush: true })));
        };
        await Promise.all(workers.map((_, i) => serve(i)));
      } else {
        await Promise.all(owned.map((runs, i) => (runs.length ? send(i, runs) : null)));
      }
      if (signal?.aborted) throw abortError(signal);
      job.finishPass();
      firstPass = false;
    }
    return job.result();
  } finally {
    over = true;
    job.free();
    for (const w of workers) {
      tellWorker(w, 'stats-done', { jobId });
      w.unref?.();
    }
  }
}

/**
 * A byte counter reporting {loaded, total} to `onProgress`, or undefined without one.
 * @param {OnProgress | undefined} onProgress
 * @param {number} total
 * @returns {OnBytes | undefined}
 * @internal
 */
export function progressCounter(onProgress, total) {
  if (!onProgress) return undefined;
  let loaded = 0;
  return (n) => {
    loaded += n;
    onProgress({ loaded, total });
  };
}

/**
 * The options a chunked read takes (a call's options, with the rows per chunk the job chose).
 * @typedef {{ chunkBytes?: number, rowsPerChunk?: number, signal?: AbortSignal, onProgress?: (progress: Progress) => void, v1Zeros?: 'llama.cpp' | 'gptqmodel' }} ChunkOptions
 */
