// The Compare panel: a second file (B) opened beside the first (A) in the worker, shown as text
// only. The worker computes the differences (compare-worker.js: the core's definitions, as
// `gguf-lens diff`); this module renders them and drives the per-tensor numeric comparison.
// app.js hands over its helpers through setupCompare.

import { download, safeName } from './export-util.js';

const $ = (sel) => document.querySelector(sel);
const PREVIEW_CHARS = 120;

/** The index where strings `x` and `y` part (the shorter length when one is a prefix of the other). */
export function firstDifferentChar(x, y) {
  let i = 0;
  while (i < x.length && i < y.length && x[i] === y[i]) i++;
  return i;
}

/** A file's short name for a download: its last path segment, no query or extension. */
function stem(name) {
  const last = String(name).split(/[?#]/)[0].split('/').filter(Boolean).pop() || 'model';
  return safeName(last.replace(/\.(gguf|safetensors|json)$/i, ''));
}

export function setupCompare(ui) {
  const { el, clear, request, longTask, fmt, showError, hideError, selectTab } = ui;
  let b = null; // B's open result: {info, summary, tensorCount, diff}
  let bLabel = '';
  let running = null; // the compare-all or single-tensor run: {cancel(), cancelled}
  const results = new Map(); // tensor name → metrics, for the exports

  const short = (s) => (s.length > PREVIEW_CHARS ? `${s.slice(0, PREVIEW_CHARS)}… (${fmt.int(s.length)} chars)` : s);
  const entryText = (e) => (e.type === 'array'
    ? `[${e.itemType} × ${fmt.int(e.length)}] ${e.preview.map((v) => short(fmt.value(v))).join(', ')}${e.length > e.preview.length ? ', …' : ''}`
    : short(typeof e.value === 'string' ? e.value : fmt.value(e.value)));
  const entryType = (e) => (e.type === 'array' ? `array<${e.itemType}>` : e.type);
  const shapeText = (s) => `[${s.join(', ')}]`;

  function showBar(show) {
    const wasOpen = !$('#compare-form').hidden;
    $('#compare-form').hidden = !show;
    $('#compare-start').setAttribute('aria-expanded', String(show));
    if (show) $('#compare-url').focus();
    else if (wasOpen && $('#compare-form').contains(document.activeElement)) $('#compare-start').focus();
  }

  /** The first file changed: the comparison is stale. */
  function reset() {
    stopRun();
    b = null;
    $('#compare-tab').hidden = true;
    if (!$('#panel-compare').hidden) selectTab('overview');
    showBar(false);
  }

  async function open(source, label) {
    hideError();
    stopRun();
    try {
      const r = await longTask(`Reading ${label} (to compare)`, 'openCompare', { source });
      if (!r) return;
      b = r;
      bLabel = label;
      results.clear();
      showBar(false);
      render();
      $('#compare-tab').hidden = false;
      selectTab('compare');
    } catch (err) {
      if (err.name === 'AbortError') { if (!err.replaced) showError(`opening ${label}`, 'Cancelled'); }
      else showError(`${ui.openErrorText(err, label)} (to compare)`);
    }
  }

  /** The page's address names both files (?url= and ?compare=) when both came from URLs. */
  function setCompareParam(url) {
    const q = new URLSearchParams(location.search);
    if (url && ui.sourceIsUrl()) q.set('compare', url); else q.delete('compare');
    const search = q.toString();
    history.replaceState(null, '', search ? `?${search}` : location.pathname);
  }

  function openUrl(url, { push = true } = {}) {
    let abs;
    try { abs = new URL(url, location.href); } catch { showError(`not a valid URL: ${url}`); return; }
    if (abs.protocol !== 'http:' && abs.protocol !== 'https:') { showError(`only http and https URLs can be opened (got ${abs.protocol})`); return; }
    if (push) setCompareParam(url);
    $('#compare-url').value = url;
    open(abs.href, abs.href);
  }

  function openFile(f) {
    setCompareParam(null);
    open(f, f.name);
  }

  // ----- summary side by side -----
  /** The core's summary fields (compareModels) as the panel names and formats them. */
  const FIELDS = {
    architecture: ['architecture', 'Architecture'],
    name: ['name', 'Name'],
    parameters: ['parameter-count', 'Parameters', (v) => `${fmt.count(v)} (${fmt.int(v)})`],
    format: ['format', 'Format'],
    file_type: ['file-type', 'File type', fmt.fileTypeText],
    bits_per_weight: ['bits-per-weight', 'Bits / weight', (v) => v.toFixed(3)],
    file_size: ['file-size', 'File size', (v) => `${fmt.bytes(v)} (${fmt.int(v)} B)`],
    context_length: ['context-length', 'Context', fmt.int],
    block_count: ['block-count', 'Layers', fmt.int],
    embedding_length: ['embedding-length', 'Embedding', fmt.int],
    vocab_size: ['vocab-size', 'Vocabulary', fmt.int],
    tensor_count: ['tensor-count', 'Tensors', fmt.int],
  };

  /**
   * Rows {field, label, a, b, textA, textB, counts, differs}: values raw (null when absent) and as
   * shown; `differs` only for a field whose difference counts (the core's: two GGUF models).
   */
  function summaryRows() {
    return b.diff.summary.map((f) => {
      const [field, label, format] = FIELDS[f.name] ?? [f.name, f.name];
      const text = (v) => (v === null ? '—' : format ? format(v) : String(v));
      return { field, label, a: f.a, b: f.b, textA: text(f.a), textB: text(f.b), counts: f.counts, differs: f.differs };
    });
  }

  function renderSummary() {
    $('#cmp-files').textContent = `A: ${ui.sourceLabel()} · B: ${bLabel}`;
    const body = clear($('#cmp-summary tbody'));
    const rows = summaryRows();
    for (const r of rows) {
      const cell = (v, text, side) => el('td', { class: 'mono', dataset: { side, value: v === null ? '' : String(v) } }, text);
      body.append(el('tr', { class: r.differs ? 'differs' : undefined, dataset: { field: r.field, differs: String(r.differs), counts: String(r.counts) } },
        el('th', { scope: 'row' }, r.label), cell(r.a, r.textA, 'a'), cell(r.b, r.textB, 'b')));
    }
    $('#cmp-summary-note').textContent = rows.some((r) => !r.counts)
      ? 'Not both GGUF: these fields are shown, not marked as differences (the tensors below decide, as gguf-lens diff).' : '';
  }

  // ----- metadata and tensor differences -----
  function section(title, id, items, row, empty = 'none') {
    return el('div', { class: 'diff-section', dataset: { diff: id } },
      el('h3', {}, `${title} `, el('span', { class: 'muted small' }, `(${fmt.int(items.length)})`)),
      // A list that scrolls is a tab stop, so the keyboard can scroll it.
      items.length ? el('ul', { class: 'diff-list', tabindex: 0, 'aria-label': title }, items.map(row)) : el('p', { class: 'muted small' }, empty));
  }

  /** Two long strings may share their previews: say where they part. */
  function firstDifference(c) {
    const x = c.a.value, y = c.b.value;
    if (typeof x !== 'string' || typeof y !== 'string' || (x.length <= PREVIEW_CHARS && y.length <= PREVIEW_CHARS)) return null;
    return el('div', { class: 'ab muted' }, `first difference at character ${fmt.int(firstDifferentChar(x, y))}`);
  }

  /** For two arrays: how many items differ and where the first difference is. */
  function itemsLine(c) {
    if (c.a.type !== 'array' || c.b.type !== 'array') return null;
    const it = c.items;
    const text = !it ? 'item types differ: items not compared'
      : `${fmt.int(it.differing)} of ${fmt.int(it.compared)} common items differ; first at index ${fmt.int(it.firstIndex)}: A ${it.a === null ? '(none)' : short(fmt.value(it.a))} · B ${it.b === null ? '(none)' : short(fmt.value(it.b))}`;
    return el('div', { class: 'ab muted', dataset: it ? { differing: it.differing, firstIndex: it.firstIndex } : { notCompared: 'true' } }, text);
  }

  function renderMetadata() {
    const d = b.diff.metadata;
    if (!d) {
      $('#cmp-meta-note').textContent = 'not compared';
      clear($('#cmp-meta')).append(el('p', { class: 'muted', dataset: { diff: 'meta-not-compared' } }, b.diff.metadataNotCompared));
      return;
    }
    $('#cmp-meta-note').textContent = `${fmt.int(d.same)} ${d.same === 1 ? 'key' : 'keys'} equal`;
    const one = (e) => el('li', { dataset: { key: e.key } }, el('code', { class: 'key' }, e.key), ' ', el('span', { class: 'tag' }, entryType(e)), ' ', el('span', { class: 'muted' }, entryText(e)));
    clear($('#cmp-meta')).append(
      section('Only in A', 'meta-only-a', d.onlyA, one),
      section('Only in B', 'meta-only-b', d.onlyB, one),
      section('Changed', 'meta-changed', d.changed, (c) => el('li', { dataset: { key: c.key } },
        el('code', { class: 'key' }, c.key),
        el('div', { class: 'ab' }, el('span', { class: 'side' }, 'A'), el('span', { class: 'tag' }, entryType(c.a)), ' ', entryText(c.a)),
        el('div', { class: 'ab' }, el('span', { class: 'side' }, 'B'), el('span', { class: 'tag' }, entryType(c.b)), ' ', entryText(c.b)),
        firstDifference(c), itemsLine(c))),
      el('p', { class: 'muted small' }, 'Arrays are compared in full, item by item; for arrays that differ, the count of differing items and the first differing index are shown.'));
  }

  function renderTensors() {
    const d = b.diff.tensors;
    $('#cmp-tensor-note').textContent = `${fmt.int(d.matching.length)} with the same shape in both`;
    const one = (t) => el('li', { dataset: { tensor: t.name } }, el('code', {}, t.name), ' ', el('span', { class: 'tag' }, t.type), ' ', el('span', { class: 'muted mono' }, shapeText(t.shape)));
    const change = (text) => (c) => el('li', { dataset: { tensor: c.name } }, el('code', {}, c.name), ' ', el('span', { class: 'mono' }, text(c)));
    clear($('#cmp-tensors')).append(
      section('Only in A', 'tensor-only-a', d.onlyA, one),
      section('Only in B', 'tensor-only-b', d.onlyB, one),
      section('Shape changes', 'tensor-shape', d.shapeChanges, change((c) => `${shapeText(c.a)} → ${shapeText(c.b)}`)),
      section('Type changes', 'tensor-type', d.typeChanges, change((c) => `${c.a} → ${c.b}`)));
    if (d.typeChanges.length > 1) {
      $('[data-diff="tensor-type"] h3').after(el('p', { class: 'small mono', dataset: { transitions: 'true' } }, d.transitions.map((t) => `${t.a} → ${t.b} ×${t.tensors}`).join(' · ')));
    }
    const A = ui.model();
    const mixA = new Map(A.summary.quantMix.map((q) => [q.type, q])), mixB = new Map(b.summary.quantMix.map((q) => [q.type, q]));
    const types = [...new Set([...mixA.keys(), ...mixB.keys()])];
    const cells = (q) => (q ? [el('td', { class: 'num' }, fmt.int(q.tensors)), el('td', { class: 'num' }, fmt.bytes(q.bytes)), el('td', { class: 'num' }, fmt.pct(q.share))]
      : [el('td', { class: 'num muted' }, '—'), el('td', { class: 'num muted' }, '—'), el('td', { class: 'num muted' }, '—')]);
    clear($('#cmp-mix')).append(el('table', { class: 'mix' },
      el('thead', {}, el('tr', {}, el('th', {}, 'Type'), el('th', { class: 'num' }, 'A tensors'), el('th', { class: 'num' }, 'A bytes'), el('th', { class: 'num' }, 'A share'), el('th', { class: 'num' }, 'B tensors'), el('th', { class: 'num' }, 'B bytes'), el('th', { class: 'num' }, 'B share'))),
      el('tbody', {}, types.map((t) => el('tr', { dataset: { type: t, tensorsA: mixA.get(t)?.tensors ?? 0, tensorsB: mixB.get(t)?.tensors ?? 0, bytesA: mixA.get(t)?.bytes ?? 0, bytesB: mixB.get(t)?.bytes ?? 0 } },
        el('td', { class: 'mono' }, t), cells(mixA.get(t)), cells(mixB.get(t)))))));
  }

  // ----- numeric comparison -----
  const METRICS = [['rmse', 'rmse'], ['maxAbs', 'max-abs'], ['meanAbs', 'mean-abs'], ['relRmse', 'rel-rmse'], ['cosine', 'cosine']];

  function renderNumeric() {
    const body = clear($('#cmp-numeric tbody'));
    for (const t of b.diff.tensors.matching) {
      const btn = el('button', { type: 'button', class: 'link', on: { click: () => runTensors([t.name]) } }, 'compare');
      body.append(el('tr', { dataset: { tensor: t.name } },
        el('td', { class: 'mono' }, t.name), el('td', {}, el('span', { class: 'tag' }, t.typeA)), el('td', {}, el('span', { class: 'tag' }, t.typeB)),
        METRICS.map(([, attr]) => el('td', { class: 'num mono', dataset: { metric: attr } })),
        el('td', { class: 'num mono', dataset: { metric: 'mismatches' } }),
        el('td', {}, btn)));
    }
    if (!b.diff.tensors.matching.length) body.append(el('tr', {}, el('td', { colspan: 10, class: 'muted' }, 'No tensor has the same name and shape in both files.')));
    $('#cmp-all').disabled = !b.diff.tensors.matching.length;
    setProgress(null);
  }

  function showResult(r) {
    results.set(r.name, r);
    const row = [...document.querySelectorAll('#cmp-numeric tbody tr')].find((tr) => tr.dataset.tensor === r.name);
    if (!row) return;
    for (const [k, attr] of METRICS) {
      // null: undefined for these values (no finite pair; RMSE / RMS(a) with RMS(a) = 0)
      const td = row.querySelector(`[data-metric="${attr}"]`);
      td.textContent = r[k] === null ? '—' : fmt.num(r[k]);
      td.dataset.value = String(r[k]);
    }
    const mm = row.querySelector('[data-metric="mismatches"]');
    mm.textContent = `${fmt.int(r.nanMismatch)} / ${fmt.int(r.infMismatch)}`;
    Object.assign(mm.dataset, { nan: String(r.nanMismatch), inf: String(r.infMismatch), count: String(r.count) });
    row.classList.toggle('differs', !r.identical);
    row.dataset.done = 'true';
  }

  function setProgress(text, done, total) {
    const bar = $('#cmp-progress');
    bar.hidden = total === undefined;
    if (total !== undefined) { bar.max = Math.max(1, total); bar.value = done; }
    $('#cmp-progress-text').textContent = text ?? '';
  }

  /** `options.restart`: the user's Cancel (the worker is replaced, not waited for). */
  function stopRun(options) {
    if (running) running.cancel(options); // its own finally clears `running` and the buttons
  }

  async function runTensors(names) {
    stopRun();
    hideError();
    const run = { cancelled: false, task: null, cancel(options) { this.cancelled = true; if (this.task) this.task.cancel(options); } };
    running = run;
    $('#cmp-cancel').hidden = false;
    $('#cmp-all').disabled = true;
    const sizes = new Map(b.diff.tensors.matching.map((t) => [t.name, t.nElements]));
    const total = names.reduce((s, n) => s + sizes.get(n), 0);
    let done = 0, k = 0;
    try {
      for (const name of names) {
        if (run.cancelled) break;
        k++;
        const rowsTotal = { rows: 1 };
        const label = () => `${names.length > 1 ? `${k} of ${names.length}: ` : ''}${name}`;
        setProgress(label(), done, total);
        run.task = request('compareTensor', { name }, {
          onProgress: ({ loaded, total: rows }) => { rowsTotal.rows = rows; setProgress(`${label()} (rows ${fmt.int(loaded)} of ${fmt.int(rows)})`, done + sizes.get(name) * loaded / rows, total); },
        });
        showResult(await run.task.promise);
        done += sizes.get(name);
      }
      if (running === run) setProgress(run.cancelled ? 'cancelled' : `compared ${fmt.int(k)} ${k === 1 ? 'tensor' : 'tensors'}`);
    } catch (err) {
      if (running === run) setProgress(err.name === 'AbortError' ? 'cancelled' : '');
      if (err.name !== 'AbortError') showError(`could not compare ${names[k - 1]}: ${err.message}`);
    } finally {
      if (running === run) { running = null; $('#cmp-cancel').hidden = true; $('#cmp-all').disabled = false; }
    }
  }

  function render() {
    renderSummary();
    renderMetadata();
    renderTensors();
    renderNumeric();
  }

  $('#compare-start').addEventListener('click', () => { if (ui.model()) showBar($('#compare-form').hidden); });
  $('#compare-dismiss').addEventListener('click', () => showBar(false));
  $('#compare-pick').addEventListener('click', () => $('#compare-file-input').click());
  $('#compare-file-input').addEventListener('change', (e) => { const f = e.target.files[0]; if (f) openFile(f); e.target.value = ''; });
  $('#compare-form').addEventListener('submit', (e) => { e.preventDefault(); const u = $('#compare-url').value.trim(); if (u) openUrl(u); });
  $('#cmp-all').addEventListener('click', () => { if (b) runTensors(b.diff.tensors.matching.map((t) => t.name)); });
  $('#cmp-cancel').addEventListener('click', () => stopRun({ restart: true }));
  // The exports are the package's compareReport (the renderer of `gguf-lens diff --format
  // json|markdown`), with the tensors compared so far as its values.
  async function exportReport(format, type, ext) {
    if (!b) return;
    try {
      const paths = [ui.sourceLabel(), bLabel];
      const text = await request('compareReport', { format, paths, values: [...results] }).promise;
      download(text, type, `${stem(ui.sourceName())}-vs-${stem(bLabel)}.compare.${ext}`);
    } catch (err) {
      showError(`could not export the comparison: ${err.message}`);
    }
  }
  $('#cmp-export-json').addEventListener('click', () => exportReport('json', 'application/json', 'json'));
  $('#cmp-export-md').addEventListener('click', () => exportReport('markdown', 'text/markdown', 'md'));

  return {
    reset,
    /** A drop goes to the comparison while the "Compare with" bar is open. */
    wantsDrop: () => !$('#compare-form').hidden,
    /** Escape: closes the "Compare with" bar; true when it was open. */
    closeBar() { if ($('#compare-form').hidden) return false; showBar(false); return true; },
    openFile,
    openUrl,
  };
}
