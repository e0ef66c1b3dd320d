// bitsandbytes 4-bit checkpoints through the installed package (fixtures/bnb, made by
// fixtures/make_bnb.py: bitsandbytes' own Linear4bit writer, its reference dequantize_4bit for
// the expected values): NF4 and FP4, plain and double-quantized scales, f32 / f16 / bf16 quant
// states. config.json found beside the file, each layer listed once as its `<path>.weight` in
// its logical shape and read bit for bit, by row ranges that cut blocks and bytes, over a local
// Range server; the summary; without config.json; a stored code book or quant state that is
// not bitsandbytes' is one error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSafetensors, compareTensor } from 'gguf-lens';
import { startServer } from './server.mjs';
import { REPO, bytesOf, sameBytes } from './helpers.mjs';

const BNB = path.join(REPO, 'fixtures/bnb');
const manifest = JSON.parse(fs.readFileSync(path.join(BNB, 'manifest.json'), 'utf8'));

/** A safetensors file's header and data, parsed here. */
function parse(file) {
  const b = fs.readFileSync(file);
  const n = Number(b.readBigUInt64LE(0));
  const header = JSON.parse(b.subarray(8, 8 + n).toString('utf8'));
  return { b, n, header };
}

/** expected.safetensors' tensors' bytes by name. */
function expected(dir) {
  const { b, n, header } = parse(path.join(BNB, dir, 'expected.safetensors'));
  const out = new Map();
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [s, e] = t.data_offsets;
    out.set(name, new Uint8Array(b.subarray(8 + n + s, 8 + n + e)));
  }
  return out;
}

/** The label the CLI gives a layer, from the manifest's facts: NF4-b64, FP4-b32-dq. */
const label = (c) => `${c.quant_type.toUpperCase()}-b${c.blocksize}${c.nested ? '-dq' : ''}`;

/** model.safetensors of `dir` with `edit(bytes, header, dataStart)` applied, as a Uint8Array. */
function edited(dir, edit) {
  const { b, n, header } = parse(path.join(BNB, dir, 'model.safetensors'));
  const bytes = new Uint8Array(b);
  edit(bytes, header, 8 + n);
  return bytes;
}

for (const dir of ['nf4', 'fp4']) {
  test(`${dir}: every bitsandbytes layer reads as dequantize_4bit, bit for bit, over HTTP Range`, async () => {
    const want = expected(dir);
    const cases = manifest.checkpoints[dir];
    const where = path.join(BNB, dir);
    const server = await startServer({ files: Object.fromEntries(fs.readdirSync(where).map((f) => [`/${f}`, path.join(where, f)])) });
    try {
      const model = await openSafetensors(server.url('/model.safetensors'));
      assert.equal(model.quantConfigSource, server.url('/config.json'));
      assert.deepEqual(model.bnbConfig, { quantType: dir, doubleQuant: dir === 'nf4', modulesToNotConvert: ['lm_head'] });
      assert.deepEqual(model.gptqLayerErrors, []);
      assert.equal(model.bnbLayers.length, cases.length);
      for (const c of cases) {
        const layer = model.bnbLayers.find((l) => l.name === c.layer);
        assert.ok(layer, `${c.layer} listed`);
        assert.equal(layer.type, label(c));
        assert.deepEqual(layer.shape, c.shape);
        assert.equal(layer.dtype, c.dtype);
        assert.equal(layer.doubleQuant, c.nested);
        assert.equal(layer.blocksize, c.blocksize);
        assert.equal(layer.nElements, c.shape[0] * c.shape[1]);
        // Every stored part is counted, each once.
        const partBytes = Object.values(layer.parts).reduce((sum, p) => sum + model.tensor(p).nBytes, 0);
        assert.equal(layer.nBytes, partBytes);
        const all = want.get(c.layer);
        assert.equal(all.length, 4 * layer.nElements);
        for (const rowsPerChunk of [1, 3, 1000]) {
          const out = await model.readTensor(c.layer, { rowsPerChunk });
          assert.ok(sameBytes(bytesOf(out), all), `${c.layer} in chunks of ${rowsPerChunk}`);
        }
        // Rows that start and end inside a block (and, with an odd row length, inside a byte).
        const rows = [3, 9];
        const part = await model.readTensor(c.layer, { rows, rowsPerChunk: 2 });
        const row = 4 * c.shape[1];
        assert.ok(sameBytes(bytesOf(part), all.subarray(rows[0] * row, rows[1] * row)), `${c.layer} rows 3..9`);
        // By its path too (the core's rule).
        const byPath = await model.readTensor(c.layer.replace(/\.weight$/, ''), { rows: [0, 1] });
        assert.ok(sameBytes(bytesOf(byPath), all.subarray(0, row)), `${c.layer} by path`);
        const values = new Float32Array(all.buffer, all.byteOffset, all.length / 4);
        const stats = await model.tensorStats(c.layer);
        assert.equal(stats.count, values.length);
        assert.equal(stats.min, Math.min(...values));
        assert.equal(stats.max, Math.max(...values));
      }
      const s = model.summary();
      const logical = cases.reduce((n, c) => n + c.shape[0] * c.shape[1], 0);
      // model.norm.weight [16] is the one plain tensor.
      assert.equal(s.parameterCount, logical + 16);
      assert.equal(s.tensorBytes, model.tensors.reduce((n, t) => n + t.nBytes, 0));
      assert.deepEqual(s.bnb, { layers: cases.length, config: { quantType: dir, doubleQuant: dir === 'nf4', modulesToNotConvert: ['lm_head'] } });
      for (const c of cases) {
        const share = s.dtypeMix.find((m) => m.type === label(c));
        assert.ok(share, `${label(c)} in ${JSON.stringify(s.dtypeMix)}`);
        assert.equal(share.elements, cases.filter((d) => label(d) === label(c)).reduce((n, d) => n + d.shape[0] * d.shape[1], 0));
      }
      const [first] = cases;
      const same = await compareTensor(model, model, first.layer);
      assert.equal(same.elements, first.shape[0] * first.shape[1]);
      assert.equal(same.maxAbs, 0);
      await model.close();
    } finally {
      await server.close();
    }
  });
}

/** A safetensors file of `tensors` ([name, { dtype, shape }, bytes]), in that order. */
function writeSafetensors(file, tensors) {
  const header = {};
  let at = 0;
  for (const [name, { dtype, shape }, bytes] of tensors) {
    header[name] = { dtype, shape, data_offsets: [at, at + bytes.length] };
    at += bytes.length;
  }
  const json = Buffer.from(JSON.stringify(header));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  fs.writeFileSync(file, Buffer.concat([len, json, ...tensors.map(([, , bytes]) => bytes)]));
}

test('a sharded checkpoint: layers whose parts and quant states lie in other shards read bit for bit', async () => {
  const { b, n, header } = parse(path.join(BNB, 'nf4/model.safetensors'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bnb-shards-'));
  try {
    const tensors = Object.entries(header).filter(([name]) => name !== '__metadata__')
      .map(([name, t]) => [name, t, b.subarray(8 + n + t.data_offsets[0], 8 + n + t.data_offsets[1])]);
    // Quant states and the down projection's scales in the second shard, the rest in the first.
    const second = (name) => name.includes('.quant_state.') || name.startsWith('model.layers.0.mlp.down_proj.weight.');
    const shards = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
    writeSafetensors(path.join(dir, shards[0]), tensors.filter(([name]) => !second(name)));
    writeSafetensors(path.join(dir, shards[1]), tensors.filter(([name]) => second(name)));
    const weightMap = Object.fromEntries(tensors.map(([name]) => [name, shards[second(name) ? 1 : 0]]));
    fs.writeFileSync(path.join(dir, 'model.safetensors.index.json'), JSON.stringify({ metadata: {}, weight_map: weightMap }));
    fs.copyFileSync(path.join(BNB, 'nf4/config.json'), path.join(dir, 'config.json'));
    const model = await openSafetensors(path.join(dir, 'model.safetensors.index.json'));
    assert.equal(model.shards.length, 2);
    assert.equal(model.bnbConfig.quantType, 'nf4');
    const want = expected('nf4');
    assert.deepEqual(model.bnbLayers.map((l) => l.name).sort(), [...want.keys()].sort());
    for (const [name, bytes] of want) {
      assert.ok(sameBytes(bytesOf(await model.readTensor(name, { rowsPerChunk: 5 })), bytes), name);
    }
    assert.equal(model.summary().bnb.layers, 3);
    await model.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('without config.json the layers are found by their quant states', async () => {
  const model = await openSafetensors(fs.readFileSync(path.join(BNB, 'nf4/model.safetensors')));
  assert.equal(model.bnbConfig, null);
  assert.equal(model.quantConfigSource, null);
  assert.deepEqual(model.bnbLayers.map((l) => l.type).sort(), manifest.checkpoints.nf4.map(label).sort());
  assert.deepEqual(model.summary().bnb, { layers: 3, config: null });
  const c = manifest.checkpoints.nf4[1];
  const out = await model.readTensor(c.layer);
  assert.ok(sameBytes(bytesOf(out), expected('nf4').get(c.layer)));
  await model.close();
});

test('a stored code book that is not bitsandbytes\' is one error when read; a bad quant state leaves the layer out, said why', async () => {
  const up = 'model.layers.0.mlp.up_proj';
  const bytes = edited('nf4', (b, header, data) => {
    const [s] = header[`${up}.weight.quant_map`].data_offsets;
    new DataView(b.buffer).setFloat32(data + s + 4, 0.5, true);
    // The other layer's quant state names a quant type bitsandbytes has not: same length.
    const q = header['model.layers.0.self_attn.q_proj.weight.quant_state.bitsandbytes__nf4'].data_offsets;
    const text = new TextDecoder().decode(b.subarray(data + q[0], data + q[1]));
    assert.ok(text.includes('"nf4"'), text);
    b.set(new TextEncoder().encode(text.replace('"nf4"', '"nf5"')), data + q[0]);
  });
  const model = await openSafetensors(bytes);
  assert.deepEqual(model.bnbLayers.map((l) => l.path).sort(), ['model.layers.0.mlp.down_proj', up]);
  assert.equal(model.gptqLayerErrors.length, 1);
  assert.match(model.gptqLayerErrors[0], /model\.layers\.0\.self_attn\.q_proj: quant state quant_type "nf5" is not nf4 or fp4/);
  await assert.rejects(model.readTensor(`${up}.weight`), (err) => {
    assert.match(err.message, /^gguf-lens: .*quant_map \[.*\] is not bitsandbytes' nf4 code book/);
    assert.equal(err.message.split('\n').length, 1);
    return true;
  });
  await model.close();
});

test('a quant state larger than the core reads is one error at open', async () => {
  // A header naming a 1 MB quant state (the data is there, all zeros).
  const name = 'x.weight.quant_state.bitsandbytes__nf4';
  const size = 1 << 20;
  const json = new TextEncoder().encode(JSON.stringify({ [name]: { dtype: 'U8', shape: [size], data_offsets: [0, size] } }));
  const file = new Uint8Array(8 + json.length + size);
  new DataView(file.buffer).setBigUint64(0, BigInt(json.length), true);
  file.set(json, 8);
  await assert.rejects(openSafetensors(file), (err) => {
    assert.match(err.message, /^gguf-lens: .*bitsandbytes quant state x\.weight\.quant_state\.bitsandbytes__nf4/);
    return true;
  });
});
