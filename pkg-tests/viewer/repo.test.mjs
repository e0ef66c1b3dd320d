// The Hub repo view (?repo=) in Chromium against a local mock of the Hub (../hub-mock.mjs: tree
// API pages, a gated repo, 2 GiB files beginning with fixture GGUFs, served with Range), never
// the network: every GGUF model listed (split files as one row), headers only read, the verdicts
// equal to the package's planner on the same files opened locally, sorting by size, the device
// selector, a row opening the normal view, and a token (sessionStorage) for a gated repo.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startServer, launch, newPage, waitLoaded, buildSite, SITE, ROOT, ARTIFACTS } from './helpers.mjs';
import { startHubMock, mockRepos } from '../hub-mock.mjs';

const MIB = 1024 ** 2;
const GIB = 1024 ** 3;
let server, browser, hub, pkg;
before(async () => {
  buildSite();
  pkg = await import(pathToFileURL(path.join(SITE, 'pkg/index.js')).href);
  server = await startServer();
  browser = await launch();
  hub = await startHubMock({ repos: mockRepos(ROOT), pageSize: 4 });
});
after(async () => { await browser?.close(); server?.close(); await hub?.close(); });

const LOCAL = {
  'tiny-Q4_K_M.gguf': ['fixtures/sample/tiny-llama-Q4_K_M.gguf'],
  'tiny-Q8_0.gguf': ['fixtures/sample/tiny-llama-Q8_0.gguf'],
  'qwen2.gguf': ['fixtures/plan/qwen2.gguf'],
  'gemma3.gguf': ['fixtures/plan/gemma3.gguf'],
  'split/llama-split-*-of-00003.gguf': [1, 2, 3].map((i) => `fixtures/plan/llama-split-0000${i}-of-00003.gguf`),
};

async function localVerdict(files, device) {
  const model = await pkg.openGguf(files.length > 1 ? files.map((f) => path.join(ROOT, f)) : path.join(ROOT, files[0]));
  try {
    return { summary: model.summary(), verdict: pkg.repoVerdict(model, device) };
  } finally {
    await model.close();
  }
}

const rowsOf = (page) => page.$$eval('#repo-table tbody tr', (trs) => trs.map((tr) => {
  const v = tr.cells[5];
  return { name: tr.dataset.name, size: tr.dataset.size, quant: tr.cells[1].textContent, text: tr.textContent, fits: v.dataset.fits, ngl: v.dataset.ngl, nglFull: v.dataset.nglFull, maxCtx: v.dataset.maxCtx, verdict: v.textContent };
}));
const done = (page) => page.waitForSelector('#repo-view[data-state="done"]', { timeout: 30000 });

test('a repo lists every GGUF model with the planner\'s verdict, headers only', async () => {
  hub.reset();
  const { page, log } = await newPage(browser);
  // 16 MiB of GPU (a custom amount) and 2048 context: some models fit (with the GPU's compute
  // buffer), some offload part
  const gpu = 16 / 1024;
  await page.goto(`${server.url}?repo=acme/tiny-GGUF&endpoint=${encodeURIComponent(hub.base)}&gpu=${gpu}&mctx=2048`);
  await done(page);
  const rows = await rowsOf(page);
  assert.deepEqual(rows.map((r) => r.name), ['broken.gguf', 'gemma3.gguf', 'part-*-of-00002.gguf', 'qwen2.gguf', 'split/llama-split-*-of-00003.gguf', 'tiny-Q4_K_M.gguf', 'tiny-Q8_0.gguf']);
  const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
  assert.equal(byName['broken.gguf'].fits, 'error');
  assert.match(byName['part-*-of-00002.gguf'].verdict, /shard 2 of 2 missing/);
  assert.match(byName['split/llama-split-*-of-00003.gguf'].text, /3 of 3 shards/);
  let partial = 0;
  for (const [name, files] of Object.entries(LOCAL)) {
    const { summary, verdict } = await localVerdict(files, { gpuMem: Math.round(gpu * GIB), ctx: 2048 });
    const row = byName[name];
    // general.file_type's label, or (none in the planner's fixtures) the type of most bytes, starred
    const top = [...summary.quantMix].sort((a, b) => b.bytes - a.bytes)[0].type;
    assert.equal(row.quant, summary.fileTypeLabel ? summary.fileTypeLabel.replace(/^MOSTLY_/, '') : `${top}*`, name);
    assert.equal(row.fits, verdict.fits ? 'yes' : 'no', name);
    assert.equal(Number(row.ngl), verdict.ngl, name);
    assert.equal(Number(row.nglFull), verdict.nglFull, name);
    assert.equal(row.maxCtx, verdict.maxCtx === null ? '' : String(verdict.maxCtx), name);
    if (!verdict.fits) partial++;
  }
  assert.ok(partial >= 1 && partial < 5, `${partial} of 5 need partial offload at 16 MiB`);
  // headers only: 8 files read (the incomplete split's shard is not), in at most 2 requests each,
  // far from their 2 GiB, at most 3 at a time
  const reads = hub.state.log.filter((l) => l.path.includes('/resolve/'));
  assert.equal(new Set(reads.map((l) => l.path)).size, 8);
  assert.ok(reads.length <= 16, `${reads.length} file requests`);
  assert.ok(hub.state.bytesSent < 8 * 32 * MIB, `${hub.state.bytesSent} bytes sent`);
  assert.ok(hub.state.maxInFlight <= 3, `${hub.state.maxInFlight} at a time`);
  assert.equal(hub.state.api, 3); // 12 entries in pages of 4

  // sorting by size: ascending, then descending
  await page.click('#repo-table button[data-sort="size"]');
  let sizes = (await rowsOf(page)).map((r) => Number(r.size));
  assert.deepEqual(sizes, [...sizes].sort((a, b) => a - b));
  await page.click('#repo-table button[data-sort="size"]');
  sizes = (await rowsOf(page)).map((r) => Number(r.size));
  assert.deepEqual(sizes, [...sizes].sort((a, b) => b - a));
  assert.equal((await rowsOf(page))[0].name, 'split/llama-split-*-of-00003.gguf');

  // another device: verdicts follow without reading again; the URL keeps the choice
  const before = hub.state.requests;
  await page.selectOption('#repo-gpu', '24');
  let after = await rowsOf(page);
  assert.ok(after.filter((r) => LOCAL[r.name]).every((r) => r.fits === 'yes'));
  assert.match(page.url(), /gpu=24\b/);
  await page.selectOption('#repo-gpu', '');
  after = await rowsOf(page);
  assert.ok(after.filter((r) => LOCAL[r.name]).every((r) => r.fits === 'cpu' && /CPU only/.test(r.verdict)));
  assert.equal(hub.state.requests, before);

  // a row opens the file in the normal view
  await page.selectOption('#repo-gpu', '8');
  await page.screenshot({ path: path.join(ARTIFACTS, 'repo-view.png'), fullPage: true });
  const want = await localVerdict(LOCAL['tiny-Q4_K_M.gguf'], {});
  await page.click('#repo-table tr[data-name="tiny-Q4_K_M.gguf"] td:nth-child(3)');
  await waitLoaded(page, want.summary.name);
  const url = new URL(page.url());
  assert.equal(url.searchParams.get('url'), `${hub.base}/acme/tiny-GGUF/resolve/main/tiny-Q4_K_M.gguf`);
  assert.equal(url.searchParams.get('gpu'), '8');
  // the top bar's button leads back to an empty repo view
  await page.click('#repo-link');
  await page.waitForSelector('#repo-view #repo-input');
  assert.equal(new URL(page.url()).search, '?repo=');
  assert.deepEqual(log.errors, []);
});

test('without a context each model is planned at its own trained context, as the planner card does', async () => {
  hub.reset();
  const { page, log } = await newPage(browser);
  const gpu = 16 / 1024;
  await page.goto(`${server.url}?repo=acme/tiny-GGUF&endpoint=${encodeURIComponent(hub.base)}&gpu=${gpu}`);
  await done(page);
  assert.equal(await page.$eval('#repo-ctx', (e) => e.value), '0');
  const byName = Object.fromEntries((await rowsOf(page)).map((r) => [r.name, r]));
  const trained = [];
  for (const [name, files] of Object.entries(LOCAL)) {
    const { summary, verdict } = await localVerdict(files, { gpuMem: Math.round(gpu * GIB), ctx: 0 });
    const own = await localVerdict(files, { gpuMem: Math.round(gpu * GIB) });
    assert.deepEqual(own.verdict, verdict, `${name}: ctx 0 is the default`);
    trained.push(summary.contextLength);
    assert.equal(verdict.ctx, summary.contextLength, name);
    assert.equal(Number(byName[name].ngl), verdict.ngl, name);
    assert.equal(byName[name].fits, verdict.fits ? 'yes' : 'no', name);
  }
  // the fixtures' contexts differ, so one shared 4096 would not be each model's own
  assert.ok(new Set(trained).size > 1 || !trained.includes(4096), String(trained));
  assert.ok(!new URL(page.url()).searchParams.has('mctx'));
  // a row opens the normal view with no mctx: the planner card then shows the trained context
  const want = await localVerdict(LOCAL['tiny-Q4_K_M.gguf'], {});
  await page.click('#repo-table tr[data-name="tiny-Q4_K_M.gguf"] td:nth-child(3)');
  await waitLoaded(page, want.summary.name);
  assert.equal(new URL(page.url()).searchParams.get('mctx'), null);
  await page.waitForFunction(() => document.querySelector('[data-mem="total"]').dataset.value);
  assert.equal(Number(await page.$eval('#mem-ctx', (e) => e.value)), want.summary.contextLength);
  assert.deepEqual(log.errors, []);
});

test('?endpoint= is https only (http on loopback): another one is refused and nothing is fetched', async () => {
  for (const bad of ['http://hub.example', 'javascript:alert(1)', 'ftp://127.0.0.1/']) {
    const { page, log } = await newPage(browser);
    await page.goto(`${server.url}?repo=acme/tiny-GGUF&endpoint=${encodeURIComponent(bad)}`);
    await page.waitForSelector('#repo-view[data-state="error"]');
    assert.match(await page.textContent('#error-text'), /endpoint must be https \(or http on 127\.0\.0\.1, localhost or \[::1\]\)/, bad);
    for (const u of log.requests) assert.ok(u.startsWith(server.url), `${bad}: request outside the site: ${u}`);
    assert.deepEqual(log.errors, []);
    await page.close();
  }
});

test('a gated repo asks for a token, kept in this tab only, sent only to its endpoint', async () => {
  hub.reset();
  const { page, log } = await newPage(browser);
  const address = `${server.url}?repo=acme/gated-GGUF&endpoint=${encodeURIComponent(hub.base)}&gpu=8`;
  await page.goto(address);
  await page.waitForSelector('#repo-view[data-state="error"]');
  assert.match(await page.textContent('#error-text'), /HTTP 401: gated or private, a token with access is needed/);
  await page.click('#repo-token-box summary');
  await page.fill('#repo-token', hub.token);
  await page.click('#repo-token-use');
  await done(page);
  let [row] = await rowsOf(page);
  assert.equal(row.fits, 'yes');
  const key = `gguf-lens-hub-token ${hub.base}`;
  assert.equal(await page.evaluate((k) => sessionStorage.getItem(k), key), hub.token);
  assert.equal(await page.evaluate(() => localStorage.length), 0);
  assert.ok(!page.url().includes(hub.token));
  // a reload in the same tab lists it again with the stored token
  await page.goto(address);
  await done(page);
  [row] = await rowsOf(page);
  assert.equal(row.fits, 'yes');
  assert.ok(hub.state.log.filter((l) => l.auth).every((l) => l.auth === `Bearer ${hub.token}`));
  // no Authorization to the site's own server (another origin than the endpoint)
  assert.ok(log.requests.length > 0);
  // a gated row opens in the normal view with the stored token (the file answers 401 without it)
  const want = await localVerdict(['fixtures/plan/llama.gguf'], {});
  const reads = hub.state.log.length;
  await page.click('#repo-table tr[data-name="llama.gguf"] td:nth-child(3)');
  await waitLoaded(page, want.summary.name);
  const fileReads = hub.state.log.slice(reads).filter((l) => l.path.endsWith('/resolve/main/llama.gguf'));
  assert.ok(fileReads.length > 0);
  assert.ok(fileReads.every((l) => l.auth === `Bearer ${hub.token}`));
  await page.goto(address);
  await done(page);
  await page.click('#repo-token-box summary').catch(() => {});
  await page.click('#repo-token-forget');
  await page.waitForSelector('#repo-view[data-state="error"]');
  assert.equal(await page.evaluate((k) => sessionStorage.getItem(k), key), null);
  assert.deepEqual(log.errors, []);
});
