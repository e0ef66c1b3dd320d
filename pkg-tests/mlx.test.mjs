// MLX checkpoints through the installed package (fixtures/mlx, made by fixtures/make_mlx.py with
// mlx's own writer): config.json's `quantization` found beside the file (a Node path and a URL
// over a local Range server), each layer read as its `<path>.weight` against `mx.dequantize`
// (expected.safetensors, decoded here), by row ranges, stats, and the summary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openSafetensors, compareTensor } from 'gguf-lens';
import { startServer } from './server.mjs';
import { REPO } from './helpers.mjs';

const MLX = path.join(REPO, 'fixtures/mlx');
const manifest = JSON.parse(fs.readFileSync(path.join(MLX, 'manifest.json'), 'utf8'));

/** expected.safetensors' f32 tensors by name, its header parsed here. */
function expected() {
  const b = fs.readFileSync(path.join(MLX, 'expected.safetensors'));
  const n = Number(b.readBigUInt64LE(0));
  const header = JSON.parse(b.subarray(8, 8 + n).toString('utf8'));
  const out = new Map();
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [s, e] = t.data_offsets;
    const bytes = b.subarray(8 + n + s, 8 + n + e);
    out.set(name, new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)));
  }
  return out;
}

function assertClose(got, want, what) {
  assert.equal(got.length, want.length, what);
  let maxAbs = 0, worst = 0;
  for (let i = 0; i < want.length; i++) {
    maxAbs = Math.max(maxAbs, Math.abs(want[i]));
    worst = Math.max(worst, Math.abs(got[i] - want[i]));
  }
  assert.ok(worst <= 1e-6 * maxAbs, `${what}: worst ${worst}, max|w| ${maxAbs}`);
}

test('every MLX layer reads as mx.dequantize, from a path and over HTTP Range', async () => {
  const want = expected();
  const server = await startServer({ files: Object.fromEntries(fs.readdirSync(MLX).map((f) => [`/${f}`, path.join(MLX, f)])) });
  try {
    for (const input of [path.join(MLX, 'model.safetensors'), server.url('/model.safetensors')]) {
      const model = await openSafetensors(input);
      assert.match(String(model.quantConfigSource), /config\.json$/, String(input));
      assert.equal(model.quantConfig, null);
      assert.equal(model.mlxQuantization.bits, 4);
      assert.equal(model.mlxQuantization.groupSize, 64);
      assert.deepEqual(model.mlxQuantization.layers['model.layers.b3_g128_f32'], { bits: 3, groupSize: 128 });
      assert.equal(model.mlxLayers.length, manifest.layers.length);
      for (const c of manifest.layers) {
        const layer = model.mlxLayers.find((l) => l.name === c.name);
        assert.ok(layer, c.name);
        assert.equal(layer.type, `MLX-${c.bits}bit-g${c.group_size}`);
        assert.deepEqual(layer.shape, c.shape);
        const out = await model.readTensor(c.name, { rowsPerChunk: 3 });
        assertClose(out, want.get(c.name), c.name);
        const part = await model.readTensor(c.name, { rows: [1, 3] });
        assert.deepEqual(part, out.subarray(256, 3 * 256), `${c.name} rows 1..3`);
      }
      const name = 'model.layers.b5_g32_f32.weight';
      const stats = await model.tensorStats(name);
      const values = want.get(name);
      assert.equal(stats.min, Math.min(...values));
      assert.equal(stats.max, Math.max(...values));
      const s = model.summary();
      assert.deepEqual(s.mlx, { layers: 20, bits: 4, groupSize: 64, overrides: 17 });
      const four = s.dtypeMix.find((m) => m.type === 'MLX-4bit-g64');
      assert.equal(four.tensors, manifest.layers.filter((l) => l.bits === 4 && l.group_size === 64).length);
      // The norm (256) and every layer's logical elements, not its packed words or scales.
      const elements = manifest.layers.reduce((n, l) => n + l.shape.reduce((a, d) => a * d, 1), 0);
      assert.equal(s.parameterCount, elements + 256);
      const same = await compareTensor(model, model, 'model.layers.b4_g64_experts.weight');
      assert.equal(same.elements, 2 * 4 * 256);
      assert.equal(same.maxAbs, 0);
      await model.close();
    }
  } finally {
    await server.close();
  }
});

test('without config.json only layers whose shapes fix bits and group are layers; a given config makes them all', async () => {
  const bytes = new Uint8Array(fs.readFileSync(path.join(MLX, 'model.safetensors')));
  const bare = await openSafetensors(bytes);
  // bits x group is what the shapes fix: 2-bit g32, 3-bit g32, 5-bit g32/g64/g128, 6-bit g128
  // and 8-bit g128 fit no other pair mlx makes; the other 13 are listed as ambiguous.
  assert.deepEqual(bare.mlxLayers.map((l) => `${l.bits}/${l.groupSize}`).sort(),
    ['2/32', '3/32', '5/128', '5/32', '5/64', '6/128', '8/128']);
  assert.equal(bare.gptqLayerErrors.length, 13);
  for (const e of bare.gptqLayerErrors) assert.match(e, /^MLX layer \S+: without config\.json's quantization the shapes fit /);
  assert.equal(bare.tensor('model.layers.b4_g64_f32.weight').type, 'U32');
  await bare.close();
  const config = JSON.parse(fs.readFileSync(path.join(MLX, 'config.json'), 'utf8'));
  const model = await openSafetensors(bytes, { config });
  assert.equal(model.mlxLayers.length, 20);
  assertClose(await model.readTensor('model.layers.b6_g64_f32.weight'), expected().get('model.layers.b6_g64_f32.weight'), 'b6');
  await model.close();
  await assert.rejects(openSafetensors(bytes, { config: { quantization: { bits: 4, group_size: 16 } } }), /group_size 16/);
});
