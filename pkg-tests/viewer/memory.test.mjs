// The memory planner card against llama.cpp's own log (fixtures/plan/expected.json, made by
// fixtures/make_plan.py through llama-cpp-python): for the bundled sample on a grid of contexts,
// slots, cache types and flash attention, set through the deep link, the card shows llama.cpp's
// KV cache and weights (within its log's 0.01 MiB) and the compute buffer within 15%.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startServer, launch, newPage, waitLoaded, readJson, ROOT, ARTIFACTS } from './helpers.mjs';

const MIB = 1024 * 1024;
const plan = readJson(path.join(ROOT, 'fixtures/plan/expected.json'));
const sample = Object.values(plan.models).find((m) => m.file === 'fixtures/sample/tiny-llama-Q4_K_M.gguf');
let server, browser;
before(async () => { server = await startServer(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

const mem = (page, k) => page.$eval(`[data-mem="${k}"]`, (e) => e.dataset.value);

async function planned(page, query) {
  await page.goto(`${server.url}?${query}`);
  await waitLoaded(page, 'gguf-lens tiny sample');
  await page.waitForFunction(() => document.querySelector('[data-mem="total"]').dataset.value);
}

test('the planner shows llama.cpp\'s KV cache and weights on a grid of settings', async () => {
  assert.ok(sample && sample.cases.length >= 20);
  const { page, log } = await newPage(browser);
  let checked = 0;
  for (const c of sample.cases) {
    if (!c.caches) continue; // a combination llama.cpp refused
    // n_ctx 0 is llama.cpp's "the training context": the card's default, so no mctx.
    const q = new URLSearchParams({ np: String(c.n_seq_max), ctk: c.type_k, ctv: c.type_v });
    if (c.n_ctx) q.set('mctx', String(c.n_ctx));
    if (c.flash_attn) q.set('fa', '1');
    await planned(page, q);
    const kv = Number(await mem(page, 'kv')) / MIB;
    const want = c.caches.reduce((n, x) => n + x.mib, 0);
    assert.ok(Math.abs(kv - want) <= 0.01 * c.caches.length + 1e-9, `${q}: KV ${kv.toFixed(4)} MiB, llama.cpp ${want}`);
    const weights = Number(await mem(page, 'weights')) / MIB;
    assert.ok(Math.abs(weights - c.weights_mib.reduce((a, b) => a + b, 0)) <= 0.01, `${q}: weights ${weights}`);
    const compute = Number(await mem(page, 'compute')) / MIB;
    const wantCompute = c.compute_mib.reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(compute - wantCompute) <= 0.15 * wantCompute, `${q}: compute ${compute} vs ${wantCompute}`);
    const command = await page.textContent('#mem-command');
    // llama.cpp pads each slot's context to a multiple of 256; the command says what it allocates.
    const [, cmdCtx] = /-c (\d+)\b/.exec(command) ?? [];
    if (c.n_ctx) assert.ok(Number(cmdCtx) >= c.n_ctx && Number(cmdCtx) < c.n_ctx + 256 * c.n_seq_max, `${q}: ${command}`);
    assert.match(command, new RegExp(`-np ${c.n_seq_max}\\b`));
    checked++;
  }
  assert.ok(checked >= 15, `${checked} cases`);
  assert.deepEqual(log.errors, []);
});

test('choices go to the URL, a GPU picks the layers and the largest context, refusals are shown', async () => {
  const { page } = await newPage(browser);
  await planned(page, '');
  await page.selectOption('#mem-ctk', 'q8_0');
  await page.check('#mem-fa');
  await page.selectOption('#mem-gpu', 'custom');
  await page.fill('#mem-gpu-custom', '0.01');
  await page.waitForFunction(() => /ctk=q8_0/.test(location.search) && /fa=1/.test(location.search) && /gpu=0\.01/.test(location.search));
  await page.waitForFunction(() => document.querySelector('[data-mem="max-ctx"]').dataset.value !== '');
  const maxCtx = Number(await mem(page, 'max-ctx'));
  assert.ok(maxCtx > 0, `max ctx ${maxCtx}`);
  assert.match(await page.textContent('#mem-command'), /--cache-type-k q8_0/);
  await page.screenshot({ path: path.join(ARTIFACTS, 'memory-planner.png'), fullPage: false });
  // The deep link reopens the same plan.
  const url = page.url();
  const other = (await newPage(browser)).page;
  await other.goto(url);
  await waitLoaded(other, 'gguf-lens tiny sample');
  await other.waitForFunction(() => document.querySelector('[data-mem="max-ctx"]').dataset.value !== '');
  assert.equal(await other.$eval('#mem-ctk', (s) => s.value), 'q8_0');
  assert.equal(Number(await mem(other, 'max-ctx')), maxCtx);
  // A quantized V cache without flash attention: llama.cpp refuses, so does the card.
  await page.uncheck('#mem-fa');
  await page.selectOption('#mem-ctv', 'q8_0');
  await page.waitForFunction(() => !document.querySelector('#mem-error').hidden);
  assert.match(await page.textContent('#mem-error'), /flash/i);
});
