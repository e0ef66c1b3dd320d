// Metadata editing: pending changes (set, add, remove; the chat template), checked by the core
// through the worker as they are made, shown as a diff, and saved as a new file ("Save as…":
// the File System Access picker where there is one, streaming; else a download). From a local
// file the new file is the new header plus slices of the original: nothing is read into memory.

/**
 * @param {object} ctx the page's helpers: el, clear, request, longTask, showError, model(),
 *   sourceName(), fmtValue, rerender() (re-renders the metadata table)
 */
import { parseValue } from './messages.js';

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

  /** Shows `message` beside the control that caused it (`where`: an element with role alert),
   * or clears it; `input` is marked invalid and described by it. */
  function fieldError(where, input, message) {
    where.textContent = message ?? '';
    where.hidden = !message;
    if (!input) return;
    if (message) { input.setAttribute('aria-invalid', 'true'); input.setAttribute('aria-describedby', where.id); } else input.removeAttribute('aria-invalid');
  }

  /** Adds change `c`; a refusal (the core's check) goes to `onError`, by default the page's box. */
  function change(c, onError = (e) => showError(e.message)) {
    const next = new Map(pending);
    next.set(c.key, c);
    return apply(next).then(() => true, (e) => { onError(e); return false; });
  }

  function revert(key) {
    const next = new Map(pending);
    next.delete(key);
    return apply(next).catch((e) => showError(e.message));
  }
  let errorIds = 0;

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
      input.setAttribute('aria-label', `New value of ${m.key}`);
      const save = el('button', { type: 'button', class: 'primary edit-save' }, 'Set');
      const cancel = el('button', { type: 'button' }, 'Cancel');
      const error = el('p', { class: 'error small field-error', role: 'alert' });
      error.id = `edit-error-${++errorIds}`;
      error.hidden = true;
      clear(cell).append(input, ' ', save, ' ', cancel, error);
      input.focus();
      const close = () => { ctx.rerender(); document.querySelector(`#meta-table tr[data-key="${CSS.escape(m.key)}"] .edit-key`)?.focus(); };
      cancel.addEventListener('click', close);
      input.addEventListener('keydown', (e) => {
        if (e.key === 'Escape') { e.preventDefault(); close(); }
        if (e.key === 'Enter' && input.tagName === 'INPUT') { e.preventDefault(); save.click(); }
      });
      save.addEventListener('click', () => {
        let value;
        try {
          value = parseValue(input.value, m.type === 'array' ? 'array' : m.type);
        } catch (e) {
          fieldError(error, input, `${m.key}: ${e.message}`);
          return;
        }
        change({ key: m.key, value }, (e) => fieldError(error, input, `${m.key}: ${e.message}`));
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

  /** Add a key: errors beside the form (the field at fault marked), not at the page's top. */
  function addKey() {
    const key = $('#edit-add-key').value.trim();
    const type = $('#edit-add-type').value;
    const raw = $('#edit-add-value').value;
    const where = $('#edit-add-error');
    fieldError(where, $('#edit-add-key'));
    fieldError(where, $('#edit-add-value'));
    if (!key) { fieldError(where, $('#edit-add-key'), 'give the new key a name (e.g. general.license)'); return; }
    let value;
    try {
      value = parseValue(raw, type);
    } catch (e) {
      fieldError(where, $('#edit-add-value'), `${key}: ${e.message}`);
      return;
    }
    const c = { key, value };
    if (type !== 'auto') c.type = type;
    change(c, (e) => fieldError(where, $('#edit-add-value'), `${key}: ${e.message}`)).then((ok) => { if (ok) $('#edit-add-value').value = ''; });
  }

  $('#edit-save').addEventListener('click', saveAs);
  $('#edit-discard').addEventListener('click', () => apply(new Map()).catch((e) => showError(e.message)));
  $('#edit-add').addEventListener('submit', (e) => { e.preventDefault(); addKey(); });
  $('#template-apply').addEventListener('click', () => change({ key: 'tokenizer.chat_template', value: $('#chat-template-edit').value, type: 'string' }));

  return {
    actionsFor,
    /** The pending value of a key ({remove: true} when removed), or undefined. */
    pendingOf: (key) => pending.get(key),
    /** Every pending change, in the order made. */
    pendingChanges: () => [...pending.values()],
    pendingCount: () => pending.size,
    /** Drops every pending change (a new file was opened). */
    reset() {
      pending = new Map();
      render([]);
      $('#edit-saved').textContent = '';
    },
    editable: () => ctx.model()?.info.format === 'gguf',
  };
}
