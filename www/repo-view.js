// The Hub repo view (?repo=owner/name[&revision=…][&endpoint=…]): every GGUF file of a Hugging
// Face repo (its tree API, paginated), split files as one row, each file's header read over Range
// a few at a time (the package's scanRepo), with its quant label, size, bits per weight,
// parameters and the memory planner's verdict for the chosen GPU and context. A row opens the
// file in the normal view (?url=, with the device as the planner card's gpu/mctx). A token for
// gated repos lives in sessionStorage (this tab only), one per endpoint origin, and is sent only
// there: a link naming another endpoint never receives the Hub's token.
import { tokenKey } from './hub-token.js';
import { fmtBytes } from './format.js';

const GIB = 1024 ** 3;
// The memory card's presets (www/memory-panel.js), so a row opens with the same choice.
const GPU_PRESETS = [['', 'no GPU (all on CPU)'], ['8', '8 GiB'], ['12', '12 GiB'], ['16', '16 GiB'], ['24', '24 GiB'], ['48', '48 GiB'], ['80', '80 GiB'], ['custom', 'custom…']];
// 0: each model's own (trained) context, as the planner card and llama.cpp's -c 0 take it.
const DEFAULT_CTX = 0;

function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k === 'on') for (const [ev, fn] of Object.entries(v)) e.addEventListener(ev, fn);
    else if (k in e && typeof v !== 'string') e[k] = v;
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  e.append(...children.filter((c) => c !== null && c !== undefined));
  return e;
}

function fmtParams(n) {
  if (!(n > 0)) return '—';
  for (const [d, s] of [[1e12, 'T'], [1e9, 'B'], [1e6, 'M'], [1e3, 'K']]) if (n >= d) return `${(n / d).toFixed(n >= 100 * d ? 0 : 2)}${s}`;
  return String(n);
}


/**
 * Replaces the page's content with the repo view and lists `params.get('repo')` (when given).
 * @param {URLSearchParams} params
 * @param {{ showError(msg: string, kind?: string): void }} page
 */
export async function showRepoView(params, page) {
  const pkg = await import('./pkg/index.js');
  const main = document.querySelector('#main');
  for (const child of main.children) child.hidden = true;
  let endpoint = pkg.HUB_ENDPOINT;
  // ?endpoint= is https only (http on this machine): a link must not send the token in clear.
  // A refused one lists nothing (nor falls back to the Hub the link did not name).
  let refused = null;
  try {
    if (params.get('endpoint')) endpoint = pkg.checkHubEndpoint(params.get('endpoint'));
  } catch (err) {
    refused = err.message;
  }
  let scan = null; // { controller, rows }
  let sortKey = 'name', sortDir = 1;

  const repoInput = el('input', { id: 'repo-input', type: 'text', spellcheck: 'false', placeholder: 'owner/name (a Hugging Face repo)', 'aria-label': 'Hugging Face repo', value: params.get('repo') ?? '' });
  const revInput = el('input', { id: 'repo-revision', type: 'text', spellcheck: 'false', placeholder: 'main', 'aria-label': 'Revision', size: '10', value: params.get('revision') ?? '' });
  const form = el('form', { id: 'repo-form', class: 'toolbar', autocomplete: 'off' }, repoInput, revInput, el('button', { type: 'submit', class: 'primary' }, 'List GGUF files'));
  const gpu = el('select', { id: 'repo-gpu', 'aria-label': 'GPU memory' }, ...GPU_PRESETS.map(([v, label]) => el('option', { value: v }, label)));
  const gpuCustom = el('input', { id: 'repo-gpu-custom', type: 'number', min: '0.1', step: '0.1', 'aria-label': 'GPU memory, GiB', placeholder: 'GiB', hidden: true });
  const ctxInput = el('input', { id: 'repo-ctx', type: 'number', min: '0', step: '256', 'aria-label': 'Context (0: each model\'s own)', title: '0: each model\'s own context', value: String(DEFAULT_CTX) });
  const device = el('div', { class: 'toolbar' }, el('label', {}, 'GPU ', gpu), gpuCustom, el('label', {}, ' context ', ctxInput));
  const tokenInput = el('input', { id: 'repo-token', type: 'password', autocomplete: 'off', placeholder: 'hf_…', 'aria-label': 'Access token' });
  const tokenNote = el('span', { class: 'muted small', id: 'repo-token-note' });
  const tokenBox = el('details', { id: 'repo-token-box' }, el('summary', {}, 'Access token (gated or private repos)'),
    el('div', { class: 'toolbar' }, tokenInput,
      el('button', { type: 'button', id: 'repo-token-use', on: { click: () => { saveToken(tokenInput.value.trim()); tokenInput.value = ''; list(); } } }, 'Use'),
      el('button', { type: 'button', id: 'repo-token-forget', on: { click: () => { saveToken(''); list(); } } }, 'Forget'), tokenNote));
  const progress = el('progress', { id: 'repo-progress', max: '1', value: '0' });
  const progressText = el('span', { class: 'muted', id: 'repo-progress-text' });
  const cancel = el('button', { type: 'button', id: 'repo-cancel', on: { click: () => scan?.controller.abort() } }, 'Cancel');
  const status = el('div', { class: 'toolbar', id: 'repo-status', hidden: true }, progress, progressText, cancel);
  const sortButton = (key, label) => el('button', { type: 'button', class: 'sort link', dataset: { sort: key, label }, on: { click: () => { sortDir = sortKey === key ? -sortDir : 1; sortKey = key; render(); } } }, label);
  const table = el('table', { class: 'data', id: 'repo-table' },
    el('thead', {}, el('tr', {}, el('th', { 'aria-sort': 'ascending' }, sortButton('name', 'File')), el('th', {}, 'Quant'),
      el('th', { class: 'num', 'aria-sort': 'none' }, sortButton('size', 'Size')), el('th', { class: 'num' }, 'Bits / weight'),
      el('th', { class: 'num' }, 'Parameters'), el('th', {}, 'Verdict'))),
    el('tbody'));
  const heading = el('h1', { id: 'repo-title' }, 'GGUF files of a Hugging Face repo');
  const note = el('p', { class: 'muted small', id: 'repo-note' }, 'Only each file\'s header is read (HTTP Range). Click a row to open the file. Verdicts are llama.cpp\'s memory plan: everything on the GPU at this context, or how many layers (-ngl) fit.');
  const section = el('section', { id: 'repo-view', class: 'card' }, heading, form, tokenBox, device, status, note, table);
  main.prepend(section);

  function saveToken(token) {
    try {
      if (token) sessionStorage.setItem(tokenKey(new URL(endpoint).origin), token);
      else sessionStorage.removeItem(tokenKey(new URL(endpoint).origin));
    } catch { /* storage refused: the token is not kept */ }
    showTokenNote();
  }
  function token() {
    try { return sessionStorage.getItem(tokenKey(new URL(endpoint).origin)) || ''; } catch { return ''; }
  }
  function showTokenNote() {
    tokenNote.textContent = token() ? `a token is set for ${new URL(endpoint).origin} (this tab only)` : `none set; kept for this tab only and sent only to ${new URL(endpoint).origin}`;
  }

  function deviceOptions() {
    const choice = gpu.value;
    gpuCustom.hidden = choice !== 'custom';
    const gib = choice === 'custom' ? Number(gpuCustom.value) : Number(choice);
    const ctx = Math.max(0, Math.round(Number(ctxInput.value) || DEFAULT_CTX));
    // no ctx: repoVerdict plans each model at its training context
    return { gpuMem: gib > 0 ? Math.round(gib * GIB) : null, ...(ctx ? { ctx } : {}) };
  }

  function syncUrl() {
    const q = new URLSearchParams();
    const repo = repoInput.value.trim();
    if (repo || params.has('repo')) q.set('repo', repo);
    if (revInput.value.trim()) q.set('revision', revInput.value.trim());
    if (refused) q.set('endpoint', params.get('endpoint'));
    else if (endpoint !== pkg.HUB_ENDPOINT) q.set('endpoint', endpoint);
    const d = deviceOptions();
    if (d.gpuMem) q.set('gpu', String(+(d.gpuMem / GIB).toFixed(3)));
    if (d.ctx) q.set('mctx', String(d.ctx));
    history.replaceState(null, '', `?${q}`);
  }

  function fromUrl() {
    const g = params.get('gpu');
    if (g) {
      gpu.value = GPU_PRESETS.some(([v]) => v === g) ? g : 'custom';
      gpuCustom.value = g;
    }
    if (params.get('mctx')) ctxInput.value = params.get('mctx');
  }

  function verdictCell(row) {
    const v = row.verdict;
    if (row.error) return el('td', { class: 'error-text', dataset: { fits: 'error' } }, row.error);
    if (!v) return el('td', { class: 'muted', dataset: { fits: 'pending' } }, 'reading…');
    if (v.error) return el('td', { class: 'muted', dataset: { fits: 'refused' } }, `planner: ${v.error}`);
    const data = { fits: v.fits === null ? 'cpu' : v.fits ? 'yes' : 'no', ngl: String(v.ngl), nglFull: String(v.nglFull), maxCtx: v.maxCtx === null ? '' : String(v.maxCtx), total: String(v.totalBytes) };
    if (v.fits === null) return el('td', { dataset: data }, `CPU only: ${fmtBytes(v.totalBytes)}`);
    const max = v.maxCtx === null ? 'not even 256 context offloaded' : `max context ${v.maxCtx.toLocaleString('en-US')} offloaded`;
    if (v.fits) return el('td', { dataset: data }, el('b', {}, 'fits'), ` (${fmtBytes(v.gpuBytes)}) · ${max}`);
    // Not every layer fits whole: llama.cpp's fit may still put them all on the GPU with a MoE's
    // experts kept on the CPU (-ot), which the plan above does not try.
    const f = fitOf(row, v);
    const cpuExperts = f?.fits ? f.overrides.filter((o) => o.buffer === 'CPU' && /exps$/.test(o.pattern)).length : 0;
    if (cpuExperts && f.ngl >= v.nglFull) {
      return el('td', { dataset: { ...data, fits: 'experts-cpu', fitFlags: f.flags }, title: f.flags }, el('b', {}, 'fits'),
        ` with the experts of ${cpuExperts} layer${cpuExperts > 1 ? 's' : ''} on the CPU · -c ${f.nCtx.toLocaleString('en-US')}`);
    }
    return el('td', { dataset: data }, el('b', {}, `-ngl ${v.ngl}`), ` of ${v.nglFull} layers · ${max}`);
  }

  /** llama.cpp's fit for one GPU of the chosen size (its default 1 GiB margin), kept per device. */
  function fitOf(row, v) {
    if (!v.gpuMem || !row.model?.fit) return null;
    const { ctx } = deviceOptions();
    const key = `${v.gpuMem}:${ctx ?? ''}`;
    if (row.fitKey !== key) {
      row.fitKey = key;
      try { row.fitResult = row.model.fit({ gpus: [v.gpuMem], ...(ctx ? { ctx } : {}) }); } catch { row.fitResult = null; }
    }
    return row.fitResult;
  }

  /** general.file_type's label; without one, the type holding the most bytes, starred. */
  function quantCell(s) {
    if (s?.fileTypeLabel) return el('td', {}, s.fileTypeLabel.replace(/^MOSTLY_/, ''));
    const top = [...(s?.quantMix ?? [])].sort((a, b) => b.bytes - a.bytes)[0];
    if (!top) return el('td', {}, '—');
    return el('td', { title: 'no general.file_type: the type of most tensor bytes' }, `${top.type}*`);
  }

  function openHref(row) {
    const q = new URLSearchParams({ url: row.files[0].url });
    const d = deviceOptions();
    if (d.gpuMem) q.set('gpu', String(+(d.gpuMem / GIB).toFixed(3)));
    if (d.ctx) q.set('mctx', String(d.ctx)); // else the planner card's own default, the trained context
    return `?${q}`;
  }

  function render() {
    const rows = [...(scan?.rows ?? [])];
    const key = { name: (r) => r.name, size: (r) => r.size ?? -1 }[sortKey];
    rows.sort((a, b) => { const x = key(a), y = key(b); return (x < y ? -1 : x > y ? 1 : 0) * sortDir; });
    for (const th of table.tHead.rows[0].cells) {
      const b = th.querySelector('button.sort');
      if (!b) continue;
      const on = b.dataset.sort === sortKey;
      th.setAttribute('aria-sort', on ? (sortDir > 0 ? 'ascending' : 'descending') : 'none');
      b.textContent = b.dataset.label + (on ? (sortDir > 0 ? ' ▲' : ' ▼') : '');
    }
    const body = table.tBodies[0];
    body.replaceChildren(...rows.map((row) => {
      const s = row.summary;
      const shards = row.split ? ` (${row.files.length} of ${row.split.count} shards)` : '';
      const href = row.error ? null : openHref(row);
      const name = href ? el('a', { href }, row.name) : row.name;
      const tr = el('tr', { class: href ? 'clickable' : '', dataset: { name: row.name, size: String(row.size ?? '') } },
        el('td', {}, name, el('span', { class: 'muted small' }, shards)),
        quantCell(s),
        el('td', { class: 'num', nowrap: true }, fmtBytes(row.size)),
        el('td', { class: 'num' }, s ? s.bitsPerWeight.toFixed(2) : '—'),
        el('td', { class: 'num', dataset: { value: s ? String(s.parameterCount) : '' } }, s ? fmtParams(s.parameterCount) : '—'),
        verdictCell(row));
      if (href) tr.addEventListener('click', (e) => { if (e.target.tagName !== 'A') location.href = href; });
      return tr;
    }));
  }

  function replan() {
    syncUrl();
    const d = deviceOptions();
    for (const row of scan?.rows ?? []) if (row.model) row.verdict = pkg.repoVerdict(row.model, d);
    render();
  }

  async function list() {
    const repo = repoInput.value.trim();
    syncUrl();
    if (refused) {
      section.dataset.state = 'error';
      page.showError(refused);
      return;
    }
    if (!repo) return;
    if (scan) {
      scan.controller.abort();
      await pkg.closeRepoModels(scan.rows);
    }
    section.dataset.state = 'busy';
    const controller = new AbortController();
    const mine = { controller, rows: [] };
    scan = mine;
    const headers = token() ? { Authorization: `Bearer ${token()}` } : undefined;
    const options = { endpoint, revision: revInput.value.trim() || undefined, headers, signal: controller.signal, concurrency: 3 };
    status.hidden = false;
    progress.removeAttribute('value');
    progressText.textContent = 'listing files…';
    heading.textContent = repo;
    try {
      const listing = await pkg.listRepoGgufs(repo, options);
      if (scan !== mine) return;
      heading.textContent = `${listing.repo} @ ${listing.revision}`;
      mine.rows = listing.models.map((m) => ({ ...m, summary: null, verdict: null, error: null, model: null }));
      const total = listing.models.length;
      progress.max = Math.max(1, total);
      progress.value = 0;
      progressText.textContent = `${total} GGUF model${total === 1 ? '' : 's'}; reading headers…`;
      render();
      const rows = await pkg.inspectRepoGgufs(listing, {
        ...options,
        device: deviceOptions(),
        onProgress: ({ done, row }) => {
          if (scan !== mine) return;
          const i = mine.rows.findIndex((r) => r.name === row.name);
          if (i >= 0) mine.rows[i] = row;
          progress.value = done;
          progressText.textContent = `${done} of ${total} read`;
          render();
        },
      });
      if (scan !== mine) { await pkg.closeRepoModels(rows); return; }
      mine.rows = rows;
      // rows settled before any read (incomplete splits) already carry their error
      replan();
      status.hidden = true;
      section.dataset.state = 'done';
    } catch (err) {
      if (scan !== mine) return;
      status.hidden = true;
      section.dataset.state = 'error';
      if (err.name === 'AbortError') page.showError('listing the repo', 'Cancelled');
      else page.showError(err.message);
      render();
    }
  }

  form.addEventListener('submit', (e) => { e.preventDefault(); list(); });
  gpu.addEventListener('change', replan);
  gpuCustom.addEventListener('input', replan);
  ctxInput.addEventListener('change', replan);
  fromUrl();
  deviceOptions();
  showTokenNote();
  render();
  await list();
}
