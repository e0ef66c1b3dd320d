// FP8 block-scaled checkpoints through the installed package (fixtures/fp8, made by
// fixtures/make_fp8.py: numpy + ml_dtypes replaying transformers' Fp8Dequantize): config.json's
// `quantization_config` found beside the file, each layer read as its `<path>.weight` bit for
// bit, by row ranges that cut blocks, over a local Range server; the summary; a compare of a
// layer against itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openSafetensors, compareTensor } from 'gguf-lens';
import { startServer } from './server.mjs';
import { REPO, bytesOf, sameBytes } from './helpers.mjs';

const FP8 = path.join(REPO, 'fixtures/fp8');
const manifest = JSON.parse(fs.readFileSync(path.join(FP8, 'manifest.json'), 'utf8'));

/** expected.safetensors' tensors' bytes by name, its header parsed here. */
function expected() {
  const b = fs.readFileSync(path.join(FP8, 'expected.safetensors'));
  const n = Number(b.readBigUInt64LE(0));
  const header = JSON.parse(b.subarray(8, 8 + n).toString('utf8'));
  const out = new Map();
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [s, e] = t.data_offsets;
    out.set(name, new Uint8Array(b.subarray(8 + n + s, 8 + n + e)));
  }
  return out;
}

test('every FP8 layer reads as transformers dequantizes, bit for bit, over HTTP Range', async () => {
  const want = expected();
  const server = await startServer({ files: Object.fromEntries(fs.readdirSync(FP8).map((f) => [`/${f}`, path.join(FP8, f)])) });
  try {
    const model = await openSafetensors(server.url('/model.safetensors'));
    assert.equal(model.quantConfigSource, server.url('/config.json'));
    assert.deepEqual(model.fp8Config.weightBlockSize, [128, 128]);
    assert.deepEqual(model.fp8Config.modulesToNotConvert, ['lm_head']);
    assert.equal(model.fp8Layers.length, manifest.layers.length);
    for (const c of manifest.layers) {
      const layer = model.fp8Layers.find((l) => l.name === c.name);
      assert.equal(layer.type, 'FP8-E4M3-block128');
      assert.deepEqual(layer.shape, c.shape);
      for (const rowsPerChunk of [1, 50, 1000]) {
        const out = await model.readTensor(c.name, { rowsPerChunk });
        assert.ok(sameBytes(bytesOf(out), want.get(c.name)), `${c.name} in chunks of ${rowsPerChunk}`);
      }
      const rows = [c.shape[0] - 9, c.shape[0]];
      const part = await model.readTensor(c.name, { rows });
      assert.ok(sameBytes(bytesOf(part), want.get(c.name).subarray(rows[0] * c.shape[1] * 4)), `${c.name} last rows`);
    }
    const s = model.summary();
    assert.deepEqual(s.fp8, { layers: 3, block: [128, 128], notConverted: ['lm_head'] });
    assert.equal(s.dtypeMix.find((m) => m.type === 'FP8-E4M3-block128').tensors, 3);
    const same = await compareTensor(model, model, 'model.layers.0.mlp.down_proj.weight');
    assert.equal(same.elements, 136 * 200);
    assert.equal(same.maxAbs, 0);
    await model.close();
  } finally {
    await server.close();
  }
});
