// The tensor table sorts by every column; the metadata filter searches whole string arrays (in
// wasm, from the indexed arrays); a split model opens from all its shards picked or dropped
// together. Expected values: gguf-py (fixtures/expected-sample.json, diff/expected-split.json).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startServer, launch, newPage, waitLoaded, field, readJson, FIXTURES, ROOT } from './helpers.mjs';

const expected = readJson(path.join(FIXTURES, 'expected-sample.json'));
const split = readJson(path.join(ROOT, 'fixtures/diff/expected-split.json')).pair;
let server, browser;
before(async () => { server = await startServer(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

const rowNames = (page) => page.$$eval('#tensor-table tbody tr[data-tensor]', (trs) => trs.map((tr) => tr.dataset.tensor));
const groupCount = (page) => page.$$eval('#tensor-table tr.group', (trs) => trs.length);

test('the tensor table sorts by a column, reverses, then returns to layer groups', async () => {
  const { page, log } = await newPage(browser);
  await page.goto(server.url);
  await waitLoaded(page, expected.summary.name);
  await page.click('[data-tab="tensors"]');
  const byName = (a, b) => a.name.localeCompare(b.name, 'en', { numeric: true });
  const bpw = (t) => (t.n_bytes * 8) / t.n_elements;
  // Unsorted: the non-layer tensors first, then blk.0, blk.1, each in file order.
  const block = (t) => (/^blk\.(\d+)\./.exec(t.name)?.[1] ?? -1);
  const layerOrder = [-1, '0', '1'].flatMap((b) => expected.tensors.filter((t) => String(block(t)) === String(b)).map((t) => t.name));
  assert.deepEqual(await rowNames(page), layerOrder);
  const cases = [
    ['bytes', (a, b) => a.n_bytes - b.n_bytes || byName(a, b)],
    ['bpw', (a, b) => bpw(a) - bpw(b) || byName(a, b)],
    ['name', byName],
  ];
  for (const [key, order] of cases) {
    const want = [...expected.tensors].sort(order).map((t) => t.name);
    await page.click(`button.sort[data-sort="${key}"]`);
    assert.deepEqual(await rowNames(page), want, key);
    assert.equal(await groupCount(page), 0, `${key}: flat while sorted`);
    assert.equal(await page.$eval(`button.sort[data-sort="${key}"]`, (b) => b.parentElement.getAttribute('aria-sort')), 'ascending');
    await page.click(`button.sort[data-sort="${key}"]`);
    assert.deepEqual(await rowNames(page), [...want].reverse(), `${key} descending`);
    await page.click(`button.sort[data-sort="${key}"]`);
    assert.deepEqual(await rowNames(page), layerOrder, `${key}: back to the layer groups`);
    assert.equal(await groupCount(page), 3);
  }
  // Sorting keeps the filter.
  await page.fill('#tensor-filter', 'attn_v');
  await page.click('button.sort[data-sort="bytes"]');
  assert.deepEqual(await rowNames(page), expected.tensors.filter((t) => t.name.includes('attn_v')).sort(cases[0][1]).map((t) => t.name));
  assert.deepEqual(log.errors, []);
});

test('the metadata filter finds text anywhere in a string array, not just its first items', async () => {
  const { page, log } = await newPage(browser);
  await page.goto(server.url);
  await waitLoaded(page, expected.summary.name);
  await page.click('[data-tab="metadata"]');
  // Token 255 (gguf-py: "▁w167") is far past the 8 items the table previews.
  const needle = expected.tokens['255'].slice(1);
  await page.fill('#meta-filter', needle);
  await page.waitForSelector('#meta-table tr[data-key="tokenizer.ggml.tokens"] [data-match]');
  assert.equal(await page.$eval('#meta-table tr[data-key="tokenizer.ggml.tokens"] [data-match]', (e) => e.dataset.match), '255');
  // Showing the array opens the page that holds the match.
  await page.click('#meta-table tr[data-key="tokenizer.ggml.tokens"] button.link');
  await page.waitForSelector('#meta-table .array-items li');
  const items = await page.$$eval('#meta-table .array-items li', (lis) => lis.map((li) => li.textContent));
  assert.ok(items.some((t) => t === `255${expected.tokens['255']}`), items.slice(-3).join(' | '));
  await page.fill('#meta-filter', 'no-such-text-anywhere');
  await page.waitForFunction(() => document.querySelectorAll('#meta-table tbody tr').length === 0);
  assert.deepEqual(log.errors, []);
});

test('a split model opens from all its shards picked together, in any order; an incomplete set is refused', async () => {
  const { page, log } = await newPage(browser);
  await page.goto(server.url);
  await waitLoaded(page, expected.summary.name);
  const shards = split.b.map((p) => path.join(ROOT, p)).reverse();
  await page.setInputFiles('#file-input', shards);
  await waitLoaded(page, 'split B');
  const param = split.summary.find((f) => f.field === 'parameters').b;
  const tensors = split.summary.find((f) => f.field === 'tensor_count').b;
  assert.equal(Number((await field(page, 'parameter-count')).value), param);
  assert.equal(Number((await field(page, 'tensor-count')).value), tensors);
  assert.equal(await page.$eval('#error', (e) => e.hidden), true);
  await page.setInputFiles('#file-input', shards.slice(0, 2));
  await page.waitForSelector('#error:not([hidden])');
  assert.match(await page.$eval('#error', (e) => e.textContent), /split-b has 3, 2 were given/);
  assert.deepEqual(log.errors, []);
});
