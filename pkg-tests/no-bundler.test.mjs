// The installed package with no bundler, as a page loads it from a CDN: the package's files as
// npm installed them, served at a CDN-style path (/npm/gguf-lens@VERSION/, as jsDelivr and unpkg
// lay them out), imported by a plain <script type="module"> — once by full URL, once by the bare
// name through an import map, once as the single-file build (index.bundle.js); and
// <gguf-preview> from preview.bundle.js. In headless Chromium the package finds its own wasm beside it
// (`new URL('./wasm/…', import.meta.url)`), reads the oracle tensors over Range requests bit for
// bit, and `tensorStats({ workers: 2 })` starts its own module workers from the same path. And
// the header's first range goes out while the wasm is still on its way (the two downloads
// overlap): the server holds the wasm back until that request has come.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startServer } from './server.mjs';
import { DEQUANT, manifest, launchChromium } from './helpers.mjs';

const entries = manifest().filter((e) => ['Q4_K.gguf', 'IQ2_XXS.gguf', 'F16.gguf', 'MXFP4.gguf'].includes(e.file));
const installed = path.join(process.cwd(), 'node_modules/gguf-lens');
const version = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8')).version;
const CDN = `/npm/gguf-lens@${version}`;

// What the page runs once the package is imported as `lens`.
const CHECK = `
window.check = async (list) => {
  const problems = [];
  for (const e of list) {
    const model = await lens.openGguf('/fixtures/' + e.file);
    const got = new Uint8Array((await model.readTensor(e.tensor)).buffer);
    const want = new Uint8Array(await (await fetch('/fixtures/' + e.expected)).arrayBuffer());
    if (got.length !== want.length || got.some((b, i) => b !== want[i])) problems.push(e.file + ' ' + e.tensor);
    const one = await model.tensorStats(e.tensor, { workers: 0 });
    const pooled = await model.tensorStats(e.tensor, { workers: 2 });
    if (JSON.stringify(one) !== JSON.stringify(pooled)) problems.push(e.file + ' ' + e.tensor + ': stats on workers differ');
    await model.close();
  }
  return { kernel: await lens.kernelName(), problems, started: window.workersStarted };
};`;

const COUNT_WORKERS = `window.workersStarted = [];
const PageWorker = window.Worker;
window.Worker = class extends PageWorker {
  constructor(url, options) { super(url, options); window.workersStarted.push(String(url)); }
};`;

const PAGES = {
  'by-url.html': `<!doctype html><title>cdn</title><script>${COUNT_WORKERS}</script>
<script type="module">import * as lens from '${CDN}/index.js';${CHECK}</script>`,
  'import-map.html': `<!doctype html><title>cdn</title><script>${COUNT_WORKERS}</script>
<script type="importmap">{ "imports": { "gguf-lens": "${CDN}/index.js" } }</script>
<script type="module">import * as lens from 'gguf-lens';${CHECK}</script>`,
  'bundle.html': `<!doctype html><title>cdn</title><script>${COUNT_WORKERS}</script>
<script type="module">import * as lens from '${CDN}/index.bundle.js';${CHECK}</script>`,
};
/** The entry each page imports (the tests below load it again in the page). */
const ENTRY = { 'by-url.html': 'index.js', 'bundle.html': 'index.bundle.js' };

let server, browser, root;

before(async () => {
  // The site: the pages, and the package's files (no node_modules path, no build step).
  root = fs.mkdtempSync(path.join(process.cwd(), 'no-bundler-'));
  fs.cpSync(installed, path.join(root, CDN), { recursive: true });
  for (const [name, html] of Object.entries(PAGES)) fs.writeFileSync(path.join(root, name), html);
  // <gguf-preview> with its single-file build; window.loaded once it has rendered (or failed).
  fs.writeFileSync(path.join(root, 'preview.html'), `<!doctype html><title>preview</title>
<gguf-preview src="/fixtures/${entries[0].file}"></gguf-preview>
<script>window.loaded = new Promise((resolve) => {
  const el = document.querySelector('gguf-preview');
  const done = (tensorCount) => {
    const root = el.shadowRoot;
    resolve({ title: root.querySelector('h2')?.textContent ?? null, error: root.querySelector('.error')?.textContent ?? null,
      rows: root.querySelectorAll('table.tensors tbody tr').length, tensorCount,
      names: [...root.querySelectorAll('table.tensors tbody tr')].map((tr) => tr.children[0].textContent) });
  };
  el.addEventListener('load', (ev) => done(ev.detail.summary.tensorCount));
  el.addEventListener('error', () => done(null));
});</script>
<script type="module" src="${CDN}/preview.bundle.js"></script>`);
  const files = {};
  for (const e of entries) {
    files[`/fixtures/${e.file}`] = path.join(DEQUANT, e.file);
    files[`/fixtures/${e.expected}`] = path.join(DEQUANT, e.expected);
  }
  server = await startServer({ files, staticRoot: root });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

for (const page of Object.keys(PAGES)) {
  test(`no bundler (${page}): the package from a CDN-style path finds its wasm and workers and reads tensors bit for bit`, async () => {
    const tab = await browser.newPage();
    const errors = [];
    tab.on('pageerror', (err) => errors.push(String(err)));
    const fetched = [];
    tab.on('request', (r) => fetched.push(new URL(r.url()).pathname));
    await tab.goto(server.url(`/${page}`));
    await tab.waitForFunction(() => typeof window.check === 'function');
    const result = await tab.evaluate((list) => window.check(list), entries);
    await tab.close();
    assert.deepEqual(errors, []);
    assert.equal(result.kernel, 'simd128');
    assert.deepEqual(result.problems, []);
    assert.equal(entries.length, 8);
    // The module came from beside the package's own index.js, and so did the two workers.
    assert.ok(fetched.includes(`${CDN}/wasm/gguf_lens_bg.wasm`), `wasm not fetched from ${CDN}/wasm/: ${fetched.join(', ')}`);
    assert.equal(result.started.length, 2, `workers started: ${result.started.join(', ')}`);
    for (const url of result.started) assert.equal(new URL(url).pathname, `${CDN}/stats-worker.js`);
  });
}

for (const [page, entry] of Object.entries(ENTRY)) {
test(`no bundler (${entry}): the header request goes out before the wasm module has arrived`, async () => {
  const e = entries[0];
  let seeHeader;
  const headerSeen = new Promise((resolve) => { seeHeader = resolve; });
  let released = null;
  server.state.beforeStatic = async (pathname) => {
    if (!pathname.endsWith('.wasm')) return;
    // A page that waits for the module before asking for the header would wait here for ever:
    // after 20 s the module goes anyway, and the test fails on how it was released.
    const timeout = new Promise((resolve) => setTimeout(() => resolve('timeout'), 20000));
    released ??= await Promise.race([headerSeen.then(() => 'header request'), timeout]);
  };
  const watch = setInterval(() => {
    if (server.state.log.some((r) => r.path === `/fixtures/${e.file}`)) seeHeader();
  }, 5);
  try {
    const tab = await browser.newPage();
    await tab.goto(server.url(`/${page}`));
    await tab.waitForFunction(() => typeof window.check === 'function');
    const summary = await tab.evaluate(async ([url, file]) => {
      const lens = await import(url);
      const model = await lens.openGguf('/fixtures/' + file);
      const s = model.summary();
      await model.close();
      return { architecture: s.architecture };
    }, [`${CDN}/${entry}`, e.file]);
    await tab.close();
    assert.equal(released, 'header request');
    assert.equal(typeof summary.architecture, 'string');
  } finally {
    clearInterval(watch);
    server.state.beforeStatic = null;
  }
});

test(`no bundler (${entry}): the first summary loads the core wasm module alone, the full one comes with the first read`, async () => {
  const e = entries[0];
  const tab = await browser.newPage();
  try {
    await tab.goto(server.url(`/${page}`));
    await tab.waitForFunction(() => typeof window.check === 'function');
    const seen = await tab.evaluate(async ([url, file]) => {
      const lens = await import(url);
      const resources = () => performance.getEntriesByType('resource')
        .map((r) => ({ path: new URL(r.name).pathname, bytes: r.encodedBodySize }));
      const model = await lens.openGguf('/fixtures/' + file);
      const summary = model.summary();
      model.specialTokens();
      const atSummary = resources();
      const stats = await model.tensorStats(model.tensors[0].name, { workers: 0 });
      const atRead = resources();
      await model.close();
      return { architecture: summary.architecture, atSummary, atRead, count: stats.count, n: model.tensors[0].nElements };
    }, [`${CDN}/${entry}`, e.file]);
    const paths = (list) => list.map((r) => r.path);
    // The single-file build is the only JS the page fetches before its first summary.
    if (entry === 'index.bundle.js') {
      assert.deepEqual(paths(seen.atSummary).filter((p) => p.endsWith('.js')), [`${CDN}/index.bundle.js`]);
    }
    const FULL = [`${CDN}/wasm/gguf_lens_bg.wasm`, `${CDN}/wasm/gguf_lens_scalar_bg.wasm`, `${CDN}/wasm/gguf_lens.js`];
    assert.ok(paths(seen.atSummary).includes(`${CDN}/wasm/gguf_lens_core_bg.wasm`), paths(seen.atSummary).join(', '));
    for (const p of FULL) assert.ok(!paths(seen.atSummary).includes(p), `${p} loaded before the first summary`);
    // What a page pays before its first summary: the package's JS and the core module.
    const paid = seen.atSummary.filter((r) => r.path.startsWith(CDN)).reduce((n, r) => n + r.bytes, 0);
    assert.ok(paid > 0 && paid <= 600 * 1024, `${paid} bytes of JS+wasm before the first summary`);
    assert.ok(paths(seen.atRead).includes(`${CDN}/wasm/gguf_lens_bg.wasm`), 'the full module with the first read');
    assert.ok(paths(seen.atRead).includes(`${CDN}/wasm/gguf_lens.js`));
    assert.equal(seen.count, seen.n);
    assert.equal(typeof seen.architecture, 'string');
  } finally {
    await tab.close();
  }
});
}

test('no bundler: <gguf-preview> from preview.bundle.js renders a header with one JS file and the core module', async () => {
  const e = entries[0];
  const tab = await browser.newPage();
  const errors = [];
  tab.on('pageerror', (err) => errors.push(String(err)));
  const fetched = [];
  tab.on('request', (r) => fetched.push(new URL(r.url()).pathname));
  try {
    await tab.goto(server.url('/preview.html'));
    const shown = await tab.evaluate(() => window.loaded);
    assert.deepEqual(errors, []);
    assert.equal(shown.error, null);
    assert.ok(shown.title, 'a title');
    assert.equal(shown.rows, shown.tensorCount, 'one row per tensor of the load event summary');
    assert.ok(shown.names.includes(e.tensor), `${e.tensor} listed`);
    const ours = fetched.filter((p) => p.startsWith(CDN));
    assert.deepEqual(ours, [`${CDN}/preview.bundle.js`, `${CDN}/wasm/gguf_lens_core_bg.wasm`]);
  } finally {
    await tab.close();
  }
});
