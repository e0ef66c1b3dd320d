// Metadata editing: pending changes (set, add, remove; the chat template), checked by the core
// through the worker as they are made, shown as a diff, and saved as a new file ("Save as…":
// the File System Access picker where there is one, streaming; else a download). From a local
// file the new file is the new header plus slices of the original: nothing is read into memory.

/**
 * @param {object} ctx the page's helpers: el, clear, request, longTask, showError, model(),
 *   sourceName(), fmtValue, rerender() (re-renders the metadata table)
 */
export function setupEditing(ctx) {
  const { el, clear, request, longTask, showError } = ctx;
  const $ = (sel) => document.querySelector(sel);
  /** key → {key, value, type} | {key, remove: true}, in the order they were made */
  let pending = new Map();

  async function apply(next) {
    const diff = await request('editChanges', { changes: [...next.values()] }).promise;
    pending = next;
    render(diff);
    ctx.rerender();
  }

  function change(c) {
    const next = new Map(pending);
    next.set(c.key, c);
    return apply(next).catch((e) => showError(e.message));
  }

  function revert(key) {
    const next = new Map(pending);
    next.delete(key);
    return apply(next).catch((e) => showError(e.message));
  }

  function text(v) {
    if (v === undefined) return '—';
    if (Array.isArray(v)) return JSON.stringify(v);
    return typeof v === 'string' ? v : ctx.fmtValue(v);
  }

  function render(diff) {
    const card = $('#edit-card');
    card.hidden = diff.length === 0;
    $('#edit-count').textContent = String(diff.length);
    const body = clear($('#edit-table tbody'));
    for (const d of diff) {
      body.append(el('tr', { dataset: { key: d.key, op: d.op } },
        el('td', { class: 'mono key' }, d.key),
        el('td', {}, el('span', { class: `tag op-${d.op}` }, d.op)),
        el('td', { class: 'mono before' }, text(d.before).slice(0, 200)),
        el('td', { class: 'mono after' }, text(d.after).slice(0, 200)),
        el('td', {}, el('button', { type: 'button', class: 'link', on: { click: () => revert(d.key) } }, 'revert'))));
    }
  }

  /** The value an input's text gives for a key of type `type` (JSON for arrays and numbers). */
  function parse(textValue, type) {
    if (type === 'string') return textValue;
    if (type === 'bool') return textValue === 'true';
    try {
      return JSON.parse(textValue);
    } catch {
      throw new Error(`not a ${type === 'array' ? 'JSON array' : type}: ${textValue}`);
    }
  }

  /** The Edit and Remove buttons of a metadata row; `cell` is the value cell they replace. */
  function actionsFor(m, cell) {
    const removed = pending.get(m.key)?.remove;
    const edit = el('button', { type: 'button', class: 'link edit-key', title: `Edit ${m.key}` }, 'edit');
    edit.addEventListener('click', async () => {
      let current = m.type === 'array' ? null : m.value;
      const c = pending.get(m.key);
      if (c && !c.remove) current = c.value;
      if (m.type === 'array') {
        const all = c && !c.remove ? c.value : await request('meta', { key: m.key, start: 0, end: Math.min(m.length, 10000) }).promise;
        current = all;
      }
      const long = typeof current === 'string' && (current.length > 80 || current.includes('\n'));
      const input = m.type === 'array' || long
        ? el('textarea', { class: 'edit-value', rows: 6 }, m.type === 'array' ? JSON.stringify(current) : current)
        : el('input', { class: 'edit-value', value: typeof current === 'bigint' || typeof current === 'number' ? String(current) : current ?? '' });
      const save = el('button', { type: 'button', class: 'primary edit-save' }, 'Set');
      const cancel = el('button', { type: 'button' }, 'Cancel');
      clear(cell).append(input, ' ', save, ' ', cancel);
      input.focus();
      cancel.addEventListener('click', () => ctx.rerender());
      save.addEventListener('click', () => {
        try {
          const value = parse(input.value, m.type === 'array' ? 'array' : m.type);
          change({ key: m.key, value });
        } catch (e) {
          showError(`${m.key}: ${e.message}`);
        }
      });
    });
    const remove = el('button', { type: 'button', class: 'link remove-key', title: `Remove ${m.key}` }, removed ? 'keep' : 'remove');
    remove.addEventListener('click', () => (removed ? revert(m.key) : change({ key: m.key, remove: true })));
    return el('span', { class: 'edit-actions' }, edit, ' ', remove);
  }

  async function saveAs() {
    const changes = [...pending.values()];
    const base = String(ctx.sourceName()).split(/[\\/]/).pop().replace(/\.gguf$/i, '') || 'model';
    const name = `${base}-edited.gguf`;
    try {
      const blob = await longTask('Preparing the edited file', 'editBlob', { changes });
      if (typeof window.showSaveFilePicker === 'function') {
        const handle = await window.showSaveFilePicker({ suggestedName: name, types: [{ description: 'GGUF model', accept: { 'application/octet-stream': ['.gguf'] } }] });
        const writable = await handle.createWritable();
        await blob.stream().pipeTo(writable); // streams from the original file's slices
      } else {
        const url = URL.createObjectURL(blob);
        const a = el('a', { href: url, download: name });
        document.body.append(a);
        a.click();
        a.remove();
        setTimeout(() => URL.revokeObjectURL(url), 60_000);
      }
      $('#edit-saved').textContent = `Saved ${name} (${blob.size.toLocaleString('en-US')} bytes).`;
    } catch (e) {
      if (e.name !== 'AbortError') showError(`could not save: ${e.message}`);
    }
  }

  function addKey() {
    const key = $('#edit-add-key').value.trim();
    const type = $('#edit-add-type').value;
    const raw = $('#edit-add-value').value;
    if (!key) { showError('give the new key a name'); return; }
    let value;
    try {
      value = type === 'string' ? raw : JSON.parse(raw);
    } catch {
      showError(`${key}: not a ${type}: ${raw}`);
      return;
    }
    const c = { key, value };
    if (type !== 'auto') c.type = type === 'array' ? undefined : type;
    change(c).then(() => { $('#edit-add-value').value = ''; });
  }

  $('#edit-save').addEventListener('click', saveAs);
  $('#edit-discard').addEventListener('click', () => apply(new Map()).catch((e) => showError(e.message)));
  $('#edit-add').addEventListener('submit', (e) => { e.preventDefault(); addKey(); });
  $('#template-apply').addEventListener('click', () => change({ key: 'tokenizer.chat_template', value: $('#chat-template-edit').value, type: 'string' }));

  return {
    actionsFor,
    /** The pending value of a key ({remove: true} when removed), or undefined. */
    pendingOf: (key) => pending.get(key),
    /** Drops every pending change (a new file was opened). */
    reset() {
      pending = new Map();
      render([]);
      $('#edit-saved').textContent = '';
    },
    editable: () => ctx.model()?.info.format === 'gguf',
  };
}
