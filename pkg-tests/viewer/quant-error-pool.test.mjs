// The Inspector's quantization-error chart on a tensor larger than its sample: first the sampled
// points, then every row on the worker pool, whose figures must equal the package's quantError
// over every row on one thread (pkg-tests/quant_error.test.mjs checks those against the CLI, and
// the CLI's quantizers against ggml); and the exact pass can be cancelled, keeping the sample.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { startServer, launch, newPage, waitLoaded, SITE } from './helpers.mjs';

const FILE = 'qerr-pool-test.gguf';
let server, browser;

/** A GGUF v3 file: general.name and the given tensors ({ name, dims, type: 0 F32 | 1 F16, data }). */
function gguf(name, tensors) {
  const parts = [];
  const u32 = (v) => { const b = Buffer.alloc(4); b.writeUInt32LE(v); parts.push(b); };
  const u64 = (v) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); parts.push(b); };
  const str = (s) => { u64(Buffer.byteLength(s)); parts.push(Buffer.from(s)); };
  parts.push(Buffer.from('GGUF'));
  u32(3); u64(tensors.length); u64(1);
  str('general.name'); u32(8); str(name);
  const pad = (n) => (n + 31) & ~31;
  let offset = 0;
  for (const t of tensors) {
    str(t.name); u32(t.dims.length);
    for (const d of t.dims) u64(d);
    u32(t.type); u64(offset);
    offset = pad(offset + t.data.length);
  }
  const head = Buffer.concat(parts);
  const out = [head, Buffer.alloc(pad(head.length) - head.length)];
  for (const t of tensors) out.push(t.data, Buffer.alloc(pad(t.data.length) - t.data.length));
  return Buffer.concat(out);
}

function values(n, type) {
  let x = 0x2545f491;
  const next = () => { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; return x >>> 0; };
  if (type === 0) {
    const f = new Float32Array(n);
    // Mostly small values, a few outliers (as in weights).
    for (let i = 0; i < n; i++) f[i] = (next() / 2 ** 32 - 0.5) * (next() % 97 === 0 ? 8 : 0.1);
    return Buffer.from(f.buffer);
  }
  const h = new Uint16Array(n);
  // Finite halves of both signs, magnitudes 2^-7 .. 2^3.
  for (let i = 0; i < n; i++) { const r = next(); h[i] = ((r & 1) << 15) | ((8 + ((r >>> 1) % 11)) << 10) | ((r >>> 5) & 0x3ff); }
  return Buffer.from(h.buffer);
}

before(async () => {
  server = await startServer();
  browser = await launch();
  writeFileSync(path.join(SITE, FILE), gguf('qerr pool test', [
    { name: 'small', dims: [256, 10240], type: 0, data: values(256 * 10240, 0) },
    { name: 'big', dims: [4096, 6144], type: 1, data: values(4096 * 6144, 1) },
  ]));
});
after(async () => {
  await browser?.close();
  server?.close();
  rmSync(path.join(SITE, FILE), { force: true });
});

async function openFile(page) {
  await page.goto(server.url);
  await waitLoaded(page, 'gguf-lens tiny sample');
  await page.setInputFiles('#file-input', path.join(SITE, FILE));
  await waitLoaded(page, 'qerr pool test');
  await page.click('[data-tab="inspector"]');
  // Each pass drawn, in order, with its note.
  await page.evaluate(() => {
    window.qerrPasses = [];
    new MutationObserver(() => {
      const pass = document.querySelector('#qerr-chart').dataset.pass;
      if (pass && window.qerrPasses.at(-1)?.pass !== pass) window.qerrPasses.push({ pass, note: document.querySelector('#qerr-note').textContent, points: document.querySelectorAll('#qerr-chart .point').length });
    }).observe(document.querySelector('#qerr-chart'), { attributes: true, childList: true });
  });
}

test('quantization error: sampled at once, then every row on the pool, equal to quantError over every row', async () => {
  const { page, log } = await newPage(browser);
  await openFile(page);
  await page.selectOption('#insp-tensor', 'small');
  await page.click('#qerr-run');
  await page.waitForFunction(() => document.querySelector('#qerr-chart').dataset.pass === 'exact', null, { timeout: 120000 });
  const passes = await page.evaluate(() => window.qerrPasses);
  assert.deepEqual(passes.map((p) => p.pass), ['sampled', 'exact']);
  assert.match(passes[0].note, /^sampled, 2,097,152 values \(8,192 of 10,240 rows, evenly spread\)/);
  assert.ok(passes[0].points >= 15, `${passes[0].points} points`);
  assert.match(await page.$eval('#qerr-note', (e) => e.textContent), /^exact, every row \(2,621,440 values\)/);
  const shown = await page.$$eval('#qerr-chart .point', (gs) => gs.map((g) => ({ type: g.dataset.type, rel: Number(g.dataset.relativeRmse) })));
  const want = await page.evaluate(async (file) => {
    const { openGguf } = await import('./pkg/index.js');
    const m = await openGguf(file);
    const all = await m.quantError('small');
    const sample = await m.quantError('small', { sampleRows: 8192 });
    return { all: all.results, sample: sample.results };
  }, FILE);
  assert.deepEqual(shown, want.all.map((r) => ({ type: r.type, rel: r.relativeRmse })));
  assert.equal(want.all[0].nValues, 256 * 10240);
  // The sample differs from the whole (it is a sample), if only in the last digits.
  assert.notDeepEqual(want.sample.map((r) => r.relativeRmse), want.all.map((r) => r.relativeRmse));
  assert.deepEqual(log.errors, []);
});

test('quantization error: cancelling the exact pass keeps the sampled chart', async () => {
  const { page, log } = await newPage(browser);
  await openFile(page);
  await page.selectOption('#insp-tensor', 'big');
  await page.click('#qerr-run');
  await page.waitForFunction(() => document.querySelector('#qerr-chart').dataset.pass === 'sampled', null, { timeout: 120000 });
  await page.click('#status button.cancel');
  await page.waitForFunction(() => /exact pass cancelled/.test(document.querySelector('#qerr-note').textContent), null, { timeout: 30000 });
  assert.equal(await page.$eval('#qerr-chart', (e) => e.dataset.pass), 'sampled');
  assert.ok(await page.$$eval('#qerr-chart .point', (gs) => gs.length) >= 15);
  assert.equal(await page.$eval('#error', (e) => e.hidden), true);
  // The pool still works after the cancel.
  await page.selectOption('#insp-tensor', 'small');
  await page.click('#qerr-run');
  await page.waitForFunction(() => document.querySelector('#qerr-chart').dataset.pass === 'exact', null, { timeout: 120000 });
  assert.deepEqual(log.errors, []);
});
