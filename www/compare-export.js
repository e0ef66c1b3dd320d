// The Compare panel's exports: one object (JSON, complete facts) and its Markdown digest (long
// values abbreviated). Input, from compare.js: {a, b: {label, name (URL or file name), info,
// summary, tensorCount}, rows: [{field, label, a, b, textA, textB, counts, differs}], diff
// (compare-worker.js's diffModels: the core's diff; metadata null with metadataNotCompared across
// formats), results: Map tensor name → compareTensor's
// metrics (the core's ValueMetrics: null where a metric is undefined)}.
import { mdEscape, safeName } from './export-util.js';

const MD_CHARS = 80; // a value's characters shown in a Markdown cell
const METRICS = ['elements', 'count', 'rmse', 'maxAbs', 'meanAbs', 'relRmse', 'cosine', 'nanMismatch', 'infMismatch', 'identical'];

/** A file's short name for the download: its last path segment, no query or extension. */
function stem(name) {
  const last = String(name).split(/[?#]/)[0].split('/').filter(Boolean).pop() || 'model';
  return safeName(last.replace(/\.(gguf|safetensors|json)$/i, ''));
}

export function exportName(s, ext) { return `${stem(s.a.name)}-vs-${stem(s.b.name)}.compare.${ext}`; }

/** An entry with its facts: strings keep their value and say their length; arrays their first items. */
function entryFacts(e) {
  if (e.type === 'array') return { key: e.key, type: 'array', itemType: e.itemType, length: e.length, firstItems: e.preview };
  return typeof e.value === 'string' ? { key: e.key, type: e.type, value: e.value, length: e.value.length } : { key: e.key, type: e.type, value: e.value };
}

/** The index where strings `x` and `y` part (the shorter length when one is a prefix of the other). */
export function firstDifferentChar(x, y) {
  let i = 0;
  while (i < x.length && i < y.length && x[i] === y[i]) i++;
  return i;
}

/** What differs in a changed key beyond its two values: array items, or where two strings part. */
function changeFacts(c) {
  if (c.a.type === 'array' && c.b.type === 'array') return { items: c.items ?? { notCompared: 'item types differ' } };
  if (typeof c.a.value === 'string' && typeof c.b.value === 'string') return { firstDifferentChar: firstDifferentChar(c.a.value, c.b.value) };
  return {};
}

export function comparisonObject(s) {
  const file = (f) => ({ label: f.label, name: f.name, file: f.info, summary: f.summary, tensorCount: f.tensorCount });
  const m = s.diff.metadata, t = s.diff.tensors;
  return {
    kind: 'gguf-lens comparison',
    a: file(s.a),
    b: file(s.b),
    summary: s.rows.map((r) => ({ field: r.field, label: r.label, a: r.a ?? null, b: r.b ?? null, counts: r.counts, differs: r.differs })),
    metadata: m && {
      same: m.same,
      onlyA: m.onlyA.map(entryFacts),
      onlyB: m.onlyB.map(entryFacts),
      changed: m.changed.map((c) => ({ key: c.key, a: entryFacts(c.a), b: entryFacts(c.b), ...changeFacts(c) })),
    },
    metadataNotCompared: s.diff.metadataNotCompared ?? null,
    tensors: { onlyA: t.onlyA, onlyB: t.onlyB, shapeChanges: t.shapeChanges, typeChanges: t.typeChanges, transitions: t.transitions },
    quantMix: { a: s.a.summary.quantMix, b: s.b.summary.quantMix },
    numeric: {
      matching: t.matching.length,
      compared: t.matching.filter((x) => s.results.has(x.name)).length,
      tensors: t.matching.map((x) => {
        const r = s.results.get(x.name), head = { name: x.name, typeA: x.typeA, typeB: x.typeB, shape: x.shape };
        return r ? { ...head, compared: true, ...Object.fromEntries(METRICS.map((k) => [k, r[k]])) } : { ...head, compared: false };
      }),
    },
  };
}

// ----- Markdown -----
const cut = (s) => (s.length > MD_CHARS ? `${s.slice(0, MD_CHARS)}… (${s.length} chars)` : s);

function itemText(v) {
  if (v === null || v === undefined) return '(none)';
  if (typeof v === 'string') return cut(JSON.stringify(v));
  if (typeof v === 'object' && v.nested) return `[${v.itemType} × ${v.length}]`;
  return String(v);
}

function entryText(e) {
  if (e.type === 'array') return `array<${e.itemType}> × ${e.length}: ${e.preview.map(itemText).join(', ')}${e.length > e.preview.length ? ', …' : ''}`;
  return typeof e.value === 'string' ? cut(e.value) : String(e.value);
}

function itemsText(items) {
  if (!items || items.notCompared) return 'item types differ: items not compared';
  const where = `first at index ${items.firstIndex}: A ${itemText(items.a)} · B ${itemText(items.b)}`;
  return `${items.differing} of ${items.compared} common items differ; ${where}`;
}

function table(lines, head, rows) {
  if (!rows.length) { lines.push('none', ''); return; }
  lines.push(`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`);
  for (const r of rows) lines.push(`| ${r.map((c) => mdEscape(c)).join(' | ')} |`);
  lines.push('');
}

const num = (v) => (v === null ? '—' : typeof v === 'number' && !Number.isInteger(v) ? v.toPrecision(6) : String(v));

/** The metadata sections: `m` the diff as shown, `facts` comparisonObject's metadata. */
function metadataMarkdown(lines, m, facts) {
  lines.push(`## Metadata (${m.same} keys equal; arrays compared item by item)`, '', '### Only in A', '');
  const one = (e) => [e.key, entryText(e)];
  table(lines, ['key', 'value'], m.onlyA.map(one));
  lines.push('### Only in B', '');
  table(lines, ['key', 'value'], m.onlyB.map(one));
  lines.push('### Changed', '');
  table(lines, ['key', 'A', 'B', 'difference'], facts.changed.map((c, i) => [c.key, entryText(m.changed[i].a), entryText(m.changed[i].b),
    c.items ? itemsText(c.items) : c.firstDifferentChar !== undefined ? `first different character at ${c.firstDifferentChar}` : '']));
}

export function comparisonMarkdown(s) {
  const o = comparisonObject(s), m = s.diff.metadata, t = s.diff.tensors;
  const lines = [`# Comparison: ${mdEscape(s.a.label)} vs ${mdEscape(s.b.label)}`, '', `- A: ${mdEscape(s.a.label)}`, `- B: ${mdEscape(s.b.label)}`, '', '## Summary', ''];
  table(lines, ['field', 'A', 'B', 'differs'], s.rows.map((r) => [r.label, r.textA, r.textB, r.differs ? '≠' : '']));
  if (m) metadataMarkdown(lines, m, o.metadata);
  else lines.push('## Metadata', '', mdEscape(o.metadataNotCompared), '');
  lines.push('## Tensors', '', '### Only in A', '');
  const shape = (x) => x.join('×');
  table(lines, ['tensor', 'type', 'shape'], t.onlyA.map((x) => [x.name, x.type, shape(x.shape)]));
  lines.push('### Only in B', '');
  table(lines, ['tensor', 'type', 'shape'], t.onlyB.map((x) => [x.name, x.type, shape(x.shape)]));
  lines.push('### Shape changes', '');
  table(lines, ['tensor', 'A', 'B'], t.shapeChanges.map((x) => [x.name, shape(x.a), shape(x.b)]));
  lines.push('### Type changes', '');
  table(lines, ['tensor', 'A', 'B'], t.typeChanges.map((x) => [x.name, x.a, x.b]));
  lines.push('## Quant mix', '');
  const mixA = new Map(o.quantMix.a.map((q) => [q.type, q])), mixB = new Map(o.quantMix.b.map((q) => [q.type, q]));
  const mixCells = (q) => (q ? [String(q.tensors), String(q.bytes), `${(q.share * 100).toFixed(1)}%`] : ['—', '—', '—']);
  table(lines, ['type', 'A tensors', 'A bytes', 'A share', 'B tensors', 'B bytes', 'B share'],
    [...new Set([...mixA.keys(), ...mixB.keys()])].map((k) => [k, ...mixCells(mixA.get(k)), ...mixCells(mixB.get(k))]));
  lines.push(`## Values (${o.numeric.compared} of ${o.numeric.matching} matching tensors compared)`, '');
  table(lines, ['tensor', 'A', 'B', 'RMSE', 'max abs', 'mean abs', 'RMSE / RMS(a)', 'cosine', 'NaN / Inf mismatches'],
    o.numeric.tensors.map((x) => [x.name, x.typeA, x.typeB, ...(x.compared
      ? [num(x.rmse), num(x.maxAbs), num(x.meanAbs), num(x.relRmse), num(x.cosine), `${x.nanMismatch} / ${x.infMismatch}`]
      : ['not compared', '', '', '', '', ''])]));
  return lines.join('\n');
}
