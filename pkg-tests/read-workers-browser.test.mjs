// readTensor({ workers }) in headless Chromium: on a cross-origin isolated page, module workers
// running gguf-lens/stats-worker fill a Float32Array over a SharedArrayBuffer (new, or the
// caller's) with this thread's bits; on a page that is not isolated (no SharedArrayBuffer) the
// option falls back to this thread and a plain array.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startServer } from './server.mjs';
import { CHROMIUM, launchChromium } from './helpers.mjs';

const haveChromium = fs.existsSync(CHROMIUM);

/** A GGUF with a Q8_0 tensor `q` (random blocks) and an F32 tensor `f` of 70000-value rows. */
function sampleGguf() {
  const parts = [];
  const u32 = (v) => { const b = Buffer.alloc(4); b.writeUInt32LE(v); parts.push(b); };
  const u64 = (v) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); parts.push(b); };
  const tensors = [
    { name: 'q', ne: [4096, 100], type: 8, bytes: (4096 / 32) * 34 * 100 },
    { name: 'f', ne: [70000, 3], type: 0, bytes: 4 * 70000 * 3 },
  ];
  parts.push(Buffer.from('GGUF'));
  u32(3); u64(tensors.length); u64(0);
  let offset = 0;
  for (const t of tensors) {
    u64(t.name.length); parts.push(Buffer.from(t.name));
    u32(t.ne.length); for (const d of t.ne) u64(d);
    u32(t.type); u64(offset);
    offset = Math.ceil((offset + t.bytes) / 32) * 32;
  }
  const header = Buffer.concat(parts);
  const start = Math.ceil(header.length / 32) * 32;
  const data = Buffer.alloc(start - header.length + offset);
  let x = 7;
  for (let i = start - header.length; i < data.length; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    data[i] = x >>> 24;
  }
  return Buffer.concat([header, data]);
}

const PAGE_CHECK = async (data) => {
  const { openGguf } = await import('/node_modules/gguf-lens/index.js');
  const model = await openGguf(new File([new Uint8Array(data)], 'sample.gguf'));
  const workers = [0, 1].map(() => new Worker('/node_modules/gguf-lens/stats-worker.js', { type: 'module' }));
  const same = (x, y) => x.length === y.length && new Uint8Array(x.buffer, x.byteOffset, x.byteLength)
    .every((b, i) => b === new Uint8Array(y.buffer, y.byteOffset, y.byteLength)[i]);
  const result = { isolated: globalThis.crossOriginIsolated, sab: typeof SharedArrayBuffer, checks: [] };
  for (const name of ['q', 'f']) {
    const one = await model.readTensor(name);
    const pooled = await model.readTensor(name, { workers, chunkBytes: 30_000 });
    const rows = await model.readTensor(name, { workers, rows: [1, 3] });
    const oneRows = await model.readTensor(name, { rows: [1, 3] });
    result.checks.push({
      name,
      shared: typeof SharedArrayBuffer === 'function' && pooled.buffer instanceof SharedArrayBuffer,
      same: same(pooled, one),
      sameRows: same(rows, oneRows),
    });
    if (typeof SharedArrayBuffer === 'function') {
      const into = new Float32Array(new SharedArrayBuffer(4 * one.length));
      const out = await model.readTensor(name, { workers, into });
      result.checks.push({ name: `${name} into`, shared: out.buffer === into.buffer, same: same(out, one), sameRows: true });
    }
  }
  for (const w of workers) w.terminate();
  await model.close();
  return result;
};

let bytes;
let isolated;
let plain;
let browser;

before(async () => {
  if (!haveChromium) return;
  const root = process.cwd(); // the temporary project with node_modules/gguf-lens
  fs.writeFileSync(`${root}/read-workers.html`, '<!doctype html><title>gguf-lens</title>');
  bytes = [...sampleGguf()];
  isolated = await startServer({ staticRoot: root, isolated: true });
  plain = await startServer({ staticRoot: root });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await isolated?.close();
  await plain?.close();
});

test('Chromium, cross-origin isolated: workers fill shared arrays with this thread\'s bits', { skip: !haveChromium && `no ${CHROMIUM}` }, async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  await page.goto(isolated.url('/read-workers.html'));
  const result = await page.evaluate(PAGE_CHECK, bytes);
  assert.deepEqual(errors, []);
  assert.equal(result.isolated, true);
  assert.equal(result.checks.length, 4);
  for (const c of result.checks) assert.deepEqual(c, { name: c.name, shared: true, same: true, sameRows: true });
  await page.close();
});

test('Chromium, not isolated: `workers` falls back to this thread and a plain array', { skip: !haveChromium && `no ${CHROMIUM}` }, async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  await page.goto(plain.url('/read-workers.html'));
  const result = await page.evaluate(PAGE_CHECK, bytes);
  assert.deepEqual(errors, []);
  assert.equal(result.isolated, false);
  assert.equal(result.sab, 'undefined');
  assert.equal(result.checks.length, 2);
  for (const c of result.checks) assert.deepEqual(c, { name: c.name, shared: false, same: true, sameRows: true });
  await page.close();
});

// `workers: 2`, a number, as in Node: the package starts its own module workers (its
// stats-worker.js, found from its own URL), once for every call of the page.
const OWN_WORKERS_CHECK = async (data) => {
  const started = [];
  const PageWorker = globalThis.Worker;
  globalThis.Worker = class extends PageWorker {
    constructor(url, options) { super(url, options); started.push({ url: String(url), type: options?.type }); }
  };
  const { openGguf } = await import('/node_modules/gguf-lens/index.js');
  const model = await openGguf(new File([new Uint8Array(data)], 'sample.gguf'));
  const same = (x, y) => x.length === y.length && new Uint8Array(x.buffer, x.byteOffset, x.byteLength)
    .every((b, i) => b === new Uint8Array(y.buffer, y.byteOffset, y.byteLength)[i]);
  const checks = [];
  for (const name of ['q', 'f']) {
    const one = await model.readTensor(name);
    const pooled = await model.readTensor(name, { workers: 2, chunkBytes: 30_000 });
    const stats = await model.tensorStats(name, { workers: 0 });
    const pooledStats = await model.tensorStats(name, { workers: 2, chunkBytes: 30_000 });
    const quant = await model.quantError(name, { types: ['Q4_K', 'Q8_0'] });
    const pooledQuant = await model.quantError(name, { types: ['Q4_K', 'Q8_0'], workers: 2 });
    checks.push({
      name,
      shared: typeof SharedArrayBuffer === 'function' && pooled.buffer instanceof SharedArrayBuffer,
      same: same(pooled, one),
      sameStats: JSON.stringify(stats) === JSON.stringify(pooledStats) && stats.count === one.length,
      // Random bits hold NaNs: a type may be skipped, with the same reason on workers.
      sameQuant: JSON.stringify(quant) === JSON.stringify(pooledQuant) && quant.results.length + quant.skipped.length === 2,
    });
  }
  await model.close();
  const fromBuffer = await openGguf(new Uint8Array(data));
  const errors = [];
  for (const call of [() => fromBuffer.tensorStats('q', { workers: 2 }), () => fromBuffer.quantError('q', { types: ['Q8_0'], workers: 2 })]) {
    try {
      await call();
      errors.push(null);
    } catch (err) {
      errors.push(`${err.name}: ${err.message}`);
    }
  }
  const plainStats = await fromBuffer.tensorStats('q');
  await fromBuffer.close();
  globalThis.Worker = PageWorker;
  return { isolated: globalThis.crossOriginIsolated, checks, started, errors, plainCount: plainStats.count };
};

for (const [label, server, isIsolated] of [['cross-origin isolated', () => isolated, true], ['not isolated', () => plain, false]]) {
  test(`Chromium, ${label}: workers: 2 starts the package's own module workers, with this thread's bits`, { skip: !haveChromium && `no ${CHROMIUM}` }, async () => {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (err) => errors.push(String(err)));
    await page.goto(server().url('/read-workers.html'));
    const result = await page.evaluate(OWN_WORKERS_CHECK, bytes);
    assert.deepEqual(errors, []);
    assert.equal(result.isolated, isIsolated);
    assert.equal(result.checks.length, 2);
    // Not isolated: readTensor's shared result cannot be, and this thread reads a plain array.
    for (const c of result.checks) assert.deepEqual(c, { name: c.name, shared: isIsolated, same: true, sameStats: true, sameQuant: true });
    assert.equal(result.started.length, 2, JSON.stringify(result.started));
    for (const w of result.started) {
      assert.equal(new URL(w.url).pathname, '/node_modules/gguf-lens/stats-worker.js');
      assert.equal(w.type, 'module');
    }
    for (const e of result.errors) assert.match(e ?? '', /^TypeError: gguf-lens: (tensorStats|quantError) with workers needs a model opened from a URL, path, File or Blob/);
    assert.equal(result.plainCount, 4096 * 100);
    await page.close();
  });
}
