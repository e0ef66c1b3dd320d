// Tensor inspector: statistics and first values against gguf-py's dequantization of the sample.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startServer, launch, newPage, waitLoaded, readJson, FIXTURES, ARTIFACTS, waitInspected } from './helpers.mjs';

const expected = readJson(path.join(FIXTURES, 'expected-sample.json'));
let server, browser;
before(async () => { server = await startServer(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

const close = (a, b, rel) => Math.abs(a - b) <= rel * Math.max(Math.abs(a), Math.abs(b), 1e-30);

for (const [name, want] of Object.entries(expected.stats)) {
  test(`inspector: ${name} (${want.type}) matches gguf-py`, async () => {
    const { page, log } = await newPage(browser);
    await page.goto(server.url);
    await waitLoaded(page, expected.summary.name);
    await page.click('[data-tab="tensors"]');
    await page.click(`#tensor-table tr[data-tensor="${name}"]`);
    await waitInspected(page);
    const stat = (k) => page.$eval(`[data-stat="${k}"]`, (e) => Number(e.dataset.value));
    // min/max are single f32 values: exact. mean/std are sums: both sides accumulate in f64.
    assert.equal(await stat('min'), want.min);
    assert.equal(await stat('max'), want.max);
    assert.ok(close(await stat('mean'), want.mean, 1e-9), `mean ${await stat('mean')} vs ${want.mean}`);
    assert.ok(close(await stat('std'), want.std, 1e-6), `std ${await stat('std')} vs ${want.std}`);
    for (const k of ['nan', 'inf', 'zero', 'count']) assert.equal(await stat(k), want[k], k);
    const hist = await page.$$eval('#insp-hist rect', (rs) => rs.length);
    assert.equal(hist, 64);
    const first = await page.$$eval('#insp-values .v', (vs) => vs.slice(0, 8).map((v) => v.textContent));
    assert.deepEqual(first.map(Number).map((x, i) => close(x, want.first[i], 1e-5)), want.first.map(() => true), `${first} vs ${want.first}`);
    assert.deepEqual(log.errors, []);
    if (name === 'blk.0.attn_q.weight') await page.screenshot({ path: path.join(ARTIFACTS, 'inspector-light.png'), fullPage: true });
  });
}

test('inspector: statistics over the first rows only, or the whole tensor', async () => {
  const tall = readJson(path.join(FIXTURES, 'expected-tall.json'));
  const { page } = await newPage(browser);
  await page.goto(`${server.url}?url=${encodeURIComponent('/fixtures/tall.gguf')}`);
  await waitLoaded(page, tall.name);
  await page.click('[data-tab="inspector"]');
  const stat = (k) => page.$eval(`[data-stat="${k}"]`, (e) => Number(e.dataset.value));
  for (const [scope, want, label] of [['head', tall.head256, '(rows 0–255 of 1,000)'], ['all', tall.whole, '(whole tensor)']]) {
    await page.selectOption('#insp-scope', scope);
    await page.selectOption('#insp-tensor', tall.tensor);
    await page.click('#insp-run');
    await waitInspected(page);
    assert.equal(await page.$eval('#insp-stats-scope', (e) => e.textContent), label);
    assert.equal(await stat('count'), want.count);
    assert.equal(await stat('min'), want.min);
    assert.equal(await stat('max'), want.max);
    assert.ok(close(await stat('mean'), want.mean, 1e-9) || Math.abs(await stat('mean') - want.mean) < 1e-12);
    assert.ok(close(await stat('std'), want.std, 1e-6));
  }
});
