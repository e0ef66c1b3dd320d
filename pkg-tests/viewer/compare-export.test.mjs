// Compare panel: arrays compared in full and the JSON / Markdown exports (the package's
// compareReport: the document and Markdown of `gguf-lens diff --format json|markdown`, whose
// equality with the CLI pkg-tests/compare_report.test.mjs checks). Expected facts come
// from gguf-py + numpy (make_expected_compare.py: expected-compare.json for the sample pair,
// expected-compare-arrays.json for arrays-a/b.gguf), never from gguf-lens. The hostile pair is
// written here byte by byte; its expected facts are how it was built.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startServer, launch, newPage, waitLoaded, readJson, exported, FIXTURES, ARTIFACTS } from './helpers.mjs';

const sample = readJson(path.join(FIXTURES, 'expected-compare.json'));
const arrays = readJson(path.join(FIXTURES, 'expected-compare-arrays.json'));
let server, browser;
before(async () => { server = await startServer(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

const close = (a, b, rel) => Math.abs(a - b) <= rel * Math.max(Math.abs(a), Math.abs(b), 1e-30);

async function openPair(page, a, b) {
  await page.goto(`${server.url}?url=${encodeURIComponent(a)}&compare=${encodeURIComponent(b)}`);
  await page.waitForSelector('#panel-compare:not([hidden]) #cmp-numeric tbody tr', { timeout: 20000 });
}

/** The panel's line under a changed array: {differing, firstIndex} or {notCompared}. */
const itemsLines = (page) => page.$$eval('[data-diff="meta-changed"] li', (lis) => Object.fromEntries(lis.map((li) => {
  const d = li.querySelector('[data-differing], [data-not-compared]');
  return [li.dataset.key, d ? { ...d.dataset, text: d.textContent } : null];
})));

/** Both files open, one tensor compared, then Export JSON: the download's name and parsed contents. */
async function exportAfterOne(page, a, b, tensor) {
  await openPair(page, a, b);
  await page.click(`#cmp-numeric tr[data-tensor="${tensor}"] button`);
  await page.waitForSelector(`#cmp-numeric tr[data-tensor="${tensor}"][data-done]`);
  const { name, text } = await exported(page, '#cmp-export-json');
  return { name, text, j: JSON.parse(text) };
}

function checkMetrics(got, want) {
  assert.equal(got.count, want.count);
  assert.equal(got.nan_mismatch, want.nan_mismatch);
  assert.equal(got.inf_mismatch, want.inf_mismatch);
  for (const k of ['rmse', 'max_abs', 'mean_abs', 'rel_rmse', 'cosine']) assert.ok(close(got[k], want[k], 1e-9), `${k}: ${got[k]} vs ${want[k]}`);
}

function checkMix(got, want) {
  assert.deepEqual(Object.fromEntries(got.map((q) => [q.type, { tensors: q.tensors, bytes: q.bytes }])), want);
}

test('arrays differing past item 8: the panel shows the differing count and first index gguf-py finds', async () => {
  const { page, log } = await newPage(browser);
  await openPair(page, '/fixtures/arrays-a.gguf', '/fixtures/arrays-b.gguf');
  assert.deepEqual(await page.$$eval('[data-diff="meta-changed"] li', (lis) => lis.map((li) => li.dataset.key)), arrays.metadata.changed);
  const lines = await itemsLines(page);
  for (const [key, want] of Object.entries(arrays.metadata.arrays)) {
    assert.equal(Number(lines[key].differing), want.differing, `${key} differing`);
    assert.equal(Number(lines[key].firstIndex), want.first_index, `${key} first index`);
  }
  assert.match(lines['tokenizer.ggml.tokens'].text, /^3 of 2,000 common items differ; first at index 1,000: A tok1000 · B TOK1000$/);
  for (const key of arrays.metadata.retyped_arrays) assert.equal(lines[key].notCompared, 'true', key);
  assert.match(await page.$eval('#cmp-meta', (e) => e.textContent), /Arrays are compared in full, item by item/);
  assert.deepEqual(log.errors, []);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(ARTIFACTS, 'compare-arrays.png'), fullPage: true });
});

test('Export JSON and Markdown of the arrays pair: every fact equals gguf-py', async () => {
  const { page, log } = await newPage(browser);
  const { name, text, j } = await exportAfterOne(page, '/fixtures/arrays-a.gguf', '/fixtures/arrays-b.gguf', 'w');
  assert.equal(name, 'arrays-a-vs-arrays-b.compare.json');
  assert.match(j.a.path, /arrays-a\.gguf$/);
  assert.match(j.b.path, /arrays-b\.gguf$/);
  const rows = Object.fromEntries(j.summary.map((r) => [r.field, r]));
  for (const [f, k] of [['name', 'name'], ['context_length', 'context-length'], ['block_count', 'block-count'], ['vocab_size', 'vocab-size'], ['file_size', 'file-size'], ['parameters', 'parameter-count']]) {
    assert.equal(String(rows[f].a), String(arrays.a.summary[k]), `${f} A`);
    assert.equal(String(rows[f].b), String(arrays.b.summary[k]), `${f} B`);
    assert.equal(rows[f].differs, arrays.a.summary[k] !== arrays.b.summary[k], `${f} flagged`);
  }
  assert.deepEqual(j.metadata.only_a.map((e) => e.key), arrays.metadata.only_a);
  assert.deepEqual(j.metadata.only_b.map((e) => e.key), arrays.metadata.only_b);
  assert.deepEqual(j.metadata.changed.map((c) => c.key), arrays.metadata.changed);
  const changed = Object.fromEntries(j.metadata.changed.map((c) => [c.key, c]));
  for (const [key, want] of Object.entries(arrays.metadata.arrays)) {
    const c = changed[key];
    assert.equal(c.len_a, want.length_a, `${key} length A`);
    assert.equal(c.len_b, want.length_b, `${key} length B`);
    assert.equal(Math.min(c.len_a, c.len_b), want.compared, `${key} compared`);
    assert.deepEqual({ differing: c.differing_items, firstIndex: c.first_difference }, { differing: want.differing, firstIndex: want.first_index }, key);
    // 64-bit integers (the oracle's strings) are exact in the file, past what JSON.parse keeps
    if (typeof want.a === 'string' && /^\d+$/.test(want.a)) assert.ok(text.includes(`"item_a":${want.a},"item_b":${want.b}`), key);
    else assert.deepEqual([c.item_a, c.item_b], [want.a, want.b], key);
  }
  for (const key of arrays.metadata.retyped_arrays) assert.equal(changed[key].differing_items, null, key);
  assert.deepEqual([changed['general.name'].a, changed['general.name'].b], ['arrays A', 'arrays B']);
  assert.deepEqual(j.tensors.only_a.map((t) => t.name), arrays.tensors.only_a);
  assert.deepEqual(j.tensors.only_b.map((t) => t.name), arrays.tensors.only_b);
  checkMix(j.a.quant_mix, arrays.a.mix);
  checkMix(j.b.quant_mix, arrays.b.mix);
  assert.deepEqual(j.values.map((v) => v.name), ['w']);
  checkMetrics(j.values[0], arrays.numeric.w);

  const md = await exported(page, '#cmp-export-md');
  assert.equal(md.name, 'arrays-a-vs-arrays-b.compare.md');
  assert.match(md.text, /^# gguf-lens diff: files differ$/m);
  assert.match(md.text, /^- A: .*arrays-a\.gguf \(gguf\)$/m);
  assert.match(md.text, /^\| context\\_length \| 64 \| 128 \| ≠ \|$/m);
  assert.match(md.text, /^\| block\\_count \| 1 \| 1 \|  \|$/m);
  assert.ok(md.text.includes('items differing: 3, first at index 1000: "tok1000" -> "TOK1000" |'));
  assert.ok(md.text.includes('items differing: 0, first at index 600: - -> "x y" |'));
  assert.ok(md.text.includes(`items differing: 1, first at index 50: ${arrays.metadata.arrays['test.u64s'].a} -> ${arrays.metadata.arrays['test.u64s'].b} |`));
  // item types differ: lengths and types only, no item compared
  assert.match(md.text, /^\| test\.retyped \| \w+\\\[\d+\] -> \w+\\\[\d+\] \|$/m);
  assert.match(md.text, /^\| only\\_a \| F32 \| 8 \|$/m);
  assert.match(md.text, /^## Values \(1 of 1 matching tensors compared;/m);
  // 2,000 tokens are abbreviated to their first items, never dumped
  assert.ok(!md.text.includes('tok1500'));
  assert.deepEqual(log.errors, []);
});

test('Export JSON of the sample pair after one tensor: compared metrics equal numpy, only that tensor listed', async () => {
  const { page, log } = await newPage(browser);
  const { name, j } = await exportAfterOne(page, 'sample/tiny-llama-Q4_K_M.gguf', '/sample-fixtures/tiny-llama-Q8_0.gguf', 'blk.0.attn_v.weight');
  assert.equal(name, 'tiny-llama-Q4_K_M-vs-tiny-llama-Q8_0.compare.json');
  assert.deepEqual(j.metadata.changed.map((c) => c.key), sample.metadata.changed);
  assert.deepEqual(j.tensors.type_changes.map((c) => [c.name, c.a, c.b]), sample.tensors.type_changes);
  assert.deepEqual(j.tensors.shape_changes.map((c) => c.name), sample.tensors.shape_changes.map((c) => c[0]));
  checkMix(j.a.quant_mix, sample.a.mix);
  checkMix(j.b.quant_mix, sample.b.mix);
  assert.equal(j.summary.find((r) => r.field === 'parameters').a, sample.a.summary['parameter-count']);
  assert.equal(j.summary.find((r) => r.field === 'file_type').differs, true);
  assert.equal(j.tensors.matching, Object.keys(sample.numeric).length);
  // only the tensors compared are listed, as `gguf-lens diff --tensor`
  assert.deepEqual(j.values.map((t) => t.name), ['blk.0.attn_v.weight']);
  checkMetrics(j.values[0], sample.numeric['blk.0.attn_v.weight']);
  const md = await exported(page, '#cmp-export-md');
  assert.match(md.text, new RegExp(`^## Values \\(1 of ${Object.keys(sample.numeric).length} matching tensors compared;`, 'm'));
  assert.match(md.text, /^\| blk\.0\.attn\\_v\.weight \| \S+ \| \S+ \| \d/m);
  assert.deepEqual(log.errors, []);
});

// ----- a hostile pair, written here: big arrays, item types that differ, nested arrays -----
function gguf(kvs) {
  const parts = [];
  const u32 = (v) => { const b = Buffer.alloc(4); b.writeUInt32LE(v); parts.push(b); };
  const u64 = (v) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); parts.push(b); };
  const str = (s) => { const b = Buffer.from(s, 'utf8'); u64(b.length); parts.push(b); };
  const T = { u8: 0, u32: 4, f32: 6, string: 8, array: 9 };
  const value = (type, v) => {
    if (type === 'u8') parts.push(Buffer.from([v]));
    else if (type === 'u32') u32(v);
    else if (type === 'string') str(v);
    else {
      u32(T[v.itemType]); u64(v.items.length);
      if (v.items instanceof Uint8Array) parts.push(Buffer.from(v.items)); else for (const x of v.items) value(v.itemType, x);
    }
  };
  parts.push(Buffer.from('GGUF'));
  u32(3); u64(1); u64(kvs.length);
  for (const [key, type, v] of kvs) { str(key); u32(T[type]); value(type, v); }
  str('w'); u32(1); u64(4); u32(0); u64(0);
  const head = Buffer.concat(parts);
  const pad = Buffer.alloc((32 - (head.length % 32)) % 32);
  return Buffer.concat([head, pad, Buffer.from(new Float32Array([1, 2, 3, 4]).buffer)]);
}

test('hostile arrays (256k tokens, 4M bytes, other item types, nested) compare quickly without hanging', async () => {
  const N = 256000, M = 4000000;
  const tokens = Array.from({ length: N }, (_, i) => `t${i}`);
  const tokensB = tokens.slice();
  tokensB[200000] = 'T200000';
  tokensB[N - 1] = 'changed at the end';
  const arr = (itemType, items) => ({ itemType, items });
  const bytesA = new Uint8Array(M), bytesB = new Uint8Array(M);
  bytesB[M - 1] = 1;
  const file = (side) => gguf([
    ['general.architecture', 'string', 'llama'],
    ['general.name', 'string', `hostile ${side}`],
    ['tokenizer.ggml.tokens', 'array', arr('string', side === 'a' ? tokens : tokensB)],
    ['test.bytes', 'array', arr('u8', side === 'a' ? bytesA : bytesB)],
    ['test.retyped', 'array', side === 'a' ? arr('u8', new Uint8Array(1000000)) : arr('string', ['x', 'y'])],
    ['test.nested', 'array', arr('array', [arr('u32', [1, 2]), arr('u32', side === 'a' ? [3, 4] : [3, 5])])],
  ]);
  const pa = path.join(ARTIFACTS, 'hostile-a.gguf'), pb = path.join(ARTIFACTS, 'hostile-b.gguf');
  await writeFile(pa, file('a'));
  await writeFile(pb, file('b'));
  const { page, log } = await newPage(browser);
  await page.goto(server.url);
  await waitLoaded(page, 'gguf-lens tiny sample');
  await page.setInputFiles('#file-input', pa);
  await waitLoaded(page, 'hostile a');
  await page.click('#compare-start');
  const t0 = Date.now();
  await page.setInputFiles('#compare-file-input', pb);
  await page.waitForSelector('#panel-compare:not([hidden]) #cmp-numeric tbody tr', { timeout: 20000 });
  const ms = Date.now() - t0;
  console.log(`hostile pair: opened B and compared every array in ${ms} ms`);
  assert.ok(ms < 5000, `${ms} ms`);
  const lines = await itemsLines(page);
  assert.deepEqual([lines['tokenizer.ggml.tokens'].differing, lines['tokenizer.ggml.tokens'].firstIndex], ['2', '200000']);
  assert.deepEqual([lines['test.bytes'].differing, lines['test.bytes'].firstIndex], ['1', String(M - 1)]);
  assert.deepEqual([lines['test.nested'].differing, lines['test.nested'].firstIndex], ['1', '1']);
  assert.equal(lines['test.retyped'].notCompared, 'true');
  assert.ok((await page.$eval('#panel-compare', (e) => e.textContent.length)) < 20000);
  const j = JSON.parse((await exported(page, '#cmp-export-json')).text);
  const tok = j.metadata.changed.find((c) => c.key === 'tokenizer.ggml.tokens');
  assert.deepEqual([tok.item_a, tok.item_b], ['t200000', 'T200000']);
  assert.deepEqual(log.errors, []);
  assert.equal(await page.$eval('#error', (e) => e.hidden), true);
});
