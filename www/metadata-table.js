// The Metadata tab: the key table, its filter (matches inside whole string arrays come from the
// worker) and each array's pages. ctx: {state (app.js's: .model), request, showError,
// editing() (edit-panel.js's handle: pending edits and the row actions)}.
import { $, el, clear } from './dom.js';
import { fmtInt, fmtValue, valueText } from './format.js';

export function setupMetadataTable(ctx) {
  const { state } = ctx;
  // The filter's matches inside whole string arrays (key → first matching index), from the worker.
  let metaHits = {};
  let metaQuery = 0;
  async function filterMetadata() {
    const q = $('#meta-filter').value.trim().toLowerCase();
    const ticket = ++metaQuery;
    const hits = q ? await ctx.request('metaFind', { q }).promise : {};
    if (ticket !== metaQuery) return; // a newer keystroke's answer wins
    metaHits = hits;
    renderMetadata();
  }

  function renderMetadata() {
    const body = clear($('#meta-table tbody'));
    const q = $('#meta-filter').value.trim().toLowerCase();
    let n = 0;
    // Keys added by pending edits are listed too (marked), as they will be saved.
    const known = new Set(state.model.metadata.map((e) => e.key));
    const added = ctx.editing().pendingChanges().filter((c) => !c.remove && !known.has(c.key))
      .map((c) => (Array.isArray(c.value)
        ? { key: c.key, type: 'array', itemType: c.type ?? typeof c.value[0], length: c.value.length, preview: c.value.slice(0, 8), added: true }
        : { key: c.key, type: c.type ?? (typeof c.value === 'string' ? 'string' : typeof c.value === 'boolean' ? 'bool' : 'number'), value: c.value, added: true }));
    for (const entry of [...state.model.metadata, ...added]) {
      // A pending scalar edit shows its new value (arrays keep their summary).
      const pendingValue = ctx.editing().pendingOf(entry.key);
      const m = pendingValue && !pendingValue.remove && entry.type !== 'array' ? { ...entry, value: pendingValue.value } : entry;
      const text = valueText(m);
      const preview = m.type === 'array' ? m.preview.map(fmtValue).join(', ') : '';
      const hit = q ? metaHits[m.key] : undefined;
      if (q && hit === undefined && !m.key.toLowerCase().includes(q) && !text.toLowerCase().includes(q) && !preview.toLowerCase().includes(q)) continue;
      n++;
      const cell = el('td', { class: 'value' });
      if (m.type === 'array' && m.added) {
        cell.append(el('span', { class: 'mono' }, text), ' ', el('span', { class: 'muted' }, preview));
      } else if (m.type === 'array') {
        const box = el('div', { class: 'array-view', hidden: undefined });
        let page = 0;
        const size = 50;
        const pages = Math.max(1, Math.ceil(m.length / size));
        const show = async () => {
          const vals = await ctx.request('meta', { key: m.key, start: page * size, end: Math.min(m.length, (page + 1) * size) }).promise;
          clear(box).append(
            el('div', { class: 'pager' },
              el('button', { type: 'button', on: { click: () => { if (page > 0) { page--; show(); } } } }, '‹'),
              el('span', { class: 'muted small' }, ` ${fmtInt(page * size)}–${fmtInt(page * size + vals.length - 1)} of ${fmtInt(m.length)} `),
              el('button', { type: 'button', on: { click: () => { if (page < pages - 1) { page++; show(); } } } }, '›')),
            el('ol', { class: 'array-items', start: undefined }, vals.map((v, i) => el('li', {}, el('span', { class: 'idx' }, String(page * size + i)), el('code', {}, fmtValue(v))))));
        };
        const btn = el('button', { type: 'button', class: 'link', on: { click: () => { if (box.hasChildNodes()) { clear(box); btn.textContent = 'show'; } else { btn.textContent = 'hide'; show().catch((e) => ctx.showError(e.message)); } } } }, 'show');
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
      const change = ctx.editing().pendingOf(m.key);
      const actions = el('td', { class: 'actions' });
      if (ctx.editing().editable() && !m.added) actions.append(ctx.editing().actionsFor(m, cell));
      if (m.added) cell.prepend(el('span', { class: 'tag op-add' }, 'added'), ' ');
      else if (change && !change.remove) cell.prepend(el('span', { class: 'tag op-set' }, 'edited'), ' ');
      else if (change) cell.prepend(el('span', { class: 'tag op-remove' }, 'to be removed'), ' ');
      body.append(el('tr', { dataset: { key: m.key }, class: change ? (change.remove ? 'removed' : 'edited') : undefined }, el('td', { class: 'mono key' }, m.key), el('td', { class: 'muted' }, m.type === 'array' ? `array<${m.itemType}>` : m.type), cell, actions));
    }
    const changes = ctx.editing().pendingChanges();
    const removed = changes.filter((c) => c.remove).length;
    const total = state.model.metadata.length + added.length;
    const parts = [added.length && `${added.length} added`, changes.length - added.length - removed && `${changes.length - added.length - removed} edited`, removed && `${removed} to be removed`].filter(Boolean);
    $('#meta-count').textContent = `${n} of ${total} keys${parts.length ? ` (${parts.join(', ')}: not saved yet)` : ''}`;
    $('#meta-count').dataset.total = String(total);
  }

  $('#meta-filter').addEventListener('input', () => { if (state.model) filterMetadata().catch((e) => ctx.showError(e.message)); });
  return {
    /** A newly opened model: drop the old matches, render, and filter again if a query is typed. */
    reset() {
      metaHits = {};
      renderMetadata();
      if ($('#meta-filter').value.trim()) filterMetadata().catch((e) => ctx.showError(e.message));
    },
    render: renderMetadata,
  };
}
