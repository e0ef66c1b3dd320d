// A file whose every string is an injection payload stays inert: no dialog, no script run, no
// element made from file data; the payloads are shown literally. Also checks the page's CSP.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import http from 'node:http';
import { startServer, launch, newPage, waitLoaded, field, readJson, FIXTURES, ARTIFACTS, waitInspected } from './helpers.mjs';

const P = readJson(path.join(FIXTURES, 'malicious.json'));
let server, browser;
before(async () => { server = await startServer(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

test('the page has a strict Content-Security-Policy and loads nothing from elsewhere', async () => {
  const { page, log } = await newPage(browser);
  await page.goto(server.url);
  await waitLoaded(page, 'gguf-lens tiny sample');
  const csp = await page.$eval('meta[http-equiv="Content-Security-Policy"]', (m) => m.content);
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self' 'wasm-unsafe-eval'(;|$)/);
  assert.doesNotMatch(csp, /'unsafe-inline'|'unsafe-eval'|\s\*/);
  assert.equal(await page.$$eval('script:not([src])', (s) => s.length), 0);
  assert.equal(await page.$$eval('[onclick],[onload],[onerror]', (s) => s.length), 0);
  for (const u of log.requests) assert.ok(u.startsWith(server.url), `request outside the site: ${u}`);
  // The worker runs under the same policy (sent as a header: a worker ignores the page's meta).
  const w = await fetch(new URL('worker.js', server.url));
  assert.equal(w.headers.get('content-security-policy'), csp);
});

test('the viewer cannot be framed; embed.html can, by any site, and still runs under its CSP', async () => {
  const viewer = await fetch(server.url);
  assert.match(viewer.headers.get('content-security-policy'), /frame-ancestors 'none'/);
  assert.equal(viewer.headers.get('x-frame-options'), 'DENY');
  const embedUrl = new URL('embed.html', server.url).href;
  const embed = await fetch(embedUrl);
  assert.match(embed.headers.get('content-security-policy'), /script-src 'self' 'wasm-unsafe-eval';.*frame-ancestors \*$/);
  assert.equal(embed.headers.get('x-frame-options'), null);
  // A page on another origin frames both: only the embed loads (wasm included).
  const { page, log } = await newPage(browser);
  // Another port is another origin (a page from elsewhere may not frame loopback at all).
  const framerServer = http.createServer((req, res) => res.writeHead(200, { 'content-type': 'text/html' })
    .end(`<iframe id="v" src="${server.url}"></iframe><iframe id="e" src="${embedUrl}"></iframe>`));
  await new Promise((resolve) => framerServer.listen(0, '127.0.0.1', resolve));
  after(() => framerServer.close());
  await page.goto(`http://127.0.0.1:${framerServer.address().port}/`);
  const frameOf = (prefix) => page.frames().find((f) => f.url().startsWith(prefix));
  const deadline = Date.now() + 20000;
  let shown = '';
  while (Date.now() < deadline) {
    const f = frameOf(embedUrl);
    shown = f ? await f.evaluate(() => document.querySelector('gguf-preview')?.shadowRoot?.textContent ?? '').catch(() => '') : '';
    if (/llama/i.test(shown)) break;
    await page.waitForTimeout(100);
  }
  assert.match(shown, /llama/i, `the framed embed shows the sample: ${JSON.stringify(shown.slice(0, 200))} frames ${page.frames().map((f) => f.url())} ${log.console.join(' / ')}`);
  const v = frameOf(server.url + '?') ?? page.frames().find((f) => f.url() === server.url);
  const viewerShown = v ? await v.evaluate(() => document.querySelector('#main') !== null).catch(() => false) : false;
  assert.equal(viewerShown, false, 'the framed viewer is blocked');
  assert.ok(log.console.some((m) => /frame-ancestors/.test(m)), 'Chromium reports the refusal');
});

test('malicious metadata, tokens, tensor names and template are shown as text, never run', async () => {
  const { page, log } = await newPage(browser);
  await page.goto(`${server.url}?url=${encodeURIComponent('/fixtures/malicious.gguf')}`);
  await waitLoaded(page, P.name);
  assert.equal((await field(page, 'architecture')).text, P.arch);
  assert.equal((await field(page, 'tokenizer-model')).text, P.model);

  await page.click('[data-tab="metadata"]');
  const keys = await page.$$eval('#meta-table tbody tr', (trs) => trs.map((tr) => tr.dataset.key));
  assert.ok(keys.includes(P.key));
  const cells = await page.$$eval('#meta-table tbody td.value', (tds) => tds.map((td) => td.textContent));
  assert.ok(cells.some((c) => c.includes(P.url)));
  assert.ok(cells.some((c) => c.includes(P.description)));
  await page.click('#meta-table tbody tr[data-key="tokenizer.ggml.tokens"] button.link');
  await page.waitForSelector('#meta-table .array-items li');

  await page.click('[data-tab="tokenizer"]');
  await page.waitForSelector('#tok-table tbody tr');
  const toks = await page.$$eval('#tok-table tbody code', (cs) => cs.map((c) => c.textContent));
  assert.deepEqual(toks, P.tokens.map((t) => t.replace(/ /g, '·')));
  await page.waitForSelector('#merge-table tbody tr');
  const merges = await page.$$eval('#merge-table tbody code', (cs) => cs.map((c) => c.textContent));
  assert.equal(merges[0], P.merge.replace(/ /g, '·'));
  await page.screenshot({ path: path.join(ARTIFACTS, 'malicious-tokenizer.png'), fullPage: true });
  await page.click('[data-tab="template"]');
  assert.equal(await page.$eval('#chat-template', (e) => e.textContent), P.template);
  await page.click('[data-tab="tensors"]');
  assert.equal(await page.$eval('#tensor-table tr[data-tensor] td', (e) => e.textContent), P.tensor);
  await page.click('#tensor-table tr[data-tensor] td');
  await waitInspected(page);
  await page.click('[data-tab="overview"]');
  await page.hover('#heatmap');
  await page.waitForTimeout(300);

  // Nothing ran and nothing was built from the payloads.
  assert.deepEqual(log.dialogs, []);
  assert.deepEqual(log.errors, []);
  assert.deepEqual(log.console.filter((m) => m.startsWith('error')), []);
  assert.notEqual(await page.title(), 'pwned');
  const injected = await page.evaluate(() => ({
    img: document.querySelectorAll('img').length,
    iframe: document.querySelectorAll('iframe').length,
    scripts: [...document.scripts].map((s) => s.getAttribute('src')),
    anchors: document.querySelectorAll('a').length,
    handlers: [...document.querySelectorAll('*')].filter((e) => [...e.attributes].some((a) => a.name.startsWith('on'))).length,
    svgOnload: document.querySelectorAll('svg[onload]').length,
    bold: [...document.querySelectorAll('b')].filter((b) => b.textContent === 'bold').length,
  }));
  assert.deepEqual(injected, { img: 0, iframe: 0, scripts: ['app.js'], anchors: 0, handlers: 0, svgOnload: 0, bold: 0 });
  await page.screenshot({ path: path.join(ARTIFACTS, 'malicious-overview.png'), fullPage: true });
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-md')]);
  assert.match(dl.suggestedFilename(), /^[A-Za-z0-9._-]+\.md$/);
  const [dj] = await Promise.all([page.waitForEvent('download'), page.click('#export-json')]);
  const exported = JSON.parse(await (await import('node:fs/promises')).readFile(await dj.path(), 'utf8'));
  assert.equal(exported.summary.name, P.name);
  await page.click('[data-tab="metadata"]');
  await page.screenshot({ path: path.join(ARTIFACTS, 'malicious-metadata.png'), fullPage: true });
});

test('comparing with the malicious file: its key, name and tensor are shown as text, never run', async () => {
  const { page, log } = await newPage(browser);
  await page.goto(server.url);
  await waitLoaded(page, 'gguf-lens tiny sample');
  await page.click('#compare-start');
  await page.fill('#compare-url', '/fixtures/malicious.gguf');
  await page.click('#compare-form button[type="submit"]');
  await page.waitForSelector('#panel-compare:not([hidden]) [data-diff="meta-only-b"] li');
  assert.equal(await page.$eval('#cmp-summary tr[data-field="name"] [data-side="b"]', (e) => e.textContent), P.name);
  const onlyB = await page.$$eval('[data-diff="meta-only-b"] li', (lis) => lis.map((li) => li.dataset.key));
  assert.ok(onlyB.includes(P.key));
  assert.ok(await page.$eval('#cmp-meta', (e, url) => e.textContent.includes(url), P.url));
  const tensorsB = await page.$$eval('[data-diff="tensor-only-b"] li', (lis) => lis.map((li) => li.dataset.tensor));
  assert.deepEqual(tensorsB, [P.tensor]);
  assert.equal(await page.$eval('#cmp-all', (e) => e.disabled), true); // no tensor in both
  assert.equal(await page.$eval('#cmp-meta-note', (e) => e.textContent), '1 key equal');
  await page.waitForTimeout(300);
  assert.deepEqual(log.dialogs, []);
  assert.deepEqual(log.errors, []);
  assert.notEqual(await page.title(), 'pwned');
  const injected = await page.evaluate(() => ({
    img: document.querySelectorAll('img').length,
    iframe: document.querySelectorAll('iframe').length,
    anchors: document.querySelectorAll('a').length,
    handlers: [...document.querySelectorAll('*')].filter((e) => [...e.attributes].some((a) => a.name.startsWith('on'))).length,
    bold: [...document.querySelectorAll('b')].filter((b) => b.textContent === 'bold').length,
  }));
  assert.deepEqual(injected, { img: 0, iframe: 0, anchors: 0, handlers: 0, bold: 0 });
  await page.screenshot({ path: path.join(ARTIFACTS, 'malicious-compare.png'), fullPage: true });
});
