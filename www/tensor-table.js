// The Tensors tab: the filterable, sortable tensor table (grouped by layer until a column is
// sorted). ctx: {state (app.js's: .model), inspect(name)}.
import { $, $$, el, clear } from './dom.js';
import { fmtInt, fmtCount, fmtBytes, blockOf } from './format.js';

export function setupTensorTable(ctx) {
  const { state } = ctx;
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
    offset: (a, b) => a.relativeOffset - b.relativeOffset || byName(a, b),
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
    const matching = state.model.tensors.filter((t) => !q || t.name.toLowerCase().includes(q) || t.type.toLowerCase().includes(q));
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
        body.append(el('tr', { class: 'clickable', tabindex: shown === 1 ? 0 : -1, 'aria-label': `${t.name}, ${t.type}: open in the Inspector`, dataset: { tensor: t.name }, on: { click: () => ctx.inspect(t.name) } },
          el('td', { class: 'mono' }, t.name),
          el('td', {}, el('span', { class: 'tag' }, t.type)),
          el('td', { class: 'mono' }, `[${t.shape.join(', ')}]`),
          el('td', { class: 'num' }, fmtInt(t.nElements)),
          el('td', { class: 'num' }, fmtInt(t.nBytes)),
          el('td', { class: 'num' }, bitsPerWeight(t).toFixed(3)),
          el('td', { class: 'num' }, fmtInt(t.relativeOffset))));
      }
    }
    $('#tensor-count-note').textContent = `${shown} of ${state.model.tensors.length} tensors`;
  }

  // The rows are one tab stop (roving tabindex): arrows, Home / End move, Enter or Space opens.
  $('#tensor-table tbody').addEventListener('keydown', (e) => {
    const row = e.target.closest('tr.clickable');
    if (!row) return;
    const rows = $$('#tensor-table tbody tr.clickable');
    const i = rows.indexOf(row);
    const j = { ArrowDown: i + 1, ArrowUp: i - 1, Home: 0, End: rows.length - 1, PageDown: i + 10, PageUp: i - 10 }[e.key];
    if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); ctx.inspect(row.dataset.tensor, { focus: true }); return; }
    if (j === undefined) return;
    e.preventDefault();
    const next = rows[Math.max(0, Math.min(rows.length - 1, j))];
    row.tabIndex = -1;
    next.tabIndex = 0;
    next.focus();
  });
  const guard = (fn) => () => { if (state.model) fn(); };
  $('#tensor-filter').addEventListener('input', guard(renderTensors));
  for (const b of $$('#tensor-table button.sort')) b.addEventListener('click', guard(() => sortTensorsBy(b.dataset.sort)));
  return { render: renderTensors };
}
