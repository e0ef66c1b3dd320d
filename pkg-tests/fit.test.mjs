// model.fit() through the installed package against llama.cpp's llama-fit-params
// (fixtures/fit/grid.json, written by fixtures/make_fit_grid.py: header-only models on loopback
// RPC devices as GPUs): the flags it printed, and the whole result equal to `gguf-lens fit
// --json`'s (camelCased; the CLI run from target/debug, as quant_error.test.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openGguf } from 'gguf-lens';
import { REPO } from './helpers.mjs';

const MIB = 1024 * 1024;
const CLI = path.join(REPO, 'target/debug/gguf-lens');

// A few grid cases of each kind: one GPU with fewer layers, the context reduced, experts on the
// CPU with a tensor on the second GPU, every layer kept on the first GPU of two (llama.cpp's
// wrapping arithmetic), and the held-out Qwen3-MoE.
const CASES = [
  ['dense', [2048], null],
  ['mixtral', [2048, 4096], null],
  ['mixtral', [12288, 2048], 8192],
  ['qwen3moe', [6144], null],
  ['qwen3moe', [12288, 2048], null],
];

const camel = (v) => {
  if (Array.isArray(v)) return v.map(camel);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k.replace(/_(.)/g, (_, c) => c.toUpperCase()), camel(x)]));
};

test('fit gives llama-fit-params flags and the CLI result on grid cases', async () => {
  const grid = JSON.parse(fs.readFileSync(path.join(REPO, 'fixtures/fit/grid.json'), 'utf8'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fit-'));
  try {
    for (const [name, budgets, ctx] of CASES) {
      const c = grid.cases.find((x) => x.model === name && x.ctx === ctx
        && JSON.stringify(x.gpu_mib) === JSON.stringify(budgets));
      assert.ok(c, `${name} ${budgets} ${ctx} is in the grid`);
      // the header, and a sparse file of the model's size (tensor data is never read)
      const file = path.join(dir, `${name}.gguf`);
      fs.copyFileSync(path.join(REPO, `fixtures/fit/${name}.gguf`), file);
      fs.truncateSync(file, c.file_size);
      const gpuNames = c.endpoints.map((e) => `RPC0[${e}]`);
      const model = await openGguf(file);
      let ours;
      try {
        ours = model.fit({
          gpus: c.margin_mib.map(() => c.free_mib * MIB),
          margin: c.margin_mib.map((m) => m * MIB),
          ...(ctx ? { ctx } : {}),
          gpuNames,
        });
      } finally {
        await model.close();
      }
      const what = `${name} ${budgets} ${ctx}`;
      assert.equal(ours.flags, c.flags, what);
      const args = ['fit', file, '--gpu', c.margin_mib.map(() => c.free_mib).join(','),
        '--margin', c.margin_mib.join(','), '--gpu-names', gpuNames.join(','), '--json'];
      if (ctx) args.push('--ctx', String(ctx));
      const cli = camel(JSON.parse(execFileSync(CLI, args, { encoding: 'utf8' })));
      assert.deepEqual(ours, cli, what);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('fit refuses what it cannot fit, in one line', async () => {
  const file = path.join(REPO, 'fixtures/plan/llama.gguf');
  const model = await openGguf(file);
  try {
    assert.throws(() => model.fit({ gpus: [] }), /at least one GPU/);
    assert.throws(() => model.fit({ gpus: [2 ** 30, 2 ** 30], margin: [1, 2, 3] }), /3 margins for 2 GPUs/);
    assert.throws(() => model.fit({ gpus: [-1] }), /whole number/);
    assert.throws(() => model.fit({ gpus: [2 ** 30], cacheTypeK: 'q4_K' }), /not a KV cache type/);
    // a roomy GPU: llama.cpp's defaults, every layer at the training context
    const f = model.fit({ gpus: [64 * 2 ** 30] });
    assert.equal(f.defaultLayers, true);
    assert.equal(f.fits, true);
    assert.equal(f.flags, `-c ${f.nCtx} -ngl -1`);
    assert.equal(f.gpus[0].totalBytes, f.gpus[0].weightsBytes + f.gpus[0].kvCacheBytes + f.gpus[0].computeBytes);
  } finally {
    await model.close();
  }
});
