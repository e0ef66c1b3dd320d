// All parsing and dequantization run here. Protocol: the page posts {id, op, args}; the worker
// answers {id, progress: {loaded, total}}* then exactly one {id, result} or {id, error: {name,
// message}}. Float32Arrays are transferred. {op: 'cancel', args: {target}} aborts request
// `target` (it then ends with an AbortError). Only source.js touches the gguf-lens package.
// A second model (B, 'openCompare') can be open beside the first for the Compare panel.
import { openModel } from './source.js';
import { diffModels, compareTensor } from './compare-worker.js';

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

function metaValue(key) {
  return model && model.metadata.find((m) => m.key === key);
}

function metaArray(key) {
  const m = metaValue(key);
  return m && m.type === 'array' ? model.metaRange(key, 0, m.length) : null;
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
  async open({ source }, ctx) {
    const m = await openModel(source, ctx);
    if (ctx.signal.aborted) return null; // cancelled: keep the model that was open before
    model = m;
    modelB = null;
    tokenCache = null;
    const md = m.metadata.map((e) => (e.type === 'array'
      ? { key: e.key, type: 'array', itemType: e.itemType, length: e.length, preview: m.metaRange(e.key, 0, Math.min(e.length, 8)).map(plain) }
      : { key: e.key, type: e.type, value: e.value }));
    // Every special-token key llama.cpp reads (the core's list), with the token's text.
    const special = {};
    for (const t of m.specialTokens?.() ?? []) {
      special[t.name] = { id: t.id, text: tokens().tokens[t.id] ?? null, key: t.key, recognized: t.recognized };
    }
    return { info: m.info, metadata: md, tensors: m.tensors, summary: m.summary, special, tokenCount: tokens().tokens.length };
  },
  async meta({ key, start, end }) {
    return model.metaRange(key, start, end).map(plain);
  },
  // For the metadata filter: the first string item of each array that contains `q`.
  async metaFind({ q }) {
    const hits = {};
    if (!model.metaFind) return hits;
    for (const e of model.metadata) {
      if (e.type !== 'array' || e.itemType !== 'string') continue;
      const [first] = model.metaFind(e.key, q, { limit: 1 });
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
    return { info: m.info, summary: m.summary, tensorCount: m.tensors.length, diff: await diffModels(model, m) };
  },
  async compareTensor({ name }, ctx) {
    if (!modelB) throw new Error('no file to compare with is open');
    return compareTensor(model, modelB, name, ctx);
  },
  async editChanges({ changes }) {
    if (!model.editChanges) throw new Error('only GGUF files can be edited');
    return model.editChanges(changes);
  },
  async editBlob({ changes }, ctx) {
    if (!model.editBlob) throw new Error('only GGUF files can be edited');
    return model.editBlob(changes, ctx);
  },
  async quantError({ name, sampleRows }, ctx) {
    if (!model.quantError) throw new Error('quantization error is measured on GGUF tensors');
    return model.quantError(name, { sampleRows, ...ctx });
  },
  async planMemory({ options }) {
    if (!model.planMemory) throw new Error('the memory planner reads GGUF files');
    return model.planMemory(options);
  },
  async tokenize({ text, addSpecial, parseSpecial }) {
    if (!model.tokenize) throw new Error('tokenizing needs a GGUF file');
    const ids = model.tokenize(text, { addSpecial, parseSpecial });
    return { ids: Array.from(ids), ...model.tokenPieces(ids) };
  },
  // The rendered text, and its tokens as the model reads the prompt (special text parsed).
  async renderChat({ messages, tools, variables, addGenerationPrompt, template }) {
    if (!model.renderChatTemplate) throw new Error('chat templates are GGUF metadata');
    const text = model.renderChatTemplate(messages, { tools, variables, addGenerationPrompt, template });
    const ids = model.tokenize(text, { addSpecial: false, parseSpecial: true });
    return { text, ids: Array.from(ids), ...model.tokenPieces(ids) };
  },
  async lint() {
    if (!model.lint) throw new Error('lint checks GGUF files');
    return model.lint();
  },
  async hash({ options }, ctx) {
    if (!model.hash) throw new Error('hashes are defined for GGUF files (llama-gguf-hash)');
    return model.hash(options, ctx);
  },
  async rows({ name, rows }, ctx) {
    const out = await model.readRows(name, rows, ctx);
    return { transfer: out };
  },
  async stats({ name, bins, rows }, ctx) {
    return model.stats(name, { bins, rows, signal: ctx.signal, onProgress: ctx.onProgress });
  },
};

self.onmessage = async (ev) => {
  const { id, op, args } = ev.data || {};
  if (op === 'cancel') {
    // Abort the engine's work and answer at once: the page never waits on an engine that is
    // slow to notice its signal; whatever that request produces later is dropped.
    const target = args && args.target;
    const c = running.get(target);
    if (c) {
      running.delete(target);
      c.abort();
      self.postMessage({ id: target, error: { name: 'AbortError', message: 'cancelled' } });
    }
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
