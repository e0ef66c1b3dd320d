// <gguf-preview> (the package's `gguf-lens/preview`) in Chromium: embed.html?url=… and a page that
// sets the element's `file` property, against gguf-py's reading of the sample
// (fixtures/expected-sample.json); malicious metadata stays text; themes; keyboard.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { startServer, launch, newPage, readJson, waitLoaded, field, FIXTURES, ARTIFACTS, ROOT } from './helpers.mjs';

const expected = readJson(path.join(FIXTURES, 'expected-sample.json'));
let server, browser;
before(async () => { server = await startServer(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

/** Waits for the element to render a model (or an error); returns what its shadow root shows. */
async function shown(page) {
  await page.waitForFunction(() => {
    const root = document.querySelector('gguf-preview')?.shadowRoot;
    return root && (root.querySelector('h2') || root.querySelector('.error'));
  }, null, { timeout: 20000 });
  return page.evaluate(() => {
    const root = document.querySelector('gguf-preview').shadowRoot;
    const text = (sel) => root.querySelector(sel)?.textContent ?? null;
    const facts = Object.fromEntries([...root.querySelectorAll('[data-fact]')].map((d) => [d.dataset.fact, d.querySelector('dd').textContent]));
    return {
      title: text('h2'),
      error: text('.error'),
      facts,
      mix: [...root.querySelectorAll('.legend [data-type]')].map((e) => e.dataset.type),
      keys: [...root.querySelectorAll('table.metadata tbody tr')].map((tr) => tr.dataset.key),
      tensors: [...root.querySelectorAll('table.tensors tbody tr')].map((tr) => [...tr.children].map((td) => td.textContent)),
      template: root.querySelector('details.template pre')?.textContent ?? null,
      special: Object.fromEntries([...root.querySelectorAll('[data-special]')].map((e) => [e.dataset.special, e.querySelector('code').textContent])),
      background: getComputedStyle(document.querySelector('gguf-preview')).backgroundColor,
      injected: root.querySelectorAll('img, script, iframe').length,
    };
  });
}

test('embed.html?url= shows what gguf-py reads from the header', async () => {
  const { page, log } = await newPage(browser);
  await page.goto(`${server.url}embed.html?url=${encodeURIComponent('sample/tiny-llama-Q4_K_M.gguf')}`);
  const got = await shown(page);
  const s = expected.summary;
  assert.equal(got.error, null);
  assert.equal(got.title, s.name);
  assert.equal(got.facts.Architecture, s.architecture);
  assert.equal(got.facts.Parameters, `918.8K (${s['parameter-count'].toLocaleString('en-US')})`);
  assert.equal(got.facts.Quantization, s['file-type']);
  assert.equal(got.facts['Bits per weight'], s['bits-per-weight'].toFixed(2));
  assert.equal(got.facts.Context, s['context-length'].toLocaleString('en-US'));
  assert.equal(got.facts.Layers, String(s['block-count']));
  assert.equal(got.facts.Tensors, String(expected.tensors.length));
  assert.deepEqual(got.keys, expected.metadata_keys);
  assert.equal(got.template, expected.chat_template);
  assert.equal(got.special.bos, expected.tokens['1']);
  assert.equal(got.special.eos, expected.tokens['2']);
  assert.deepEqual(new Set(got.mix), new Set(['Q4_K', 'Q6_K', 'F32']));
  assert.equal(got.tensors.length, expected.tensors.length);
  for (const t of expected.tensors) {
    const row = got.tensors.find((r) => r[0] === t.name);
    assert.ok(row, t.name);
    assert.equal(row[1], t.type);
    // gguf-py lists ggml's dims (innermost first); the element shows them outermost first.
    assert.equal(row[2], `[${[...t.shape].reverse().join(', ')}]`);
  }
  assert.deepEqual(log.errors, []);
  // Only the header was read: far fewer bytes than the file.
  await page.screenshot({ path: path.join(ARTIFACTS, 'preview-light.png'), fullPage: true });
});

test('a File set as the `file` property; dark theme by attribute; the template opens by keyboard', async () => {
  const { page, log } = await newPage(browser, { colorScheme: 'light' });
  await page.goto(`${server.url}embed.html?url=about:blank`);
  const bytes = [...readFileSync(path.join(ROOT, 'fixtures/sample/tiny-llama-Q4_K_M.gguf'))];
  await page.evaluate((data) => {
    document.querySelector('gguf-preview').remove();
    const el = document.createElement('gguf-preview');
    el.setAttribute('theme', 'dark');
    document.body.append(el);
    el.file = new File([new Uint8Array(data)], 'local.gguf');
  }, bytes);
  const got = await shown(page);
  assert.equal(got.title, expected.summary.name);
  assert.equal(got.background, 'rgb(13, 17, 23)');
  await page.focus('gguf-preview');
  const opened = await page.evaluate(async () => {
    const details = document.querySelector('gguf-preview').shadowRoot.querySelector('details.template');
    details.querySelector('summary').focus();
    return details.getRootNode().activeElement === details.querySelector('summary');
  });
  assert.ok(opened, 'the template summary takes keyboard focus');
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.querySelector('gguf-preview').shadowRoot.querySelector('details.template').open), true);
  assert.deepEqual(log.errors, []);
  await page.screenshot({ path: path.join(ARTIFACTS, 'preview-dark.png'), fullPage: true });
});

test('hostile metadata is shown as text, and a bad URL is one error in the element', async () => {
  const { page, log } = await newPage(browser);
  await page.goto(`${server.url}embed.html?url=${encodeURIComponent('/fixtures/malicious.gguf')}`);
  const got = await shown(page);
  assert.equal(got.injected, 0);
  assert.deepEqual(log.dialogs, []);
  const { page: bad } = await newPage(browser);
  await bad.goto(`${server.url}embed.html?url=${encodeURIComponent('javascript:alert(1)')}`);
  const failed = await shown(bad);
  assert.match(failed.error, /^Could not read this file: /);
});

test('the embed and the viewer show the same type colours and the same numbers (one copy: the package\'s display.js)', async () => {
  for (const file of ['sample/tiny-llama-Q4_K_M.gguf', 'sample-fixtures/tiny-llama-Q8_0.gguf']) {
    const { page: embed } = await newPage(browser);
    await embed.goto(`${server.url}embed.html?url=${encodeURIComponent(file)}`);
    await shown(embed);
    const e = await embed.evaluate(() => {
      const root = document.querySelector('gguf-preview').shadowRoot;
      const facts = Object.fromEntries([...root.querySelectorAll('[data-fact]')].map((d) => [d.dataset.fact, d.querySelector('dd').textContent]));
      const colours = Object.fromEntries([...root.querySelectorAll('.legend [data-type]')].map((s) => [s.dataset.type, getComputedStyle(s.querySelector('i')).backgroundColor]));
      const bar = [...root.querySelectorAll('.bar span')].map((s) => [s.title, getComputedStyle(s).backgroundColor]);
      const sizes = Object.fromEntries([...root.querySelectorAll('table.tensors tbody tr')].map((tr) => [tr.dataset.tensor, tr.children[3].textContent]));
      return { facts, colours, bar, sizes };
    });
    const { page: viewer } = await newPage(browser);
    await viewer.goto(`${server.url}?url=${encodeURIComponent(file)}`);
    await viewer.waitForFunction((f) => [f.split('/').pop(), 'the bundled sample'].some((t) => document.querySelector('#model-source').textContent.includes(t)) && document.querySelector('#mix-chart tr[data-type]'), file, { timeout: 20000 });
    const v = await viewer.evaluate(() => ({
      colours: Object.fromEntries([...document.querySelectorAll('#mix-chart tr[data-type]')].map((tr) => [tr.dataset.type, getComputedStyle(tr.querySelector('.swatch')).backgroundColor])),
    }));
    await viewer.click('[data-tab="tensors"]');
    const vSizes = await viewer.$$eval('#tensor-table tbody tr[data-tensor]', (trs) => Object.fromEntries(trs.map((tr) => [tr.dataset.tensor, [...tr.children].map((td) => td.textContent)])));
    // the same colour for every type, in the legend and in the bar
    assert.deepEqual(v.colours, e.colours, file);
    for (const [type, colour] of e.bar) assert.equal(colour, v.colours[type], `${file}: bar ${type}`);
    // the same text for the same number
    assert.equal((await field(viewer, 'parameter-count')).text, e.facts.Parameters, file);
    assert.equal((await field(viewer, 'bits-per-weight')).text, e.facts['Bits per weight'], file);
    assert.equal((await field(viewer, 'file-size')).text.split(' (')[0], e.facts['File size'], file);
    assert.equal((await field(viewer, 'context-length')).text, e.facts.Context, file);
    assert.equal((await field(viewer, 'vocab-size')).text, e.facts.Vocabulary, file);
    // the viewer's table has the exact bytes; the embed shows them as the viewer's byte format does
    const vFormat = await viewer.evaluate(async (bytes) => { const f = await import('./format.js'); return bytes.map(f.fmtBytes); }, Object.keys(e.sizes).map((n) => Number(vSizes[n][4].replace(/,/g, ''))));
    assert.deepEqual(Object.values(e.sizes), vFormat, file);
    // and both are the package's: one copy of the colours and formats
    const pkg = await viewer.evaluate(async (types) => {
      const d = await import('./pkg/display.js');
      const rgb = (hex) => `rgb(${[1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(', ')})`;
      return Object.fromEntries(types.map((t) => [t, rgb(d.typeColour(t))]));
    }, Object.keys(e.colours));
    assert.deepEqual(e.colours, pkg, file);
  }
  // The formats themselves, on the numbers where the two copies used to differ.
  const { page } = await newPage(browser);
  await page.goto(`${server.url}embed.html?url=about:blank`);
  const f = await page.evaluate(async () => {
    const d = await import('./pkg/display.js');
    const p = await import('./pkg/preview.js');
    return { bytes: [580032, 1023, 1024, 2.5 * 2 ** 30, 150 * 2 ** 20].map(d.formatBytes), count: [918784, 7.24e9, 12345678, 999].map(d.formatCount), same: p.formatBytes === d.formatBytes && p.compactCount === d.formatCount };
  });
  assert.deepEqual(f.bytes, ['566.4 KiB', '1023 B', '1.00 KiB', '2.50 GiB', '150.0 MiB']);
  assert.deepEqual(f.count, ['918.8K', '7.24B', '12.3M', '999']);
  assert.equal(f.same, true);
});
