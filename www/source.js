// The adapter: the ONLY module that talks to the gguf-lens npm package. Everything else in the
// viewer (worker.js, app.js) sees the small contract below, so following a change in the
// package's API is an edit to this one file.
//
// Contract — openModel(source, {signal, onProgress}) resolves to a Model:
//   info      {version, endian, alignment, dataOffset, fileSize}
//   metadata  [{key, type, value}]           scalars; u64/i64 as BigInt
//             [{key, type: 'array', itemType, length}]   arrays: elements through metaRange
//   tensors   [{name, type, typeId, shape, nElements, offset, nBytes}]  shape outermost first
//             (the package's public shape, every format),
//             offset relative to the data section
//   summary   {architecture, name, parameterCount, fileType, fileTypeLabel, bitsPerWeight,
//              tensorBytes, contextLength, embeddingLength, blockCount, headCount, headCountKv,
//              keyLength, valueLength, vocabSize, tokenizerModel,
//              quantMix: [{type, tensors, elements, bytes, share}]}
//   metaRange(key, start, end)               → array elements start..end (end exclusive)
//   readRows(name, [a, b], {signal, onProgress})   → Float32Array of rows a..b
//   stats(name, {bins, rows, signal, onProgress}) → over rows [a, b) (default all):
//                                              {count, min, max, mean, std, nan, inf, zero,
//                                               histogram: number[bins], histogramRange: [lo, hi]}
// A safetensors checkpoint (plain or GPTQ) gives the same shape, with info.format 'safetensors'
// (GGUF: 'gguf'), info.headerLength and info.shards (a sharded checkpoint opens from its
// model.safetensors.index.json URL; headerLength/dataOffset are the first shard's); metadata = __metadata__ as string scalars; tensors = the
// stored tensors (type = dtype, shape as stored; part: true for a GPTQ layer's) with each GPTQ layer inserted before its
// qweight as {name: prefix, type: 'GPTQ 4-bit', gptq: true, shape [out, in]} (rows = outputs,
// read dequantized); summary {format, name (the file's name), parameterCount, tensorBytes,
// bitsPerWeight, quantMix (dtypes and GPTQ layers), gptq: {layers, bits, groupSize, descAct,
// sym, checkpointFormat, configSource} | null}.
// compareModels(a, b) → the core's diff of two models, GGUF or safetensors (package compareModels: summary
//   fields, metadata keys and array items, tensors; see js/index.d.ts ModelDiff).
// compareTensor(a, b, name, {signal, onProgress}) → the core's metrics of one tensor read from both
//   (package compareTensor: ValueMetrics, nulls where undefined), progress in rows.
// GGUF only (absent for safetensors):
//   editChanges(changes)                   → the pending changes checked by the core, as
//                                            [{key, op: 'set'|'add'|'remove', before, after, type}];
//                                            throws one line naming a bad key or value.
//                                            changes: [{key, remove: true} | {key, value, type?}]
//   editBlob(changes, {signal})            → the edited file as a Blob (from a File: header + slices)
//   quantError(name, {sampleRows, signal, onProgress}) → the package's quantError report
//                                            ({results: [{type, bitsPerWeight, nValues, rmse,
//                                            maxAbsError, relativeRmse, cosine}], skipped})
//   planMemory(options)                    → the package's MemoryPlan (llama.cpp's allocation for
//                                            llama-server: weights, KV cache, compute, command)
//   tokenize(text, {addSpecial, parseSpecial}) → Int32Array, llama.cpp's ids
//   tokenPieces(ids)                       → {pieces: string[], control: boolean[]}
//   renderChatTemplate(messages, {tools, addGenerationPrompt, variables, template}) → string
//   lint()                                 → {findings: [{code, severity, message, offset?, key?,
//                                            tensor?, shard?}], errors, warnings, infos}
//   hash({xxh64, sha1, sha256, uuid, perTensor, fileName}, {signal, onProgress})
//                                          → {tensors, model, lines} as llama-gguf-hash prints them
// source: a URL string, a File/Blob or an ArrayBuffer. Errors reject with an Error whose
// message is readable as is; an abort rejects with a DOMException named AbortError.
//
// Engine: the npm package's ESM build, copied to ./pkg/ by scripts/build-site.sh (entry
// ./pkg/index.js, API as in js/index.d.ts).

let enginePromise = null;
function loadEngine() {
  if (!enginePromise) {
    enginePromise = import('./pkg/index.js');
    enginePromise.catch(() => { enginePromise = null; });
  }
  return enginePromise;
}

const engineModels = new WeakMap(); // contract model → the package's model

/** The package model behind a contract model from openModel. */
function engineOf(m) {
  const f = engineModels.get(m);
  if (!f) throw new Error('not a model opened by openModel');
  return f;
}

export async function compareModels(a, b) {
  return (await loadEngine()).compareModels(engineOf(a), engineOf(b));
}

export async function compareTensor(a, b, name, { signal, onProgress } = {}) {
  return (await loadEngine()).compareTensor(engineOf(a), engineOf(b), name, { signal, onProgress });
}

const num = (v) => (typeof v === 'bigint' ? Number(v) : v ?? undefined);

// Maps the package's model (js/index.d.ts on the npm branch: GgufModel) to the contract above.
export async function openModel(source, { signal, onProgress } = {}) {
  const engine = await loadEngine();
  const f = await engine.open(source, { signal, onProgress });
  const m = f.format === 'safetensors' ? safetensorsModel(f, source) : ggufModel(f);
  engineModels.set(m, f);
  return m;
}

function ggufModel(f) {
  const s = f.summary();
  const get = (k) => f.get(k);
  const arch = s.architecture;
  const arrays = new Map();
  const metadata = f.metadata.map((m) => {
    if (m.type === 'array') {
      arrays.set(m.key, m);
      return { key: m.key, type: 'array', itemType: m.itemType, length: num(m.len) };
    }
    return { key: m.key, type: m.type, value: m.value };
  });
  const tensors = f.tensors.map((t) => ({
    name: t.name, type: t.type, typeId: t.typeId, shape: Array.from(t.shape, num),
    nElements: num(t.nElements), offset: num(t.relativeOffset), nBytes: num(t.nBytes),
  }));
  const archNum = (k) => (typeof arch === 'string' ? num(get(`${arch}.${k}`)) : undefined);
  const tokenizerModel = get('tokenizer.ggml.model');
  return {
    info: { format: 'gguf', version: f.version, endian: f.endian, alignment: f.alignment, dataOffset: num(f.dataOffset), fileSize: num(f.byteLength) },
    metadata,
    tensors,
    summary: {
      architecture: arch ?? undefined, name: s.name ?? undefined, parameterCount: num(s.parameterCount),
      fileType: num(s.fileType), fileTypeLabel: s.fileTypeLabel ?? undefined, bitsPerWeight: s.bitsPerWeight,
      tensorBytes: num(s.tensorBytes), contextLength: num(s.contextLength), embeddingLength: num(s.embeddingSize),
      blockCount: num(s.layers), headCount: num(s.heads), headCountKv: num(s.kvHeads),
      keyLength: archNum('attention.key_length'), valueLength: archNum('attention.value_length'),
      vocabSize: num(s.vocabSize), tokenizerModel: typeof tokenizerModel === 'string' ? tokenizerModel : undefined,
      quantMix: s.quantMix.map((q) => ({ type: q.type, tensors: q.tensors, elements: num(q.elements), bytes: num(q.bytes), share: q.share })),
    },
    metaRange: (key, start, end) => {
      const m = arrays.get(key);
      if (!m) throw new Error(`no array metadata key ${key}`);
      return m.items(start, end);
    },
    // The package searches a whole string array in wasm, without decoding it into JS.
    metaFind: (key, needle, opts) => {
      const m = arrays.get(key);
      if (!m) throw new Error(`no array metadata key ${key}`);
      return m.findText(needle, opts);
    },
    specialTokens: () => f.specialTokens(),
    lint: () => f.lint(),
    tokenize: (text, o) => f.tokenize(text, o),
    tokenPieces: (ids) => f.tokenPieces(ids),
    renderChatTemplate: (messages, o) => f.renderChatTemplate(messages, o),
    planMemory: (options) => f.planMemory(options),
    quantError: (name, opts = {}) => f.quantError(name, { sampleRows: opts.sampleRows, signal: opts.signal, onProgress: opts.onProgress }),
    editChanges: (changes) => editorOf(f, changes).changes(),
    editBlob: (changes, opts = {}) => editorOf(f, changes).toBlob({ signal: opts.signal }),
    hash: (options, opts = {}) => f.hash({ ...options, signal: opts.signal, onProgress: opts.onProgress }),
    readRows: (name, rows, opts = {}) => f.readTensor(name, { rows, signal: opts.signal, onProgress: opts.onProgress }),
    // Every core: a pool of the package's statistics workers, each reading its own rows.
    stats: async (name, opts = {}) => statsOf(await f.tensorStats(name, { bins: opts.bins, rows: opts.rows, signal: opts.signal, onProgress: opts.onProgress, workers: statsPool() })),
  };
}

/** A package editor with `changes` applied (each checked by the core as it is set). */
function editorOf(f, changes) {
  const editor = f.edit();
  for (const c of changes) {
    if (c.remove) editor.remove(c.key);
    else editor.set(c.key, c.value, c.type);
  }
  return editor;
}

let pool = null;
/** The package's statistics workers, one per core (at most 4), started on first use. */
function statsPool() {
  if (pool || typeof Worker === 'undefined') return pool ?? undefined;
  const n = Math.min(4, Math.max(1, globalThis.navigator?.hardwareConcurrency ?? 2));
  pool = Array.from({ length: n }, () => new Worker(new URL('./pkg/stats-worker.js', import.meta.url), { type: 'module' }));
  return pool;
}

function statsOf(r) {
  const edges = r.histogram.edges;
  return {
    count: num(r.count), min: r.min ?? NaN, max: r.max ?? NaN, mean: r.mean ?? NaN, std: r.std ?? NaN,
    nan: num(r.nanCount), inf: num(r.infCount), zero: num(r.zeroCount),
    histogram: Array.from(r.histogram.counts, num), histogramRange: [edges[0] ?? 0, edges[edges.length - 1] ?? 0],
  };
}

/** The file's name for the summary: a File's name, or a URL's last two path segments. */
function nameOf(source) {
  if (typeof source === 'string') {
    try {
      const parts = new URL(source, 'http://x/').pathname.split('/').filter(Boolean).map((p) => { try { return decodeURIComponent(p); } catch { return p; } });
      return parts.slice(-2).join('/') || source;
    } catch { return source; }
  }
  return typeof source?.name === 'string' ? source.name : 'safetensors file';
}

function safetensorsModel(f, source) {
  const s = f.summary();
  const layerOf = new Map(f.gptqLayers.map((l) => [l.parts.qweight, l]));
  const parts = new Set(f.gptqLayers.flatMap((l) => Object.values(l.parts)));
  const tensors = [];
  for (const t of f.tensors) {
    const l = layerOf.get(t.name);
    if (l) {
      tensors.push({
        name: l.name, type: `GPTQ ${l.bits}-bit`, typeId: -1, gptq: true, shape: [l.outFeatures, l.inFeatures],
        nElements: l.nElements, offset: f.tensor(l.parts.qweight).relativeOffset, nBytes: l.nBytes,
        bits: l.bits, groupSize: l.groupSize, actOrder: l.actOrder, hasGIdx: l.hasGIdx,
      });
    }
    tensors.push({ name: t.name, type: t.dtype, typeId: -1, shape: t.shape, nElements: t.nElements, offset: t.relativeOffset, nBytes: t.nBytes, part: parts.has(t.name) || undefined });
  }
  const metadata = Object.keys(f.metadata).map((key) => ({ key, type: 'string', value: f.metadata[key] }));
  return {
    info: { format: 'safetensors', headerLength: f.headerLength, dataOffset: f.dataOffset, fileSize: f.byteLength, shards: f.shards.length },
    metadata,
    tensors,
    summary: {
      format: 'safetensors', name: nameOf(source), parameterCount: s.parameterCount, tensorBytes: s.tensorBytes,
      bitsPerWeight: s.bitsPerWeight, gptq: s.gptq, quantConfigError: f.quantConfigError,
      quantMix: s.dtypeMix.map((m) => ({ type: m.type, tensors: m.tensors, elements: m.elements, bytes: m.bytes, share: m.share })),
    },
    metaRange: (key) => { throw new Error(`no array metadata key ${key}`); },
    readRows: (name, rows, opts = {}) => f.readTensor(name, { rows, signal: opts.signal, onProgress: opts.onProgress }),
    stats: async (name, opts = {}) => statsOf(await f.tensorStats(name, { bins: opts.bins, rows: opts.rows, signal: opts.signal, onProgress: opts.onProgress })),
  };
}
