// Worker side of the Compare panel. What differs and the numeric metrics are the core's
// (src/compare.rs through the package, as `gguf-lens diff` finds them); this module only adds what
// the page shows beside them: metadata values with array previews, and the items at the first
// differing index of two arrays. Models are the package's (GgufModel or SafetensorsModel).
const engine = () => import('./pkg/index.js');

const PREVIEW = 8; // array items sent with each entry, for display

function plainItem(v) {
  if (v === null || typeof v !== 'object') return v;
  if (typeof v.len === 'number' || typeof v.len === 'bigint') return { nested: true, itemType: v.itemType ?? '?', length: Number(v.len) };
  return String(v);
}

/** One metadata entry as sent to the page: scalars with their value, arrays with a preview. */
function entryOf(e) {
  if (e.type !== 'array') return { key: e.key, type: e.type, value: e.value };
  const len = Number(e.len);
  return { key: e.key, type: 'array', itemType: e.itemType, length: len, preview: e.items(0, Math.min(len, PREVIEW)).map(plainItem) };
}

/** Item `i` of array entry `e`, or null past its end. */
const itemAt = (e, i, len) => (i < len ? plainItem(e.items(i, i + 1)[0]) : null);

/**
 * A changed key (the core's KeyChange) with both values; for two arrays of one item type,
 * `items`: {compared (the common length), differing, firstIndex, a, b (the items there, null past
 * an array's end)}; `items` null when the item types differ.
 */
function changedEntry(c, ea, eb) {
  const x = entryOf(ea), y = entryOf(eb);
  const arr = c.array;
  if (!arr) return { key: c.key, a: x, b: y };
  if (arr.differingItems === null) return { key: c.key, a: x, b: y, items: null };
  const first = arr.firstDifference;
  return {
    key: c.key, a: x, b: y,
    items: { compared: Math.min(arr.lenA, arr.lenB), differing: arr.differingItems, firstIndex: first, a: itemAt(ea, first, arr.lenA), b: itemAt(eb, first, arr.lenB) },
  };
}

/** Everything the panel shows without reading tensor data: the core's diff with values attached. */
export async function diffModels(a, b) {
  const d = await (await engine()).compareModels(a, b);
  const ea = new Map(a.metadata.map((e) => [e.key, e])), eb = new Map(b.metadata.map((e) => [e.key, e]));
  // null across formats (the core does not compare them; metadataNotCompared says why)
  const metadata = d.metadata && {
    onlyA: d.metadata.onlyA.map((k) => entryOf(ea.get(k))),
    onlyB: d.metadata.onlyB.map((k) => entryOf(eb.get(k))),
    changed: d.metadata.changed.map((c) => changedEntry(c, ea.get(c.key), eb.get(c.key))),
    same: d.metadata.same,
  };
  return { summary: d.summary, metadata, metadataNotCompared: d.metadataNotCompared, tensors: d.tensors };
}

/** The diff report as `gguf-lens diff --format <format>` renders it (the package's compareReport:
 * one Rust renderer), with the tensors compared so far (`values`: [name, metrics] pairs). */
export async function diffReport(a, b, { format, paths, values }) {
  return (await engine()).compareReport(a, b, { format, paths, values });
}

/** The core's metrics of tensor `name` in both (ValueMetrics: nulls where a metric is undefined). */
export async function compareTensor(a, b, name, ctx = {}) {
  return { name, ...(await (await engine()).compareTensor(a, b, name, { signal: ctx.signal, onProgress: ctx.onProgress })) };
}
