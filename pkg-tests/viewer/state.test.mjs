// Errors and progress where the user is, and what is shown is the state: two long tasks run
// side by side (a hash and the Inspector's analysis both complete), a Cancel is "Cancelled",
// the message box stays in view when scrolled; the URL box, the page address and the open
// model agree; pending edits show in the table and the summary; leaving with them asks.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import os from 'node:os';
import { mkdtempSync, writeFileSync, truncateSync, rmSync } from 'node:fs';
import { startServer, launch, newPage, waitLoaded, readJson, ROOT, FIXTURES } from './helpers.mjs';

const expected = readJson(path.join(FIXTURES, 'expected-sample.json'));
let server, browser, dir, big;
before(async () => {
  server = await startServer(); browser = await launch();
  // One F32 tensor of 256 MiB (a hole on disk), header by hand: hashing and analysing it take a while.
  dir = mkdtempSync(path.join(os.tmpdir(), 'gguf-lens-tasks-'));
  const n = 64 * 1024 * 1024;
  const name = Buffer.from('big.weight');
  const head = Buffer.alloc(4 + 4 + 8 + 8 + 8 + name.length + 4 + 8 + 4 + 8);
  let o = head.write('GGUF', 0);
  o = head.writeUInt32LE(3, o); o = head.writeBigUInt64LE(1n, o); o = head.writeBigUInt64LE(0n, o);
  o = head.writeBigUInt64LE(BigInt(name.length), o); o += name.copy(head, o);
  o = head.writeUInt32LE(1, o); o = head.writeBigUInt64LE(BigInt(n), o); o = head.writeUInt32LE(0, o); head.writeBigUInt64LE(0n, o);
  const padded = Math.ceil(head.length / 32) * 32;
  big = path.join(dir, 'big.gguf');
  writeFileSync(big, Buffer.concat([head, Buffer.alloc(padded - head.length)]));
  truncateSync(big, padded + n * 4);
});
after(async () => { await browser?.close(); server?.close(); rmSync(dir, { recursive: true, force: true }); });

test('two long tasks run side by side: a hash and an analysis both complete; a Cancel is not an error', async () => {
  const { page, log } = await newPage(browser);
  await page.goto(server.url);
  await waitLoaded(page, expected.summary.name);
  await page.setInputFiles('#file-input', big);
  await page.waitForFunction(() => document.querySelector('#model-source').textContent === 'big.gguf', null, { timeout: 20000 });
  await page.click('[data-tab="integrity"]');
  await page.click('#hash-run');
  await page.click('[data-tab="inspector"]');
  await page.click('#insp-run');
  // Both listed at once, each with its own Cancel.
  await page.waitForFunction(() => document.querySelectorAll('#status li.task').length === 2, null, { timeout: 20000 });
  const labels = await page.$$eval('#status li.task button.cancel', (bs) => bs.map((b) => b.getAttribute('aria-label')));
  assert.ok(labels.some((l) => /Hashing/.test(l)) && labels.some((l) => /big\.weight/.test(l)), labels.join());
  await page.waitForFunction(() => !document.querySelector('#hash-result').hidden && document.querySelector('[data-stat="count"]').dataset.value === String(64 * 1024 * 1024), null, { timeout: 120000 });
  assert.equal(await page.$eval('#error', (e) => e.hidden), true, 'neither was cancelled or failed');
  assert.equal(await page.$eval('#status', (e) => e.hidden), true);
  // The user's Cancel: "Cancelled", as a status, never "Error:".
  await page.click('[data-tab="integrity"]');
  await page.click('#hash-run');
  await page.click('#status button.cancel[aria-label="Cancel: Hashing"]');
  await page.waitForSelector('#error:not([hidden])');
  assert.equal(await page.textContent('#error-kind'), 'Cancelled:');
  assert.equal(await page.$eval('#error', (e) => e.getAttribute('role')), 'status');
  assert.doesNotMatch(await page.textContent('#error'), /Error/);
  assert.deepEqual(log.errors, []);
});

test('the message box stays in view when the page is scrolled', async () => {
  const { page } = await newPage(browser);
  await page.goto(server.url);
  await waitLoaded(page, expected.summary.name);
  await page.click('[data-tab="tensors"]');
  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
  await page.fill('#url-input', 'javascript:alert(1)');
  await page.press('#url-input', 'Enter');
  await page.waitForSelector('#error:not([hidden])');
  const box = await page.$eval('#error', (e) => { const r = e.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, scrolled: window.scrollY }; });
  assert.ok(box.scrolled > 200, `scrolled ${box.scrolled}`);
  assert.ok(box.top >= 0 && box.bottom <= 900, `in the viewport: ${JSON.stringify(box)}`);
});

test('URL box, page address and open model agree', async () => {
  const { page } = await newPage(browser);
  const sample = `${server.url}sample-fixtures/tiny-llama-Q4_K_M.gguf`;
  await page.goto(`${server.url}?url=${encodeURIComponent(sample)}`);
  await waitLoaded(page, expected.summary.name);
  assert.equal(await page.inputValue('#url-input'), sample);
  // A failed URL: the address and the model stay; the box is marked.
  const before = page.url();
  await page.fill('#url-input', '/fixtures/missing.gguf');
  await page.click('#url-form button[type="submit"]');
  await page.waitForSelector('#error:not([hidden])');
  assert.equal(page.url(), before);
  assert.equal(await page.textContent('[data-field="name"]'), expected.summary.name);
  assert.equal(await page.$eval('#url-input', (e) => e.getAttribute('aria-invalid')), 'true');
  // A local file: no URL names it.
  await page.setInputFiles('#file-input', path.join(ROOT, 'fixtures/sample/tiny-llama-Q8_0.gguf'));
  await page.waitForFunction(() => document.querySelector('#model-source').textContent === 'tiny-llama-Q8_0.gguf', null, { timeout: 20000 });
  assert.equal(await page.inputValue('#url-input'), '');
  assert.equal(new URL(page.url()).searchParams.get('url'), null);
});

test('pending edits show in the table count and the summary; leaving asks', async () => {
  const { page, log } = await newPage(browser);
  await page.goto(server.url);
  await waitLoaded(page, expected.summary.name);
  await page.click('[data-tab="metadata"]');
  const total = Number(await page.$eval('#meta-count', (e) => e.dataset.total));
  await page.fill('#edit-add-key', 'general.license');
  await page.fill('#edit-add-value', 'mit');
  await page.click('#edit-add button[type="submit"]');
  await page.waitForSelector('#meta-table tr[data-key="general.license"] .op-add');
  assert.equal(await page.textContent('#meta-count'), `${total + 1} of ${total + 1} keys (1 added: not saved yet)`);
  await page.click('#meta-table tr[data-key="general.name"] .edit-key');
  await page.fill('#meta-table tr[data-key="general.name"] .edit-value', 'renamed model');
  await page.click('#meta-table tr[data-key="general.name"] .edit-save');
  await page.waitForFunction(() => document.querySelector('[data-field="name"]').textContent === 'renamed model');
  assert.equal(await page.$eval('[data-field="name"]', (e) => e.classList.contains('edited')), true);
  assert.match(await page.textContent('#meta-count'), /\(1 added, 1 edited: not saved yet\)$/);
  await page.close({ runBeforeUnload: true });
  await new Promise((r) => setTimeout(r, 500));
  assert.deepEqual(log.dialogs, ['beforeunload']);
});

test('a first visit shows how to open one\'s own file; dismissed, it stays away', async () => {
  const { page } = await newPage(browser);
  await page.goto(server.url);
  await waitLoaded(page, expected.summary.name);
  assert.equal(await page.$eval('#welcome', (e) => e.hidden), false);
  await page.click('#welcome-close');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'open-file');
  await page.reload();
  await waitLoaded(page, expected.summary.name);
  assert.equal(await page.$eval('#welcome', (e) => e.hidden), true);
});

test('viewer-server.mjs --help prints its usage instead of serving', async () => {
  const { execFileSync } = await import('node:child_process');
  const out = execFileSync(process.execPath, [path.join(ROOT, 'scripts/viewer-server.mjs'), '--help'], { encoding: 'utf8', timeout: 5000 });
  assert.match(out, /^usage: node scripts\/viewer-server\.mjs ROOT \[PORT\]/);
  assert.doesNotMatch(out, /serving/);
});

test('memory planner: context 0 is the model\'s context, printed as -c 0', async () => {
  const { page } = await newPage(browser);
  await page.goto(server.url);
  await waitLoaded(page, expected.summary.name);
  await page.waitForSelector('#mem-table [data-mem="kv"][data-value]:not([data-value=""])');
  const full = await page.$eval('[data-mem="kv"]', (e) => e.dataset.value);
  await page.fill('#mem-ctx', '0');
  await page.waitForFunction(() => /(^|\s)-c 0(\s|$)/.test(document.querySelector('#mem-command').textContent));
  // Planned at the model's context: the same KV cache as the default (the training context).
  assert.equal(await page.$eval('[data-mem="kv"]', (e) => e.dataset.value), full);
  assert.match(await page.textContent('#mem-ctx-note'), /the model's context, [\d,]+/);
});
