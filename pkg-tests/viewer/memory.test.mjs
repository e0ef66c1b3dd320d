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
  await page.waitForFunction(() => (document.querySelector('[data-mem="max-ctx"]').dataset.value ?? '') !== '');
  const maxCtx = Number(await mem(page, 'max-ctx'));
  assert.ok(maxCtx > 0, `max ctx ${maxCtx}`);
  assert.match(await page.textContent('#mem-command'), /--cache-type-k q8_0/);
  await page.screenshot({ path: path.join(ARTIFACTS, 'memory-planner.png'), fullPage: false });
  // The deep link reopens the same plan.
  const url = page.url();
  const other = (await newPage(browser)).page;
  await other.goto(url);
  await waitLoaded(other, 'gguf-lens tiny sample');
  await other.waitForFunction(() => (document.querySelector('[data-mem="max-ctx"]').dataset.value ?? '') !== '');
  assert.equal(await other.$eval('#mem-ctk', (s) => s.value), 'q8_0');
  assert.equal(Number(await mem(other, 'max-ctx')), maxCtx);
  // A quantized V cache without flash attention: llama.cpp refuses, so does the card.
  await page.uncheck('#mem-fa');
  await page.selectOption('#mem-ctv', 'q8_0');
  await page.waitForFunction(() => !document.querySelector('#mem-error').hidden);
  assert.match(await page.textContent('#mem-error'), /flash/i);
});

const GIB = 1024 ** 3;
/** Opens `file` (a URL path) with the planner's deep-link `query`, once the plan is shown. */
async function plannedFile(page, file, query) {
  await page.goto(`${server.url}?url=${encodeURIComponent(file)}&${query}`);
  // (the sample's label is "the bundled sample")
  await page.waitForFunction((f) => [f.split('/').pop(), 'the bundled sample'].some((t) => document.querySelector('#model-source').textContent.includes(t)) && document.querySelector('[data-mem="total"]').dataset.value, file, { timeout: 20000 });
  await page.waitForFunction(() => /gpu=/.test(location.search) === Boolean(document.querySelector('.mem-row[data-device="GPU"]')));
}
const gpuBytes = (page) => page.$eval('.mem-row[data-device="GPU"]', (e) => Number(e.dataset.bytes));

test('the largest context on the GPU is the plan\'s: it fits, 256 more do not, also beyond the trained context', async () => {
  const { page, log } = await newPage(browser);
  const file = 'sample/tiny-llama-Q4_K_M.gguf';
  // The case: a context four times the trained one that fits the GPU must not be
  // reported as larger than the largest context.
  await planned(page, '');
  const train = Number(await page.$eval('#mem-ctx', (e) => e.value));
  // 0.1 GiB: both layers and the output at 8192 (largest 8,960), 1 GiB: far beyond the trained
  // context
  for (const gib of [0.1, 1]) {
    await plannedFile(page, file, `gpu=${gib}&mctx=${4 * train}`);
    const budget = Math.round(gib * GIB);
    const maxCtx = Number(await mem(page, 'max-ctx'));
    const ngl = Number(await page.$eval('#mem-ngl', (e) => e.value));
    assert.ok(ngl > 1, `${gib} GiB: -ngl ${ngl}`);
    assert.ok(maxCtx > 0 && maxCtx % 256 === 0, `${gib} GiB: ${maxCtx}`);
    assert.ok((await gpuBytes(page)) <= budget, `${gib} GiB: the plan at ${4 * train} fits`);
    assert.ok(maxCtx >= 4 * train, `${gib} GiB: the plan at ${4 * train} fits, largest ${maxCtx}`);
    // the shown largest context, planned with the same layers: fits; 256 cells more: does not
    await plannedFile(page, file, `gpu=${gib}&mctx=${maxCtx}&ngl=${ngl}`);
    assert.ok((await gpuBytes(page)) <= budget, `${gib} GiB at ${maxCtx}: ${await gpuBytes(page)} > ${budget}`);
    await plannedFile(page, file, `gpu=${gib}&mctx=${maxCtx + 256}&ngl=${ngl}`);
    assert.ok((await gpuBytes(page)) > budget, `${gib} GiB at ${maxCtx + 256} still fits`);
    const note = await page.textContent('[data-mem-note="max-ctx"]');
    if (maxCtx > train) assert.match(note, /Beyond the model's trained context/);
    else assert.doesNotMatch(note, /Beyond/);
  }
  // only the output layer on a small GPU: no cache there, so no context limit from it
  await plannedFile(page, file, 'gpu=0.02&mctx=8192');
  assert.equal(await page.$eval('#mem-ngl', (e) => e.value), '1');
  assert.equal(await mem(page, 'max-ctx'), '');
  assert.match(await page.textContent('[data-mem="max-ctx"]'), /not limited by the GPU/);
  // the bars' words are whole or absent (a segment too narrow for its word), the legend names all
  const segs = await page.$$eval('.mem-track .mem-seg', (ss) => ss.map((e) => ({ text: e.textContent, part: e.dataset.part, fits: e.scrollWidth <= e.clientWidth })));
  assert.ok(segs.length >= 4 && segs.some((x) => x.text === ''), JSON.stringify(segs));
  for (const x of segs) assert.ok(x.fits && (x.text === '' || x.text === x.part), JSON.stringify(x));
  assert.equal(await page.textContent('.mem-legend'), 'weightsKV cachecompute');
  assert.deepEqual(log.errors, []);
});

test('a note explains each jump: the tied output\'s GPU copy of token_embd, the sliding window, the compute buffer', async () => {
  const { page, log } = await newPage(browser);
  const note = (k) => page.$eval(`[data-mem-note="${k}"]`, (e) => (e.hidden ? '' : e.textContent));
  // fixtures/plan/llama-tied.gguf has no output.weight: offloaded, llama.cpp copies token_embd
  await plannedFile(page, '/plan-fixtures/llama-tied.gguf', '');
  assert.equal(await note('weights'), '');
  const cpuWeights = Number(await mem(page, 'weights'));
  await plannedFile(page, '/plan-fixtures/llama-tied.gguf', 'gpu=1');
  const tied = await note('weights');
  assert.match(tied, /tied to token_embd/);
  const embd = await page.evaluate(async () => {
    const { openGguf } = await import('./pkg/index.js');
    const m = await openGguf('/plan-fixtures/llama-tied.gguf');
    return { bytes: m.tensor('token_embd.weight').nBytes, copy: m.planMemory({ gpuMem: 2 ** 30 }).tiedOutputCopyBytes };
  });
  assert.equal(embd.copy, embd.bytes);
  assert.ok(tied.includes(await page.evaluate(async (n) => (await import('./format.js')).fmtBytes(n), embd.bytes)), tied);
  // the weights grew (by the copy, less the CPU's mapped span the offloaded layers left), and
  // the GPU's share holds the copy
  const grown = Number(await mem(page, 'weights')) - cpuWeights;
  assert.ok(grown > 0 && grown <= embd.bytes, `grown ${grown}, copy ${embd.bytes}`);
  const gpuWeights = await page.evaluate(async () => {
    const { openGguf } = await import('./pkg/index.js');
    return (await openGguf('/plan-fixtures/llama-tied.gguf')).planMemory({ gpuMem: 2 ** 30 }).weights.gpuBytes;
  });
  assert.ok(gpuWeights >= embd.bytes);
  assert.match(await page.textContent('[data-mem="weights"]'), /\(GPU /);
  assert.match(await note('compute'), /logits/);
  // an output of its own: no copy, no such note
  await plannedFile(page, '/plan-fixtures/llama.gguf', 'gpu=1');
  assert.doesNotMatch(await note('weights'), /tied/);
  assert.match(await note('weights'), /^GPU: the output layer/);
  // Gemma 3's sliding-window layers keep a small cache of their own
  await plannedFile(page, '/plan-fixtures/gemma3.gguf', '');
  assert.match(await note('kv'), /sliding-window layers keep \d[\d,]* cells/);
  assert.deepEqual(log.errors, []);
});
