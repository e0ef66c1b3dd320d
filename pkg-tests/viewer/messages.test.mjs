// Messages people understand: each family of failure says what happened in plain words first,
// then the library's detail, then what to do — a truncated file, a 404, a network failure, a
// file that is not a model (what it looks like instead), a quantization type refused (why), a
// value typed for a new key.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { startServer, launch, newPage, waitLoaded, readJson, ROOT, FIXTURES } from './helpers.mjs';

const expected = readJson(path.join(FIXTURES, 'expected-sample.json'));
const SAMPLE = readFileSync(path.join(ROOT, 'fixtures/sample/tiny-llama-Q4_K_M.gguf'));
let server, browser;
before(async () => { server = await startServer(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

const errorText = (page) => page.$eval('#error-text', (e) => e.textContent);
const count = (text, s) => text.split(s).length - 1;

async function opened(page) {
  await page.goto(server.url);
  await waitLoaded(page, expected.summary.name);
}
async function pick(page, bytes, name) {
  await page.setInputFiles('#file-input', { name, mimeType: 'application/octet-stream', buffer: Buffer.from(bytes) });
  await page.waitForSelector('#error:not([hidden])');
  return errorText(page);
}

test('a truncated file says it is incomplete, its size and roughly what it needs', async () => {
  const { page } = await newPage(browser);
  await opened(page);
  for (const n of [100000, 3000]) {
    const text = await pick(page, SAMPLE.subarray(0, n), 'partial.gguf');
    assert.match(text, new RegExp(`^could not open partial\\.gguf: the file is incomplete: it has ${n.toLocaleString('en-US')} bytes, and needs more than about [\\d,]+ \\(probably a partial download: download it again\\)\\. Detail: .+`), text);
    assert.doesNotMatch(text, /\b(\d+) bytes \1\b/, 'no number twice');
    assert.equal(await page.textContent('#error-kind'), 'Error:');
    await page.click('#error-close');
  }
  // The same over a URL: its size from the server.
  await page.route('**/partial-url.gguf', (route) => {
    const range = /bytes=(\d+)-(\d*)/.exec(route.request().headers().range ?? '');
    const body = SAMPLE.subarray(0, 100000);
    const start = range ? Number(range[1]) : 0, end = range && range[2] ? Math.min(Number(range[2]) + 1, body.length) : body.length;
    route.fulfill({ status: range ? 206 : 200, headers: { 'Content-Range': `bytes ${start}-${end - 1}/${body.length}`, 'Accept-Ranges': 'bytes', 'Content-Length': String(end - start) }, body: body.subarray(start, end) });
  });
  await page.fill('#url-input', '/partial-url.gguf');
  await page.click('#url-form button[type="submit"]');
  await page.waitForSelector('#error:not([hidden])');
  assert.match(await errorText(page), /the file is incomplete: it has 100,000 bytes/);
});

test('a 404 says not found once, naming the URL once', async () => {
  const { page } = await newPage(browser);
  await page.goto(`${server.url}?url=${encodeURIComponent('/fixtures/missing.gguf')}`);
  await page.waitForSelector('#error:not([hidden])');
  const text = await errorText(page);
  assert.match(text, /^could not open http:\/\/127\.0\.0\.1:\d+\/fixtures\/missing\.gguf: not found \(HTTP 404\): check the address/);
  assert.equal(count(text, 'missing.gguf'), 1, text);
  assert.equal(count(text, '404'), 1, text);
});

test('a network failure gives one hint', async () => {
  const { page } = await newPage(browser);
  await opened(page);
  await page.fill('#url-input', 'http://127.0.0.1:9/model.gguf'); // port 9: refused
  await page.click('#url-form button[type="submit"]');
  await page.waitForSelector('#error:not([hidden])');
  const text = await errorText(page);
  assert.match(text, /^could not open http:\/\/127\.0\.0\.1:9\/model\.gguf: the server could not be reached/);
  assert.equal(count(text, 'CORS'), 1, text);
  assert.equal(count(text, 'offline'), 1, text);
  assert.equal(count(text, '127.0.0.1:9'), 1, text);
});

test('a file that is not a model says what it looks like instead', async () => {
  const { page } = await newPage(browser);
  await opened(page);
  assert.match(await pick(page, 'this is not a gguf file at all, just text', 'notes.gguf'), /^could not open notes\.gguf: this is not a GGUF or safetensors file: it is text \("this is not a gguf file at all, just tex…"\)\. Detail: not a GGUF file/);
  await page.click('#error-close');
  assert.match(await pick(page, 'version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 1\n', 'lfs.gguf'), /it is a Git LFS pointer/);
  await page.click('#error-close');
  // A web page given as the model's URL (a Hub /blob/ link).
  await page.route('**/blob/model.gguf', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><html><head><title>model.gguf</title></head><body>a page about the file, long enough to be read as one</body></html>' }));
  await page.fill('#url-input', '/blob/model.gguf');
  await page.click('#url-form button[type="submit"]');
  await page.waitForSelector('#error:not([hidden])');
  assert.match(await errorText(page), /not a GGUF or safetensors file: it is a web page \(HTML\).*\/resolve\/, not \/blob\//);
});

/** A GGUF of one F32 tensor [rows × cols] (ggml dims: cols, rows), built by hand. */
function gguf(cols, rows, value = (i) => Math.sin(i * 0.37) * (1 + (i % 7))) {
  const name = Buffer.from('t.weight');
  const head = Buffer.alloc(4 + 4 + 8 + 8 + 8 + name.length + 4 + 16 + 4 + 8);
  let o = head.write('GGUF', 0);
  o = head.writeUInt32LE(3, o); o = head.writeBigUInt64LE(1n, o); o = head.writeBigUInt64LE(0n, o);
  o = head.writeBigUInt64LE(BigInt(name.length), o); o += name.copy(head, o);
  o = head.writeUInt32LE(2, o); o = head.writeBigUInt64LE(BigInt(cols), o); o = head.writeBigUInt64LE(BigInt(rows), o);
  o = head.writeUInt32LE(0, o); head.writeBigUInt64LE(0n, o);
  const pad = Buffer.alloc(Math.ceil(head.length / 32) * 32 - head.length);
  const data = Buffer.alloc(cols * rows * 4);
  for (let i = 0; i < cols * rows; i++) data.writeFloatLE(value(i), i * 4);
  return Buffer.concat([head, pad, data]);
}

test('a quantization type refused says why (rows of 640 are not a multiple of 256)', async () => {
  const { page } = await newPage(browser);
  await opened(page);
  await page.setInputFiles('#file-input', { name: 'rows640.gguf', mimeType: 'application/octet-stream', buffer: gguf(640, 4) });
  await page.waitForFunction(() => document.querySelector('#model-source').textContent === 'rows640.gguf', null, { timeout: 20000 });
  await page.click('[data-tab="inspector"]');
  await page.selectOption('#insp-tensor', 't.weight');
  await page.click('#qerr-run');
  await page.waitForFunction(() => document.querySelector('#qerr-chart').dataset.pass === 'exact', null, { timeout: 60000 });
  const note = await page.textContent('#qerr-note');
  assert.match(note, /not possible: [^(]*\bQ2_K\b[^(]*\(rows of 640 values are not a multiple of 256\)/, note);
  // Q8_0's block of 32 divides 640: measured, not refused.
  assert.ok(await page.$('#qerr-table tr[data-type="Q8_0"]'));
  assert.doesNotMatch(note.match(/not possible: [^(]*/)[0], /\bQ8_0\b/);
});

test('add a key: "type from value" takes a URL as a string; a bad typed value is refused beside the form', async () => {
  const { page } = await newPage(browser);
  await opened(page);
  await page.click('[data-tab="metadata"]');
  await page.fill('#edit-add-key', 'general.url');
  await page.fill('#edit-add-value', 'https://example.com');
  await page.click('#edit-add button[type="submit"]');
  await page.waitForSelector('#edit-table tr[data-key="general.url"]');
  assert.equal(await page.$eval('#edit-table tr[data-key="general.url"] .after', (e) => e.textContent), 'https://example.com');
  assert.equal(await page.$eval('#edit-add-error', (e) => e.hidden), true);
  await page.fill('#edit-add-key', 'general.count');
  await page.selectOption('#edit-add-type', 'uint32');
  await page.fill('#edit-add-value', 'abc');
  await page.click('#edit-add button[type="submit"]');
  await page.waitForSelector('#edit-add-error:not([hidden])');
  assert.equal(await page.textContent('#edit-add-error'), 'general.count: a uint32 is a number, not "abc"');
  assert.equal(await page.$eval('#edit-add-value', (e) => e.getAttribute('aria-invalid')), 'true');
  assert.equal(await page.$eval('#error', (e) => e.hidden), true, 'not at the top of the page');
  assert.doesNotMatch(await page.textContent('#edit-add-error'), /not a auto/);
});

test('an all-zero or constant tensor is said in words in the Inspector', async () => {
  const { page } = await newPage(browser);
  await opened(page);
  for (const [name, value, want] of [['zeros.gguf', () => 0, /^All 1,024 values are zero: often the sign of a broken conversion/], ['ones.gguf', () => 0.5, /^Every finite value is 0\.5: a constant tensor\.$/], ['varied.gguf', undefined, null]]) {
    await page.setInputFiles('#file-input', { name, mimeType: 'application/octet-stream', buffer: gguf(256, 4, value) });
    await page.waitForFunction((n) => document.querySelector('#model-source').textContent === n, name, { timeout: 20000 });
    await page.click('[data-tab="inspector"]');
    await page.click('#insp-run');
    await page.waitForFunction(() => document.querySelector('[data-stat="count"]').dataset.value === '1024');
    const w = await page.$eval('#insp-warning', (e) => ({ hidden: e.hidden, text: e.textContent }));
    if (want) { assert.equal(w.hidden, false, name); assert.match(w.text, want); } else assert.equal(w.hidden, true, name);
  }
});
