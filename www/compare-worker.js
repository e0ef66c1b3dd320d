// Worker side of the Compare panel: the differences between two open models (metadata keys,
// arrays compared in full, tensors, quant mix) and the numeric comparison of one tensor read
// from both. Models follow the contract in source.js; nothing here touches the package directly.

const PREVIEW = 8; // array items sent with each entry, for display
const CHUNK_ELEMENTS = 1 << 20; // per file and read: bounded memory whatever the tensor's size

function plainItem(v) {
  if (v === null || typeof v !== 'object') return v;
  if (typeof v.len === 'number' || typeof v.len === 'bigint') return { nested: true, itemType: v.itemType ?? '?', length: Number(v.len) };
  return String(v);
}

/** One metadata entry as sent to the page: scalars with their value, arrays with a preview. */
function entryOf(m, e) {
  if (e.type !== 'array') return { key: e.key, type: e.type, value: e.value };
  return { key: e.key, type: 'array', itemType: e.itemType, length: e.length, preview: m.metaRange(e.key, 0, Math.min(e.length, PREVIEW)).map(plainItem) };
}

/** Whether items i of two packed arrays ({bytes, ends}, ends null: fixed `size` bytes) differ. */
function itemDiffers(pa, pb, i, size) {
  const sa = pa.ends ? (i ? pa.ends[i - 1] : 0) : i * size, ea = pa.ends ? pa.ends[i] : sa + size;
  const sb = pb.ends ? (i ? pb.ends[i - 1] : 0) : i * size, eb = pb.ends ? pb.ends[i] : sb + size;
  if (ea - sa !== eb - sb) return true;
  const x = pa.bytes, y = pb.bytes;
  for (let k = 0; k < ea - sa; k++) if (x[sa + k] !== y[sb + k]) return true;
  return false;
}

/**
 * Two arrays of one item type compared item by item over their common length, on bytes
 * (metaPacked): no JS value per item, so a 256k-token vocabulary takes milliseconds. The first
 * differing index is past the shorter array when the common items are all equal.
 */
export function arrayItemsDiff(a, b, key, lenA, lenB) {
  const pa = a.metaPacked(key), pb = b.metaPacked(key);
  const compared = Math.min(lenA, lenB);
  const size = pa.ends ? 0 : pa.bytes.length / Math.max(1, lenA);
  let differing = 0, first = -1;
  for (let i = 0; i < compared; i++) {
    if (itemDiffers(pa, pb, i, size)) { differing++; if (first < 0) first = i; }
  }
  if (first < 0 && lenA !== lenB) first = compared;
  if (first < 0) return { compared, differing, firstIndex: null };
  const at = (m, len) => (first < len ? plainItem(m.metaRange(key, first, first + 1)[0]) : null);
  return { compared, differing, firstIndex: first, a: at(a, lenA), b: at(b, lenB) };
}

/** Scalars by value; arrays by item type, length and every item (`items` says where they part). */
function changedEntry(a, b, key, ea, eb) {
  const x = entryOf(a, ea), y = entryOf(b, eb);
  if (x.type !== y.type) return { key, a: x, b: y };
  if (x.type !== 'array') return Object.is(x.value, y.value) ? null : { key, a: x, b: y };
  if (x.itemType !== y.itemType) return { key, a: x, b: y, items: null };
  let items;
  try { items = arrayItemsDiff(a, b, key, x.length, y.length); } catch (err) { return { key, a: x, b: y, items: { error: String(err.message || err) } }; }
  return items.firstIndex === null ? null : { key, a: x, b: y, items };
}

function metadataDiff(a, b) {
  const ea = new Map(a.metadata.map((e) => [e.key, e]));
  const eb = new Map(b.metadata.map((e) => [e.key, e]));
  const onlyA = [], onlyB = [], changed = [];
  for (const [k, e] of ea) {
    if (!eb.has(k)) { onlyA.push(entryOf(a, e)); continue; }
    const c = changedEntry(a, b, k, e, eb.get(k));
    if (c) changed.push(c);
  }
  for (const [k, e] of eb) if (!ea.has(k)) onlyB.push(entryOf(b, e));
  return { onlyA, onlyB, changed, same: ea.size - onlyA.length - changed.length };
}

const sameShape = (x, y) => x.shape.length === y.shape.length && x.shape.every((d, i) => d === y.shape[i]);

function tensorDiff(a, b) {
  const ta = new Map(a.tensors.map((t) => [t.name, t]));
  const tb = new Map(b.tensors.map((t) => [t.name, t]));
  const onlyA = [], onlyB = [], shapeChanges = [], typeChanges = [], matching = [];
  for (const [n, x] of ta) {
    const y = tb.get(n);
    if (!y) { onlyA.push({ name: n, type: x.type, shape: x.shape }); continue; }
    if (!sameShape(x, y)) shapeChanges.push({ name: n, a: x.shape, b: y.shape });
    else matching.push({ name: n, typeA: x.type, typeB: y.type, shape: x.shape, nElements: x.nElements });
    if (x.type !== y.type) typeChanges.push({ name: n, a: x.type, b: y.type });
  }
  for (const [n, y] of tb) if (!ta.has(n)) onlyB.push({ name: n, type: y.type, shape: y.shape });
  return { onlyA, onlyB, shapeChanges, typeChanges, matching };
}

/** Everything the panel shows without reading tensor data. */
export function diffModels(a, b) {
  return { metadata: metadataDiff(a, b), tensors: tensorDiff(a, b) };
}

/**
 * Dequantizes `name` from both models in row chunks and compares them, in f64 accumulators:
 * over the pairs where both values are finite, RMSE, max and mean |a−b|, RMSE / RMS(a) and the
 * cosine similarity; over all pairs, NaN mismatches (NaN in one only) and Inf mismatches (an
 * Inf in either, a !== b). Progress is reported in rows. Each read is at most `chunkElements`
 * values per file (or one row, when a row is longer).
 */
export async function compareTensor(a, b, name, { signal, onProgress, chunkElements = CHUNK_ELEMENTS } = {}) {
  const x = a.tensors.find((t) => t.name === name), y = b.tensors.find((t) => t.name === name);
  if (!x || !y) throw new Error(`tensor ${name} is not in both files`);
  if (!sameShape(x, y)) throw new Error(`tensor ${name} has another shape in each file`);
  const rowLen = x.shape[0] || 1;
  const nRows = Math.max(1, x.nElements / rowLen);
  const step = Math.max(1, Math.floor(chunkElements / rowLen));
  let n = 0, sumSq = 0, sumAbs = 0, maxAbs = 0, sumAA = 0, sumBB = 0, sumAB = 0, nanMismatch = 0, infMismatch = 0;
  for (let r = 0; r < nRows; r += step) {
    const rows = [r, Math.min(nRows, r + step)];
    const [va, vb] = await Promise.all([a.readRows(name, rows, { signal }), b.readRows(name, rows, { signal })]);
    if (signal && signal.aborted) throw new DOMException('cancelled', 'AbortError');
    if (va.length !== vb.length) throw new Error(`tensor ${name}: ${va.length} values in A, ${vb.length} in B`);
    for (let i = 0; i < va.length; i++) {
      const p = va[i], q = vb[i];
      if (Number.isFinite(p) && Number.isFinite(q)) {
        const d = p - q, ad = Math.abs(d);
        n++; sumSq += d * d; sumAbs += ad; if (ad > maxAbs) maxAbs = ad;
        sumAA += p * p; sumBB += q * q; sumAB += p * q;
        continue;
      }
      if (Number.isNaN(p) !== Number.isNaN(q)) nanMismatch++;
      if ((p === Infinity || p === -Infinity || q === Infinity || q === -Infinity) && p !== q) infMismatch++;
    }
    if (onProgress) onProgress({ loaded: rows[1], total: nRows });
  }
  const rmse = n ? Math.sqrt(sumSq / n) : NaN;
  const rmsA = n ? Math.sqrt(sumAA / n) : NaN;
  return {
    name, count: n, rmse, maxAbs: n ? maxAbs : NaN, meanAbs: n ? sumAbs / n : NaN,
    relRmse: rmse / rmsA, cosine: sumAB / Math.sqrt(sumAA * sumBB), nanMismatch, infMismatch,
  };
}
