// The page: UI only. All file access, parsing and dequantization happen in worker.js.
// Every string from a file reaches the DOM as a text node (el() / textContent), never as HTML.
// The Compare panel lives in compare.js (given this module's helpers through setupCompare).
import { setupCompare } from './compare.js';
import { mdEscape, safeName, jsonText, download } from './export-util.js';
import { setupEditing } from './edit-panel.js';
import { setupIntegrity } from './integrity.js';
import { setupQuantError } from './quant-panel.js';
import { setupMemory } from './memory-panel.js';
import { setupLab } from './lab-panel.js';

const SAMPLE_URL = 'sample/tiny-llama-Q4_K_M.gguf';
const $ = (sel) => document.querySelector(sel);
const $$ = (sel) => [...document.querySelectorAll(sel)];
const SVG_NS = 'http://www.w3.org/2000/svg';

// llama.cpp's short names for general.file_type (gguf-py's LlamaFileType without MOSTLY_).
const FTYPE_SHORT = {
  0: 'F32', 1: 'F16', 2: 'Q4_0', 3: 'Q4_1', 7: 'Q8_0', 8: 'Q5_0', 9: 'Q5_1', 10: 'Q2_K', 11: 'Q3_K_S', 12: 'Q3_K_M',
  13: 'Q3_K_L', 14: 'Q4_K_S', 15: 'Q4_K_M', 16: 'Q5_K_S', 17: 'Q5_K_M', 18: 'Q6_K', 19: 'IQ2_XXS', 20: 'IQ2_XS',
  21: 'Q2_K_S', 22: 'IQ3_XS', 23: 'IQ3_XXS', 24: 'IQ1_S', 25: 'IQ4_NL', 26: 'IQ3_S', 27: 'IQ3_M', 28: 'IQ2_S',
  29: 'IQ2_M', 30: 'IQ4_XS', 31: 'IQ1_M', 32: 'BF16', 36: 'TQ1_0', 37: 'TQ2_0', 38: 'MXFP4_MOE',
};
// llama.cpp's llama_model_ftype_name() labels, by general.file_type (the "quant label").
const FTYPE_LABELS = {
  0: 'all F32', 1: 'F16', 2: 'Q4_0', 3: 'Q4_1', 7: 'Q8_0', 8: 'Q5_0', 9: 'Q5_1', 10: 'Q2_K - Medium',
  11: 'Q3_K - Small', 12: 'Q3_K - Medium', 13: 'Q3_K - Large', 14: 'Q4_K - Small', 15: 'Q4_K - Medium',
  16: 'Q5_K - Small', 17: 'Q5_K - Medium', 18: 'Q6_K', 19: 'IQ2_XXS - 2.0625 bpw', 20: 'IQ2_XS - 2.3125 bpw',
  21: 'Q2_K - Small', 22: 'IQ3_XS - 3.3 bpw', 23: 'IQ3_XXS - 3.0625 bpw', 24: 'IQ1_S - 1.5625 bpw',
  25: 'IQ4_NL - 4.5 bpw', 26: 'IQ3_S - 3.4375 bpw', 27: 'IQ3_S mix - 3.66 bpw', 28: 'IQ2_S - 2.5 bpw',
  29: 'IQ2_M - 2.7 bpw', 30: 'IQ4_XS - 4.25 bpw', 31: 'IQ1_M - 1.75 bpw', 32: 'BF16', 36: 'TQ1_0 - 1.69 bpw',
  37: 'TQ2_0 - 2.06 bpw', 38: 'MXFP4 MoE',
};
function ftypeLabel(ft) {
  if (ft === undefined || ft === null) return undefined;
  return (FTYPE_LABELS[ft & ~1024] ?? `unknown (${ft})`) + (ft & 1024 ? ' (guessed)' : '');
}
const TYPE_COLORS = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

// ---------- DOM helpers (text only) ----------
function el(tag, props, ...children) {
  const e = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v === undefined || v === null) continue;
      if (k === 'class') e.className = v;
      else if (k === 'dataset') Object.assign(e.dataset, v);
      else if (k === 'on') for (const [ev, fn] of Object.entries(v)) e.addEventListener(ev, fn);
      else if (k === 'title') e.title = String(v);
      else if (/^(type|colspan|scope|value|disabled|role|rows|download|aria-[a-z]+)$/.test(k)) e.setAttribute(k, String(v));
      else if (k === 'href' && /^blob:/.test(String(v))) e.setAttribute(k, String(v)); // only our own object URLs
      else throw new Error(`el: attribute ${k} not allowed`);
    }
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}
function svg(tag, attrs = {}, ...children) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}
function clear(node) { node.replaceChildren(); return node; }

const fmtInt = (n) => (n === undefined || n === null || Number.isNaN(n) ? '—' : Number(n).toLocaleString('en-US'));
function fmtBytes(n) {
  if (n === undefined || n === null) return '—';
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0, v = Number(n);
  while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  return i === 0 ? `${v} B` : `${v.toFixed(v >= 100 ? 1 : 2)} ${u[i]}`;
}
function fmtCount(n) {
  if (n === undefined || n === null) return '—';
  const v = Number(n);
  if (v >= 1e12) return `${(v / 1e12).toFixed(2)} T`;
  if (v >= 1e9) return `${(v / 1e9).toFixed(2)} B`;
  if (v >= 1e6) return `${(v / 1e6).toFixed(2)} M`;
  if (v >= 1e3) return `${(v / 1e3).toFixed(1)} K`;
  return String(v);
}
const fmtNum = (x) => (typeof x !== 'number' ? String(x) : Number.isNaN(x) ? 'NaN' : !Number.isFinite(x) ? (x > 0 ? '+Inf' : '-Inf') : Math.abs(x) >= 1e5 || (x !== 0 && Math.abs(x) < 1e-4) ? x.toExponential(4) : x.toPrecision(6).replace(/\.?0+$/, ''));
const pct = (x) => `${(x * 100).toFixed(1)}%`;

// ---------- worker client ----------
let worker = null;
let nextId = 1;
const pending = new Map();

function startWorker() {
  worker = new Worker('worker.js', { type: 'module' });
  worker.onmessage = (ev) => {
    const { id, result, error, progress } = ev.data;
    const p = pending.get(id);
    if (!p) return;
    if (progress) { if (p.onProgress) p.onProgress(progress); return; }
    pending.delete(id);
    if (error) {
      const e = new Error(error.message);
      e.name = error.name;
      p.reject(e);
    } else p.resolve(result);
  };
  worker.onerror = (ev) => {
    showError(`the worker failed: ${ev.message || 'unknown error'}`);
    for (const p of pending.values()) p.reject(new Error('worker failed'));
    pending.clear();
  };
}

function request(op, args, { onProgress, transfer = [] } = {}) {
  const id = nextId++;
  const promise = new Promise((resolve, reject) => pending.set(id, { resolve, reject, onProgress }));
  worker.postMessage({ id, op, args }, transfer);
  return { id, promise, cancel: () => worker.postMessage({ id: nextId++, op: 'cancel', args: { target: id } }) };
}

// One long action at a time drives the progress bar; Cancel aborts it.
let activeTask = null;
async function longTask(label, op, args) {
  if (activeTask) activeTask.cancel();
  const status = $('#status'), bar = $('#progress'), text = $('#progress-text');
  const task = request(op, args, {
    onProgress: ({ loaded, total }) => {
      if (total) { bar.max = total; bar.value = loaded; } else bar.removeAttribute('value');
      text.textContent = total ? `${label}: ${fmtBytes(loaded)} of ${fmtBytes(total)}` : `${label}: ${fmtBytes(loaded)}`;
    },
  });
  activeTask = task;
  status.hidden = false;
  bar.removeAttribute('value');
  text.textContent = `${label}…`;
  try {
    return await task.promise;
  } finally {
    if (activeTask === task) { activeTask = null; status.hidden = true; }
  }
}

// ---------- errors ----------
function showError(msg) {
  $('#error-text').textContent = msg;
  $('#error').hidden = false;
}
function hideError() { $('#error').hidden = true; }
window.addEventListener('error', (e) => showError(e.message || 'unexpected error'));
window.addEventListener('unhandledrejection', (e) => showError((e.reason && e.reason.message) || String(e.reason)));

// ---------- state ----------
let model = null; // result of the worker's open
let sourceLabel = '';
let sourceIsUrl = false; // the first file came from a URL: ?url= (and ?compare=) can reopen it
let sourceName = ''; // its URL or file name, for the names of comparison exports
let compare = null; // setupCompare's handle
let editing = null; // setupEditing's handle
let integrity = null; // setupIntegrity's handle
let quantError = null; // setupQuantError's handle
let memory = null; // setupMemory's handle
let lab = null; // setupLab's handle
let memoryFromUrl = true; // the first model opened takes the planner's choices from the URL

async function openSource(source, label) {
  hideError();
  try {
    const m = await longTask(`Reading ${label}`, 'open', { source });
    m.summary.quantMix.sort((a, b) => b.bytes - a.bytes);
    model = m;
    sourceLabel = label;
    sourceIsUrl = typeof source === 'string';
    sourceName = sourceIsUrl ? source : source.name ?? label; // an array of shards: the label
    compare.reset(); // the worker dropped the compared file with the old first file
    editing.reset(); // pending edits were the old file's
    integrity.reset();
    quantError.reset();
    renderAll();
  } catch (err) {
    if (err.name === 'AbortError') { showError(`opening ${label} was cancelled`); return; }
    const hint = /failed to fetch|networkerror|load failed/i.test(err.message) ? ' (network error, or the server does not allow cross-origin requests from this page: CORS)' : '';
    showError(`could not open ${label}: ${err.message}${hint}`);
  }
}

function openUrl(url, { push = true } = {}) {
  let abs;
  try { abs = new URL(url, location.href); } catch { showError(`not a valid URL: ${url}`); return; }
  if (abs.protocol !== 'http:' && abs.protocol !== 'https:') { showError(`only http and https URLs can be opened (got ${abs.protocol})`); return; }
  if (push) {
    const q = new URLSearchParams(location.search);
    q.set('url', url);
    q.delete('compare');
    history.replaceState(null, '', `?${q}`);
  }
  $('#url-input').value = url;
  return openSource(abs.href, abs.href === new URL(SAMPLE_URL, location.href).href ? 'the bundled sample' : abs.href);
}

function openFile(file) {
  history.replaceState(null, '', location.pathname);
  openSource(file, file.name);
}

// llama.cpp's split names: NAME-00001-of-00003.gguf.
const SHARD_NAME = /^(.*)-(\d{5})-of-(\d{5})\.gguf$/i;

/** One file, or every shard of one split model (dropped or picked together, in any order). */
function openFiles(files) {
  const list = [...files];
  if (list.length === 1) return openFile(list[0]);
  const named = list.map((f) => [f, SHARD_NAME.exec(f.name)]);
  if (named.some(([, m]) => !m)) {
    showError('drop one file, or every shard of one split model (NAME-00001-of-0000N.gguf …)');
    return;
  }
  const [, first] = named[0];
  const total = Number(first[3]);
  if (named.some(([, m]) => m[1] !== first[1] || m[3] !== first[3]) || list.length !== total) {
    showError(`a split model opens from all of its shards: ${first[1]} has ${total}, ${list.length} were given`);
    return;
  }
  const shards = named.sort((a, b) => Number(a[1][2]) - Number(b[1][2])).map(([f]) => f);
  history.replaceState(null, '', location.pathname);
  openSource(shards, `${first[1]} (${total} shards)`);
}

// ---------- rendering ----------
function metaGet(key) {
  const m = model.metadata.find((e) => e.key === key);
  return m ? m.value : undefined;
}

function setField(name, text, value) {
  for (const e of $$(`[data-field="${name}"]`)) {
    e.textContent = text === undefined || text === null || text === '' ? '—' : String(text);
    e.title = e.textContent;
    if (value !== undefined && value !== null) e.dataset.value = String(value); else delete e.dataset.value;
  }
}

function renderSummary() {
  const s = model.summary, info = model.info;
  setField('name', s.name || '(unnamed model)');
  $('#model-source').textContent = sourceLabel;
  setField('architecture', s.architecture);
  setField('parameter-count', `${fmtCount(s.parameterCount)} (${fmtInt(s.parameterCount)})`, s.parameterCount);
  setField('file-type', s.fileType === undefined ? undefined : FTYPE_SHORT[s.fileType & ~1024] ?? `type ${s.fileType}`, s.fileType);
  // (the package's own fileTypeLabel, when it has one, is in the JSON export)
  setField('quant-label', ftypeLabel(s.fileType));
  setField('file-size', `${fmtBytes(info.fileSize)} (${fmtInt(info.fileSize)} B)`, info.fileSize);
  setField('bits-per-weight', s.bitsPerWeight === undefined ? undefined : s.bitsPerWeight.toFixed(3), s.bitsPerWeight);
  setField('context-length', fmtInt(s.contextLength), s.contextLength);
  setField('embedding-length', fmtInt(s.embeddingLength), s.embeddingLength);
  setField('block-count', fmtInt(s.blockCount), s.blockCount);
  setField('head-count', fmtInt(s.headCount), s.headCount);
  setField('head-count-kv', fmtInt(s.headCountKv), s.headCountKv);
  setField('vocab-size', fmtInt(s.vocabSize), s.vocabSize);
  setField('tensor-count', fmtInt(model.tensors.length), model.tensors.length);
  setField('tokenizer-model', s.tokenizerModel);
  setField('quant-mix', s.quantMix.map((q) => `${q.type} ${pct(q.share)}`).join(' · '));
  const g = s.gptq;
  for (const e of $$('.gptq-only')) e.hidden = !g;
  if (info.format === 'safetensors') {
    setField('file-type', g ? `safetensors, GPTQ ${g.bits ?? '?'}-bit` : 'safetensors');
    setField('quant-label', g ? `GPTQ ${g.bits ?? '?'}-bit, group ${g.groupSize === -1 ? 'none (-1)' : g.groupSize ?? '?'}` : undefined);
    const flag = (v) => (v === null || v === undefined ? undefined : String(v));
    if (g) {
      setField('gptq-bits', g.bits, g.bits);
      setField('gptq-group-size', g.groupSize, g.groupSize);
      setField('gptq-desc-act', flag(g.descAct), g.descAct);
      setField('gptq-sym', flag(g.sym), g.sym);
      setField('gptq-format', g.checkpointFormat, g.checkpointFormat);
      setField('gptq-layers', `${fmtInt(g.layers)} ${g.layers === 1 ? 'layer' : 'layers'}; config: ${g.configSource ?? (s.quantConfigError ? `unusable (${s.quantConfigError})` : 'none found (bits and groups inferred from shapes)')}`, g.layers);
    }
    $('#file-info').textContent = info.shards > 1
      ? `safetensors, ${fmtInt(info.shards)} shards (from the index)`
      : `safetensors, ${fmtInt(info.headerLength)}-byte JSON header, data at byte ${fmtInt(info.dataOffset)}`;
  } else {
    $('#file-info').textContent = `GGUF v${info.version}, ${info.endian}-endian, alignment ${info.alignment}, data at byte ${fmtInt(info.dataOffset)}`;
  }
  document.title = `${s.name || 'model'} — gguf-lens viewer`;
}

// One colour per ggml type, the same in every file: families share a hue, wider types are lighter.
const FIXED_COLORS = {
  F32: '#8c9aab', F16: '#6f8fb8', BF16: '#7a7fc0', F64: '#a0a8b5', Q8_0: '#2f9e8f', Q8_K: '#2f9e8f',
  Q6_K: '#e8872e', Q5_K: '#d4a72c', Q5_0: '#c9b43a', Q5_1: '#bfae4a', Q4_K: '#4e79a7', Q4_0: '#5b8fd1', Q4_1: '#6d9bd6',
  Q3_K: '#b07aa1', Q2_K: '#e15759', IQ4_XS: '#3f6f9c', IQ4_NL: '#41729e', IQ3_S: '#9b6a92', IQ3_XXS: '#8f5f87',
  IQ2_XXS: '#c94b4d', IQ2_XS: '#cf5557', IQ2_S: '#d45f61', IQ1_S: '#a33b3d', IQ1_M: '#ad4547', TQ1_0: '#7b5ea7', TQ2_0: '#8968b5',
  MXFP4: '#59a14f', NVFP4: '#4c8f43',
};
function typeColor(type) {
  if (FIXED_COLORS[type]) return FIXED_COLORS[type];
  let h = 0;
  for (const c of type) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return TYPE_COLORS[h % TYPE_COLORS.length];
}

function renderMix() {
  const root = clear($('#mix-chart'));
  const mix = model.summary.quantMix;
  const W = 600;
  const bar = svg('svg', { viewBox: `0 0 ${W} 16`, preserveAspectRatio: 'none', class: 'chart stack', role: 'img', 'aria-label': 'Share of tensor bytes by type' });
  let x = 0;
  for (const q of mix) {
    const w = q.share * W;
    const r = svg('rect', { x, y: 0, width: Math.max(0, w), height: 16, fill: typeColor(q.type) });
    r.append(svg('title', {}, `${q.type}: ${pct(q.share)} of tensor bytes`));
    bar.append(r);
    x += w;
  }
  const table = el('table', { class: 'mix' },
    el('thead', {}, el('tr', {}, el('th', {}, 'Type'), el('th', {}, 'Share of bytes'), el('th', { class: 'num' }, 'Tensors'), el('th', { class: 'num' }, 'Elements'), el('th', { class: 'num' }, 'Bytes'), el('th', { class: 'num' }, 'bpw'))),
    el('tbody', {}, mix.map((q) => {
      const sw = el('span', { class: 'swatch' });
      sw.style.background = typeColor(q.type);
      const meter = el('span', { class: 'meter' });
      meter.style.width = `${Math.max(0.5, q.share * 100)}%`;
      meter.style.background = typeColor(q.type);
      return el('tr', { dataset: { type: q.type } },
        el('td', { class: 'mono' }, sw, q.type),
        el('td', {}, el('span', { class: 'meter-track' }, meter), el('span', { class: 'mono small' }, ` ${pct(q.share)}`)),
        el('td', { class: 'num' }, fmtInt(q.tensors)),
        el('td', { class: 'num' }, fmtCount(q.elements)),
        el('td', { class: 'num' }, fmtBytes(q.bytes)),
        el('td', { class: 'num' }, (q.bytes * 8 / q.elements).toFixed(2)));
    })));
  root.append(bar, table);
}

function blockOf(name) {
  const m = /^blk\.(\d+)\.(.+)$/.exec(name);
  if (m) return { block: Number(m[1]), role: m[2], label: `blk.${m[1]}` };
  // Hugging Face names (safetensors): model.layers.N.self_attn.q_proj.weight
  const h = /^(.*\blayers)\.(\d+)\.(.+)$/.exec(name);
  return h ? { block: Number(h[2]), role: h[3], label: `${h[1]}.${h[2]}` } : null;
}

function renderHeatmap() {
  const root = clear($('#heatmap'));
  const roles = [], layers = new Map();
  for (const t of model.tensors) {
    const b = blockOf(t.name);
    if (!b || t.part) continue; // a GPTQ layer's parts: the layer stands for them
    if (!roles.includes(b.role)) roles.push(b.role);
    if (!layers.has(b.block)) layers.set(b.block, new Map());
    layers.get(b.block).set(b.role, t);
  }
  if (!layers.size) { root.append(el('p', { class: 'muted' }, 'No blk.N or layers.N tensors in this file.')); return; }
  const ids = [...layers.keys()].sort((a, b) => a - b);
  const longest = Math.max(...roles.map((r) => r.replace(/\.weight$/, '').length));
  const cw = 74, ch = 18, left = 52, top = Math.min(130, 18 + longest * 4.8);
  const s = svg('svg', { width: left + roles.length * cw + 70, height: top + ids.length * ch + 4, class: 'chart heat' });
  roles.forEach((r, j) => {
    const x = left + j * cw + cw / 2;
    s.append(svg('text', { x, y: top - 6, class: 'label', transform: `rotate(-40 ${x} ${top - 6})` }, r.replace(/\.weight$/, '')));
  });
  ids.forEach((id, i) => {
    const y = top + i * ch;
    s.append(svg('text', { x: left - 6, y: y + 13, class: 'label', 'text-anchor': 'end' }, `blk.${id}`));
    roles.forEach((r, j) => {
      const t = layers.get(id).get(r);
      if (!t) return;
      const g = svg('g', { class: 'cell' });
      g.append(svg('rect', { x: left + j * cw + 1, y: y + 1, width: cw - 2, height: ch - 2, fill: typeColor(t.type), rx: 2 }));
      g.append(svg('text', { x: left + j * cw + cw / 2, y: y + 13, 'text-anchor': 'middle', class: 'cell-label' }, t.type));
      g.append(svg('title', {}, `${t.name}: ${t.type}, ${fmtBytes(t.nBytes)}`));
      g.addEventListener('click', () => inspect(t.name));
      s.append(g);
    });
  });
  root.append(s);
}

// The tensor table's order: null = by layer (grouped, file order), else one column, flat.
const tensorSort = { key: null, dir: 1 };
const bitsPerWeight = (t) => (t.nElements ? (t.nBytes * 8) / t.nElements : 0);
const byName = (a, b) => a.name.localeCompare(b.name, 'en', { numeric: true });
const SORT_KEYS = {
  name: byName,
  type: (a, b) => a.type.localeCompare(b.type, 'en', { numeric: true }) || byName(a, b),
  shape: (a, b) => a.nElements - b.nElements || String(a.shape).localeCompare(String(b.shape)) || byName(a, b),
  elements: (a, b) => a.nElements - b.nElements || byName(a, b),
  bytes: (a, b) => a.nBytes - b.nBytes || byName(a, b),
  bpw: (a, b) => bitsPerWeight(a) - bitsPerWeight(b) || byName(a, b),
  offset: (a, b) => a.offset - b.offset || byName(a, b),
};

/** Header click: sort by that column, then reverse it, then back to the grouped layer order. */
function sortTensorsBy(key) {
  if (tensorSort.key !== key) Object.assign(tensorSort, { key, dir: 1 });
  else if (tensorSort.dir === 1) tensorSort.dir = -1;
  else Object.assign(tensorSort, { key: null, dir: 1 });
  for (const b of $$('#tensor-table button.sort')) {
    const on = b.dataset.sort === tensorSort.key;
    b.parentElement.setAttribute('aria-sort', on ? (tensorSort.dir === 1 ? 'ascending' : 'descending') : 'none');
  }
  renderTensors();
}

function renderTensors() {
  const body = clear($('#tensor-table tbody'));
  const q = $('#tensor-filter').value.trim().toLowerCase();
  const groups = new Map();
  const matching = model.tensors.filter((t) => !q || t.name.toLowerCase().includes(q) || t.type.toLowerCase().includes(q));
  if (tensorSort.key) {
    const compareBy = SORT_KEYS[tensorSort.key];
    groups.set(null, [...matching].sort((a, b) => tensorSort.dir * compareBy(a, b)));
  } else {
    for (const t of matching) {
      const b = blockOf(t.name);
      const g = b ? b.label : 'other';
      if (!groups.has(g)) groups.set(g, []);
      groups.get(g).push(t);
    }
  }
  let shown = 0;
  for (const [g, ts] of groups) {
    const bytes = ts.reduce((a, t) => a + t.nBytes, 0), els = ts.reduce((a, t) => a + t.nElements, 0);
    if (g !== null) body.append(el('tr', { class: 'group' }, el('th', { colspan: 7, scope: 'rowgroup' }, g, el('span', { class: 'muted small' }, `  ${ts.length} tensors · ${fmtCount(els)} elements · ${fmtBytes(bytes)}`))));
    for (const t of ts) {
      shown++;
      body.append(el('tr', { class: 'clickable', dataset: { tensor: t.name }, on: { click: () => inspect(t.name) } },
        el('td', { class: 'mono' }, t.name),
        el('td', {}, el('span', { class: 'tag' }, t.type)),
        el('td', { class: 'mono' }, `[${t.shape.join(', ')}]`),
        el('td', { class: 'num' }, fmtInt(t.nElements)),
        el('td', { class: 'num' }, fmtInt(t.nBytes)),
        el('td', { class: 'num' }, bitsPerWeight(t).toFixed(3)),
        el('td', { class: 'num' }, fmtInt(t.offset))));
    }
  }
  $('#tensor-count-note').textContent = `${shown} of ${model.tensors.length} tensors`;
}

function valueText(m) {
  if (m.type === 'array') return `[${m.itemType} × ${fmtInt(m.length)}]`;
  if (typeof m.value === 'string') return m.value;
  return fmtValue(m.value);
}
function fmtValue(v) {
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : fmtNum(v);
  if (v && typeof v === 'object' && v.nested) return `[${v.itemType} × ${v.length}]`;
  return String(v);
}

// The filter's matches inside whole string arrays (key → first matching index), from the worker.
let metaHits = {};
let metaQuery = 0;
async function filterMetadata() {
  const q = $('#meta-filter').value.trim().toLowerCase();
  const ticket = ++metaQuery;
  const hits = q ? await request('metaFind', { q }).promise : {};
  if (ticket !== metaQuery) return; // a newer keystroke's answer wins
  metaHits = hits;
  renderMetadata();
}

function renderMetadata() {
  const body = clear($('#meta-table tbody'));
  const q = $('#meta-filter').value.trim().toLowerCase();
  let n = 0;
  for (const entry of model.metadata) {
    // A pending scalar edit shows its new value (arrays keep their summary).
    const pendingValue = editing.pendingOf(entry.key);
    const m = pendingValue && !pendingValue.remove && entry.type !== 'array' ? { ...entry, value: pendingValue.value } : entry;
    const text = valueText(m);
    const preview = m.type === 'array' ? m.preview.map(fmtValue).join(', ') : '';
    const hit = q ? metaHits[m.key] : undefined;
    if (q && hit === undefined && !m.key.toLowerCase().includes(q) && !text.toLowerCase().includes(q) && !preview.toLowerCase().includes(q)) continue;
    n++;
    const cell = el('td', { class: 'value' });
    if (m.type === 'array') {
      const box = el('div', { class: 'array-view', hidden: undefined });
      let page = 0;
      const size = 50;
      const pages = Math.max(1, Math.ceil(m.length / size));
      const show = async () => {
        const vals = await request('meta', { key: m.key, start: page * size, end: Math.min(m.length, (page + 1) * size) }).promise;
        clear(box).append(
          el('div', { class: 'pager' },
            el('button', { type: 'button', on: { click: () => { if (page > 0) { page--; show(); } } } }, '‹'),
            el('span', { class: 'muted small' }, ` ${fmtInt(page * size)}–${fmtInt(page * size + vals.length - 1)} of ${fmtInt(m.length)} `),
            el('button', { type: 'button', on: { click: () => { if (page < pages - 1) { page++; show(); } } } }, '›')),
          el('ol', { class: 'array-items', start: undefined }, vals.map((v, i) => el('li', {}, el('span', { class: 'idx' }, String(page * size + i)), el('code', {}, fmtValue(v))))));
      };
      const btn = el('button', { type: 'button', class: 'link', on: { click: () => { if (box.hasChildNodes()) { clear(box); btn.textContent = 'show'; } else { btn.textContent = 'hide'; show().catch((e) => showError(e.message)); } } } }, 'show');
      if (hit !== undefined) page = Math.floor(hit / size); // "show" opens the page of the first match
      const match = hit === undefined ? '' : el('span', { class: 'tag', dataset: { match: String(hit) } }, `match at #${fmtInt(hit)}`);
      cell.append(el('span', { class: 'mono' }, text), ' ', match, ' ', el('span', { class: 'muted' }, preview ? `${preview}${m.length > m.preview.length ? ', …' : ''}` : ''), ' ', btn, box);
    } else if (typeof m.value === 'string' && (m.value.length > 160 || m.value.includes('\n'))) {
      const full = el('pre', { class: 'long' }, m.value);
      full.hidden = true;
      const btn = el('button', { type: 'button', class: 'link', on: { click: () => { full.hidden = !full.hidden; btn.textContent = full.hidden ? `show all ${fmtInt(m.value.length)} chars` : 'hide'; } } }, `show all ${fmtInt(m.value.length)} chars`);
      cell.append(el('span', { class: 'mono' }, `${m.value.slice(0, 120).replace(/\n/g, '⏎')}…`), ' ', btn, full);
    } else {
      cell.append(el('span', { class: 'mono' }, text));
    }
    const change = editing.pendingOf(m.key);
    const actions = el('td', { class: 'actions' });
    if (editing.editable()) actions.append(editing.actionsFor(m, cell));
    if (change && !change.remove) cell.prepend(el('span', { class: 'tag op-set' }, 'edited'), ' ');
    body.append(el('tr', { dataset: { key: m.key }, class: change ? (change.remove ? 'removed' : 'edited') : undefined }, el('td', { class: 'mono key' }, m.key), el('td', { class: 'muted' }, m.type === 'array' ? `array<${m.itemType}>` : m.type), cell, actions));
  }
  $('#meta-count').textContent = `${n} of ${model.metadata.length} keys`;
}

// ----- tokenizer -----
const tokState = { start: 0, limit: 50, total: 0 };
const mergeState = { start: 0, limit: 50, total: 0 };
function visible(s) { return s === null || s === undefined ? '∅' : s.replace(/ /g, '·').replace(/\n/g, '⏎').replace(/\t/g, '⇥'); }

function renderSpecial() {
  const root = clear($('#special-tokens'));
  const entries = Object.entries(model.special);
  if (!entries.length) root.append(el('span', { class: 'muted' }, 'No special token ids in the metadata.'));
  for (const [k, v] of entries) {
    root.append(el('span', { class: 'chip', dataset: { special: k } }, el('b', {}, k), ' ', el('code', {}, visible(v.text)), el('span', { class: 'muted' }, ` #${v.id}`)));
  }
}

async function searchTokens() {
  const body = $('#tok-table tbody');
  try {
    const r = await request('tokens', { query: $('#tok-query').value, mode: $('#tok-mode').value, start: tokState.start, limit: tokState.limit }).promise;
    tokState.total = r.total;
    clear(body);
    for (const t of r.rows) {
      body.append(el('tr', { dataset: { tokenId: t.id } }, el('td', { class: 'num' }, String(t.id)), el('td', {}, el('code', { class: 'token' }, visible(t.text))), el('td', { class: 'muted' }, t.type ?? ''), el('td', { class: 'num' }, t.score === null ? '' : fmtNum(t.score))));
    }
    $('#tok-total').textContent = r.total ? `${fmtInt(tokState.start + 1)}–${fmtInt(tokState.start + r.rows.length)} of ${fmtInt(r.total)}` : 'no match';
  } catch (e) { showError(e.message); }
}

async function searchMerges() {
  const body = $('#merge-table tbody');
  try {
    const r = await request('merges', { query: $('#merge-query').value, start: mergeState.start, limit: mergeState.limit }).promise;
    mergeState.total = r.total;
    clear(body);
    for (const m of r.rows) body.append(el('tr', {}, el('td', { class: 'num' }, String(m.rank)), el('td', {}, el('code', { class: 'token' }, visible(m.text)))));
    $('#merge-total').textContent = r.total ? `${fmtInt(mergeState.start + 1)}–${fmtInt(mergeState.start + r.rows.length)} of ${fmtInt(r.total)}` : 'no merges';
  } catch (e) { showError(e.message); }
}

function renderTokenizer() {
  renderSpecial();
  tokState.start = 0; mergeState.start = 0;
  searchTokens();
  $('#merges-card').hidden = !model.metadata.some((m) => m.key === 'tokenizer.ggml.merges');
  if (!$('#merges-card').hidden) searchMerges();
}

function renderTemplate() {
  const t = metaGet('tokenizer.chat_template');
  $('#chat-template').textContent = typeof t === 'string' ? t : '(this file has no tokenizer.chat_template)';
  $('#chat-template-edit').value = typeof t === 'string' ? t : '';
}

// ----- memory -----
// ----- inspector -----
function renderInspectorList() {
  const sel = clear($('#insp-tensor'));
  for (const t of model.tensors) sel.append(el('option', { value: t.name }, `${t.name}  (${t.type} [${t.shape.join('×')}])`));
  for (const k of ['insp-info', 'insp-heat-note']) $(`#${k}`).textContent = '';
  for (const e of $$('[data-stat]')) { e.textContent = ''; delete e.dataset.value; }
  clear($('#insp-hist')); clear($('#insp-values'));
  const c = $('#insp-heat'); c.getContext('2d').clearRect(0, 0, c.width, c.height);
}

function inspect(name) {
  selectTab('inspector');
  $('#insp-tensor').value = name;
  runInspector();
}

async function runInspector() {
  const name = $('#insp-tensor').value;
  const t = model.tensors.find((x) => x.name === name);
  if (!t) return;
  hideError();
  quantError.reset(); // the chart was another tensor's
  $('#insp-info').textContent = t.gptq
    ? `${t.type} layer · [${t.shape[0]} out × ${t.shape[1]} in] dequantized · group ${t.groupSize}${t.actOrder ? ' · act-order' : ''} · ${fmtBytes(t.nBytes)} in its parts`
    : `${t.type} · shape [${t.shape.join(', ')}] · ${fmtInt(t.nElements)} elements · ${fmtBytes(t.nBytes)}`;
  for (const e of $$('[data-stat]')) { e.textContent = '…'; delete e.dataset.value; }
  try {
    // The first rows first (one small read: values and heatmap at once), then the whole tensor.
    const rowLen = t.shape[t.shape.length - 1] || 1, nRows = t.nElements / rowLen; // shapes are outermost first
    const rows = Math.min(nRows, 256, Math.max(1, Math.floor((1 << 22) / rowLen)));
    clear($('#insp-values')); clear($('#insp-hist'));
    const vals = await longTask(`Rows 0–${rows - 1} of ${name}`, 'rows', { name, rows: [0, rows] });
    drawValues(vals.subarray(0, Math.min(64, rowLen)));
    drawRowHeatmap(vals, rowLen, rows, nRows);
    const head = $('#insp-scope').value === 'head';
    const st = await longTask(`Statistics of ${name}`, 'stats', { name, bins: 64, rows: head ? [0, rows] : undefined });
    $('#insp-stats-scope').textContent = head && rows < nRows ? `(rows 0–${rows - 1} of ${fmtInt(nRows)})` : '(whole tensor)';
    for (const k of ['min', 'max', 'mean', 'std']) { const e = $(`[data-stat="${k}"]`); e.textContent = fmtNum(st[k]); e.dataset.value = String(st[k]); }
    for (const k of ['nan', 'inf', 'zero', 'count']) { const e = $(`[data-stat="${k}"]`); e.textContent = fmtInt(st[k]); e.dataset.value = String(st[k]); }
    drawHistogram(st);
  } catch (err) {
    for (const e of $$('[data-stat]')) if (e.textContent === '…') e.textContent = '';
    showError(err.name === 'AbortError' ? `analysis of ${name} was cancelled` : `could not analyse ${name}: ${err.message}`);
  }
}

function drawHistogram(st) {
  const root = clear($('#insp-hist'));
  const h = st.histogram, W = 480, H = 140, max = Math.max(1, ...h);
  const s = svg('svg', { viewBox: `0 0 ${W} ${H + 18}`, class: 'chart hist', role: 'img', 'aria-label': 'Histogram of values' });
  const bw = W / h.length;
  h.forEach((c, i) => {
    const bh = c / max * H;
    const r = svg('rect', { x: i * bw + 0.5, y: H - bh, width: Math.max(0.5, bw - 1), height: bh, class: 'bar' });
    const lo = st.histogramRange[0] + (st.histogramRange[1] - st.histogramRange[0]) * i / h.length;
    r.append(svg('title', {}, `${fmtNum(lo)}…: ${c}`));
    s.append(r);
  });
  s.append(svg('text', { x: 0, y: H + 14, class: 'label' }, fmtNum(st.histogramRange[0])));
  s.append(svg('text', { x: W, y: H + 14, class: 'label', 'text-anchor': 'end' }, fmtNum(st.histogramRange[1])));
  root.append(s);
}

function drawValues(v) {
  const root = clear($('#insp-values'));
  for (let i = 0; i < v.length; i++) root.append(el('span', { class: 'v', dataset: { index: i } }, fmtNum(v[i])));
}

function drawRowHeatmap(vals, rowLen, rows, nRows) {
  const c = $('#insp-heat');
  const cols = Math.min(rowLen, 512);
  c.width = cols; c.height = Math.max(1, rows);
  c.style.height = rows < 32 ? `${Math.max(24, rows * 8)}px` : ''; // 1-D and short tensors: a visible strip
  const ctx = c.getContext('2d');
  const img = ctx.createImageData(cols, rows);
  let sum = 0, sq = 0, n = 0;
  for (const v of vals) if (Number.isFinite(v)) { sum += v; n++; }
  const mean = n ? sum / n : 0;
  for (const v of vals) if (Number.isFinite(v)) sq += (v - mean) * (v - mean);
  const st = { mean, std: n ? Math.sqrt(sq / n) : 1 };
  const scale = 3 * (st.std || 1);
  const step = rowLen / cols;
  for (let r = 0; r < rows; r++) {
    for (let x = 0; x < cols; x++) {
      const v = vals[r * rowLen + Math.floor(x * step)];
      const k = (r * cols + x) * 4;
      if (!Number.isFinite(v)) { img.data.set([255, 0, 255, 255], k); continue; }
      const tt = Math.max(-1, Math.min(1, (v - (st.mean || 0)) / scale));
      // diverging blue - white - red
      const a = Math.abs(tt);
      const [r0, g0, b0] = tt < 0 ? [59, 76, 192] : [180, 4, 38];
      img.data.set([Math.round(247 + (r0 - 247) * a), Math.round(247 + (g0 - 247) * a), Math.round(247 + (b0 - 247) * a), 255], k);
    }
  }
  ctx.putImageData(img, 0, 0);
  $('#insp-heat-note').textContent = `rows 0–${rows - 1} of ${fmtInt(nRows)}, ${cols < rowLen ? `every ${step.toFixed(1)}th of ${fmtInt(rowLen)} columns` : `${fmtInt(rowLen)} columns`}; blue < mean < red, ±3σ`;
}

// ----- export -----
function exportObject() {
  return {
    source: sourceLabel,
    file: model.info,
    summary: { ...model.summary, fileTypeName: FTYPE_SHORT[model.summary.fileType] },
    metadata: model.metadata.map((m) => (m.type === 'array' ? { key: m.key, type: 'array', itemType: m.itemType, length: m.length } : { key: m.key, type: m.type, value: typeof m.value === 'bigint' ? m.value.toString() : m.value })),
    tensors: model.tensors,
  };
}
function exportMarkdown() {
  const s = model.summary;
  const lines = [`# ${mdEscape(s.name || 'model')}`, '', '| field | value |', '|---|---|'];
  const rows = [['architecture', s.architecture], ['parameters', s.parameterCount], ['file type', `${FTYPE_SHORT[s.fileType] ?? s.fileType} (${ftypeLabel(s.fileType)})`], ['file size', model.info.fileSize], ['bits per weight', s.bitsPerWeight?.toFixed(3)], ['context length', s.contextLength], ['embedding length', s.embeddingLength], ['layers', s.blockCount], ['heads', s.headCount], ['kv heads', s.headCountKv], ['vocabulary', s.vocabSize], ['tensors', model.tensors.length], ['tokenizer', s.tokenizerModel]];
  for (const [k, v] of rows) lines.push(`| ${k} | ${mdEscape(v ?? '—')} |`);
  lines.push('', '## Quant mix', '', '| type | tensors | elements | bytes | share |', '|---|---:|---:|---:|---:|');
  for (const q of s.quantMix) lines.push(`| ${q.type} | ${q.tensors} | ${q.elements} | ${q.bytes} | ${pct(q.share)} |`);
  lines.push('', '## Tensors', '', '| name | type | shape | elements | bytes |', '|---|---|---|---:|---:|');
  for (const t of model.tensors) lines.push(`| ${mdEscape(t.name)} | ${t.type} | ${t.shape.join('×')} | ${t.nElements} | ${t.nBytes} |`);
  lines.push('', '## Metadata', '', '| key | type | value |', '|---|---|---|');
  for (const m of model.metadata) lines.push(`| ${mdEscape(m.key)} | ${m.type === 'array' ? `array<${m.itemType}>` : m.type} | ${mdEscape(m.type === 'array' ? `${m.length} items` : valueText(m).slice(0, 200))} |`);
  return lines.join('\n') + '\n';
}
/** The overview's export, named after the model. */
function downloadModel(text, type, ext) { download(text, type, `${safeName(model.summary.name)}.${ext}`); }

// ----- tabs -----
function selectTab(name) {
  for (const b of $$('[role="tab"]')) b.setAttribute('aria-selected', String(b.dataset.tab === name));
  for (const p of $$('.panel')) p.hidden = p.id !== `panel-${name}`;
}

function renderAll() {
  document.body.classList.add('loaded');
  renderSummary();
  renderMix();
  renderHeatmap();
  renderTensors();
  metaHits = {}; // the old model's matches
  renderMetadata();
  if ($('#meta-filter').value.trim()) filterMetadata().catch((e) => showError(e.message));
  renderTokenizer();
  renderTemplate();
  lab.reset();
  memory.reset(memoryFromUrl);
  memoryFromUrl = false;
  renderInspectorList();
}

// ---------- wiring ----------
function init() {
  startWorker();
  compare = setupCompare({
    el, clear, request, longTask, showError, hideError, selectTab,
    model: () => model, sourceLabel: () => sourceLabel, sourceName: () => sourceName, sourceIsUrl: () => sourceIsUrl,
    fmt: { int: fmtInt, bytes: fmtBytes, count: fmtCount, num: fmtNum, pct, value: fmtValue, ftypeShort: (ft) => FTYPE_SHORT[ft & ~1024] ?? `type ${ft}`, ftypeLabel },
  });
  editing = setupEditing({
    el, clear, request, longTask, showError, model: () => model, sourceName: () => sourceName, fmtValue,
    rerender: () => renderMetadata(),
  });
  integrity = setupIntegrity({ el, clear, request, longTask, showError, model: () => model, sourceName: () => sourceName });
  lab = setupLab({ el, clear, request, model: () => model });
  memory = setupMemory({ el, clear, request, model: () => model, sourceName: () => sourceName, fmtBytes, fmtInt });
  quantError = setupQuantError({ el, svg, clear, longTask, showError, model: () => model, fmtNum, fmtInt });
  const tabs = $$('[role="tab"]');
  for (const b of tabs) {
    b.addEventListener('click', () => selectTab(b.dataset.tab));
    b.addEventListener('keydown', (e) => {
      const d = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
      if (!d) return;
      const shown = tabs.filter((t) => !t.hidden);
      const next = shown[(shown.indexOf(b) + d + shown.length) % shown.length];
      selectTab(next.dataset.tab);
      next.focus();
    });
  }
  $('#cancel').addEventListener('click', () => { if (activeTask) activeTask.cancel(); });
  $('#error-close').addEventListener('click', hideError);
  $('#file-input').addEventListener('change', (e) => { if (e.target.files.length) openFiles(e.target.files); e.target.value = ''; });
  $('#url-form').addEventListener('submit', (e) => { e.preventDefault(); const u = $('#url-input').value.trim(); if (u) openUrl(u); });
  const guard = (fn) => () => { if (model) fn(); };
  $('#tensor-filter').addEventListener('input', guard(renderTensors));
  for (const b of $$('#tensor-table button.sort')) b.addEventListener('click', guard(() => sortTensorsBy(b.dataset.sort)));
  $('#meta-filter').addEventListener('input', guard(() => filterMetadata().catch((e) => showError(e.message))));
  $('#tok-form').addEventListener('submit', (e) => e.preventDefault());
  $('#tok-query').addEventListener('input', guard(() => { tokState.start = 0; searchTokens(); }));
  $('#tok-mode').addEventListener('change', guard(() => { tokState.start = 0; searchTokens(); }));
  $('#tok-prev').addEventListener('click', guard(() => { tokState.start = Math.max(0, tokState.start - tokState.limit); searchTokens(); }));
  $('#tok-next').addEventListener('click', guard(() => { if (tokState.start + tokState.limit < tokState.total) { tokState.start += tokState.limit; searchTokens(); } }));
  $('#merge-form').addEventListener('submit', (e) => e.preventDefault());
  $('#merge-query').addEventListener('input', guard(() => { mergeState.start = 0; searchMerges(); }));
  $('#merge-prev').addEventListener('click', guard(() => { mergeState.start = Math.max(0, mergeState.start - mergeState.limit); searchMerges(); }));
  $('#merge-next').addEventListener('click', guard(() => { if (mergeState.start + mergeState.limit < mergeState.total) { mergeState.start += mergeState.limit; searchMerges(); } }));
  $('#insp-run').addEventListener('click', guard(runInspector));
  $('#open-sample').addEventListener('click', () => openUrl(SAMPLE_URL));
  $('#repo-link').addEventListener('click', () => { location.search = '?repo='; }); // www/repo-view.js
  $('#export-json').addEventListener('click', guard(() => downloadModel(jsonText(exportObject()), 'application/json', 'json')));
  $('#export-md').addEventListener('click', guard(() => downloadModel(exportMarkdown(), 'text/markdown', 'md')));

  // drag and drop anywhere
  let depth = 0;
  const overlay = $('#drop-overlay');
  const hasFiles = (e) => e.dataTransfer && [...e.dataTransfer.types].includes('Files');
  window.addEventListener('dragenter', (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault(); depth++;
    overlay.firstElementChild.textContent = compare.wantsDrop() ? 'Drop a file to compare it with this one' : 'Drop a .gguf file (or every shard of a split model) to open it';
    overlay.hidden = false;
  });
  window.addEventListener('dragover', (e) => { if (hasFiles(e)) e.preventDefault(); });
  window.addEventListener('dragleave', () => { depth = Math.max(0, depth - 1); if (!depth) overlay.hidden = true; });
  window.addEventListener('drop', (e) => {
    e.preventDefault();
    depth = 0; overlay.hidden = true;
    const files = e.dataTransfer ? e.dataTransfer.files : [];
    if (files.length && compare.wantsDrop()) compare.openFile(files[0]);
    else if (files.length) openFiles(files);
  });

  // ?url= opens the first file (default: the sample); ?compare= then opens the second beside it.
  const params = new URLSearchParams(location.search);
  // ?repo= lists a Hugging Face repo's GGUF files instead (www/repo-view.js).
  if (params.has('repo')) { import('./repo-view.js').then((m) => m.showRepoView(params, { showError })).catch((e) => showError(e.message)); return; }
  const compareUrl = params.get('compare');
  Promise.resolve(openUrl(params.get('url') || SAMPLE_URL, { push: false })).then(() => { if (compareUrl && model) compare.openUrl(compareUrl, { push: false }); });
}

init();
