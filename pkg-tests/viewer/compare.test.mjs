// Compare panel: the sample (A, Q4_K_M) against its Q8_0 requantization (B). Every expected
// list and number comes from gguf-py + numpy (make_expected_compare.py), never from gguf-lens.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startServer, launch, newPage, waitLoaded, readJson, ROOT, FIXTURES, ARTIFACTS } from './helpers.mjs';

const expected = readJson(path.join(FIXTURES, 'expected-compare.json'));
const B_URL = '/sample-fixtures/tiny-llama-Q8_0.gguf';
let server, browser;
before(async () => { server = await startServer(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

const close = (a, b, rel) => Math.abs(a - b) <= rel * Math.max(Math.abs(a), Math.abs(b), 1e-30);

async function openCompare(page, how) {
  await page.goto(server.url);
  await waitLoaded(page, expected.a.summary.name);
  assert.equal(await page.$eval('#compare-tab', (e) => e.hidden), true);
  await page.click('#compare-start');
  if (how === 'url') {
    await page.fill('#compare-url', B_URL);
    await page.click('#compare-form button[type="submit"]');
  } else {
    await page.setInputFiles('#compare-file-input', path.join(ROOT, 'fixtures/sample/tiny-llama-Q8_0.gguf'));
  }
  await page.waitForSelector('#panel-compare:not([hidden]) #cmp-numeric tbody tr');
}

const listed = (page, diff) => page.$$eval(`[data-diff="${diff}"] li`, (lis) => lis.map((li) => li.dataset.key ?? li.dataset.tensor));

test('compare by URL: summaries side by side, metadata and tensor differences equal gguf-py', async () => {
  const { page, log, context } = await newPage(browser);
  const ranges = [];
  context.on('request', (r) => { if (r.url().endsWith(B_URL)) ranges.push(r.headers().range); });
  await openCompare(page, 'url');
  // B is opened like A, over Range requests: its header in one streamed open-ended request (read
  // as far as the header goes, then cancelled), anything else in exact ranges.
  assert.ok(ranges.length >= 1 && ranges[0] === 'bytes=0-', `ranges: ${ranges}`);
  assert.ok(ranges.slice(1).every((r) => /^bytes=\d+-\d+$/.test(r)), `ranges: ${ranges}`);
  const rows = await page.$$eval('#cmp-summary tbody tr', (trs) => Object.fromEntries(trs.map((tr) => [tr.dataset.field, {
    differs: tr.dataset.differs === 'true', a: tr.querySelector('[data-side="a"]').dataset.value, b: tr.querySelector('[data-side="b"]').dataset.value,
  }])));
  const sa = expected.a.summary, sb = expected.b.summary;
  const want = { architecture: 'architecture', name: 'name', 'parameter-count': 'parameter-count', 'file-type': 'file-type-id', 'file-size': 'file-size', 'context-length': 'context-length', 'block-count': 'block-count', 'vocab-size': 'vocab-size' };
  for (const [f, k] of Object.entries(want)) {
    assert.equal(rows[f].a, String(sa[k]), `${f} A`);
    assert.equal(rows[f].b, String(sb[k]), `${f} B`);
    assert.equal(rows[f].differs, sa[k] !== sb[k], `${f} marked`);
  }
  assert.ok(close(Number(rows['bits-per-weight'].a), sa['bits-per-weight'], 1e-12));
  assert.ok(close(Number(rows['bits-per-weight'].b), sb['bits-per-weight'], 1e-12));
  assert.equal(rows['bits-per-weight'].differs, true);

  assert.deepEqual(await listed(page, 'meta-only-a'), expected.metadata.only_a);
  assert.deepEqual(await listed(page, 'meta-only-b'), expected.metadata.only_b);
  assert.deepEqual(await listed(page, 'meta-changed'), expected.metadata.changed);
  assert.deepEqual(await listed(page, 'tensor-only-a'), expected.tensors.only_a);
  assert.deepEqual(await listed(page, 'tensor-only-b'), expected.tensors.only_b);
  assert.deepEqual(await listed(page, 'tensor-shape'), expected.tensors.shape_changes.map((c) => c[0]));
  const types = await page.$$eval('[data-diff="tensor-type"] li', (lis) => lis.map((li) => [li.dataset.tensor, ...li.lastChild.textContent.split(' → ')]));
  assert.deepEqual(types, expected.tensors.type_changes);
  const mix = await page.$$eval('#cmp-mix tbody tr', (trs) => trs.map((tr) => ({ ...tr.dataset })));
  const allTypes = new Set([...Object.keys(expected.a.mix), ...Object.keys(expected.b.mix)]);
  assert.equal(mix.length, allTypes.size);
  for (const m of mix) {
    assert.equal(Number(m.tensorsA), expected.a.mix[m.type]?.tensors ?? 0, `${m.type} A`);
    assert.equal(Number(m.bytesA), expected.a.mix[m.type]?.bytes ?? 0);
    assert.equal(Number(m.tensorsB), expected.b.mix[m.type]?.tensors ?? 0, `${m.type} B`);
    assert.equal(Number(m.bytesB), expected.b.mix[m.type]?.bytes ?? 0);
  }
  // Long arrays are previewed, never dumped: the token list is not in the panel.
  assert.ok((await page.$eval('#panel-compare', (e) => e.textContent.length)) < 20000);
  const numericRows = await page.$$eval('#cmp-numeric tbody tr', (trs) => trs.map((tr) => tr.dataset.tensor));
  assert.deepEqual(numericRows, Object.keys(expected.numeric));
  assert.deepEqual(log.errors, []);
});

async function checkNumbers(page, name, want = expected.numeric[name]) {
  const got = await page.$eval(`#cmp-numeric tr[data-tensor="${name}"]`, (tr) => Object.fromEntries([...tr.querySelectorAll('[data-metric]')].map((td) => [td.dataset.metric, { ...td.dataset, text: td.textContent }])));
  for (const [attr, k] of [['rmse', 'rmse'], ['max-abs', 'max_abs'], ['mean-abs', 'mean_abs'], ['rel-rmse', 'rel_rmse'], ['cosine', 'cosine']]) {
    if (want[k] === null) { // undefined for these values: shown as a dash
      assert.deepEqual([got[attr].value, got[attr].text], ['null', '—'], `${name} ${k}`);
      continue;
    }
    const v = Number(got[attr].value);
    assert.ok(close(v, want[k], 1e-9) || Math.abs(v - want[k]) < 1e-15, `${name} ${k}: ${v} vs ${want[k]}`);
  }
  assert.equal(Number(got.mismatches.count), want.count, `${name} count`);
  assert.equal(Number(got.mismatches.nan), want.nan_mismatch);
  assert.equal(Number(got.mismatches.inf), want.inf_mismatch);
}

test('compare one tensor, then all matching tensors: numbers equal gguf-py + numpy', async () => {
  const { page, log } = await newPage(browser);
  await openCompare(page, 'url');
  await page.click('#cmp-numeric tr[data-tensor="blk.0.attn_v.weight"] button');
  await page.waitForSelector('#cmp-numeric tr[data-tensor="blk.0.attn_v.weight"][data-done]');
  await checkNumbers(page, 'blk.0.attn_v.weight');
  assert.equal(await page.$$eval('#cmp-numeric tr[data-done]', (trs) => trs.length), 1);

  await page.click('#cmp-all');
  await page.waitForFunction((n) => document.querySelectorAll('#cmp-numeric tr[data-done]').length === n && document.querySelector('#cmp-cancel').hidden, Object.keys(expected.numeric).length, { timeout: 30000 });
  assert.match(await page.$eval('#cmp-progress-text', (e) => e.textContent), /^compared \d+ tensors$/);
  for (const name of Object.keys(expected.numeric)) await checkNumbers(page, name);
  // Identical F32 tensors are marked equal; requantized ones differ.
  assert.equal(await page.$eval('#cmp-numeric tr[data-tensor="blk.0.attn_norm.weight"]', (tr) => tr.classList.contains('differs')), false);
  assert.equal(await page.$eval('#cmp-numeric tr[data-tensor="token_embd.weight"]', (tr) => tr.classList.contains('differs')), true);
  assert.deepEqual(log.errors, []);
  assert.equal(await page.$eval('#error', (e) => e.hidden), true);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(ARTIFACTS, 'compare-light.png'), fullPage: true });
});

test('compare from the file picker; cancel stops a compare-all run; a new first file closes the comparison', async () => {
  const { page, log } = await newPage(browser, { colorScheme: 'dark' });
  await openCompare(page, 'file');
  assert.match(await page.$eval('#cmp-files', (e) => e.textContent), /B: tiny-llama-Q8_0\.gguf$/);
  // Every read of A (the sample, by URL) waits 400 ms: the run is still going when Cancel is hit.
  await page.route('**/tiny-llama-Q4_K_M.gguf', async (route) => { await new Promise((r) => setTimeout(r, 400)); await route.continue().catch(() => {}); });
  await page.click('#cmp-all');
  await page.waitForFunction(() => /^1 of \d+/.test(document.querySelector('#cmp-progress-text').textContent));
  await page.click('#cmp-cancel');
  await page.waitForFunction(() => document.querySelector('#cmp-cancel').hidden && !document.querySelector('#cmp-all').disabled);
  const done = await page.$$eval('#cmp-numeric tr[data-done]', (trs) => trs.length);
  assert.equal(done, 0, `cancel left ${done} compared`);
  assert.equal(await page.$eval('#cmp-progress-text', (e) => e.textContent), 'cancelled');
  await page.unroute('**/tiny-llama-Q4_K_M.gguf');
  assert.equal(await page.$eval('#error', (e) => e.hidden), true);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(ARTIFACTS, 'compare-dark.png'), fullPage: true });
  await page.fill('#url-input', '/fixtures/tall.gguf');
  await page.click('#url-form button[type="submit"]');
  await waitLoaded(page, 'tall f32');
  assert.equal(await page.$eval('#compare-tab', (e) => e.hidden), true);
  assert.equal(await page.$eval('#panel-compare', (e) => e.hidden), true);
  assert.deepEqual(log.errors, []);
});

test('a file dropped while the "Compare with" bar is open is compared, not opened', async () => {
  const { page, log } = await newPage(browser);
  await page.goto(server.url);
  await waitLoaded(page, expected.a.summary.name);
  await page.click('#compare-start');
  const bytes = [...(await import('node:fs')).readFileSync(path.join(ROOT, 'fixtures/sample/tiny-llama-Q8_0.gguf'))];
  const dt = await page.evaluateHandle((b) => {
    const t = new DataTransfer();
    t.items.add(new File([new Uint8Array(b)], 'dropped-Q8_0.gguf'));
    return t;
  }, bytes);
  await page.dispatchEvent('body', 'dragenter', { dataTransfer: dt });
  assert.equal(await page.$eval('#drop-overlay', (e) => e.textContent), 'Drop a file to compare it with this one');
  await page.dispatchEvent('body', 'drop', { dataTransfer: dt });
  await page.waitForSelector('#panel-compare:not([hidden]) #cmp-numeric tbody tr');
  assert.match(await page.$eval('#cmp-files', (e) => e.textContent), /B: dropped-Q8_0\.gguf$/);
  assert.equal((await page.$eval('[data-field="name"]', (e) => e.textContent)), expected.a.summary.name); // A stays open
  assert.deepEqual(await listed(page, 'tensor-only-a'), expected.tensors.only_a);
  assert.deepEqual(log.errors, []);
});

test('?url= and ?compare= reopen both files; the address names B once it is opened by URL', async () => {
  const { page, log } = await newPage(browser);
  await openCompare(page, 'url');
  assert.equal(new URL(page.url()).searchParams.get('compare'), B_URL);
  const { page: again } = await newPage(browser);
  await again.goto(`${server.url}?url=${encodeURIComponent('sample/tiny-llama-Q4_K_M.gguf')}&compare=${encodeURIComponent(B_URL)}`);
  await again.waitForSelector('#panel-compare:not([hidden]) #cmp-numeric tbody tr');
  assert.deepEqual(await listed(again, 'meta-changed'), expected.metadata.changed);
  assert.deepEqual(log.errors, []);
});

test('edge cases (zero tensors, NaN / Inf in every pair): the core\'s definitions, numbers from numpy', async () => {
  const edges = readJson(path.join(FIXTURES, 'expected-compare-edges.json'));
  const { page, log } = await newPage(browser);
  await page.goto(`${server.url}?url=${encodeURIComponent('/fixtures/edges-a.gguf')}&compare=${encodeURIComponent('/fixtures/edges-b.gguf')}`);
  await page.waitForSelector('#panel-compare:not([hidden]) #cmp-numeric tbody tr');
  await page.click('#cmp-all');
  const names = Object.keys(edges.numeric);
  await page.waitForFunction((n) => document.querySelectorAll('#cmp-numeric tr[data-done]').length === n && document.querySelector('#cmp-cancel').hidden, names.length);
  for (const name of names) await checkNumbers(page, name, edges.numeric[name]);
  // cosine 1 and RMSE / RMS(a) 0 for two zero vectors (-0 in A): equal, not marked
  assert.equal(await page.$eval('#cmp-numeric tr[data-tensor="zeros"]', (tr) => tr.classList.contains('differs')), false);
  for (const name of ['zero_a', 'zero_b', 'nonfinite', 'mixed']) {
    assert.equal(await page.$eval(`#cmp-numeric tr[data-tensor="${name}"]`, (tr) => tr.classList.contains('differs')), true, name);
  }
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#cmp-export-json')]);
  const j = JSON.parse(await (await import('node:fs/promises')).readFile(await dl.path(), 'utf8'));
  const got = Object.fromEntries(j.values.map((t) => [t.name, t]));
  assert.deepEqual([got.nonfinite.count, got.nonfinite.rmse, got.nonfinite.cosine, got.nonfinite.nan_mismatch, got.nonfinite.inf_mismatch],
    [0, null, null, edges.numeric.nonfinite.nan_mismatch, edges.numeric.nonfinite.inf_mismatch]);
  assert.deepEqual([got.zero_a.rel_rmse, got.zero_a.cosine, got.zeros.cosine, got.zeros.rel_rmse], [null, 0, 1, 0]);
  assert.deepEqual(log.errors, []);
  await page.$eval('#cmp-numeric', (e) => e.scrollIntoView());
  await page.screenshot({ path: path.join(ARTIFACTS, 'compare-edges.png') });
});
