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
