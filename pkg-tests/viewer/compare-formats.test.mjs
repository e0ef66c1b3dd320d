// Compare panel beyond single-file GGUF pairs (they worked before the panel moved onto the core's
// compare module, and must still): two safetensors checkpoints, a sharded GPTQ checkpoint against
// a plain one, and two split GGUF models. Expected lists and numbers come from the safetensors
// package, gguf-py and numpy (fixtures/make_diff.py's expected.json cross_pairs,
// fixtures/make_diff_split.py's expected-split.json), never from gguf-lens.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startServer, launch, newPage, waitLoaded, readJson, exported, ROOT, ARTIFACTS } from './helpers.mjs';

const expected = readJson(path.join(ROOT, 'fixtures/diff/expected.json'));
const split = readJson(path.join(ROOT, 'fixtures/diff/expected-split.json')).pair;
const crossPair = (a, b) => expected.cross_pairs.find((p) => p.a === a && p.b === b && !p.args.length);
let server, browser;
before(async () => { server = await startServer(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

const close = (a, b) => Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b)) || Math.abs(a - b) < 1e-15;
const listed = (page, diff) => page.$$eval(`[data-diff="${diff}"] li`, (lis) => lis.map((li) => li.dataset.key ?? li.dataset.tensor));

/** Opens A from `urlA` (shown as `nameA`), B from `urlB` in the Compare panel, and compares all. */
async function compareAll(page, urlA, nameA, urlB, n) {
  await page.goto(`${server.url}?url=${encodeURIComponent(urlA)}`);
  await waitLoaded(page, nameA);
  await page.click('#compare-start');
  await page.fill('#compare-url', urlB);
  await page.click('#compare-form button[type="submit"]');
  await page.waitForSelector('#panel-compare:not([hidden]) #cmp-summary tbody tr');
  assert.equal(await page.$$eval('#cmp-numeric tbody tr[data-tensor]', (trs) => trs.length), n);
  await page.click('#cmp-all');
  await page.waitForFunction((k) => document.querySelectorAll('#cmp-numeric tr[data-done]').length === k && document.querySelector('#cmp-cancel').hidden, n, { timeout: 30000 });
}

async function checkTensors(page, t) {
  assert.deepEqual(await listed(page, 'tensor-only-a'), t.only_a.map((e) => e.name));
  assert.deepEqual(await listed(page, 'tensor-only-b'), t.only_b.map((e) => e.name));
  assert.deepEqual(await listed(page, 'tensor-shape'), t.shape_changes.map((c) => c.name));
  const types = await page.$$eval('[data-diff="tensor-type"] li', (lis) => lis.map((li) => [li.dataset.tensor, ...li.lastChild.textContent.split(' → ')]));
  assert.deepEqual(types, t.type_changes.map((c) => [c.name, c.a, c.b]));
}

async function checkNumbers(page, values) {
  assert.deepEqual(await page.$$eval('#cmp-numeric tbody tr[data-tensor]', (trs) => trs.map((tr) => tr.dataset.tensor)), values.map((v) => v.name));
  for (const want of values) {
    const got = await page.$eval(`#cmp-numeric tr[data-tensor="${want.name}"]`, (tr) => Object.fromEntries([...tr.querySelectorAll('[data-metric]')].map((td) => [td.dataset.metric, { ...td.dataset }])));
    for (const [attr, k] of [['rmse', 'rmse'], ['max-abs', 'max_abs'], ['mean-abs', 'mean_abs'], ['rel-rmse', 'rel_rmse'], ['cosine', 'cosine']]) {
      const v = Number(got[attr].value);
      assert.ok(close(v, want[k]), `${want.name} ${k}: ${v} vs ${want[k]}`);
    }
    assert.equal(Number(got.mismatches.count), want.count, `${want.name} count`);
    assert.equal(Number(got.mismatches.nan), want.nan_mismatch);
    assert.equal(Number(got.mismatches.inf), want.inf_mismatch);
  }
}

test('compare two safetensors checkpoints: __metadata__, tensors (logical shapes) and numbers', async () => {
  const { page, log } = await newPage(browser);
  const pair = crossPair('fixtures/diff/arrays-a.safetensors', 'fixtures/diff/arrays-b.safetensors');
  await compareAll(page, '/diff-fixtures/arrays-a.safetensors', 'diff-fixtures/arrays-a.safetensors', '/diff-fixtures/arrays-b.safetensors', pair.values.length);
  assert.deepEqual(await listed(page, 'meta-only-a'), pair.metadata.only_a.map((e) => e.key));
  assert.deepEqual(await listed(page, 'meta-only-b'), pair.metadata.only_b.map((e) => e.key));
  assert.deepEqual(await listed(page, 'meta-changed'), pair.metadata.changed.map((e) => e.key));
  await checkTensors(page, pair.tensors);
  await checkNumbers(page, pair.values);
  const rows = await page.$$eval('#cmp-summary tbody tr', (trs) => Object.fromEntries(trs.map((tr) => [tr.dataset.field, [tr.querySelector('[data-side="a"]').dataset.value, tr.querySelector('[data-side="b"]').dataset.value]])));
  for (const f of pair.summary.filter((x) => x.field !== 'format')) {
    const field = { tensor_count: 'tensor-count', parameters: 'parameter-count' }[f.field];
    assert.deepEqual(rows[field], [String(f.a), String(f.b)], f.field);
  }
  assert.deepEqual(log.errors, []);
  assert.equal(await page.$eval('#error', (e) => e.hidden), true);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(ARTIFACTS, 'compare-safetensors.png'), fullPage: true });
});

test('compare a sharded GPTQ checkpoint (its index) with a plain one: GPTQ layer as <layer>.weight', async () => {
  const { page, log } = await newPage(browser);
  // The sharded checkpoint holds b4_g32_v1's tensors (fixtures/gptq/manifest.json same_as).
  const pair = crossPair('fixtures/gptq/b4_g32_v1/model.safetensors', 'fixtures/diff/gptq-f16.safetensors');
  await compareAll(page, '/gptq-fixtures/sharded/model.safetensors.index.json', 'sharded/model.safetensors.index.json', '/diff-fixtures/gptq-f16.safetensors', pair.values.length);
  await checkTensors(page, pair.tensors);
  await checkNumbers(page, pair.values);
  assert.deepEqual(log.errors, []);
  assert.equal(await page.$eval('#error', (e) => e.hidden), true);
});

test('compare two split GGUF models (2 shards vs 3): first shard metadata, every shard tensors', async () => {
  const { page, log } = await newPage(browser);
  await compareAll(page, '/diff-fixtures/split-a-00001-of-00002.gguf', 'split A', '/diff-fixtures/split-b-00001-of-00003.gguf', split.values.length);
  assert.deepEqual(await listed(page, 'meta-only-a'), split.metadata.only_a);
  assert.deepEqual(await listed(page, 'meta-only-b'), split.metadata.only_b);
  assert.deepEqual(await listed(page, 'meta-changed'), split.metadata.changed.map((c) => c.key));
  await checkTensors(page, split.tensors);
  await checkNumbers(page, split.values);
  const rows = await page.$$eval('#cmp-summary tbody tr', (trs) => Object.fromEntries(trs.map((tr) => [tr.dataset.field, [tr.querySelector('[data-side="a"]').dataset.value, tr.querySelector('[data-side="b"]').dataset.value]])));
  for (const [f, field] of [['parameters', 'parameter-count'], ['tensor_count', 'tensor-count'], ['file_size', 'file-size'], ['context_length', 'context-length']]) {
    const e = split.summary.find((x) => x.field === f);
    assert.deepEqual(rows[field], [String(e.a), String(e.b)], f);
  }
  assert.deepEqual(log.errors, []);
  assert.equal(await page.$eval('#error', (e) => e.hidden), true);
});

const NOT_COMPARED = 'Metadata is not compared between a GGUF file and a safetensors checkpoint (different key sets).';

test('compare a safetensors checkpoint with a GGUF file: metadata not compared, summary not flagged, tensors and numbers', async () => {
  const { page, log } = await newPage(browser);
  const pair = crossPair('fixtures/diff/arrays-a.safetensors', 'fixtures/diff/arrays-b.gguf');
  assert.equal(pair.metadata, null); // gguf-lens diff (expected.json): no metadata part across formats
  await compareAll(page, '/diff-fixtures/arrays-a.safetensors', 'diff-fixtures/arrays-a.safetensors', '/diff-fixtures/arrays-b.gguf', pair.values.length);
  assert.equal((await page.$eval('#cmp-meta', (e) => e.textContent)).trim(), NOT_COMPARED);
  for (const id of ['meta-only-a', 'meta-only-b', 'meta-changed']) assert.equal(await page.$(`[data-diff="${id}"]`), null, id);
  await checkTensors(page, pair.tensors);
  await checkNumbers(page, pair.values);
  // format, tensor count, parameters shown as the CLI shows them; no summary row flagged (the CLI's
  // summary does not decide across formats)
  const rows = await page.$$eval('#cmp-summary tbody tr', (trs) => Object.fromEntries(trs.map((tr) => [tr.dataset.field,
    { a: tr.querySelector('[data-side="a"]').dataset.value, b: tr.querySelector('[data-side="b"]').dataset.value, differs: tr.dataset.differs, marked: tr.classList.contains('differs') }])));
  for (const f of pair.summary) {
    const field = { format: 'format', tensor_count: 'tensor-count', parameters: 'parameter-count' }[f.field];
    assert.deepEqual([rows[field].a, rows[field].b], [String(f.a), String(f.b)], f.field);
  }
  for (const [field, r] of Object.entries(rows)) assert.deepEqual([r.differs, r.marked], ['false', false], field);
  const j = JSON.parse((await exported(page, '#cmp-export-json')).text);
  assert.equal(j.metadata, null);
  assert.equal(j.shapes, 'logical');
  assert.deepEqual(j.values.map((t) => t.name), pair.values.map((v) => v.name));
  const md = (await exported(page, '#cmp-export-md')).text;
  assert.match(md, /^## Metadata\n\nMetadata is not compared between a GGUF file and a safetensors checkpoint \(different key sets\)\.\n/m);
  assert.ok(!md.includes('### Only in A\n\n| key |'));
  assert.deepEqual(log.errors, []);
  assert.equal(await page.$eval('#error', (e) => e.hidden), true);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(ARTIFACTS, 'compare-safetensors-gguf.png'), fullPage: true });
});
