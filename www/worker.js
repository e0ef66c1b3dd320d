// All parsing and dequantization run here, on the npm package (./pkg/, its types: js/types.js) called
// directly: `model` is the package's GgufModel or SafetensorsModel. Protocol: the page posts {id,
// op, args}; the worker answers {id, progress: {loaded, total}}* then exactly one {id, result} or
// {id, error: {name, message}}. Float32Arrays are transferred. {op: 'cancel', args: {target}}
// aborts request `target` (it then ends with an AbortError). Results carry the package's field
// names (summary(), TensorStats, tensor infos); docs/viewer.md lists the few the page adds.
// A second model (B, 'openCompare') can be open beside the first for the Compare panel.
import { diffModels, diffReport, compareTensor } from './compare-worker.js';
import { statsPool } from './stats-pool.js';
import { warmUp } from './warm-up.js';
import { pieceText } from './format.js';

/** The pieces of `ids` as the lab shows them (a split UTF-8 character as <0xNN> bytes) and
 * whether each is a control token. */
async function pieces(ids) {
  const { control } = await model.tokenPieces(ids);
  const texts = [];
  for (const id of ids) texts.push(pieceText(await model.tokenPiece(id, { special: true })));
  return { pieces: texts, control };
}

let enginePromise = null;
function engine() {
  if (!enginePromise) {
    enginePromise = import('./pkg/index.js');
    enginePromise.catch(() => { enginePromise = null; });
  }
  return enginePromise;
}

// Compile and instantiate the package's wasm now, while the page waits for a file, so the first
// open does not pay for it (kernelName is the cheapest call that loads the module), then warm
// the engine up (warm-up.js). A failure here is reported again by the first real call.
engine().then(async (e) => { await e.kernelName(); await warmUp(e.openGguf); }).catch(() => {});

let model = null;
let modelB = null; // the file compared with `model`; dropped when another first file opens
let tokenCache = null; // {tokens: string[], types: number[]|null, scores: number[]|null}
const running = new Map(); // id -> AbortController

const TOKEN_TYPES = ['undefined', 'normal', 'unknown', 'control', 'user-defined', 'unused', 'byte'];

function plain(v) {
  // Values sent to the page: scalars as they are (BigInt included), nested arrays summarized.
  if (v === null || typeof v !== 'object') return v;
  if (typeof v.len === 'number' || typeof v.len === 'bigint') return { nested: true, itemType: v.itemType ?? '?', length: Number(v.len) };
  return String(v);
}

// The tensor table lists the package's tensor infos as they are, plus a checkpoint's GPTQ layers.
/** Tensor infos for the table. A checkpoint's GPTQ layers are listed before their qweight as
 * {name: prefix, type: 'GPTQ-<n>bit', gptq: true, shape [out, in]} (read dequantized); an MLX,
 * FP8, compressed-tensors or bitsandbytes layer's stored weight (`<path>.weight`, or
 * `.weight_packed`) as the layer `<path>.weight` (type 'MLX-<n>bit-g<group>', 'FP8-E4M3-block<side>',
 * 'CT-W<n>A16-g<group>' or 'NF4-b64', logical shape, read dequantized); stored tensors as the package gives them, `part: true` when they belong to a
 * GPTQ or MLX layer. */
function tensorRows(f) {
  if (f.format === 'gguf') return f.tensors;
  const layerOf = new Map(f.gptqLayers.map((l) => [l.parts.qweight, l]));
  const parts = new Set(f.gptqLayers.flatMap((l) => Object.values(l.parts)));
  // By stored weight: a compressed-tensors layer's is `.weight_packed` when pack-quantized.
  const mlxOf = new Map([...(f.mlxLayers ?? []), ...(f.fp8Layers ?? []), ...(f.ctLayers ?? [])].map((l) => [l.parts.weight, l]));
  // An MXFP4 tensor by its `_blocks`; its `_scales` a part.
  for (const l of f.mxfp4Layers ?? []) { mlxOf.set(l.parts.blocks, l); parts.add(l.parts.scales); }
  // A bitsandbytes layer by its stored `.weight`; its scales, code books and quant state parts.
  for (const l of f.bnbLayers ?? []) {
    mlxOf.set(l.parts.weight, l);
    for (const p of [l.parts.absmax, l.parts.quantMap, l.parts.quantState, l.parts.nestedAbsmax, l.parts.nestedQuantMap]) if (p) parts.add(p);
  }
  for (const l of f.mlxLayers ?? []) parts.add(l.parts.scales).add(l.parts.biases);
  for (const l of f.fp8Layers ?? []) parts.add(l.parts.weightScaleInv);
  for (const l of f.ctLayers ?? []) {
    for (const p of [l.parts.weightScale, l.parts.weightShape, l.parts.weightZeroPoint]) if (p) parts.add(p);
  }
  const rows = [];
  for (const t of f.tensors) {
    const m = mlxOf.get(t.name);
    if (m) {
      rows.push({ ...t, name: m.name, type: m.type, typeId: -1, shape: m.shape, nElements: m.nElements, nBytes: m.nBytes });
      continue;
    }
    const l = layerOf.get(t.name);
    if (l) {
      rows.push({
        name: l.name, type: `GPTQ-${l.bits}bit`, typeId: -1, gptq: true, shape: [l.outFeatures, l.inFeatures],
        nElements: l.nElements, relativeOffset: t.relativeOffset, nBytes: l.nBytes,
        bits: l.bits, groupSize: l.groupSize, actOrder: l.actOrder, hasGIdx: l.hasGIdx,
      });
    }
    rows.push(parts.has(t.name) ? { ...t, part: true } : t);
  }
  return rows;
}

let entries = []; // model.metadata (entries for every format)

function metaValue(key) {
  return entries.find((m) => m.key === key);
}

function metaArray(key) {
  const m = metaValue(key);
  return m && m.type === 'array' ? m.items(0, Number(m.len)) : null;
}

/** The file's name, for a checkpoint's summary (safetensors has no name field): a File's name, or
 * a URL's last two path segments. */
function nameOf(source) {
  if (typeof source === 'string') {
    try {
      const parts = new URL(source, 'http://x/').pathname.split('/').filter(Boolean).map((p) => { try { return decodeURIComponent(p); } catch { return p; } });
      return parts.slice(-2).join('/') || source;
    } catch { return source; }
  }
  return typeof source?.name === 'string' ? source.name : 'safetensors file';
}

/** What the page shows of a model: the package's fields, cloneable (no methods). */
function describe(f, source) {
  const s = f.summary();
  const info = { format: f.format, version: f.version, endian: f.endian, alignment: f.alignment, dataOffset: f.dataOffset, headerLength: f.headerLength, byteLength: f.byteLength, shardCount: f.shards.length, quantConfigError: f.quantConfigError };
  const summary = f.format === 'safetensors' ? { ...s, name: s.name ?? nameOf(source), dtypeMix: undefined } : s;
  return { info, summary, tensors: tensorRows(f) };
}

async function openModel(source, { signal, onProgress }, headers) {
  // headers: a stored Hub token for a gated URL (www/hub-token.js), sent with every read of it
  return (await engine()).open(source, { signal, onProgress, headers });
}

/** A package editor with `changes` applied (each checked by the core as it is set). */
async function editorOf(changes) {
  const editor = await model.edit();
  for (const c of changes) {
    if (c.remove) editor.remove(c.key);
    else editor.set(c.key, c.value, c.type);
  }
  return editor;
}

function tokens() {
  if (!tokenCache) {
    const t = metaArray('tokenizer.ggml.tokens');
    tokenCache = t ? { tokens: t.map(String), types: metaArray('tokenizer.ggml.token_type'), scores: metaArray('tokenizer.ggml.scores') } : { tokens: [], types: null, scores: null };
  }
  return tokenCache;
}

function tokenRow(id) {
  const c = tokens();
  return { id, text: c.tokens[id], type: c.types ? (TOKEN_TYPES[Number(c.types[id])] ?? String(c.types[id])) : null, score: c.scores ? Number(c.scores[id]) : null };
}

const ops = {
  async open({ source, headers }, ctx) {
    const m = await openModel(source, ctx, headers);
    if (ctx.signal.aborted) return null; // cancelled: keep the model that was open before
    model = m;
    modelB = null;
    tokenCache = null;
    entries = m.metadata;
    const md = entries.map((e) => (e.type === 'array'
      ? { key: e.key, type: 'array', itemType: e.itemType, length: Number(e.len), preview: e.items(0, Math.min(Number(e.len), 8)).map(plain) }
      : { key: e.key, type: e.type, value: e.value }));
    // Every special-token key llama.cpp reads (the core's list), with the token's text: GGUF's
    // alone (the method throws on a checkpoint).
    const special = {};
    for (const t of m.format === 'gguf' ? m.specialTokens() : []) {
      special[t.name] = { id: t.id, text: tokens().tokens[t.id] ?? null, key: t.key, recognized: t.recognized };
    }
    // The package's full module (tokenizer, stats, …) loads while the summary is read.
    m.preload().catch(() => {});
    return { ...describe(m, source), metadata: md, special, tokenCount: tokens().tokens.length };
  },
  async meta({ key, start, end }) {
    const e = metaValue(key);
    if (!e || e.type !== 'array') throw new Error(`no array metadata key ${key}`);
    return e.items(start, end).map(plain);
  },
  // For the metadata filter: the first string item of each array that contains `q`.
  async metaFind({ q }) {
    const hits = {};
    for (const e of entries) {
      if (e.type !== 'array' || e.itemType !== 'string') continue;
      const [first] = e.findText(q, { limit: 1 });
      if (first !== undefined) hits[e.key] = first;
    }
    return hits;
  },
  async tokens({ query = '', mode = 'text', start = 0, limit = 100 }) {
    const c = tokens();
    let ids;
    if (mode === 'id') {
      const id = Number(query);
      ids = Number.isInteger(id) && id >= 0 && id < c.tokens.length ? [id] : [];
    } else if (query === '') {
      ids = null;
    } else {
      const q = query.toLowerCase();
      ids = [];
      for (let i = 0; i < c.tokens.length; i++) if (c.tokens[i].toLowerCase().includes(q)) ids.push(i);
    }
    const total = ids ? ids.length : c.tokens.length;
    const rows = [];
    for (let k = start; k < Math.min(total, start + limit); k++) rows.push(tokenRow(ids ? ids[k] : k));
    return { total, rows };
  },
  async merges({ query = '', start = 0, limit = 100 }) {
    const all = metaArray('tokenizer.ggml.merges') || [];
    const q = query.toLowerCase();
    const hits = [];
    for (let i = 0; i < all.length; i++) if (!q || String(all[i]).toLowerCase().includes(q)) hits.push(i);
    return { total: hits.length, rows: hits.slice(start, start + limit).map((i) => ({ rank: i, text: String(all[i]) })) };
  },
  async openCompare({ source }, ctx) {
    const m = await openModel(source, ctx);
    if (ctx.signal.aborted) return null;
    modelB = m;
    const { info, summary } = describe(m, source);
    return { info, summary, tensorCount: m.tensors.length, diff: await diffModels(model, m) };
  },
  async compareTensor({ name }, ctx) {
    if (!modelB) throw new Error('no file to compare with is open');
    return compareTensor(model, modelB, name, ctx);
  },
  async compareReport({ format, paths, values }) {
    if (!modelB) throw new Error('no file to compare with is open');
    return diffReport(model, modelB, { format, paths, values });
  },
  async editChanges({ changes }) {
    if (!model.edit) throw new Error('only GGUF files can be edited');
    return (await editorOf(changes)).changes();
  },
  async editBlob({ changes }, ctx) {
    if (!model.edit) throw new Error('only GGUF files can be edited');
    return (await editorOf(changes)).toBlob({ signal: ctx.signal });
  },
  async quantError({ name, sampleRows }, ctx) {
    if (model.format !== 'gguf') throw new Error('quantization error is measured on GGUF tensors');
    // The stats pool's workers (one per core) each quantize a share of the rows; the package
    // counts rows, the status bar shows bytes of the tensor.
    const { rowBytes } = model.tensor(name);
    const onProgress = (p) => ctx.onProgress({ loaded: p.loaded * rowBytes, total: p.total * rowBytes });
    return model.quantError(name, { sampleRows, signal: ctx.signal, onProgress, workers: statsPool() });
  },
  // The pool's workers started (their code loaded, nothing read) while the user looks at a
  // tensor, so a first quantization-error or statistics run does not wait for them.
  async warmPool() {
    if (model.format === 'gguf') statsPool();
    return null;
  },
  async planMemory({ options }) {
    if (!model.planMemory) throw new Error('the memory planner reads GGUF files');
    return model.planMemory(options);
  },
  async fit({ options }) {
    if (!model.fit) throw new Error('the fit reads GGUF files');
    return model.fit(options);
  },
  async tokenize({ text, addSpecial, parseSpecial }) {
    if (!model.tokenize) throw new Error('tokenizing needs a GGUF file');
    const ids = await model.tokenize(text, { addSpecial, parseSpecial });
    return { ids: Array.from(ids), ...(await pieces(ids)) };
  },
  // The rendered text, and its tokens as the model reads the prompt (special text parsed).
  async renderChat({ messages, tools, variables, addGenerationPrompt, template }) {
    if (!model.renderChatTemplate) throw new Error('chat templates are GGUF metadata');
    const text = await model.renderChatTemplate(messages, { tools, variables, addGenerationPrompt, template });
    const ids = await model.tokenize(text, { addSpecial: false, parseSpecial: true });
    return { text, ids: Array.from(ids), ...(await pieces(ids)) };
  },
  async lint() {
    if (!model.lint) throw new Error('lint checks GGUF files');
    return model.lint();
  },
  async hash({ options }, ctx) {
    if (!model.hash) throw new Error('hashes are defined for GGUF files (llama-gguf-hash)');
    return model.hash({ ...options, signal: ctx.signal, onProgress: ctx.onProgress });
  },
  async rows({ name, rows }, ctx) {
    const out = await model.readTensor(name, { rows, signal: ctx.signal, onProgress: ctx.onProgress });
    return { transfer: out };
  },
  async stats({ name, bins, rows }, ctx) {
    // GGUF: the pool's workers each read their own rows (same numbers as without).
    const workers = model.format === 'gguf' ? statsPool() : undefined;
    return model.tensorStats(name, { bins, rows, signal: ctx.signal, onProgress: ctx.onProgress, workers });
  },
};

// The viewer's tests (a page opened with ?test-hooks starts this worker with it): a request that
// keeps the thread busy, as a runaway call in wasm would, and one that crashes the worker.
// Absent otherwise.
if (new URL(self.location.href).searchParams.has('test-hooks')) {
  ops.testBusy = async ({ ms }) => {
    const end = Date.now() + ms;
    while (Date.now() < end) { /* busy */ }
    return null;
  };
  // A real trap in the package's wasm: its memory grown to the engine's maximum from here, the
  // next allocation in Rust fails and aborts.
  ops.testTrap = async () => {
    await model.preload();
    const { wasmMemory } = await import('./pkg/wasm.js');
    const memory = wasmMemory();
    const before = memory.buffer.byteLength;
    for (let pages = 1 << 15; pages >= 1;) {
      try { memory.grow(pages); } catch { pages >>= 1; }
    }
    await model.tokenize(new Uint8Array(before + (1 << 20)));
    return null;
  };
  // An uncaught error: the page sees the worker's error event, as for a crash.
  ops.testCrash = async () => {
    setTimeout(() => { throw new Error('a test crash'); });
    return null;
  };
}

self.onmessage = async (ev) => {
  const { id, op, args } = ev.data || {};
  if (op === 'cancel') {
    // Abort the engine's work and acknowledge at once (the page has ended the request already;
    // a cancel not acknowledged soon, from a thread busy in wasm, makes it replace this
    // worker); whatever that request produces later is dropped.
    const target = args && args.target;
    const c = running.get(target);
    if (c) {
      running.delete(target);
      c.abort();
    }
    self.postMessage({ ack: id });
    return;
  }
  const fn = ops[op];
  if (!fn) {
    self.postMessage({ id, error: { name: 'Error', message: `unknown operation ${op}` } });
    return;
  }
  if (op !== 'open' && op !== 'cancel' && !model) {
    self.postMessage({ id, error: { name: 'Error', message: 'no model is open' } });
    return;
  }
  const controller = new AbortController();
  running.set(id, controller);
  let last = 0;
  const onProgress = (p) => {
    if (controller.signal.aborted) return;
    const now = Date.now();
    if (now - last < 50 && p.loaded < p.total) return;
    last = now;
    self.postMessage({ id, progress: { loaded: Number(p.loaded), total: Number(p.total) } });
  };
  try {
    let result = await fn(args || {}, { signal: controller.signal, onProgress });
    if (controller.signal.aborted) return; // already answered by the cancel
    if (result && result.transfer) {
      result = result.transfer;
      self.postMessage({ id, result }, [result.buffer]);
    } else {
      self.postMessage({ id, result });
    }
  } catch (err) {
    if (controller.signal.aborted) return;
    self.postMessage({ id, error: { name: (err && err.name) || 'Error', message: (err && err.message) || String(err) } });
  } finally {
    running.delete(id);
  }
};
