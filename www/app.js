// The page: opens files and wires the panels. All file access, parsing and dequantization happen
// in worker.js (reached through worker-client.js). Every string from a file reaches the DOM as a
// text node (dom.js's el() / textContent), never as HTML. Each tab is its own module, set up here
// with what it needs: the one shared state object below (read, never kept, by the panels) and the
// handles of the panels it calls.
import { $, $$, el, svg, clear } from './dom.js';
import { fmtInt, fmtBytes, fmtCount, fmtNum, pct, fmtValue, ftypeShort, ftypeLabel, fileTypeText } from './format.js';
import { createWorkerClient } from './worker-client.js';
import { setupSummary } from './summary-panel.js';
import { setupTensorTable } from './tensor-table.js';
import { setupMetadataTable } from './metadata-table.js';
import { setupTokenizer } from './tokenizer-tab.js';
import { setupInspector } from './inspector-panel.js';
import { exportObject, exportMarkdown } from './model-export.js';
import { setupCompare } from './compare.js';
import { safeName, jsonText, download } from './export-util.js';
import { setupEditing } from './edit-panel.js';
import { setupIntegrity } from './integrity.js';
import { setupQuantError } from './quant-panel.js';
import { setupMemory } from './memory-panel.js';
import { setupFit } from './fit-panel.js';
import { setupLab } from './lab-panel.js';
import { hubHeadersFor } from './hub-token.js';
import { openErrorText, looksLike } from './messages.js';

const SAMPLE_URL = 'sample/tiny-llama-Q4_K_M.gguf';

// ---------- the shared state ----------
const state = {
  model: null, // the worker's open result: {info, summary, metadata, tensors, special, tokenCount}
  sourceLabel: '',
  sourceIsUrl: false, // the first file came from a URL: ?url= (and ?compare=) can reopen it
  sourceName: '', // its URL or file name, for the names of comparison exports
  memoryFromUrl: true, // the first model opened takes the planner's choices from the URL
};
const panels = {}; // each setup*'s handle, filled by init()
let client = null; // createWorkerClient's

// ---------- errors ----------
/** Shows `msg` in the page's message box (in the sticky top bar: in view wherever the page is
 * scrolled), as an error (role alert) or, kind 'Cancelled', as what the user's own Cancel
 * stopped (role status: not an error). */
function showError(msg, kind = 'Error') {
  const box = $('#error');
  box.setAttribute('role', kind === 'Error' ? 'alert' : 'status');
  box.classList.toggle('cancelled', kind !== 'Error');
  $('#error-kind').textContent = `${kind}:`;
  $('#error-text').textContent = msg;
  box.hidden = false;
}
function hideError() { $('#error').hidden = true; }
window.addEventListener('error', (e) => showError(e.message || 'unexpected error'));
window.addEventListener('unhandledrejection', (e) => showError((e.reason && e.reason.message) || String(e.reason)));

// ---------- opening files ----------
/** What a failed open's file looks like (its size, its first bytes), for the message. */
async function factsOf(source, headers, err) {
  const facts = {};
  const wanted = /not a GGUF|magic/i.test(err.message);
  try {
    if (source instanceof Blob) {
      facts.size = source.size;
      if (wanted) facts.looks = looksLike(new Uint8Array(await source.slice(0, 256).arrayBuffer()));
    } else if (typeof source === 'string' && (wanted || /end of file|file can hold|truncated/i.test(err.message))) {
      const r = await fetch(source, { headers: { ...headers, Range: 'bytes=0-255' } });
      const range = /\/(\d+)$/.exec(r.headers.get('content-range') ?? '');
      if (range) facts.size = Number(range[1]);
      if (wanted && r.ok) facts.looks = looksLike(new Uint8Array(await r.arrayBuffer()).subarray(0, 256));
    }
  } catch { /* the message goes without these facts */ }
  return facts;
}

/** Opens `source`; true when it is open. The page's address and URL box change only then. */
async function openSource(source, label, headers) {
  hideError();
  try {
    const m = await client.longTask(`Reading ${label}`, 'open', { source, headers });
    if (!m) return false; // cancelled: the model open before stays
    // Work on the old file would land in the new file's panels: stopped (its panels are reset).
    client.cancelTasks({ keep: ['open'] });
    m.summary.quantMix.sort((a, b) => b.bytes - a.bytes);
    state.model = m;
    state.sourceLabel = label;
    state.sourceIsUrl = typeof source === 'string';
    state.sourceName = state.sourceIsUrl ? source : source.name ?? label; // an array of shards: the label
    panels.compare.reset(); // the worker dropped the compared file with the old first file
    panels.editing.reset(); // pending edits were the old file's
    panels.integrity.reset();
    panels.quantError.reset();
    renderAll();
    return true;
  } catch (err) {
    if (err.name === 'AbortError') { if (!err.replaced) showError(`opening ${label}`, 'Cancelled'); return false; }
    showError(openErrorText(err, label, await factsOf(source, headers, err)));
    return false;
  }
}

function openUrl(url, { push = true } = {}) {
  let abs;
  try { abs = new URL(url, location.href); } catch { showError(`not a valid URL: ${url}`); return; }
  if (abs.protocol !== 'http:' && abs.protocol !== 'https:') { showError(`only http and https URLs can be opened (got ${abs.protocol})`); return; }
  const input = $('#url-input');
  input.value = url;
  // A token the repo view stored for this origin (gated repos); nothing for other origins.
  return openSource(abs.href, abs.href === new URL(SAMPLE_URL, location.href).href ? 'the bundled sample' : abs.href, hubHeadersFor(abs.href)).then((ok) => {
    // The address names the open model: changed only once this one is open (a failed URL
    // would give a reload or a shared link a 404 while the old model is on screen).
    if (ok && push) {
      const q = new URLSearchParams(location.search);
      q.set('url', url);
      q.delete('compare');
      history.replaceState(null, '', `?${q}`);
    }
    if (ok) input.removeAttribute('aria-invalid'); else input.setAttribute('aria-invalid', 'true');
    return ok;
  });
}

/** A local file (or a split model's shards) is open: no URL names it. */
function localOpened(ok) {
  if (!ok) return;
  history.replaceState(null, '', location.pathname);
  $('#url-input').value = '';
}

function openFile(file) {
  return openSource(file, file.name).then(localOpened);
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
  return openSource(shards, `${first[1]} (${total} shards)`).then(localOpened);
}

// ---------- tabs ----------
// The tabs follow the ARIA tabs pattern: the selected tab is the one tab stop (roving
// tabindex), arrows / Home / End move and select, each panel is labelled by its tab.
function selectTab(name) {
  for (const b of $$('[role="tab"]')) {
    const on = b.dataset.tab === name;
    b.setAttribute('aria-selected', String(on));
    b.tabIndex = on ? 0 : -1;
  }
  for (const p of $$('.panel')) p.hidden = p.id !== `panel-${name}`;
}

function renderAll() {
  document.body.classList.add('loaded');
  panels.summary.render();
  panels.tensors.render();
  panels.metadata.reset();
  panels.tokenizer.render();
  panels.lab.reset();
  panels.memory.reset(state.memoryFromUrl);
  panels.fit.reset(state.memoryFromUrl);
  state.memoryFromUrl = false;
  panels.inspector.reset();
}

/** The overview's export, named after the model. */
function downloadModel(text, type, ext) { download(text, type, `${safeName(state.model.summary.name)}.${ext}`); }

// ---------- wiring ----------
function init() {
  // ?test-hooks (the viewer's tests only): a shorter watchdog from ?watchdog=ms, the worker's test
  // requests, and the client on window for the tests to reach the worker.
  const params = new URLSearchParams(location.search);
  const testHooks = params.has('test-hooks');
  client = createWorkerClient({ onFailure: showError, testHooks, ...(testHooks && params.has('watchdog') ? { watchdogMs: Number(params.get('watchdog')) } : {}) });
  if (testHooks) window.ggufLensTest = client;
  const { request, longTask } = client;
  const model = () => state.model;
  const inspect = (name, opts) => panels.inspector.inspect(name, opts);
  panels.summary = setupSummary({ state, inspect, editing: () => panels.editing });
  panels.tensors = setupTensorTable({ state, inspect });
  panels.metadata = setupMetadataTable({ state, request, showError, editing: () => panels.editing });
  panels.tokenizer = setupTokenizer({ state, request, showError });
  panels.inspector = setupInspector({ state, longTask, showError, hideError, selectTab, quantError: () => panels.quantError });
  panels.compare = setupCompare({
    el, clear, request, longTask, showError, hideError, selectTab, openErrorText,
    model, sourceLabel: () => state.sourceLabel, sourceName: () => state.sourceName, sourceIsUrl: () => state.sourceIsUrl,
    fmt: { int: fmtInt, bytes: fmtBytes, count: fmtCount, num: fmtNum, pct, value: fmtValue, ftypeShort, ftypeLabel, fileTypeText },
  });
  panels.editing = setupEditing({
    el, clear, request, longTask, showError, model, sourceName: () => state.sourceName, fmtValue,
    rerender: () => { panels.metadata.render(); panels.summary.renderFields(); },
  });
  panels.integrity = setupIntegrity({ el, clear, request, longTask, showError, model, sourceName: () => state.sourceName });
  panels.lab = setupLab({ el, clear, request, model });
  panels.memory = setupMemory({ el, clear, request, model, sourceName: () => state.sourceName, fmtBytes, fmtInt });
  panels.fit = setupFit({ el, clear, request, model, fmtBytes, fmtInt });
  panels.quantError = setupQuantError({ el, svg, clear, request, longTask, cancelTask: client.cancelTask, showError, model, fmtNum, fmtInt });
  const tabs = $$('[role="tab"]');
  for (const b of tabs) {
    const panel = $(`#panel-${b.dataset.tab}`);
    if (!b.id) b.id = `tab-${b.dataset.tab}`;
    b.setAttribute('aria-controls', panel.id);
    panel.setAttribute('aria-labelledby', b.id);
    panel.tabIndex = 0;
    b.addEventListener('click', () => selectTab(b.dataset.tab));
    b.addEventListener('keydown', (e) => {
      const shown = tabs.filter((t) => !t.hidden);
      const i = shown.indexOf(b);
      const j = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: shown.length - 1 }[e.key];
      if (j === undefined) return;
      e.preventDefault();
      const next = shown[(j + shown.length) % shown.length];
      selectTab(next.dataset.tab);
      next.focus();
    });
  }
  selectTab('overview');
  $('#error-close').addEventListener('click', hideError);
  // A real button opens the (hidden) file input's picker: reachable and operable by keyboard.
  $('#open-file').addEventListener('click', () => $('#file-input').click());
  $('#file-input').addEventListener('change', (e) => { if (e.target.files.length) openFiles(e.target.files); e.target.value = ''; });
  // Escape closes what is open over the page: the compare bar, the drop overlay, the message.
  document.addEventListener('keydown', (e) => {
    if (e.key !== 'Escape' || e.defaultPrevented) return;
    if (panels.compare.closeBar()) { e.preventDefault(); return; }
    if (!$('#drop-overlay').hidden) { $('#drop-overlay').hidden = true; return; }
    if (!$('#error').hidden) hideError();
  });
  // Leaving the page (a reload, another address, "Hub repo…") with edits not saved asks first.
  window.addEventListener('beforeunload', (e) => {
    if (!panels.editing.pendingCount()) return;
    e.preventDefault();
    e.returnValue = '';
  });
  $('#url-form').addEventListener('submit', (e) => { e.preventDefault(); const u = $('#url-input').value.trim(); if (u) openUrl(u); });
  const guard = (fn) => () => { if (state.model) fn(); };
  $('#open-sample').addEventListener('click', () => openUrl(SAMPLE_URL));
  $('#repo-link').addEventListener('click', () => { location.search = '?repo='; }); // www/repo-view.js
  $('#export-json').addEventListener('click', guard(() => downloadModel(jsonText(exportObject(state)), 'application/json', 'json')));
  $('#export-md').addEventListener('click', guard(() => downloadModel(exportMarkdown(state), 'text/markdown', 'md')));

  // drag and drop anywhere
  let depth = 0;
  const overlay = $('#drop-overlay');
  const hasFiles = (e) => e.dataTransfer && [...e.dataTransfer.types].includes('Files');
  window.addEventListener('dragenter', (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault(); depth++;
    overlay.firstElementChild.textContent = panels.compare.wantsDrop() ? 'Drop a file to compare it with this one' : 'Drop a .gguf file (or every shard of a split model) to open it';
    overlay.hidden = false;
  });
  window.addEventListener('dragover', (e) => { if (hasFiles(e)) e.preventDefault(); });
  window.addEventListener('dragleave', () => { depth = Math.max(0, depth - 1); if (!depth) overlay.hidden = true; });
  window.addEventListener('drop', (e) => {
    e.preventDefault();
    depth = 0; overlay.hidden = true;
    const files = e.dataTransfer ? e.dataTransfer.files : [];
    if (files.length && panels.compare.wantsDrop()) panels.compare.openFile(files[0]);
    else if (files.length) openFiles(files);
  });

  // ?url= opens the first file (default: the sample); ?compare= then opens the second beside it.
  // ?repo= lists a Hugging Face repo's GGUF files instead (www/repo-view.js).
  if (params.has('repo')) { import('./repo-view.js').then((m) => m.showRepoView(params, { showError })).catch((e) => showError(e.message)); return; }
  // A first visit (no file named) shows how to open one's own file beside the sample, until dismissed.
  const VISITED = 'gguf-lens-visited';
  let visited = true;
  try { visited = localStorage.getItem(VISITED) === '1'; } catch { /* storage refused: no card */ }
  if (!visited && !params.has('url')) $('#welcome').hidden = false;
  $('#welcome-close').addEventListener('click', () => {
    $('#welcome').hidden = true;
    try { localStorage.setItem(VISITED, '1'); } catch { /* shown again next time */ }
    $('#open-file').focus();
  });
  const compareUrl = params.get('compare');
  Promise.resolve(openUrl(params.get('url') || SAMPLE_URL, { push: false })).then(() => { if (compareUrl && state.model) panels.compare.openUrl(compareUrl, { push: false }); });
}

init();
