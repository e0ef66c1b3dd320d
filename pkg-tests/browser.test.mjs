// The installed package in real headless Chromium (Debian's /usr/bin/chromium driven by
// playwright-core, which never downloads a browser): main thread and a module Web Worker read
// every oracle tensor over HTTP Range requests, bit for bit.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startServer } from './server.mjs';
import { startLiar } from './liar-server.mjs';
import { makeBigHeader } from './helpers.mjs';
import { REPO, DEQUANT, manifest, CHROMIUM, launchChromium } from './helpers.mjs';

const haveChromium = fs.existsSync(CHROMIUM);
const entries = manifest();
const gptqCases = JSON.parse(fs.readFileSync(path.join(REPO, 'fixtures/gptq/manifest.json'), 'utf8')).cases;

// The check that runs in the page and in the worker: returns one line per mismatch.
const CHECK = `
export async function check(entries) {
  const { openGguf, kernelName } = await import('/node_modules/gguf-lens/index.js');
  const problems = [];
  const kernel = await kernelName();
  let requests = 0;
  for (const file of [...new Set(entries.map((e) => e.file))]) {
    const model = await openGguf('/fixtures/' + file);
    for (const e of entries.filter((x) => x.file === file)) {
      const got = new Uint8Array((await model.readTensor(e.tensor)).buffer);
      const want = new Uint8Array(await (await fetch('/fixtures/' + e.expected)).arrayBuffer());
      if (got.length !== want.length || got.some((b, i) => b !== want[i])) problems.push(file + ' ' + e.tensor);
    }
    requests += model.ioStats.requests;
    await model.close();
  }
  const blob = await (await fetch('/fixtures/Q4_K.gguf')).blob();
  const fromBlob = await openGguf(new File([blob], 'Q4_K.gguf'));
  if (fromBlob.tensors.length !== 2) problems.push('File source');
  return { kernel, problems, requests, tensors: entries.length };
}
`;
const WORKER = `
import { check } from '/check.mjs';
self.onmessage = async (event) => {
  try { self.postMessage({ result: await check(event.data) }); }
  catch (err) { self.postMessage({ error: String(err && err.stack || err) }); }
};
`;

let server;
let browser;

before(async () => {
  if (!haveChromium) return;
  const root = process.cwd(); // the temporary project with node_modules/gguf-lens
  fs.writeFileSync(path.join(root, 'check.mjs'), CHECK);
  fs.writeFileSync(path.join(root, 'worker.mjs'), WORKER);
  fs.writeFileSync(path.join(root, 'index.html'), '<!doctype html><title>gguf-lens</title>');
  const files = {};
  for (const name of fs.readdirSync(DEQUANT)) files[`/fixtures/${name}`] = path.join(DEQUANT, name);
  const gptq = path.join(REPO, 'fixtures/gptq');
  for (const c of gptqCases) {
    for (const name of fs.readdirSync(path.join(gptq, c.case))) files[`/gptq/${c.case}/${name}`] = path.join(gptq, c.case, name);
  }
  server = await startServer({ files, staticRoot: root });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test('Chromium main thread: every oracle tensor bit for bit', { skip: !haveChromium && `no ${CHROMIUM}` }, async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  await page.goto(server.url('/index.html'));
  const result = await page.evaluate(async (list) => (await import('/check.mjs')).check(list), entries);
  assert.deepEqual(errors, []);
  assert.equal(result.kernel, 'simd128');
  assert.deepEqual(result.problems, []);
  assert.equal(result.tensors, entries.length);
  await page.close();
});

test('Chromium, scalar build (the no-SIMD fallback, forced): every oracle tensor bit for bit', { skip: !haveChromium && `no ${CHROMIUM}` }, async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  await page.goto(server.url('/index.html'));
  const result = await page.evaluate(async (list) => {
    const pkg = await import('/node_modules/gguf-lens/index.js');
    const simd = pkg.simdSupported();
    pkg.setWasmSimd(false);
    return { simd, ...(await (await import('/check.mjs')).check(list)) };
  }, entries);
  assert.deepEqual(errors, []);
  assert.equal(result.simd, true, 'Chromium has SIMD: the fallback is forced here');
  assert.equal(result.kernel, 'scalar');
  assert.deepEqual(result.problems, []);
  assert.equal(result.tensors, entries.length);
  await page.close();
});

test('Chromium Web Worker: every oracle tensor bit for bit', { skip: !haveChromium && `no ${CHROMIUM}` }, async () => {
  const page = await browser.newPage();
  await page.goto(server.url('/index.html'));
  const reply = await page.evaluate((list) => new Promise((resolve) => {
    const worker = new Worker('/worker.mjs', { type: 'module' });
    worker.onmessage = (event) => resolve(event.data);
    worker.onerror = (event) => resolve({ error: event.message || 'worker failed to start' });
    worker.postMessage(list);
  }), entries);
  assert.equal(reply.error, undefined, reply.error);
  assert.equal(reply.result.kernel, 'simd128');
  assert.deepEqual(reply.result.problems, []);
  await page.close();
});

test('Chromium: every GPTQ case, config fetched beside the file, bit for bit', { skip: !haveChromium && `no ${CHROMIUM}` }, async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  await page.goto(server.url('/index.html'));
  const result = await page.evaluate(async (cases) => {
    const { open } = await import('/node_modules/gguf-lens/index.js');
    const problems = [];
    let compared = 0;
    for (const c of cases) {
      const model = await open(`/gptq/${c.case}/model.safetensors`);
      if (model.format !== 'safetensors' || !model.quantConfig) problems.push(`${c.case}: no config`);
      for (const [file, oracles] of Object.entries(c.expected)) {
        const v1Zeros = oracles.length === 1 && oracles[0] === 'gptqmodel' ? 'gptqmodel' : 'llama.cpp';
        const got = new Uint8Array((await model.readTensor(c.layer, { v1Zeros })).buffer);
        const want = new Uint8Array(await (await fetch(`/gptq/${c.case}/${file}`)).arrayBuffer());
        if (got.length !== want.length || got.some((b, i) => b !== want[i])) problems.push(`${c.case} ${file}`);
        compared++;
      }
      await model.close();
    }
    return { problems, compared };
  }, gptqCases);
  assert.deepEqual(errors, []);
  assert.deepEqual(result.problems, []);
  assert.ok(result.compared >= 20);
  await page.close();
});

/** A GGUF with one F32 tensor of `rows` × `cols` values from a seeded generator (NaN and ±Inf among them). */
function bigF32Gguf(rows, cols) {
  const parts = [];
  const u32 = (v) => { const b = Buffer.alloc(4); b.writeUInt32LE(v); parts.push(b); };
  const u64 = (v) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); parts.push(b); };
  parts.push(Buffer.from('GGUF'));
  u32(3); u64(1); u64(0);
  const name = Buffer.from('w');
  u64(name.length); parts.push(name);
  u32(2); u64(cols); u64(rows); u32(0); u64(0);
  const header = Buffer.concat(parts);
  const offset = Math.ceil(header.length / 32) * 32;
  const data = Buffer.alloc(rows * cols * 4);
  let x = 12345;
  for (let i = 0; i < rows * cols; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const v = i % 9973 === 0 ? NaN : i % 9967 === 0 ? -Infinity : (x / 2147483648 - 0.5) * 4;
    data.writeFloatLE(v, i * 4);
  }
  return Buffer.concat([header, Buffer.alloc(offset - header.length), data]);
}

test('Chromium: tensorStats on two workers (gguf-lens/stats-worker) equals one thread, bit for bit', { skip: !haveChromium && `no ${CHROMIUM}` }, async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  await page.goto(server.url('/index.html'));
  const bytes = [...bigF32Gguf(600, 1000)];
  const result = await page.evaluate(async (data) => {
    const { openGguf } = await import('/node_modules/gguf-lens/index.js');
    const file = new File([new Uint8Array(data)], 'big.gguf');
    const model = await openGguf(file);
    const workers = [0, 1].map(() => new Worker('/node_modules/gguf-lens/stats-worker.js', { type: 'module' }));
    const one = await model.tensorStats('w', { bins: 50, chunkBytes: 100_000 });
    const pooled = await model.tensorStats('w', { bins: 50, workers });
    const again = await model.tensorStats('w', { bins: 50, workers, chunkBytes: 70_000 });
    for (const w of workers) w.terminate();
    return { one, pooled, again };
  }, bytes);
  assert.deepEqual(errors, []);
  assert.equal(result.one.count, 600_000);
  assert.ok(result.one.nanCount > 0 && result.one.negInfCount > 0);
  assert.deepEqual(result.pooled, result.one);
  assert.deepEqual(result.again, result.one);
  await page.close();
});

test('Chromium: request headers stay on the opened origin; a redirect to another origin goes without them', { skip: !haveChromium && `no ${CHROMIUM}` }, async () => {
  const small = makeBigHeader({ nTokens: 10, nTensors: 3 }).bytes;
  const a = await startLiar({ '/small.gguf': small }, { cors: true });
  const b = await startLiar({ '/small.gguf': small }, { cors: true });
  try {
    a.state.plan = (info) => (info.path === '/away.gguf' ? { kind: 'redirect', location: `${b.base}/small.gguf` } : {});
    const page = await browser.newPage();
    await page.goto(server.url('/index.html'));
    const result = await page.evaluate(async (urls) => {
      const { openGguf } = await import('/node_modules/gguf-lens/index.js');
      const out = {};
      for (const [key, url] of Object.entries(urls)) {
        try {
          const model = await openGguf(url, { headers: { Authorization: 'Bearer secret', 'X-Token': 'secret' } });
          out[key] = model.tensors.length;
          await model.readTensor('blk.1.weight');
          await model.close();
        } catch (err) {
          out[key] = String(err.message);
        }
      }
      return out;
    }, { away: a.url('/away.gguf'), here: a.url('/small.gguf') });
    assert.deepEqual(result, { away: 3, here: 3 });
    const reads = b.state.log.filter((l) => l.range);
    assert.ok(reads.length >= 2, 'the other origin served the file');
    for (const l of b.state.log) {
      assert.equal(l.headers.authorization, undefined, 'no Authorization to another origin');
      assert.equal(l.headers['x-token'], undefined, 'no caller header to another origin');
    }
    const own = a.state.log.filter((l) => l.path === '/small.gguf');
    assert.ok(own.length >= 1 && own.every((l) => l.headers['x-token'] === 'secret' && l.headers.authorization === 'Bearer secret'),
      'the opened origin gets the headers');
    await page.close();
  } finally {
    await a.close();
    await b.close();
  }
});

test('Chromium main thread: after a wasm trap the instance is replaced and new opens work', { skip: !haveChromium && `no ${CHROMIUM}` }, async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  await page.goto(server.url('/index.html'));
  const result = await page.evaluate(async () => {
    const { openGguf } = await import('/node_modules/gguf-lens/index.js');
    const { loadWasm, wasmMemory } = await import('/node_modules/gguf-lens/wasm.js');
    const old = await openGguf('/fixtures/Q4_K.gguf');
    const name = old.tensors[0].name;
    const want = Array.from(await old.readTensor(name));
    // The memory grown to the engine's maximum: the next allocation in Rust aborts (a trap).
    const memory = wasmMemory();
    const before = memory.buffer.byteLength;
    for (let pages = 1 << 15; pages >= 1;) {
      try { memory.grow(pages); } catch { pages >>= 1; }
    }
    let trap = null;
    // Bytes longer than the heap was: their copy into wasm needs memory there is not.
    try { (await loadWasm()).parseHeader(new Uint8Array(before + (1 << 20))); } catch (err) { trap = `${err.name}: ${err.message}`; }
    let stale = null;
    try { old.summary(); } catch (err) { stale = err.message; }
    await old.close();
    const model = await openGguf('/fixtures/Q4_K.gguf');
    const same = JSON.stringify(Array.from(await model.readTensor(name))) === JSON.stringify(want);
    return { trap, stale, same };
  });
  assert.deepEqual(errors, []);
  // The main thread may instantiate this module synchronously (the glue's reset does).
  assert.match(result.trap, /^WasmTrapError: gguf-lens: the wasm module trapped in parseHeader \(unreachable\); it was restarted/);
  assert.match(result.stale, /reopen the model$/);
  assert.equal(result.same, true);
  await page.close();
});
