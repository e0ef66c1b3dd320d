// Editing metadata in the viewer, and the Integrity tab's hashes, against the oracles: every
// saved file has the sha256 of the file gguf-py writes with the same edits
// (fixtures/edit/expected.json), and the hashes are what llama-gguf-hash prints
// (fixtures/hash/expected.json).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startServer, launch, newPage, waitLoaded, readJson, ROOT, ARTIFACTS } from './helpers.mjs';

const cases = readJson(path.join(ROOT, 'fixtures/edit/expected.json'));
const hashes = readJson(path.join(ROOT, 'fixtures/hash/expected.json'));
const INPUT = path.join(ROOT, 'fixtures/edit/input.gguf');
let server, browser;
before(async () => { server = await startServer(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

/** A page with the edit fixture opened as a dropped local File; saving goes to a download. */
async function openInput() {
  const { page, log } = await newPage(browser);
  await page.addInitScript(() => { delete window.showSaveFilePicker; window.showSaveFilePicker = undefined; });
  await page.goto(server.url);
  await waitLoaded(page, 'gguf-lens tiny sample');
  await page.setInputFiles('#file-input', INPUT);
  await waitLoaded(page, 'tiny');
  await page.click('[data-tab="metadata"]');
  return { page, log };
}

async function saved(page) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#edit-save')]);
  assert.equal(dl.suggestedFilename(), 'input-edited.gguf');
  return crypto.createHash('sha256').update(await readFile(await dl.path())).digest('hex');
}

async function editValue(page, key, text) {
  await page.click(`#meta-table tr[data-key="${key}"] .edit-key`);
  await page.fill(`#meta-table tr[data-key="${key}"] .edit-value`, text);
  await page.click(`#meta-table tr[data-key="${key}"] .edit-save`);
}

async function waitPending(page, n) {
  await page.waitForFunction((k) => document.querySelector('#edit-count').textContent === String(k) && !document.querySelector('#edit-card').hidden, n);
}

test('edit a value, remove a key, replace the template: each saved file is gguf-py\'s', async () => {
  const { page, log } = await openInput();
  // grow_unicode_name: a long unicode name.
  const name = cases.grow_unicode_name.sets[0][2];
  await editValue(page, 'general.name', name);
  await waitPending(page, 1);
  assert.equal(await page.$eval('#edit-table tr[data-key="general.name"]', (r) => r.dataset.op), 'set');
  await page.screenshot({ path: path.join(ARTIFACTS, 'edit-pending.png'), fullPage: true });
  assert.equal(await saved(page), cases.grow_unicode_name.sha256);
  await page.click('#edit-discard');
  await page.waitForFunction(() => document.querySelector('#edit-card').hidden);

  // shrink_remove_license
  await page.click('#meta-table tr[data-key="general.license"] .remove-key');
  await waitPending(page, 1);
  assert.equal(await page.$eval('#edit-table tr[data-key="general.license"]', (r) => r.dataset.op), 'remove');
  assert.equal(await saved(page), cases.shrink_remove_license.sha256);
  await page.click('#edit-table tr[data-key="general.license"] button');
  await page.waitForFunction(() => document.querySelector('#edit-card').hidden);

  // chat_template, from the Chat template tab
  await page.click('[data-tab="template"]');
  await page.fill('#chat-template-edit', cases.chat_template.sets[0][2]);
  await page.click('#template-apply');
  await page.click('[data-tab="metadata"]');
  await waitPending(page, 1);
  assert.equal(await saved(page), cases.chat_template.sha256);
  assert.deepEqual(log.errors, []);
});

test('a new alignment (added key) moves the tensors as gguf-py does', async () => {
  const { page } = await openInput();
  await page.fill('#edit-add-key', 'general.alignment');
  await page.selectOption('#edit-add-type', 'uint32');
  await page.fill('#edit-add-value', '256');
  await page.click('#edit-add button[type="submit"]');
  await waitPending(page, 1);
  assert.equal(await page.$eval('#edit-table tr[data-key="general.alignment"]', (r) => r.dataset.op), 'add');
  assert.equal(await saved(page), cases.realign_256.sha256);
});

test('a value the key\'s type cannot hold is refused with one line, nothing pending', async () => {
  const { page } = await openInput();
  await editValue(page, 'llama.block_count', '"many"');
  // Beside the value typed, not at the page's top.
  const row = '#meta-table tr[data-key="llama.block_count"]';
  await page.waitForSelector(`${row} .field-error:not([hidden])`);
  assert.match(await page.textContent(`${row} .field-error`), /^llama\.block_count: a uint32 is a number, not "many"$/);
  assert.equal(await page.$eval(`${row} input.edit-value`, (e) => e.getAttribute('aria-invalid')), 'true');
  assert.equal(await page.$eval('#error', (e) => e.hidden), true);
  assert.equal(await page.$eval('#edit-card', (c) => c.hidden), true);
});

test('Integrity: the hashes are llama-gguf-hash\'s, line for line', async () => {
  const { page, log } = await newPage(browser);
  await page.goto(server.url);
  await waitLoaded(page, 'gguf-lens tiny sample');
  await page.click('[data-tab="integrity"]');
  await page.check('#hash-sha1');
  await page.click('#hash-run');
  await page.waitForFunction(() => !document.querySelector('#hash-result').hidden, null, { timeout: 20000 });
  const want = hashes.files['fixtures/sample/tiny-llama-Q4_K_M.gguf'].all_uuid.replaceAll('fixtures/sample/', '');
  assert.equal(await page.textContent('#hash-lines'), want);
  const uuid = await page.$eval('#hash-model tr[data-hash="uuid"] td', (td) => td.textContent);
  assert.ok(want.includes(`uuid      ${uuid}  tiny-llama-Q4_K_M.gguf`));
  await page.screenshot({ path: path.join(ARTIFACTS, 'integrity.png'), fullPage: true });
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#hash-download')]);
  assert.equal(await readFile(await dl.path(), 'utf8'), want);
  assert.deepEqual(log.errors, []);
});

test('Integrity: the lint table is the package\'s model.lint(), errors badged', async () => {
  const { page, log } = await openInput();
  // The same file through the package in the page (the core's lint, tested against llama.cpp in
  // tests/lint*.rs): the tab must show exactly its findings.
  const input = await readFile(INPUT);
  const cli = await page.evaluate(async (bytes) => {
    const { openGguf } = await import('./pkg/index.js');
    const m = await openGguf(new Uint8Array(bytes));
    return await m.lint();
  }, [...input]);
  assert.ok(cli.findings.some((f) => f.code === 'tensor-missing'));
  await page.click('[data-tab="integrity"]');
  await page.waitForFunction(() => document.querySelector('#lint-summary').dataset.errors !== undefined);
  const rows = await page.$$eval('#lint-table tbody tr', (trs) => trs.map((tr) => [tr.dataset.severity, tr.dataset.code]));
  assert.deepEqual(rows, cli.findings.map((f) => [f.severity, f.code]));
  assert.ok(cli.errors > 0);
  assert.equal(await page.textContent('#lint-badge'), String(cli.errors));
  // The bundled sample is clean: no badge.
  await page.setInputFiles('#file-input', path.join(ROOT, 'fixtures/sample/tiny-llama-Q8_0.gguf'));
  await page.waitForFunction(() => document.querySelector('#lint-summary').dataset.errors === '0');
  assert.equal(await page.$eval('#lint-badge', (b) => b.hidden), true);
  assert.deepEqual(log.errors, []);
});

test('Integrity: hashing a big local file shows progress and stops on Cancel', async () => {
  const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
  const os = await import('node:os');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gguf-lens-hash-'));
  try {
    // One F32 tensor of 256 MiB (a hole on disk), header by hand.
    const n = 64 * 1024 * 1024;
    const name = Buffer.from('big.weight');
    const head = Buffer.alloc(4 + 4 + 8 + 8 + 8 + name.length + 4 + 8 + 4 + 8);
    let o = head.write('GGUF', 0);
    o = head.writeUInt32LE(3, o); o = head.writeBigUInt64LE(1n, o); o = head.writeBigUInt64LE(0n, o);
    o = head.writeBigUInt64LE(BigInt(name.length), o); o += name.copy(head, o);
    o = head.writeUInt32LE(1, o); o = head.writeBigUInt64LE(BigInt(n), o); o = head.writeUInt32LE(0, o); head.writeBigUInt64LE(0n, o);
    const padded = Math.ceil(head.length / 32) * 32;
    const file = path.join(dir, 'big.gguf');
    writeFileSync(file, Buffer.concat([head, Buffer.alloc(padded - head.length)]));
    const { truncateSync } = await import('node:fs');
    truncateSync(file, padded + n * 4);
    const { page } = await newPage(browser);
    await page.goto(server.url);
    await waitLoaded(page, 'gguf-lens tiny sample');
    await page.setInputFiles('#file-input', file);
    await page.waitForFunction(() => document.querySelector('[data-field="name"]').textContent !== 'gguf-lens tiny sample', null, { timeout: 20000 });
    await page.click('[data-tab="integrity"]');
    await page.click('#hash-run');
    await page.waitForFunction(() => /Hashing: .* of /.test(document.querySelector('#status .progress-text')?.textContent), null, { timeout: 20000 });
    await page.click('#status button.cancel');
    await page.waitForFunction(() => !document.querySelector('#error').hidden);
    assert.equal(await page.textContent('#error-kind'), 'Cancelled:');
    assert.equal(await page.textContent('#error-text'), 'hashing');
    assert.equal(await page.$eval('#hash-result', (r) => r.hidden), true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
