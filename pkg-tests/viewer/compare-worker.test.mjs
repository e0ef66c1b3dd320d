// www/compare-worker.js in Node, on the built site (compare-worker.js → pkg/, the npm
// package): the differences and metrics are the core's (src/compare.rs through wasm), checked
// against gguf-py + numpy (make_expected_compare.py), never against gguf-lens.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildSite, SITE, ROOT, FIXTURES, readJson } from './helpers.mjs';

buildSite();
const site = (f) => pathToFileURL(path.join(SITE, f)).href;
const { diffModels, compareTensor } = await import(site('compare-worker.js'));
const pkg = await import(site('pkg/index.js'));

const bytes = (p) => { const b = readFileSync(p); return b.buffer.slice(b.byteOffset, b.byteOffset + b.length); };
const openPair = (a, b) => Promise.all([pkg.open(bytes(a)), pkg.open(bytes(b))]);
const close = (a, b, rel) => Math.abs(a - b) <= rel * Math.max(Math.abs(a), Math.abs(b), 1e-30);
const METRICS = [['rmse', 'rmse'], ['maxAbs', 'max_abs'], ['meanAbs', 'mean_abs'], ['relRmse', 'rel_rmse'], ['cosine', 'cosine']];

function checkMetrics(got, want, what) {
  assert.equal(got.count, want.count, `${what} count`);
  assert.equal(got.nanMismatch, want.nan_mismatch, `${what} NaN mismatches`);
  assert.equal(got.infMismatch, want.inf_mismatch, `${what} Inf mismatches`);
  for (const [k, o] of METRICS) {
    if (want[o] === null) assert.equal(got[k], null, `${what} ${k}`);
    else assert.ok(close(got[k], want[o], 1e-9) || Math.abs(got[k] - want[o]) < 1e-15, `${what} ${k}: ${got[k]} vs ${want[o]}`);
  }
}

test('diffModels: the arrays pair, every list and array difference as gguf-py finds it', async () => {
  const want = readJson(path.join(FIXTURES, 'expected-compare-arrays.json'));
  const [a, b] = await openPair(path.join(FIXTURES, 'arrays-a.gguf'), path.join(FIXTURES, 'arrays-b.gguf'));
  const d = await diffModels(a, b);
  assert.deepEqual(d.metadata.onlyA.map((e) => e.key), want.metadata.only_a);
  assert.deepEqual(d.metadata.onlyB.map((e) => e.key), want.metadata.only_b);
  assert.deepEqual(d.metadata.changed.map((c) => c.key), want.metadata.changed);
  const changed = Object.fromEntries(d.metadata.changed.map((c) => [c.key, c]));
  for (const [key, w] of Object.entries(want.metadata.arrays)) {
    const it = changed[key].items;
    const item = (v) => (typeof v === 'bigint' ? String(v) : v);
    assert.deepEqual({ compared: it.compared, differing: it.differing, firstIndex: it.firstIndex, a: item(it.a), b: item(it.b) },
      { compared: w.compared, differing: w.differing, firstIndex: w.first_index, a: w.a, b: w.b }, key);
    assert.deepEqual([changed[key].a.length, changed[key].b.length], [w.length_a, w.length_b], key);
  }
  for (const key of want.metadata.retyped_arrays) assert.equal(changed[key].items, null, key);
  assert.deepEqual(d.tensors.onlyA.map((t) => t.name), want.tensors.only_a);
  assert.deepEqual(d.tensors.onlyB.map((t) => t.name), want.tensors.only_b);
  assert.deepEqual(d.tensors.matching.map((t) => t.name), Object.keys(want.numeric));
  const rows = Object.fromEntries(d.summary.map((f) => [f.name, f]));
  assert.deepEqual([rows.context_length.a, rows.context_length.b, rows.context_length.differs], [want.a.summary['context-length'], want.b.summary['context-length'], true]);
  assert.deepEqual([rows.file_size.a, rows.file_size.b], [want.a.summary['file-size'], want.b.summary['file-size']]);
});

test('diffModels: the sample pair, type changes and their transitions', async () => {
  const want = readJson(path.join(FIXTURES, 'expected-compare.json'));
  const [a, b] = await openPair(path.join(ROOT, want.a.path), path.join(ROOT, want.b.path));
  const d = await diffModels(a, b);
  assert.deepEqual(d.tensors.typeChanges.map((c) => [c.name, c.a, c.b]), want.tensors.type_changes);
  const counts = {};
  for (const [, x, y] of want.tensors.type_changes) counts[`${x} → ${y}`] = (counts[`${x} → ${y}`] ?? 0) + 1;
  assert.deepEqual(Object.fromEntries(d.tensors.transitions.map((t) => [`${t.a} → ${t.b}`, t.tensors])), counts);
  assert.equal(d.metadata.same + d.metadata.changed.length + d.metadata.onlyA.length, a.metadata.length);
});

test('compareTensor: row chunks of any size give numpy\'s metrics; every row read once, progress in rows', async () => {
  const want = readJson(path.join(FIXTURES, 'expected-compare.json'));
  const [a, b] = await openPair(path.join(ROOT, want.a.path), path.join(ROOT, want.b.path));
  const name = 'token_embd.weight';
  const whole = await compareTensor(a, b, name);
  assert.equal(whole.name, name);
  checkMetrics(whole, want.numeric[name], 'default chunks');
  // the package directly, tiny chunks (3 rows of 64 + 5 values: 3 rows per read)
  const fa = await pkg.open(bytes(path.join(ROOT, want.a.path))), fb = await pkg.open(bytes(path.join(ROOT, want.b.path)));
  const t = fa.tensor(name);
  const progress = [];
  const small = await pkg.compareTensor(fa, fb, name, { chunkElements: t.rowLength * 3 + 5, onProgress: (p) => progress.push(p.loaded) });
  checkMetrics(small, want.numeric[name], 'small chunks');
  assert.equal(small.elements, t.nElements);
  assert.deepEqual(progress, Array.from({ length: Math.ceil(t.nRows / 3) }, (_, i) => Math.min(t.nRows, 3 * (i + 1))));
  await assert.rejects(pkg.compareTensor(fa, fb, 'output_norm.weight-missing'), /no tensor named/);
  const abort = new AbortController();
  abort.abort();
  await assert.rejects(pkg.compareTensor(fa, fb, name, { signal: abort.signal }), (e) => e.name === 'AbortError');
});

test('compareTensor edge cases: zero tensors and NaN / Inf pairs as the core defines them (numpy\'s numbers)', async () => {
  const want = readJson(path.join(FIXTURES, 'expected-compare-edges.json'));
  const [a, b] = await openPair(path.join(FIXTURES, 'edges-a.gguf'), path.join(FIXTURES, 'edges-b.gguf'));
  for (const [name, w] of Object.entries(want.numeric)) checkMetrics(await compareTensor(a, b, name), w, name);
  const zeros = await compareTensor(a, b, 'zeros');
  assert.deepEqual([zeros.cosine, zeros.relRmse, zeros.identical], [1, 0, true]);
  const nonfinite = await compareTensor(a, b, 'nonfinite');
  assert.deepEqual([nonfinite.elements, nonfinite.count, nonfinite.rmse, nonfinite.identical], [32, 0, null, false]);
});
