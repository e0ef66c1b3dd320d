// tensorStats({ workers: N }) in Node: the worker_threads pool is kept between calls (and grows
// only when asked for more), a process that never closes its model still exits, and closing the
// model makes the workers close their copy of the file; progress is reported on workers too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { open } from 'gguf-lens';
import { REPO } from './helpers.mjs';

const FILE = path.join(REPO, 'fixtures/sample/tiny-llama-Q4_K_M.gguf');
const TENSOR = 'token_embd.weight';
// The pool's own module, by file URL (the package's exports do not name it): the same module
// instance the package uses.
const POOL = new URL('./stats-node-pool.js', import.meta.resolve('gguf-lens'));

test('the Node worker pool is kept between calls and grows only when asked for more', async () => {
  const { nodeStatsPoolSize } = await import(POOL);
  const model = await open(FILE);
  const one = await model.tensorStats(TENSOR, { workers: 0 });
  const before = nodeStatsPoolSize();
  assert.deepEqual(await model.tensorStats(TENSOR, { workers: 2 }), one);
  const after = nodeStatsPoolSize();
  assert.equal(after, Math.max(before, 2));
  for (let i = 0; i < 3; i++) assert.deepEqual(await model.tensorStats(TENSOR, { workers: 2 }), one);
  assert.equal(nodeStatsPoolSize(), after, 'no worker started again');
  assert.deepEqual(await model.tensorStats(TENSOR, { workers: after + 1 }), one);
  assert.equal(nodeStatsPoolSize(), after + 1);
  // A second model of the same file reuses the same workers.
  const again = await open(FILE);
  assert.deepEqual(await again.tensorStats(TENSOR, { workers: 2, bins: 9 }), await again.tensorStats(TENSOR, { workers: 0, bins: 9 }));
  assert.equal(nodeStatsPoolSize(), after + 1);
  await again.close();
  await model.close();
});

test('a process that used statistics workers exits by itself, with or without close()', () => {
  for (const close of [false, true]) {
    const script = `import { open } from 'gguf-lens';
      const model = await open(${JSON.stringify(FILE)});
      const s = await model.tensorStats(${JSON.stringify(TENSOR)}, { workers: 2 });
      if (!(s.count > 0)) process.exit(3);
      ${close ? 'await model.close();' : ''}`;
    // A file, not --eval: workers inherit the process's execArgv.
    const file = path.join(process.cwd(), `stats-pool-exit-${close}.mjs`);
    fs.writeFileSync(file, script);
    const run = spawnSync(process.execPath, [file], { timeout: 30000, encoding: 'utf8' });
    fs.rmSync(file);
    assert.equal(run.error, undefined, `close: ${close}: ${run.error}`);
    assert.equal(run.status, 0, `close: ${close}: ${run.stderr}`);
  }
});

test('close() makes the statistics workers close their handle of the file', { skip: !fs.existsSync('/proc/self/fd') }, async () => {
  const handles = () => fs.readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`) === FILE;
    } catch {
      return false;
    }
  }).length;
  const base = handles();
  const model = await open(FILE);
  await model.tensorStats(TENSOR, { workers: 2 });
  // (One grid cell of 65536 values: one worker gets the whole tensor.)
  assert.ok(handles() >= base + 2, 'this thread and a worker hold the file open');
  await model.close();
  // The workers close theirs when the message arrives.
  for (let i = 0; i < 100 && handles() > base; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(handles(), base);
});

test('onProgress counts the bytes of the first pass on workers too', async () => {
  const model = await open(FILE);
  const seen = [];
  await model.tensorStats(TENSOR, { workers: 2, onProgress: (p) => seen.push(p) });
  assert.ok(seen.length > 0);
  assert.deepEqual(seen.at(-1), { loaded: model.tensor(TENSOR).nBytes, total: model.tensor(TENSOR).nBytes });
  await model.close();
});

/** A GGUF (v3, no metadata) of one 4096 × 256 Q4_0 tensor `q` and one 1024 × 256 F32 tensor `f`
 * from a fixed xorshift stream: 16 and 4 grid cells, so the first pass goes out in many runs. */
function manyCellsGguf() {
  let x = 0x9e3779b9;
  const next = () => {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    return x;
  };
  const q = new Uint8Array(4096 * 8 * 18);
  for (let b = 0; b < q.length; b += 18) {
    // d: a small normal half of either sign, then 16 bytes of nibbles.
    q[b] = next() & 0xff;
    q[b + 1] = 0x20 + (next() % 8) + (next() & 1 ? 0x80 : 0);
    for (let j = 2; j < 18; j++) q[b + j] = next() & 0xff;
  }
  const f = new Float32Array(1024 * 256).map((_, i) => (i % 97 === 0 ? 0.25 : ((next() % 20001) - 10000) * 1e-4));
  const parts = [];
  const u32 = (v) => parts.push(new Uint8Array(new Uint32Array([v]).buffer));
  const u64 = (v) => parts.push(new Uint8Array(new BigUint64Array([BigInt(v)]).buffer));
  const str = (s) => { u64(s.length); parts.push(new TextEncoder().encode(s)); };
  parts.push(new TextEncoder().encode('GGUF'));
  u32(3); u64(2); u64(0);
  str('q'); u32(2); u64(256); u64(4096); u32(2); u64(0);
  str('f'); u32(2); u64(256); u64(1024); u32(0); u64(q.length);
  let size = parts.reduce((n, p) => n + p.length, 0);
  parts.push(new Uint8Array((32 - (size % 32)) % 32));
  parts.push(q, new Uint8Array(f.buffer));
  size = parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

test('runs handed out to workers, concurrent calls on one pool: one thread\'s numbers, and the process lives until both end', () => {
  const gguf = path.join(process.cwd(), 'stats-pool-many-cells.gguf');
  fs.writeFileSync(gguf, manyCellsGguf());
  const script = `import { open } from 'gguf-lens';
    import assert from 'node:assert/strict';
    const model = await open(${JSON.stringify(gguf)});
    for (const name of ['q', 'f']) {
      const one = await model.tensorStats(name, { workers: 0, bins: 33 });
      assert.ok(one.count > 0 && one.percentiles);
      for (const [workers, chunkBytes] of [[2, undefined], [3, 5000], [2, 1 << 20]]) {
        assert.deepEqual(await model.tensorStats(name, { workers, chunkBytes, bins: 33 }), one, name + ' ' + workers);
      }
      // Two calls at once on the same workers, the second on other rows.
      const rows = [17, 1000];
      const [a, b] = await Promise.all([model.tensorStats(name, { workers: 2, bins: 33 }),
        model.tensorStats(name, { workers: 2, bins: 33, rows })]);
      assert.deepEqual(a, one);
      assert.deepEqual(b, await model.tensorStats(name, { workers: 0, bins: 33, rows }));
    }
    console.log('ok');`;
  const file = path.join(process.cwd(), 'stats-pool-many-cells.mjs');
  fs.writeFileSync(file, script);
  const run = spawnSync(process.execPath, [file], { timeout: 60000, encoding: 'utf8' });
  fs.rmSync(file);
  fs.rmSync(gguf);
  assert.equal(run.error, undefined, String(run.error));
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout.trim(), 'ok');
});

test('calls on different models at the same time on one pool: none closes the model another uses', async () => {
  // Each worker keeps a model open per input while requests use it (worker-model.js); before,
  // a request for another model closed the one a request still in flight was reading.
  const other = path.join(REPO, 'fixtures/sample/tiny-llama-Q8_0.gguf');
  const [a, b] = [await open(FILE), await open(other)];
  const types = ['Q8_0', 'Q4_K'];
  const want = {
    statsA: await a.tensorStats(TENSOR, { workers: 0 }),
    statsB: await b.tensorStats(TENSOR, { workers: 0 }),
    readA: await a.readTensor(TENSOR),
    readB: await b.readTensor(TENSOR),
    errB: await b.quantError(TENSOR, { types }),
  };
  for (let round = 0; round < 4; round++) {
    const chunkBytes = 4096 << round;
    const [statsA, statsB, readA, readB, errB] = await Promise.all([
      a.tensorStats(TENSOR, { workers: 2, chunkBytes }),
      b.tensorStats(TENSOR, { workers: 2, chunkBytes }),
      a.readTensor(TENSOR, { workers: 2, chunkBytes }),
      b.readTensor(TENSOR, { workers: 2, chunkBytes }),
      b.quantError(TENSOR, { types, workers: 2, chunkBytes }),
    ]);
    assert.deepEqual(statsA, want.statsA, `round ${round}`);
    assert.deepEqual(statsB, want.statsB, `round ${round}`);
    assert.deepEqual(Array.from(readA), Array.from(want.readA), `round ${round}`);
    assert.deepEqual(Array.from(readB), Array.from(want.readB), `round ${round}`);
    assert.deepEqual(errB, want.errB, `round ${round}`);
  }
  await a.close();
  await b.close();
});

test('a pool worker that died fails the calls given it, with its message; later calls get a new worker', { timeout: 20000 }, async () => {
  const { nodeStatsWorkers, nodeStatsPoolSize } = await import(POOL);
  const model = await open(FILE);
  try {
    const want = await model.tensorStats(TENSOR, { workers: 0 });
    const [dead] = await nodeStatsWorkers(2);
    await dead.terminate();
    // A call still holding it (as one that started before the worker died does) hears of it.
    await assert.rejects(model.tensorStats(TENSOR, { workers: [dead] }), /^Error: gguf-lens: a statistics worker failed: the worker exited \(code \d+\)$/);
    await assert.rejects(model.readTensor(TENSOR, { workers: [dead] }), /^Error: gguf-lens: a read worker failed: the worker exited \(code \d+\)$/);
    await assert.rejects(model.quantError(TENSOR, { workers: [dead], types: ['Q8_0'] }), /^Error: gguf-lens: a quantization worker failed: the worker exited \(code \d+\)$/);
    // The pool starts another in its place.
    const workers = await nodeStatsWorkers(2);
    assert.ok(!workers.includes(dead));
    assert.deepEqual(await model.tensorStats(TENSOR, { workers: 2 }), want);
    assert.deepEqual(await model.readTensor(TENSOR, { workers: 2 }), await model.readTensor(TENSOR));
  } finally {
    await model.close();
  }
});
