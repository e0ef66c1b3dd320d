// compressed-tensors checkpoints through the installed package (fixtures/ct, made by
// fixtures/make_ct.py with the package's own compressors and `decompress`): config.json's
// `quantization_config` found beside the file (a Node path and a URL over a local Range server),
// each layer listed once as its `<path>.weight` with its label and logical shape, read bit for bit
// against expected.safetensors by row ranges that cut the packed zero points' words; the summary;
// and one error for a stored weight_shape or scale that does not fit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openSafetensors, open, compareTensor } from 'gguf-lens';
import { startServer } from './server.mjs';
import { REPO, bytesOf, sameBytes } from './helpers.mjs';

const CT = path.join(REPO, 'fixtures/ct');
const LAYER = 'model.layers.0.mlp.up_proj';

/** (case, label, logical shape, format, stored weight part, the plain lm_head's elements). */
const CASES = [
  ['w4a16-g32', 'CT-W4A16-g32', [48, 128], 'pack-quantized', 'weight_packed', 8 * 128],
  ['w4a16-g32-asym', 'CT-W4A16-g32-asym', [40, 64], 'pack-quantized', 'weight_packed', 8 * 64],
  ['w3a16-g16-asym', 'CT-W3A16-g16-asym', [40, 64], 'pack-quantized', 'weight_packed', 8 * 64],
  ['w8a16-ch', 'CT-W8A16-ch', [32, 96], 'pack-quantized', 'weight_packed', 8 * 96],
  ['fp8-ch', 'CT-FP8-E4M3-ch', [32, 64], 'float-quantized', 'weight', 8 * 64],
  ['fp8-t', 'CT-FP8-E4M3-t', [16, 64], 'float-quantized', 'weight', 8 * 64],
];

/** A safetensors file's header and data section, parsed here. */
function parse(bytes) {
  const n = Number(Buffer.from(bytes.buffer, bytes.byteOffset, 8).readBigUInt64LE(0));
  const header = JSON.parse(Buffer.from(bytes.subarray(8, 8 + n)).toString('utf8'));
  return { header, data: 8 + n };
}

/** The layer's expected f32 bytes (the package's decompress). */
function expected(dir) {
  const b = new Uint8Array(fs.readFileSync(path.join(CT, dir, 'expected.safetensors')));
  const { header, data } = parse(b);
  const t = header[`${LAYER}.weight`];
  assert.equal(t.dtype, 'F32');
  return b.subarray(data + t.data_offsets[0], data + t.data_offsets[1]);
}

const serve = () => startServer({ files: Object.fromEntries(CASES.flatMap(([dir]) => fs.readdirSync(path.join(CT, dir)).map((f) => [`/${dir}/${f}`, path.join(CT, dir, f)]))) });

test('every compressed-tensors layer reads as decompress, bit for bit, over HTTP Range and from a path', async () => {
  const server = await serve();
  try {
    for (const [dir, label, shape, format, weightPart, plain] of CASES) {
      const want = expected(dir);
      assert.ok(want.some((x) => x !== 0), dir);
      for (const input of [server.url(`/${dir}/model.safetensors`), path.join(CT, dir, 'model.safetensors')]) {
        const model = await open(input);
        assert.equal(model.format, 'safetensors');
        assert.equal(model.quantConfigSource, typeof input === 'string' && input.startsWith('http') ? server.url(`/${dir}/config.json`) : path.join(CT, dir, 'config.json'));
        assert.equal(model.ctConfig.format, format);
        assert.equal(model.ctConfig.label, label);
        assert.deepEqual(model.ctConfig.ignore, ['lm_head']);
        assert.equal(model.ctLayers.length, 1, dir);
        const layer = model.ctLayers[0];
        assert.equal(layer.name, `${LAYER}.weight`);
        assert.equal(layer.path, LAYER);
        assert.equal(layer.type, label);
        assert.deepEqual(layer.shape, shape);
        assert.equal(layer.parts.weight, `${LAYER}.${weightPart}`);
        assert.equal(layer.nElements, shape[0] * shape[1]);
        // Read by its name and by its path; chunks that cut the zero points' words mid-word.
        for (const [name, rowsPerChunk] of [[layer.name, 1], [layer.name, 3], [LAYER, 7], [layer.name, 1000]]) {
          const out = await model.readTensor(name, { rowsPerChunk });
          assert.ok(sameBytes(bytesOf(out), want), `${dir}: ${name} in chunks of ${rowsPerChunk}`);
        }
        const rowBytes = shape[1] * 4;
        for (const rows of [[shape[0] - 9, shape[0]], [5, 13], [0, 1]]) {
          const part = await model.readTensor(layer.name, { rows });
          assert.ok(sameBytes(bytesOf(part), want.subarray(rows[0] * rowBytes, rows[1] * rowBytes)), `${dir}: rows ${rows}`);
        }
        const s = model.summary();
        assert.equal(s.ct.layers, 1);
        assert.equal(s.ct.label, label);
        assert.equal(s.ct.format, format);
        assert.deepEqual(s.ct.ignore, ['lm_head']);
        const mix = s.dtypeMix.find((m) => m.type === label);
        assert.equal(mix.tensors, 1);
        assert.equal(mix.elements, shape[0] * shape[1]);
        // Parameters as the Hub counts them: the logical weights plus lm_head, no scales.
        assert.equal(s.parameterCount, shape[0] * shape[1] + plain);
        const stats = await model.tensorStats(layer.name);
        const values = new Float32Array(want.buffer.slice(want.byteOffset, want.byteOffset + want.byteLength));
        assert.equal(stats.count, values.length);
        assert.equal(stats.min, Math.min(...values));
        assert.equal(stats.max, Math.max(...values));
        const same = await compareTensor(model, model, layer.name);
        assert.equal(same.elements, values.length);
        assert.equal(same.maxAbs, 0);
        await model.close();
      }
    }
  } finally {
    await server.close();
  }
});

test('without config.json the parts are stored tensors; a given config makes them a layer', async () => {
  const dir = 'w4a16-g32-asym';
  const bytes = new Uint8Array(fs.readFileSync(path.join(CT, dir, 'model.safetensors')));
  const bare = await openSafetensors(bytes);
  assert.equal(bare.ctLayers.length, 0);
  assert.equal(bare.ctConfig, null);
  assert.equal(bare.tensor(`${LAYER}.weight_packed`).type, 'I32');
  await bare.close();
  const config = JSON.parse(fs.readFileSync(path.join(CT, dir, 'config.json'), 'utf8'));
  const model = await openSafetensors(bytes, { config });
  assert.equal(model.ctLayers.length, 1);
  assert.equal(model.quantConfigSource, 'options.config');
  assert.ok(sameBytes(bytesOf(await model.readTensor(`${LAYER}.weight`)), expected(dir)));
  await model.close();
  const bad = structuredClone(config);
  bad.quantization_config.format = 'marlin-24';
  await assert.rejects(openSafetensors(bytes, { config: bad }), /format "marlin-24" is not supported/);
});

test('a stored weight_shape or a scale that does not fit gives one error, not values', async () => {
  const dir = 'w4a16-g32';
  const config = JSON.parse(fs.readFileSync(path.join(CT, dir, 'config.json'), 'utf8'));
  const original = new Uint8Array(fs.readFileSync(path.join(CT, dir, 'model.safetensors')));
  const { header, data } = parse(original);
  const at = (name) => data + header[name].data_offsets[0];

  const wrongShape = original.slice();
  new DataView(wrongShape.buffer).setBigInt64(at(`${LAYER}.weight_shape`) + 8, 127n, true);
  let model = await openSafetensors(wrongShape, { config });
  await assert.rejects(model.readTensor(`${LAYER}.weight`), /weight_shape \[48, 127\] does not match the packed weight and scales \(\[48, 128\]\)/);
  await model.close();

  const nanScale = original.slice();
  // Row 2, group 1 of the BF16 [48, 4] scales: a quiet NaN.
  new DataView(nanScale.buffer).setUint16(at(`${LAYER}.weight_scale`) + (2 * 4 + 1) * 2, 0x7fc0, true);
  model = await openSafetensors(nanScale, { config });
  await assert.rejects(model.readTensor(`${LAYER}.weight`), /weight_scale NaN of row 2, group 1 is not finite/);
  // Rows that do not use the bad scale still read.
  const rows = await model.readTensor(`${LAYER}.weight`, { rows: [3, 6] });
  assert.ok(sameBytes(bytesOf(rows), expected(dir).subarray(3 * 128 * 4, 6 * 128 * 4)));
  await model.close();
});
