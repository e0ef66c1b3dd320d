// Values read through the installed package equal the committed oracle fixtures (llama.cpp's
// ggml to_float), bit for bit, from every kind of source.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openGguf, kernelName } from 'gguf-lens';
import { startServer } from './server.mjs';
import { DEQUANT, manifest, expectedF32, bytesOf, sameBytes } from './helpers.mjs';

const entries = manifest();
const fileNames = [...new Set(entries.map((e) => e.file))];

test('the package runs the simd128 kernels', async () => {
  assert.equal(await kernelName(), 'simd128');
});

test('every oracle tensor, over HTTP Range, bit for bit', async () => {
  const files = Object.fromEntries(fileNames.map((f) => [`/${f}`, path.join(DEQUANT, f)]));
  const server = await startServer({ files });
  try {
    for (const file of fileNames) {
      const model = await openGguf(server.url(`/${file}`));
      for (const e of entries.filter((x) => x.file === file)) {
        const t = model.tensor(e.tensor);
        assert.equal(t.type, e.type);
        assert.equal(t.nElements, e.n_elements);
        assert.equal(t.offset, e.data_offset, `${file} ${e.tensor} offset`);
        const out = await model.readTensor(e.tensor, { chunkBytes: 1 });
        assert.ok(sameBytes(bytesOf(out), expectedF32(e.expected)), `${file} ${e.tensor} differs from ${e.expected}`);
      }
      await model.close();
    }
  } finally {
    await server.close();
  }
});

test('row ranges read only those rows and match the oracle slice', async () => {
  for (const e of entries.filter((x) => x.shape.length === 2 && x.shape[1] >= 3)) {
    const model = await openGguf(path.join(DEQUANT, e.file));
    const row = e.shape[0];
    const before = model.ioStats.bytes;
    const out = await model.readTensor(e.tensor, { rows: [1, 3] });
    assert.equal(model.ioStats.bytes - before, 2 * model.tensor(e.tensor).rowBytes);
    const want = expectedF32(e.expected).subarray(4 * row, 4 * 3 * row);
    assert.ok(sameBytes(bytesOf(out), want), `${e.file} ${e.tensor} rows 1..3`);
    await model.close();
  }
});

test('Blob, ArrayBuffer, Uint8Array and {byteLength, slice} sources agree', async () => {
  const e = entries.find((x) => x.type === 'Q6_K' && x.tensor === 'special');
  const bytes = fs.readFileSync(path.join(DEQUANT, e.file));
  const u8 = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const sliceable = { byteLength: u8.length, slice: (a, b) => u8.slice(a, b) };
  for (const source of [new Blob([u8]), u8.slice().buffer, u8, sliceable]) {
    const model = await openGguf(source);
    const out = await model.readTensor(e.tensor);
    assert.ok(sameBytes(bytesOf(out), expectedF32(e.expected)));
    const raw = await model.readTensorBytes(e.tensor, { rows: [0, 1] });
    assert.equal(raw.length, model.tensor(e.tensor).rowBytes);
  }
});

test('readTensor fills a caller\'s Float32Array, and refuses one too small', async () => {
  const e = entries.find((x) => x.type === 'Q6_K');
  const model = await openGguf(path.join(DEQUANT, e.file));
  const t = model.tensor(e.tensor);
  const into = new Float32Array(t.nElements + 5).fill(7);
  const out = await model.readTensor(e.tensor, { into });
  assert.equal(out.buffer, into.buffer);
  assert.equal(out.length, t.nElements);
  assert.ok(sameBytes(bytesOf(out), expectedF32(e.expected)));
  assert.equal(into[t.nElements], 7);
  await assert.rejects(model.readTensor(e.tensor, { into: new Float32Array(3) }), /holds 3 values, the rows need/);
  await model.close();
});

test('tensorStats streams the same numbers as a whole-array pass', async () => {
  const e = entries.find((x) => x.type === 'Q4_K' && x.tensor === 'special');
  const model = await openGguf(path.join(DEQUANT, e.file));
  const stats = await model.tensorStats(e.tensor, { bins: 16, chunkBytes: 200 });
  const all = new Float32Array(expectedF32(e.expected).slice().buffer);
  const finite = [...all].filter(Number.isFinite);
  assert.equal(stats.count, all.length);
  assert.equal(stats.nanCount, all.filter(Number.isNaN).length);
  assert.equal(stats.infCount, all.length - finite.length - stats.nanCount);
  assert.equal(stats.zeroCount, finite.filter((v) => v === 0).length);
  assert.equal(stats.min, Math.min(...finite));
  assert.equal(stats.max, Math.max(...finite));
  const mean = finite.reduce((s, v) => s + v, 0) / finite.length;
  assert.ok(Math.abs(stats.mean - mean) <= 1e-9 * Math.max(1, Math.abs(mean)) * finite.length);
  assert.equal(stats.histogram.counts.reduce((s, v) => s + v, 0), finite.length);
  assert.equal(stats.histogram.edges.length, 17);
  await model.close();
});
