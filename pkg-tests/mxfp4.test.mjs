// gpt-oss MXFP4 expert tensors through the installed package (fixtures/mxfp4, made by
// fixtures/make_mxfp4.py with transformers' own convert_moe_packed_tensors): config.json's
// `quantization_config` found beside the file (a URL over a local Range server and a Node path),
// each tensor listed once under its name as [experts, in, out], read bit for bit in row chunks
// within and across experts (each expert's parts fetched once); the summary; a NaN scale.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openSafetensors, open, compareTensor } from 'gguf-lens';
import { startServer } from './server.mjs';
import { REPO, bytesOf, sameBytes } from './helpers.mjs';

const DIR = path.join(REPO, 'fixtures/mxfp4');
const manifest = JSON.parse(fs.readFileSync(path.join(DIR, 'manifest.json'), 'utf8'));

/** A safetensors file's header and data offset, parsed here. */
function parse(b) {
  const n = Number(Buffer.from(b.buffer, b.byteOffset, 8).readBigUInt64LE(0));
  return { header: JSON.parse(Buffer.from(b.subarray(8, 8 + n)).toString('utf8')), data: 8 + n };
}

/** Tensor `name`'s bytes in expected.safetensors. */
function expected(name) {
  const b = new Uint8Array(fs.readFileSync(path.join(DIR, 'expected.safetensors')));
  const { header, data } = parse(b);
  const [s, e] = header[name].data_offsets;
  return b.subarray(data + s, data + e);
}

test('every MXFP4 tensor reads as transformers converts it, bit for bit, over HTTP Range and from a path', async () => {
  const server = await startServer({ files: Object.fromEntries(fs.readdirSync(DIR).map((f) => [`/${f}`, path.join(DIR, f)])) });
  try {
    for (const input of [server.url('/model.safetensors'), path.join(DIR, 'model.safetensors')]) {
      const model = await open(input);
      assert.equal(model.quantConfigSource, input.startsWith('http') ? server.url('/config.json') : path.join(DIR, 'config.json'));
      assert.equal(model.mxfp4Config.modulesToNotConvert.at(-1), 'lm_head');
      assert.equal(model.mxfp4Layers.length, manifest.layers.length);
      for (const c of manifest.layers) {
        const layer = model.mxfp4Layers.find((l) => l.name === c.name);
        assert.equal(layer.type, 'MXFP4');
        assert.deepEqual(layer.shape, c.shape);
        assert.equal(layer.parts.blocks, `${c.name}_blocks`);
        const want = expected(c.name);
        const [experts, k, r] = c.shape;
        for (const rowsPerChunk of [1, 7, 32, k + 5, 1000]) {
          const out = await model.readTensor(c.name, { rowsPerChunk });
          assert.ok(sameBytes(bytesOf(out), want), `${c.name} in chunks of ${rowsPerChunk}`);
        }
        // Rows across the first expert's end.
        const rows = [k - 3, k + 4];
        const part = await model.readTensor(c.name, { rows });
        assert.ok(sameBytes(bytesOf(part), want.subarray(rows[0] * r * 4, rows[1] * r * 4)), `${c.name} rows ${rows}`);
        const values = new Float32Array(want.buffer.slice(want.byteOffset, want.byteOffset + want.byteLength));
        const stats = await model.tensorStats(c.name);
        assert.equal(stats.count, experts * k * r);
        assert.equal(stats.max, Math.max(...values));
        const same = await compareTensor(model, model, c.name);
        assert.equal(same.maxAbs, 0);
      }
      const s = model.summary();
      assert.equal(s.mxfp4.layers, 2);
      const mix = s.dtypeMix.find((m) => m.type === 'MXFP4');
      assert.equal(mix.tensors, 2);
      const logical = manifest.layers.reduce((n, l) => n + l.shape.reduce((a, d) => a * d, 1), 0);
      assert.equal(mix.elements, logical);
      // Parameters as the Hub counts them: two values a block byte, no scales; biases, router, lm_head.
      assert.equal(s.parameterCount, logical + 2 * 24 + 3 * 16 + 3 * 64 + 8 * 64);
      assert.ok(!model.tensors.some((t) => t.name === manifest.layers[0].name));
      await model.close();
    }
  } finally {
    await server.close();
  }
});

test('without config.json the tensors are inferred from names and shapes; a NaN scale is one error', async () => {
  const original = new Uint8Array(fs.readFileSync(path.join(DIR, 'model.safetensors')));
  const bare = await openSafetensors(original);
  assert.equal(bare.mxfp4Layers.length, 2);
  assert.equal(bare.mxfp4Config, null);
  for (const l of bare.mxfp4Layers) {
    assert.ok(sameBytes(bytesOf(await bare.readTensor(l.name)), expected(l.name)), l.name);
  }
  await bare.close();
  const config = JSON.parse(fs.readFileSync(path.join(DIR, 'config.json'), 'utf8'));
  const name = 'model.layers.0.mlp.experts.down_proj';
  const { header, data } = parse(original);
  const bytes = original.slice();
  // Expert 1, row 2, block 1 of the [3, 16, 3] scales.
  bytes[data + header[`${name}_scales`].data_offsets[0] + 55] = 255;
  const model = await openSafetensors(bytes, { config });
  assert.equal(model.mxfp4Layers.length, 2);
  await assert.rejects(model.readTensor(name), /MXFP4 tensor model\.layers\.0\.mlp\.experts\.down_proj: _scales 255 \(e8m0 NaN\) of expert 1, row 2, block 1 \(byte 55\)/);
  // Expert 0 does not use it.
  const rows = await model.readTensor(name, { rows: [0, 96] });
  assert.ok(sameBytes(bytesOf(rows), expected(name).subarray(0, 96 * 16 * 4)));
  await model.close();
});
