// readTensor({ workers }) in Node: workers fill a Float32Array over a SharedArrayBuffer with the
// same bits as readTensor on this thread (every fixture type, row ranges, chunk and slice
// boundaries, 1–3 workers), an `into` over a SharedArrayBuffer is filled in place, the default
// stays a plain array on this thread, aborts and failures leave no worker writing, and calls run
// alongside tensorStats on the same pool.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { openGguf } from 'gguf-lens';
import { DEQUANT, REPO, manifest, expectedF32, bytesOf, sameBytes } from './helpers.mjs';

const entries = manifest();
const POOL = new URL('./stats-node-pool.js', import.meta.resolve('gguf-lens'));
const SAMPLE = path.join(REPO, 'fixtures/sample/tiny-llama-Q4_K_M.gguf');

/** A GGUF v3 file of tensors `{ name, type, ne, data }` (data: the raw bytes), 32-aligned. */
function writeGguf(file, tensors) {
  const parts = [];
  const u32 = (v) => { const b = Buffer.alloc(4); b.writeUInt32LE(v); parts.push(b); };
  const u64 = (v) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); parts.push(b); };
  const str = (s) => { u64(Buffer.byteLength(s)); parts.push(Buffer.from(s)); };
  parts.push(Buffer.from('GGUF'));
  u32(3);
  u64(tensors.length);
  u64(1);
  str('general.architecture'); u32(8); str('llama');
  const align = (n) => Math.ceil(n / 32) * 32;
  let offset = 0;
  for (const t of tensors) {
    str(t.name);
    u32(t.ne.length);
    for (const d of t.ne) u64(d);
    u32(t.type);
    u64(offset);
    offset = align(offset + t.data.length);
  }
  const head = Buffer.concat(parts);
  const body = Buffer.alloc(align(head.length) - head.length + offset);
  let at = align(head.length) - head.length;
  for (const t of tensors) {
    t.data.copy(body, at);
    at = align(at + t.data.length);
  }
  fs.writeFileSync(file, Buffer.concat([head, body]));
}

/** Pseudo-random bytes (a fixed LCG: the same file every run). */
function randomBytes(n, seed) {
  const b = Buffer.alloc(n);
  let x = seed >>> 0;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}

// Tensors bigger than a worker's slice (65536 values): many slices per chunk, and rows longer
// than a slice. Random Q8_0/Q4_K blocks include NaN/Inf scales: compared bit for bit anyway.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gguf-lens-read-'));
const BIG = path.join(dir, 'big.gguf');
writeGguf(BIG, [
  { name: 'f32', type: 0, ne: [1000, 300], data: randomBytes(4 * 1000 * 300, 1) },
  { name: 'long_rows', type: 0, ne: [70000, 3], data: randomBytes(4 * 70000 * 3, 2) },
  { name: 'q8_0', type: 8, ne: [4096, 160], data: randomBytes((4096 / 32) * 34 * 160, 3) },
  { name: 'q4_k', type: 12, ne: [2048, 97], data: randomBytes((2048 / 256) * 144 * 97, 4) },
]);
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

const isShared = (a) => a.buffer instanceof SharedArrayBuffer;

test('every fixture tensor on 1, 2 and 3 workers: the oracle bits, in a SharedArrayBuffer', async () => {
  const files = [...new Set(entries.map((e) => e.file))];
  for (const file of files) {
    const model = await openGguf(path.join(DEQUANT, file));
    for (const e of entries.filter((x) => x.file === file)) {
      for (const workers of [1, 2, 3]) {
        for (const chunkBytes of [undefined, 1]) {
          const out = await model.readTensor(e.tensor, { workers, chunkBytes });
          assert.ok(isShared(out), `${file} ${e.tensor}: a SharedArrayBuffer`);
          assert.ok(sameBytes(bytesOf(out), expectedF32(e.expected)), `${file} ${e.tensor} workers ${workers} chunkBytes ${chunkBytes}`);
        }
      }
    }
    await model.close();
  }
});

test('row ranges and chunk boundaries: the same bits as this thread', async () => {
  const model = await openGguf(BIG);
  for (const name of ['f32', 'long_rows', 'q8_0', 'q4_k']) {
    const t = model.tensor(name);
    const ranges = [[0, t.nRows], [1, t.nRows], [0, 1], [1, 2], [t.nRows - 1, t.nRows], [Math.floor(t.nRows / 3), t.nRows - 1], [2, 2]];
    for (const rows of ranges) {
      const one = await model.readTensor(name, { rows, workers: 0 });
      assert.ok(!isShared(one));
      // chunkBytes: a row a chunk, a chunk that is not a whole number of rows, the default.
      for (const chunkBytes of [1, 2 * t.rowBytes + 1, undefined]) {
        for (const workers of [1, 2, 3]) {
          const out = await model.readTensor(name, { rows, workers, chunkBytes });
          assert.equal(out.length, one.length);
          assert.ok(sameBytes(bytesOf(out), bytesOf(one)), `${name} rows ${rows} chunkBytes ${chunkBytes} workers ${workers}`);
        }
      }
    }
  }
  await model.close();
});

test('an `into` over a SharedArrayBuffer is filled by workers; a plain one and the default stay on this thread', async () => {
  const model = await openGguf(BIG);
  const t = model.tensor('q8_0');
  const one = await model.readTensor('q8_0');
  assert.ok(!isShared(one), 'the default result is a plain array');
  assert.ok(one.buffer instanceof ArrayBuffer);
  // A view at an offset into a bigger shared buffer: only its part is written.
  const sab = new SharedArrayBuffer(4 * (t.nElements + 10));
  const into = new Float32Array(sab, 4 * 3, t.nElements + 5).fill(7);
  new Float32Array(sab, 0, 3).fill(9);
  for (const workers of [undefined, 2]) {
    const out = await model.readTensor('q8_0', { into, workers });
    assert.equal(out.buffer, sab);
    assert.equal(out.byteOffset, 12);
    assert.equal(out.length, t.nElements);
    assert.ok(sameBytes(bytesOf(out), bytesOf(one)));
    assert.deepEqual([...new Float32Array(sab, 0, 3)], [9, 9, 9]);
    assert.deepEqual([...into.subarray(t.nElements)], [7, 7, 7, 7, 7]);
  }
  const rows = [5, 9];
  const part = await model.readTensor('q8_0', { rows, into, workers: 3 });
  assert.ok(sameBytes(bytesOf(part), bytesOf(one.subarray(5 * t.rowLength, 9 * t.rowLength))));
  // A plain `into` with workers: this thread fills it.
  const plain = new Float32Array(t.nElements);
  const out = await model.readTensor('q8_0', { into: plain, workers: 2 });
  assert.equal(out, plain);
  assert.ok(sameBytes(bytesOf(out), bytesOf(one)));
  await assert.rejects(model.readTensor('q8_0', { into: new Float32Array(new SharedArrayBuffer(12)), workers: 2 }), /holds 3 values, the rows need/);
  await model.close();
});

test('the workers are the statistics pool; calls run alongside tensorStats on it', async () => {
  const { nodeStatsPoolSize } = await import(POOL);
  const model = await openGguf(BIG);
  const want = await model.readTensor('q4_k', { workers: 0 });
  const wantRows = await model.readTensor('q4_k', { rows: [3, 50], workers: 0 });
  const stats = await model.tensorStats('q4_k', { workers: 0 });
  await model.tensorStats('q4_k', { workers: 2 });
  const size = nodeStatsPoolSize();
  const [a, s, b] = await Promise.all([
    model.readTensor('q4_k', { workers: 2, chunkBytes: 3000 }),
    model.tensorStats('q4_k', { workers: 2, chunkBytes: 3000 }),
    model.readTensor('q4_k', { rows: [3, 50], workers: 2, chunkBytes: 5000 }),
  ]);
  assert.ok(sameBytes(bytesOf(a), bytesOf(want)));
  assert.ok(sameBytes(bytesOf(b), bytesOf(wantRows)));
  assert.deepEqual(s, stats);
  assert.equal(nodeStatsPoolSize(), size, 'no worker started for readTensor');
  await model.close();
});

test('onProgress counts the bytes read, on workers as on this thread', async () => {
  const model = await openGguf(BIG);
  const t = model.tensor('q4_k');
  for (const workers of [0, 2]) {
    const seen = [];
    await model.readTensor('q4_k', { rows: [2, 90], workers, chunkBytes: 10 * t.rowBytes, onProgress: (p) => seen.push(p) });
    assert.ok(seen.length > 1, `workers ${workers}: more than one report`);
    assert.deepEqual(seen.at(-1), { loaded: 88 * t.rowBytes, total: 88 * t.rowBytes });
  }
  await model.close();
});

test('an abort rejects, and no worker writes afterwards', async () => {
  const model = await openGguf(BIG);
  const t = model.tensor('f32');
  const before = new AbortController();
  before.abort();
  await assert.rejects(model.readTensor('f32', { workers: 2, signal: before.signal }), { name: 'AbortError' });
  for (const delay of [0, 1, 5]) {
    const into = new Float32Array(new SharedArrayBuffer(4 * t.nElements)).fill(7);
    const controller = new AbortController();
    const read = model.readTensor('f32', { into, workers: 2, chunkBytes: t.rowBytes, signal: controller.signal });
    setTimeout(() => controller.abort(), delay);
    try {
      await read;
    } catch (err) {
      assert.equal(err.name, 'AbortError');
    }
    const snapshot = into.slice();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(sameBytes(bytesOf(into), bytesOf(snapshot)), `nothing written after the call settled (delay ${delay})`);
  }
  // The pool still serves the next call.
  assert.ok(sameBytes(bytesOf(await model.readTensor('f32', { workers: 2 })), bytesOf(await model.readTensor('f32'))));
  await model.close();
});

test('failures are one-line errors', async () => {
  const bytes = fs.readFileSync(BIG);
  const fromBytes = await openGguf(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  await assert.rejects(fromBytes.readTensor('f32', { workers: 2 }), (err) => err instanceof TypeError && /needs a model opened from a URL, path, File or Blob/.test(err.message) && !err.message.includes('\n'));
  // Without workers it reads on this thread, as always.
  assert.equal((await fromBytes.readTensor('f32')).length, 300000);
  await fromBytes.close();
  // The workers open the file by its path: gone, they fail, and the call says so in one line.
  const gone = path.join(dir, 'gone.gguf');
  fs.copyFileSync(BIG, gone);
  const model = await openGguf(gone);
  fs.rmSync(gone);
  await assert.rejects(model.readTensor('q8_0', { workers: 2 }), (err) => /^gguf-lens: a read worker failed: /.test(err.message) && !err.message.includes('\n'));
  await assert.rejects(model.readTensor('q8_0', { rows: [0, 161], workers: 2 }), /rows 0\.\.161 are outside q8_0/);
  await model.close();
});

test('a process that read on workers exits by itself', () => {
  const script = `import { openGguf } from 'gguf-lens';
    const model = await openGguf(${JSON.stringify(SAMPLE)});
    const out = await model.readTensor('token_embd.weight', { workers: 2 });
    if (!(out.buffer instanceof SharedArrayBuffer) || out.length !== 65536) process.exit(3);`;
  // A file, not --eval: workers inherit the process's execArgv.
  const file = path.join(process.cwd(), 'read-workers-exit.mjs');
  fs.writeFileSync(file, script);
  const run = spawnSync(process.execPath, [file], { timeout: 30000, encoding: 'utf8' });
  fs.rmSync(file);
  assert.equal(run.error, undefined, String(run.error));
  assert.equal(run.status, 0, run.stderr);
});

test('RowReader (the wasm side) refuses what does not fit, in one line', async () => {
  const { loadWasm } = await import(new URL('./wasm.js', import.meta.resolve('gguf-lens')));
  const wasm = await loadWasm();
  const model = await openGguf(BIG);
  await model.preload(); // its header into the module RowReader is of
  const t = model.tensor('q8_0');
  assert.throws(() => new wasm.RowReader(2 ** 31, 0), /over 1 GiB/);
  assert.throws(() => new wasm.RowReader(0, 2 ** 29), /over 1 GiB/);
  const reader = new wasm.RowReader(2 * t.rowBytes, t.rowLength);
  try {
    assert.equal(reader.dequantize(model.header, 'q8_0', 0, t.rowBytes), t.rowLength);
    assert.throws(() => reader.dequantize(model.header, 'q8_0', t.rowBytes + 1, t.rowBytes), /asked of a \d+-byte reader/);
    assert.throws(() => reader.dequantize(model.header, 'q8_0', 0, 2 * t.rowBytes), /need 8192 values, the reader holds 4096/);
    assert.throws(() => reader.dequantize(model.header, 'q8_0', 0, t.rowBytes - 1), /not whole rows of q8_0/);
    assert.throws(() => reader.dequantize(model.header, 'nope', 0, t.rowBytes), /nope/);
  } finally {
    reader.free();
    await model.close();
  }
});
