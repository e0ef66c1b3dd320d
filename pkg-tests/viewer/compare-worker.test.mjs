// www/compare-worker.js without a browser: the row-chunked comparison reads every row once in
// bounded reads and gives the chunk size's answer; NaN / Inf pairs are counted, not summed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareTensor, diffModels, arrayItemsDiff } from '../../www/compare-worker.js';

const ROW = 64, ROWS = 1000;

function fakeModel(values, reads) {
  return {
    metadata: [],
    tensors: [{ name: 't', type: 'F32', shape: [ROW, ROWS], nElements: values.length }],
    metaRange: () => [],
    readRows: async (name, [a, b]) => { reads.push([a, b]); return values.slice(a * ROW, b * ROW); },
  };
}

function seeded(n, seed) {
  const v = new Float32Array(n);
  let s = seed;
  for (let i = 0; i < n; i++) { s = (s * 1103515245 + 12345) >>> 0; v[i] = (s / 2 ** 32 - 0.5) * 0.1; }
  return v;
}

test('chunked reads: every row once, bounded, same result as one read; f64 sums equal a direct computation', async () => {
  const a = seeded(ROW * ROWS, 1), b = seeded(ROW * ROWS, 2);
  const readsA = [], readsB = [];
  const small = await compareTensor(fakeModel(a, readsA), fakeModel(b, readsB), 't', { chunkElements: ROW * 7 + 5 });
  assert.ok(readsA.length > 100 && readsA.every(([x, y]) => (y - x) * ROW <= ROW * 7 + 5));
  assert.deepEqual(readsA.flatMap(([x, y]) => Array.from({ length: y - x }, (_, i) => x + i)), Array.from({ length: ROWS }, (_, i) => i));
  assert.deepEqual(readsA, readsB);
  const whole = await compareTensor(fakeModel(a, []), fakeModel(b, []), 't');
  assert.deepEqual(small, whole);
  let sq = 0, abs = 0, max = 0, aa = 0, bb = 0, ab = 0;
  for (let i = 0; i < a.length; i++) { const d = a[i] - b[i]; sq += d * d; abs += Math.abs(d); max = Math.max(max, Math.abs(d)); aa += a[i] * a[i]; bb += b[i] * b[i]; ab += a[i] * b[i]; }
  const n = a.length;
  assert.equal(whole.count, n);
  assert.equal(whole.rmse, Math.sqrt(sq / n));
  assert.equal(whole.maxAbs, max);
  assert.equal(whole.meanAbs, abs / n);
  assert.equal(whole.relRmse, Math.sqrt(sq / n) / Math.sqrt(aa / n));
  assert.equal(whole.cosine, ab / Math.sqrt(aa * bb));
});

test('NaN and Inf: mismatches counted, pairs left out of the sums', async () => {
  const a = new Float32Array(ROW * ROWS).fill(1), b = new Float32Array(ROW * ROWS).fill(1);
  a[0] = NaN; // NaN in A only
  b[1] = NaN; // NaN in B only
  a[2] = NaN; b[2] = NaN; // both NaN: no mismatch
  a[3] = Infinity; b[3] = Infinity; // the same Inf: no mismatch
  a[4] = Infinity; b[4] = -Infinity; // opposite Infs
  b[5] = Infinity; // Inf in B only
  a[6] = NaN; b[6] = Infinity; // NaN against Inf: both kinds
  b[7] = 3; // one finite difference of 2
  const r = await compareTensor(fakeModel(a, []), fakeModel(b, []), 't', { chunkElements: 1000 });
  assert.equal(r.count, ROW * ROWS - 7);
  assert.equal(r.nanMismatch, 3);
  assert.equal(r.infMismatch, 3);
  assert.equal(r.maxAbs, 2);
  assert.equal(r.meanAbs, 2 / r.count);
});

test('diffModels: tensors and metadata only in one, changed, shape and type changes', () => {
  const model = (metadata, tensors) => ({ metadata, tensors, metaRange: (k, s, e) => [1, 2, 3].slice(s, e), metaPacked: () => ({ bytes: new Uint8Array([1, 0, 2, 0, 3, 0]), ends: null }) });
  const A = model([{ key: 'x', type: 'u32', value: 1 }, { key: 'y', type: 'string', value: 's' }, { key: 'arr', type: 'array', itemType: 'u32', length: 3 }],
    [{ name: 'p', type: 'Q4_K', shape: [4, 2], nElements: 8 }, { name: 'q', type: 'F32', shape: [4], nElements: 4 }, { name: 'r', type: 'F16', shape: [2], nElements: 2 }]);
  const B = model([{ key: 'x', type: 'u32', value: 2 }, { key: 'z', type: 'string', value: 't' }, { key: 'arr', type: 'array', itemType: 'u32', length: 3 }],
    [{ name: 'p', type: 'Q8_0', shape: [4, 2], nElements: 8 }, { name: 'q', type: 'F32', shape: [8], nElements: 8 }, { name: 's', type: 'F16', shape: [2], nElements: 2 }]);
  const d = diffModels(A, B);
  assert.deepEqual(d.metadata.onlyA.map((e) => e.key), ['y']);
  assert.deepEqual(d.metadata.onlyB.map((e) => e.key), ['z']);
  assert.deepEqual(d.metadata.changed.map((e) => e.key), ['x']);
  assert.equal(d.metadata.same, 1);
  assert.deepEqual(d.tensors.onlyA.map((t) => t.name), ['r']);
  assert.deepEqual(d.tensors.onlyB.map((t) => t.name), ['s']);
  assert.deepEqual(d.tensors.shapeChanges, [{ name: 'q', a: [4], b: [8] }]);
  assert.deepEqual(d.tensors.typeChanges, [{ name: 'p', a: 'Q4_K', b: 'Q8_0' }]);
  assert.deepEqual(d.tensors.matching.map((t) => t.name), ['p']);
});

// Packed arrays as the package gives them: strings as bytes with end offsets, numbers fixed-size.
function stringsModel(items) {
  const enc = items.map((t) => new TextEncoder().encode(t));
  const bytes = new Uint8Array(enc.reduce((n, e) => n + e.length, 0));
  const ends = new Uint32Array(items.length);
  let at = 0;
  enc.forEach((e, i) => { bytes.set(e, at); at += e.length; ends[i] = at; });
  return { metaPacked: () => ({ bytes, ends }), metaRange: (k, s, e) => items.slice(s, e) };
}

test('arrayItemsDiff: every item compared, not just the first; the first differing index and its items', () => {
  const base = Array.from({ length: 300000 }, (_, i) => `t${i}`);
  const other = base.slice();
  other[150000] = 't150000x'; // longer
  other[200000] = 'T200000'; // same length
  const t0 = performance.now();
  const r = arrayItemsDiff(stringsModel(base), stringsModel(other), 'k', base.length, other.length);
  assert.ok(performance.now() - t0 < 1000);
  assert.deepEqual(r, { compared: 300000, differing: 2, firstIndex: 150000, a: 't150000', b: 't150000x' });
  assert.deepEqual(arrayItemsDiff(stringsModel(base), stringsModel(base), 'k', base.length, base.length), { compared: 300000, differing: 0, firstIndex: null });
  // equal common items, B longer: the first difference is past A's end
  assert.deepEqual(arrayItemsDiff(stringsModel(['a', 'b']), stringsModel(['a', 'b', 'c']), 'k', 2, 3), { compared: 2, differing: 0, firstIndex: 2, a: null, b: 'c' });
  // fixed-size items (u16 here): the stride is bytes / length
  const nums = (v) => ({ metaPacked: () => ({ bytes: new Uint8Array(new Uint16Array(v).buffer), ends: null }), metaRange: (k, s, e) => v.slice(s, e) });
  assert.deepEqual(arrayItemsDiff(nums([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), nums([1, 2, 3, 4, 5, 6, 7, 8, 9, 11]), 'k', 10, 10), { compared: 10, differing: 1, firstIndex: 9, a: 10, b: 11 });
});
