// model.planMemory() through the installed package against llama.cpp's own log
// (fixtures/plan/expected.json, written by fixtures/make_plan.py): the KV cache per cache, the
// recurrent state and the mapped weights to the log's 0.01 MiB; llama.cpp's refusals throw.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openGguf } from 'gguf-lens';
import { REPO } from './helpers.mjs';

const MIB = 1024 * 1024;
const close = (bytes, mib) => Math.abs(bytes / MIB - mib) <= 0.0051;

test('planMemory matches llama.cpp on every oracle model and setting', async () => {
  const expected = JSON.parse(fs.readFileSync(path.join(REPO, 'fixtures/plan/expected.json'), 'utf8'));
  let checked = 0;
  for (const [name, m] of Object.entries(expected.models)) {
    // a split model: every shard (…-00001-of-00003.gguf and the rest)
    const split = m.file.match(/^(.*)-00001-of-(\d{5})\.gguf$/);
    const files = split
      ? Array.from({ length: Number(split[2]) }, (_, i) => `${split[1]}-${String(i + 1).padStart(5, '0')}-of-${split[2]}.gguf`)
      : [m.file];
    const model = await openGguf(files.length > 1 ? files.map((f) => path.join(REPO, f)) : path.join(REPO, m.file));
    try {
      for (const c of m.cases) {
        const options = {
          ctx: c.n_ctx, parallel: c.n_seq_max, cacheTypeK: c.type_k, cacheTypeV: c.type_v,
          flashAttn: c.flash_attn,
        };
        const what = `${name} ${JSON.stringify(options)}`;
        if (c.refused) {
          assert.throws(() => model.planMemory(options), undefined, what);
          checked++;
          continue;
        }
        const plan = model.planMemory(options);
        assert.equal(plan.kvCache.caches.length, c.caches.length, what);
        c.caches.forEach((cache, i) => {
          const ours = plan.kvCache.caches[i];
          assert.equal(ours.cells, cache.cells, what);
          assert.ok(close(ours.kBytes, cache.k_mib) && close(ours.vBytes, cache.v_mib), what);
        });
        if (c.recurrent) assert.ok(close(plan.kvCache.recurrentBytes, c.recurrent.mib), what);
        // one mapped buffer per file, each rounded in the log
        const logged = c.weights_mib.reduce((a, b) => a + b, 0);
        assert.ok(Math.abs(plan.weightsBytes / MIB - logged) <= 0.0051 * c.weights_mib.length, what);
        assert.equal(plan.totalBytes, plan.weightsBytes + plan.kvCacheBytes + plan.computeBytes);
        checked++;
      }
    } finally {
      await model.close();
    }
  }
  assert.ok(checked > 150);
});

test('planMemory answers a GPU budget and names the command', async () => {
  const model = await openGguf(path.join(REPO, 'fixtures/plan/gemma3.gguf'));
  try {
    const plan = model.planMemory({ gpuMem: 16 * MIB, ctx: 2048, file: 'gemma3.gguf' });
    assert.equal(plan.ngl, 8);
    assert.ok(plan.gpuBytes <= 16 * MIB); // weights, KV and the GPU compute buffer
    assert.ok(plan.compute.gpuBytes > 0);
    assert.equal(plan.maxCtx % 256, 0);
    assert.match(plan.command, /^llama-server -m gemma3\.gguf -c 2048 -ngl 8 -fa off -np 1/);
    assert.equal(model.planMemory().nCtx, 8192); // the training context
    assert.throws(() => model.planMemory({ cacheTypeV: 'q8_0' }), /quantized V cache requires flash_attn/);
    assert.throws(() => model.planMemory({ cacheTypeK: 'q4_K' }), /not a KV cache type/);
  } finally {
    await model.close();
  }
});
