// Calls in the orders an inspector makes them (statistics then a read, a read then statistics,
// two models open, a model closed and opened again, quantError then a read, a read on workers
// then one on this thread), in one process: every read equals ggml's values (the oracle
// fixtures) and a read in a fresh process, and every tensorStats a fresh process's. The speed of
// these orders is benches/npm-call-orders.mjs's (this checks values only).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import crypto from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { openGguf } from 'gguf-lens';
import { REPO, DEQUANT, manifest, expectedF32, bytesOf, sameBytes } from './helpers.mjs';

const SAMPLE = path.join(REPO, 'fixtures/sample/tiny-llama-Q4_K_M.gguf');
const SAMPLE_TENSOR = 'token_embd.weight';
const ORACLE = manifest().filter((e) => ['Q8_0.gguf', 'Q4_K.gguf', 'F16.gguf', 'IQ2_XXS.gguf'].includes(e.file) && e.tensor === 'random');

const digest = (f32) => crypto.createHash('sha256').update(bytesOf(f32)).digest('hex');

/** What a fresh process reads and counts for the sample's tensor: { digest, stats }. */
let fresh;

before(() => {
  const script = `import { openGguf } from 'gguf-lens';
    import crypto from 'node:crypto';
    const model = await openGguf(${JSON.stringify(SAMPLE)});
    const values = await model.readTensor(${JSON.stringify(SAMPLE_TENSOR)});
    const stats = await model.tensorStats(${JSON.stringify(SAMPLE_TENSOR)}, { workers: 0 });
    await model.close();
    const digest = crypto.createHash('sha256').update(new Uint8Array(values.buffer)).digest('hex');
    console.log(JSON.stringify({ digest, stats, n: values.length }));`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', cwd: process.cwd(), timeout: 60000 });
  assert.equal(run.status, 0, run.stderr);
  fresh = JSON.parse(run.stdout.trim().split('\n').at(-1));
  assert.ok(fresh.n > 0 && fresh.stats.count === fresh.n);
});

/** The checks every order ends with on `model`: the sample's read and stats as a fresh process's. */
async function checkSample(model, label) {
  assert.equal(digest(await model.readTensor(SAMPLE_TENSOR)), fresh.digest, `${label}: readTensor`);
  assert.deepEqual(await model.tensorStats(SAMPLE_TENSOR, { workers: 0 }), fresh.stats, `${label}: tensorStats on this thread`);
  assert.deepEqual(await model.tensorStats(SAMPLE_TENSOR, { workers: 2 }), fresh.stats, `${label}: tensorStats on workers`);
}

test('readTensor after tensorStats (workers or this thread) gives a fresh read\'s values', async () => {
  for (const workers of [2, 0]) {
    const model = await openGguf(SAMPLE);
    const stats = await model.tensorStats(SAMPLE_TENSOR, { workers });
    assert.deepEqual(stats, fresh.stats);
    assert.equal(digest(await model.readTensor(SAMPLE_TENSOR)), fresh.digest, `after tensorStats({ workers: ${workers} })`);
    await model.close();
  }
  for (const e of ORACLE) {
    const model = await openGguf(path.join(DEQUANT, e.file));
    await model.tensorStats(e.tensor, { workers: 2 });
    assert.ok(sameBytes(bytesOf(await model.readTensor(e.tensor)), expectedF32(e.expected)), `${e.file} ${e.tensor} after tensorStats`);
    await model.tensorStats(e.tensor, { workers: 0 });
    assert.ok(sameBytes(bytesOf(await model.readTensor(e.tensor)), expectedF32(e.expected)), `${e.file} ${e.tensor} after tensorStats on this thread`);
    await model.close();
  }
});

test('tensorStats after readTensor gives a fresh process\'s numbers', async () => {
  const model = await openGguf(SAMPLE);
  await model.readTensor(SAMPLE_TENSOR);
  await checkSample(model, 'read, then stats');
  await model.close();
});

test('two models open at once: calls on one leave the other\'s values alone', async () => {
  const a = await openGguf(SAMPLE);
  const b = await openGguf(SAMPLE);
  const oracle = await openGguf(path.join(DEQUANT, ORACLE[0].file));
  await b.tensorStats(SAMPLE_TENSOR, { workers: 2 });
  await oracle.tensorStats(ORACLE[0].tensor, { workers: 2 });
  await checkSample(a, 'a, after stats on b');
  await checkSample(b, 'b, after calls on a');
  assert.ok(sameBytes(bytesOf(await oracle.readTensor(ORACLE[0].tensor)), expectedF32(ORACLE[0].expected)));
  await Promise.all([a.close(), b.close(), oracle.close()]);
});

test('a model closed and opened again reads and counts as fresh (workers too)', async () => {
  const first = await openGguf(SAMPLE);
  await first.tensorStats(SAMPLE_TENSOR, { workers: 2 });
  await first.readTensor(SAMPLE_TENSOR, { workers: 2 });
  await first.close();
  const again = await openGguf(SAMPLE);
  await checkSample(again, 'reopened');
  assert.equal(digest(await again.readTensor(SAMPLE_TENSOR, { workers: 2 })), fresh.digest, 'reopened, read on workers');
  await again.close();
});

test('readTensor after quantError and after a read on workers gives a fresh read\'s values', async () => {
  const model = await openGguf(SAMPLE);
  const q = await model.quantError(SAMPLE_TENSOR, { types: ['Q4_K', 'Q8_0'], workers: 2 });
  assert.equal(q.results.length + q.skipped.length, 2);
  assert.deepEqual(await model.quantError(SAMPLE_TENSOR, { types: ['Q4_K', 'Q8_0'] }), q);
  await checkSample(model, 'after quantError');
  const pooled = await model.readTensor(SAMPLE_TENSOR, { workers: 2 });
  assert.equal(digest(pooled), fresh.digest, 'read on workers');
  await checkSample(model, 'after a read on workers');
  await model.close();
});
