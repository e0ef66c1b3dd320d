// Every way in: drop a file anywhere, the file picker, ?url= (HTTP Range against the local
// server), the URL box; cancelling a long read; readable errors, never a blank page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { startServer, launch, newPage, waitLoaded, field, readJson, ROOT, FIXTURES, ARTIFACTS, waitInspected } from './helpers.mjs';

const expected = readJson(path.join(FIXTURES, 'expected-sample.json'));
const P = readJson(path.join(FIXTURES, 'malicious.json'));
let server, browser;
before(async () => { server = await startServer(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

async function dropFile(page, bytes, name) {
  await page.evaluate(async ({ b64, name }) => {
    const bin = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const dt = new DataTransfer();
    dt.items.add(new File([bin], name, { type: 'application/octet-stream' }));
    document.body.dispatchEvent(new DragEvent('dragenter', { dataTransfer: dt, bubbles: true, cancelable: true }));
    document.body.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
    document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, { b64: Buffer.from(bytes).toString('base64'), name });
}

test('drop a file anywhere on the page', async () => {
  const { page, log } = await newPage(browser);
  await page.goto(server.url);
  await waitLoaded(page, expected.summary.name);
  await dropFile(page, readFileSync(path.join(FIXTURES, 'malicious.gguf')), 'dropped.gguf');
  await waitLoaded(page, P.name);
  assert.equal(await page.$eval('#model-source', (e) => e.textContent), 'dropped.gguf');
  assert.equal(await page.$eval('#drop-overlay', (e) => e.hidden), true);
  await dropFile(page, readFileSync(path.join(ROOT, 'fixtures/sample/tiny-llama-Q4_K_M.gguf')), 'tiny.gguf');
  await waitLoaded(page, expected.summary.name);
  assert.equal(Number((await field(page, 'parameter-count')).value), expected.summary['parameter-count']);
  assert.deepEqual(log.errors, []);
});

test('the file picker opens a local file', async () => {
  const { page } = await newPage(browser);
  await page.goto(server.url);
  await waitLoaded(page, expected.summary.name);
  await page.setInputFiles('#file-input', path.join(FIXTURES, 'malicious.gguf'));
  await waitLoaded(page, P.name);
  assert.equal(new URL(page.url()).search, '');
});

test('?url= reads the file from the local server with Range requests', async () => {
  const { page, log, context } = await newPage(browser);
  const ranges = [];
  context.on('request', (r) => { if (new URL(r.url()).pathname.endsWith('.gguf')) ranges.push(r.headers().range); });
  const target = `${server.url}sample-fixtures/tiny-llama-Q4_K_M.gguf`;
  await page.goto(`${server.url}?url=${encodeURIComponent(target)}`);
  await waitLoaded(page, expected.summary.name);
  assert.equal(await page.$eval('#model-source', (e) => e.textContent), target);
  assert.equal(Number((await field(page, 'file-size')).value), expected.summary['file-size']);
  await page.click('[data-tab="tensors"]');
  await page.click('#tensor-table tr[data-tensor="output.weight"]');
  await waitInspected(page);
  assert.equal(await page.$eval('[data-stat="max"]', (e) => Number(e.dataset.value)), expected.stats['output.weight'].max);
  // The header in one streamed open-ended request per opening (the page, then each statistics
  // worker), every tensor read an exact range.
  assert.ok(ranges.length >= 2 && ranges.every((r) => /^bytes=\d+-(\d+)?$/.test(r)), `ranges: ${ranges}`);
  assert.ok(ranges.some((r) => /^bytes=\d+-\d+$/.test(r)), `ranges: ${ranges}`);
  assert.ok(ranges.filter((r) => r === 'bytes=0-').length <= 1 + 4, `ranges: ${ranges}`);
  assert.deepEqual(log.errors, []);
});

test('the URL box opens a URL and records it in the address bar', async () => {
  const { page } = await newPage(browser);
  await page.goto(server.url);
  await waitLoaded(page, expected.summary.name);
  await page.fill('#url-input', '/fixtures/malicious.gguf');
  await page.click('#url-form button[type="submit"]');
  await waitLoaded(page, P.name);
  assert.equal(new URL(page.url()).searchParams.get('url'), '/fixtures/malicious.gguf');
});

test('a long read is cancellable, and the model open before stays usable', async () => {
  const { page, context } = await newPage(browser);
  let release;
  const held = new Promise((r) => { release = r; });
  await context.route('**/slow.gguf', async (route) => { await held; await route.abort().catch(() => {}); });
  await page.goto(server.url);
  await waitLoaded(page, expected.summary.name);
  await page.fill('#url-input', '/fixtures/slow.gguf');
  await page.click('#url-form button[type="submit"]');
  await page.waitForSelector('#status:not([hidden])');
  await page.screenshot({ path: path.join(ARTIFACTS, 'loading.png') });
  await page.click('#status button.cancel');
  await page.waitForSelector('#error:not([hidden])');
  // The user's own Cancel is not an error.
  assert.equal(await page.textContent('#error-kind'), 'Cancelled:');
  assert.match(await page.$eval('#error-text', (e) => e.textContent), /^opening http:\/\/127\.0\.0\.1:\d+\/fixtures\/slow\.gguf$/);
  assert.equal(await page.$eval('#status', (e) => e.hidden), true);
  release();
  await page.click('[data-tab="tensors"]');
  await page.click('#tensor-table tr[data-tensor="output.weight"]');
  await waitInspected(page);
  assert.equal(await page.$eval('[data-stat="max"]', (e) => Number(e.dataset.value)), expected.stats['output.weight'].max);
});

test('errors are readable messages, never a blank page', async () => {
  const { page, log } = await newPage(browser);
  await page.goto(`${server.url}?url=${encodeURIComponent('/fixtures/missing.gguf')}`);
  await page.waitForSelector('#error:not([hidden])');
  assert.match(await page.$eval('#error-text', (e) => e.textContent), /could not open .*missing\.gguf: not found \(HTTP 404\)/);
  await page.screenshot({ path: path.join(ARTIFACTS, 'error-404.png') });

  await dropFile(page, Buffer.from('this is not a gguf file at all, just text'), 'notes.txt');
  await page.waitForFunction(() => /not a GGUF file/.test(document.querySelector('#error-text').textContent));
  const bytes = readFileSync(path.join(ROOT, 'fixtures/sample/tiny-llama-Q4_K_M.gguf')).subarray(0, 3000);
  await dropFile(page, bytes, 'truncated.gguf');
  // The message is the engine's own (it names what is wrong and the byte offset).
  await page.waitForFunction(() => /could not open truncated\.gguf: .+ at byte \d+/.test(document.querySelector('#error-text').textContent));
  await page.goto(`${server.url}?url=${encodeURIComponent('javascript:alert(1)')}`);
  await page.waitForSelector('#error:not([hidden])');
  assert.match(await page.$eval('#error-text', (e) => e.textContent), /only http and https/);
  assert.deepEqual(log.dialogs, []);
  assert.ok((await page.$eval('main', (e) => e.innerText)).length > 100, 'the page still shows its layout');
});
