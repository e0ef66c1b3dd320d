// model.quantError against the CLI's quant-error (whose metrics tests/cli_quantize.rs checks
// against a file llama.cpp's llama_model_quantize wrote): the same numbers from the wasm build.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { open } from 'gguf-lens';
import { REPO } from './helpers.mjs';

const FILE = path.join(REPO, 'fixtures/quantize_file/input.gguf');
const CLI = path.join(REPO, 'target/debug/gguf-lens');

for (const tensor of ['blk.0.attn_q.weight', 'blk.0.ffn_down.weight']) {
  test(`quantError of ${tensor} equals gguf-lens quant-error`, async () => {
    const types = ['Q8_0', 'Q4_K', 'IQ4_XS', 'MXFP4', 'TQ1_0'];
    const cli = JSON.parse(execFileSync(CLI, ['quant-error', FILE, tensor, '--json', '--types', types.join(',')]));
    const model = await open(FILE);
    try {
      for (const chunkBytes of [undefined, 600]) {
        const got = await model.quantError(tensor, { types, chunkBytes });
        assert.deepEqual(got.skipped, []);
        assert.deepEqual(got.results.map((r) => r.type), types);
        for (const [i, r] of got.results.entries()) {
          const want = cli.results[i];
          assert.equal(r.type, want.type);
          assert.equal(r.bitsPerWeight, want.bits_per_weight);
          assert.equal(r.maxAbsError, want.max_abs_error, `${r.type} max|err|`);
          for (const [k, w] of [['rmse', want.rmse], ['relativeRmse', want.relative_rmse], ['cosine', want.cosine]]) {
            assert.ok(Math.abs(r[k] - w) <= 1e-12 * Math.abs(w), `${r.type} ${k}: ${r[k]} vs ${w}`);
          }
        }
      }
      await assert.rejects(model.quantError(tensor, { types: ['IQ2_XXS'] }), /cannot quantize/);
    } finally {
      await model.close();
    }
  });
}

test('quantError of a safetensors tensor equals gguf-lens quant-error, skipped types included', async () => {
  const file = path.join(REPO, 'fixtures/diff/arrays-a.safetensors');
  const types = ['Q8_0', 'Q4_0', 'IQ4_NL', 'MXFP4', 'Q4_K'];
  const cli = JSON.parse(execFileSync(CLI, ['quant-error', file, 'h', '--json', '--types', types.join(',')]));
  const model = await open(file);
  try {
    const got = await model.quantError('h', { types });
    assert.deepEqual(got.skipped.map((s) => s.type), cli.skipped.map((s) => s.type));
    assert.deepEqual(got.results.map((r) => r.type), cli.results.map((r) => r.type));
    for (const [i, r] of got.results.entries()) {
      assert.equal(r.maxAbsError, cli.results[i].max_abs_error, r.type);
      assert.ok(Math.abs(r.rmse - cli.results[i].rmse) <= 1e-12 * cli.results[i].rmse, r.type);
    }
  } finally {
    await model.close();
  }
});

test('quantError sampleRows: evenly spaced runs, exact for those rows', async () => {
  const model = await open(FILE);
  try {
    const name = 'blk.0.ffn_down.weight';
    const t = model.tensor(name);
    const types = ['Q8_0', 'Q4_K'];
    const one = await model.quantError(name, { types, sampleRows: 1 });
    const head = await model.quantError(name, { types, rows: [0, 1] });
    assert.deepEqual(one, head);
    let last;
    const three = await model.quantError(name, { types, sampleRows: 3, onProgress: (p) => { last = p; } });
    assert.equal(three.results[0].nValues, 3 * t.rowLength);
    assert.deepEqual(last, { loaded: 3, total: 3 });
    const all = await model.quantError(name, { types, sampleRows: t.nRows + 5 });
    assert.deepEqual(all, await model.quantError(name, { types }));
  } finally {
    await model.close();
  }
});

test('quantError on workers: the same bits for any number of workers, rows and samples', async () => {
  const model = await open(FILE);
  try {
    const name = 'blk.0.ffn_down.weight';
    const t = model.tensor(name);
    assert.ok(t.nRows >= 8, `${t.nRows} rows`);
    for (const options of [{}, { rows: [1, t.nRows - 2] }, { sampleRows: 5 }, { types: ['F16', 'Q4_K', 'IQ4_XS'], chunkBytes: 600 }]) {
      const want = await model.quantError(name, options);
      for (const workers of [1, 2, 3]) {
        let last;
        const got = await model.quantError(name, { ...options, workers, onProgress: (p) => { last = p; } });
        assert.deepEqual(got, want, `${JSON.stringify(options)} on ${workers} workers`);
        assert.equal(last.loaded, last.total);
      }
    }
    const controller = new AbortController();
    const running = model.quantError(name, { workers: 2, signal: controller.signal, chunkBytes: 600 });
    controller.abort();
    await assert.rejects(running, /abort/i);
    // The workers still answer after a cancel.
    assert.deepEqual(await model.quantError(name, { workers: 2 }), await model.quantError(name, {}));
  } finally {
    await model.close();
  }
});

test('quantError on workers: a worker that dies fails the call instead of hanging it', { timeout: 10000 }, async () => {
  const model = await open(FILE);
  // A stand-in for a worker that crashes on its first request (as the Node pool's adapter and a
  // Web Worker report it: an 'error' event carrying a message).
  const dying = new EventTarget();
  dying.postMessage = (message) => {
    if (message?.gguf !== 'quant-error') return;
    setTimeout(() => {
      const event = new Event('error');
      event.message = 'out of memory';
      dying.dispatchEvent(event);
    }, 10);
  };
  try {
    await assert.rejects(
      model.quantError('blk.0.ffn_down.weight', { workers: [dying], types: ['Q8_0'] }),
      /a quantization worker failed: out of memory/,
    );
    // The model still answers without it.
    assert.equal((await model.quantError('blk.0.ffn_down.weight', { types: ['Q8_0'] })).results.length, 1);
  } finally {
    await model.close();
  }
});

test('quantError on workers after a sample or fewer rows: only the rows left, the same bits', async () => {
  const model = await open(FILE);
  try {
    const name = 'blk.0.ffn_down.weight';
    const t = model.tensor(name);
    const want = await model.quantError(name, {});
    const wantTypes = await model.quantError(name, { types: ['Q4_K', 'Q8_0'] });
    // Each earlier call is on other rows of the same tensor (a sample, a head, every row, a
    // tail); the last: other types, whose sums cannot serve.
    for (const earlier of [{ sampleRows: 3 }, { rows: [0, 2] }, {}, { rows: [t.nRows - 1, t.nRows] }, { types: ['Q4_K', 'Q8_0'] }]) {
      await model.quantError(name, { ...earlier, workers: 2 });
      let last;
      const got = await model.quantError(name, { workers: 2, onProgress: (p) => { last = p; } });
      assert.deepEqual(got, want, JSON.stringify(earlier));
      assert.equal(last.loaded, last.total);
    }
    await model.quantError(name, { sampleRows: 2, types: ['Q4_K', 'Q8_0'], workers: 2 });
    assert.deepEqual(await model.quantError(name, { types: ['Q4_K', 'Q8_0'], workers: 3 }), wantTypes);
    // 256 rows sampled 4 times: the rows left are read over the sample's rows, in one read or
    // (chunkBytes) several.
    const q = 'blk.0.attn_q.weight';
    const wantQ = await model.quantError(q, { types: ['Q4_K', 'Q8_0'] });
    for (const chunkBytes of [undefined, 512 * 40]) {
      await model.quantError(q, { sampleRows: 4, types: ['Q4_K', 'Q8_0'], workers: 2, chunkBytes });
      assert.deepEqual(await model.quantError(q, { types: ['Q4_K', 'Q8_0'], workers: 2, chunkBytes }), wantQ, `chunkBytes ${chunkBytes}`);
    }
  } finally {
    await model.close();
  }
});

test('quantError on workers: a type failing in two rows gives the first row\'s reason, as one thread', async () => {
  // A GGUF v3 file with one F32 tensor of 64 rows × 256; rows 20 and 50 too large for Q8_0's
  // f16 scale, each with its own scale (the reason names it): the pieces of rows the workers
  // take out of order must still be merged in row order.
  const rows = 64, cols = 256;
  const data = new Float32Array(rows * cols);
  for (let i = 0; i < data.length; i++) data[i] = Math.sin(i * 0.37) * 0.1;
  for (let c = 0; c < cols; c++) { data[20 * cols + c] *= 1e9; data[50 * cols + c] *= 1e11; }
  const parts = [];
  const u32 = (v) => { const b = Buffer.alloc(4); b.writeUInt32LE(v); parts.push(b); };
  const u64 = (v) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); parts.push(b); };
  const str = (s) => { u64(Buffer.byteLength(s)); parts.push(Buffer.from(s)); };
  parts.push(Buffer.from('GGUF'));
  u32(3); u64(1); u64(0);
  str('w'); u32(2); u64(cols); u64(rows); u32(0); u64(0);
  const head = Buffer.concat(parts);
  const file = path.join(os.tmpdir(), `qerr-order-${process.pid}.gguf`);
  writeFileSync(file, Buffer.concat([head, Buffer.alloc(((head.length + 31) & ~31) - head.length), Buffer.from(data.buffer)]));
  const model = await open(file);
  try {
    const types = ['Q8_0', 'Q4_K'];
    const want = await model.quantError('w', { types });
    assert.deepEqual(want.skipped.map((s) => s.type), ['Q8_0', 'Q4_K']);
    for (const workers of [2, 3]) {
      // 4 rows a read: many small pieces, handed out as the workers free up.
      assert.deepEqual(await model.quantError('w', { types, workers, chunkBytes: 4 * cols * 4 }), want, `${workers} workers`);
    }
  } finally {
    await model.close();
    rmSync(file, { force: true });
  }
});
