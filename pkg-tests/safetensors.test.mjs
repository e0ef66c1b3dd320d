// safetensors and GPTQ through the installed package: GPTQ layers dequantized bit for bit as the
// committed oracles (fixtures/gptq/, llama.cpp's dequant_gptq and GPTQModel; see
// tests/oracle_gptq.rs), plain tensors as torch converts them, over a local Range server; the
// header in at most 2 requests; the config found beside the file; open() dispatching.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { open, openSafetensors, openGguf, Model, GgufModel, SafetensorsModel } from 'gguf-lens';
import { startServer } from './server.mjs';
import { REPO, bytesOf, sameBytes, DEQUANT, makeBigHeader } from './helpers.mjs';

const GPTQ = path.join(REPO, 'fixtures/gptq');
const manifest = JSON.parse(fs.readFileSync(path.join(GPTQ, 'manifest.json'), 'utf8'));
const read = (p) => {
  const b = fs.readFileSync(p);
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
};
const v1ZerosOf = (oracles) => (oracles.length === 1 && oracles[0] === 'gptqmodel' ? 'gptqmodel' : 'llama.cpp');

/** Every case directory's files, served under /<case>/. */
function caseFiles() {
  const files = {};
  for (const c of manifest.cases) {
    for (const f of fs.readdirSync(path.join(GPTQ, c.case))) files[`/${c.case}/${f}`] = path.join(GPTQ, c.case, f);
  }
  return files;
}

test('every GPTQ case over HTTP Range, config found beside the file, bit for bit', async () => {
  const server = await startServer({ files: caseFiles() });
  try {
    let compared = 0;
    for (const c of manifest.cases) {
      const model = await openSafetensors(server.url(`/${c.case}/model.safetensors`));
      assert.equal(model.quantConfigSource, server.url(`/${c.case}/${c.config_file}`), c.case);
      assert.equal(model.quantConfig.bits, c.bits, c.case);
      assert.equal(model.quantConfig.checkpointFormat, c.checkpoint_format, c.case);
      assert.equal(model.quantConfig.descAct, c.desc_act, c.case);
      assert.equal(model.gptqLayers.length, 1, c.case);
      const layer = model.gptqLayers[0];
      assert.equal(layer.name, c.layer);
      assert.equal(layer.bits, c.bits);
      assert.equal(layer.inFeatures, c.in_features);
      assert.equal(layer.outFeatures, c.out_features);
      assert.equal(layer.nGroups, c.n_groups);
      assert.equal(layer.hasGIdx, c.g_idx_in_file);
      assert.equal(layer.actOrder, c.desc_act);
      assert.equal(layer.checkpointFormat, c.checkpoint_format);
      for (const [file, oracles] of Object.entries(c.expected)) {
        const out = await model.readTensor(c.layer, { v1Zeros: v1ZerosOf(oracles), chunkBytes: 4 * c.in_features * 5 });
        assert.equal(out.length, c.in_features * c.out_features);
        assert.ok(sameBytes(bytesOf(out), read(path.join(GPTQ, c.case, file))), `${c.case} ${file} (${oracles})`);
        compared++;
      }
      const s = model.summary();
      assert.equal(s.gptq.bits, c.bits);
      assert.equal(s.gptq.groupSize, c.group_size);
      assert.equal(s.gptq.checkpointFormat, c.checkpoint_format);
      await model.close();
    }
    assert.ok(compared >= 20, String(compared));
  } finally {
    await server.close();
  }
});

test('row ranges of a layer equal slices of the whole; a layer read again is not fetched again', async () => {
  for (const name of ['b3_actorder_v2', 'b4_v2', 'b8_g32_v1']) {
    const c = manifest.cases.find((x) => x.case === name);
    const dir = path.join(GPTQ, name);
    const model = await openSafetensors(path.join(dir, 'model.safetensors'));
    assert.ok(model.quantConfig, 'config read beside a Node path');
    const oracles = Object.values(c.expected)[0];
    const whole = read(path.join(dir, Object.keys(c.expected)[0]));
    const n = c.in_features;
    for (const [a, b] of [[0, 1], [5, 6], [3, 17], [31, 32], [7, 7]]) {
      const part = await model.readTensor(c.layer, { rows: [a, b], v1Zeros: v1ZerosOf(oracles) });
      assert.ok(sameBytes(bytesOf(part), whole.subarray(4 * a * n, 4 * b * n)), `${name} ${a}..${b}`);
    }
    await assert.rejects(model.readTensor(c.layer, { rows: [0, c.out_features + 1] }), RangeError);
    // The last layer's parts stay in wasm memory: more reads of it fetch nothing.
    const before = model.ioStats.requests;
    await model.tensorStats(c.layer);
    await model.readTensor(c.layer, { rows: [1, 2] });
    assert.equal(model.ioStats.requests, before);
    await model.close();
  }
});

test('a layer without any config: bits and groups inferred, v1 by default', async () => {
  const c = manifest.cases.find((x) => x.case === 'b4_g32_v1');
  const bytes = read(path.join(GPTQ, c.case, 'model.safetensors'));
  const model = await openSafetensors(bytes);
  assert.equal(model.quantConfig, null);
  assert.equal(model.gptqLayers[0].bits, 4);
  assert.equal(model.gptqLayers[0].groupSize, 32);
  const out = await model.readTensor(c.layer);
  assert.ok(sameBytes(bytesOf(out), read(path.join(GPTQ, c.case, 'expected.f32'))));
  // The config as an object.
  const config = JSON.parse(fs.readFileSync(path.join(GPTQ, 'b4_v2/config.json'), 'utf8'));
  const v2 = await openSafetensors(read(path.join(GPTQ, 'b4_v2/model.safetensors')), { config });
  assert.equal(v2.quantConfig.checkpointFormat, 'gptq_v2');
  assert.equal(v2.quantConfigSource, 'options.config');
  assert.ok(sameBytes(bytesOf(await v2.readTensor(c.layer)), read(path.join(GPTQ, 'b4_v2/expected.f32'))));
  await assert.rejects(openSafetensors(bytes, { quantizeConfig: { bits: 5 } }), /bits 5/);
});

test('plain tensors, metadata and the summary', async () => {
  const c = manifest.cases.find((x) => x.case === 'b4_g32_v1');
  const server = await startServer({ files: caseFiles() });
  try {
    const model = await openSafetensors(server.url('/b4_g32_v1/model.safetensors'));
    assert.deepEqual(model.metadata, [{ key: 'format', type: 'string', value: 'pt' }]);
    assert.equal(model.get('format'), 'pt');
    assert.equal(model.get('__proto__'), undefined);
    for (const [name, info] of Object.entries(c.plain)) {
      const t = model.tensor(name);
      assert.deepEqual(t.shape, info.shape);
      const want = read(path.join(GPTQ, c.case, info.file));
      assert.ok(sameBytes(bytesOf(await model.readTensor(name, { chunkBytes: 1 })), want), name);
      const last = await model.readTensor(name, { rows: [t.nRows - 1, t.nRows] });
      assert.ok(sameBytes(bytesOf(last), want.subarray(want.length - 4 * t.rowLength)), `${name} last row`);
      const raw = await model.readTensorBytes(name, { rows: [0, 1] });
      assert.equal(raw.length, t.rowBytes);
    }
    const s = model.summary();
    assert.equal(s.tensorCount, model.tensors.length);
    const plain = Object.values(c.plain).reduce((sum, p) => sum + p.shape.reduce((x, y) => x * y, 1), 0);
    assert.equal(s.parameterCount, plain + c.in_features * c.out_features);
    const gptq = s.dtypeMix.find((m) => m.type === 'GPTQ-4bit');
    assert.equal(gptq.tensors, 1);
    assert.ok(Math.abs(s.dtypeMix.reduce((sum, m) => sum + m.share, 0) - 1) < 1e-12);
    await model.close();
  } finally {
    await server.close();
  }
});

test('every plain dtype reads as torch converts it', async () => {
  const plain = manifest.plain_dtypes;
  const dir = path.join(GPTQ, plain.dir);
  const model = await openSafetensors(path.join(dir, 'model.safetensors'), { findConfig: false });
  assert.equal(model.gptqLayers.length, 0);
  assert.equal(model.summary().gptq, null);
  for (const [name, info] of Object.entries(plain.tensors)) {
    const out = await model.readTensor(name);
    assert.ok(sameBytes(bytesOf(out), read(path.join(dir, info.file))), `${name} (${info.type})`);
  }
  await model.close();
});

test('tensorStats over a GPTQ layer equals a pass over the oracle', async () => {
  const c = manifest.cases.find((x) => x.case === 'b8_actorder_v2');
  const model = await openSafetensors(path.join(GPTQ, c.case, 'model.safetensors'));
  const stats = await model.tensorStats(c.layer, { bins: 16, chunkBytes: 100 });
  const all = new Float32Array(read(path.join(GPTQ, c.case, 'expected.f32')).slice().buffer);
  const finite = [...all].filter(Number.isFinite);
  assert.equal(stats.count, all.length);
  assert.equal(stats.min, Math.min(...finite));
  assert.equal(stats.max, Math.max(...finite));
  assert.equal(stats.zeroCount, finite.filter((v) => v === 0).length);
  await model.close();
});

/** A safetensors file whose header is bigger than the first read (nTensors F32 [4] tensors). */
function bigHeader(nTensors) {
  const header = { __metadata__: { format: 'pt' } };
  for (let i = 0; i < nTensors; i++) {
    header[`model.layers.${i}.some_rather_long_tensor_name_to_grow_the_header.weight`] = { dtype: 'F32', shape: [4], data_offsets: [16 * i, 16 * i + 16] };
  }
  const json = Buffer.from(JSON.stringify(header));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  const data = Buffer.alloc(16 * nTensors);
  for (let i = 0; i < 4 * nTensors; i++) data.writeFloatLE(i, 4 * i);
  return { bytes: Buffer.concat([len, json, data]), headerLength: json.length };
}

test('the header arrives in at most 2 requests', async () => {
  const big = bigHeader(5000);
  assert.ok(big.headerLength > 256 * 1024);
  const server = await startServer({ files: { '/big.safetensors': big.bytes, '/small/model.safetensors': path.join(GPTQ, 'b4_g32_v1/model.safetensors') } });
  try {
    for (const [name, most] of [['/big.safetensors', 2], ['/small/model.safetensors', 1]]) {
      server.reset();
      const model = await openSafetensors(server.url(name));
      const requests = server.state.log.filter((r) => r.path === name).length;
      assert.ok(requests <= most, `${name}: ${requests} requests`);
      assert.equal(model.ioStats.requests, requests);
      if (name === '/big.safetensors') {
        assert.equal(model.tensors.length, 5000);
        const t = model.tensors[4999];
        const out = await model.readTensor(t.name);
        assert.deepEqual([...out], [19996, 19997, 19998, 19999]);
      }
      await model.close();
    }
  } finally {
    await server.close();
  }
});

test('open() dispatches by extension and by the first bytes', async () => {
  const st = read(path.join(GPTQ, 'b4_g32_v1/model.safetensors'));
  const byPath = await open(path.join(GPTQ, 'b4_g32_v1/model.safetensors'));
  assert.equal(byPath.format, 'safetensors');
  assert.ok(byPath.quantConfig);
  const byMagic = await open(st);
  assert.equal(byMagic.format, 'safetensors');
  assert.equal(byMagic.ioStats.requests, 1);
  assert.ok(sameBytes(bytesOf(await byMagic.readTensor('model.layers.0.self_attn.q_proj')), read(path.join(GPTQ, 'b4_g32_v1/expected.f32'))));
  const gguf = read(path.join(DEQUANT, 'Q4_K.gguf'));
  const g = await open(gguf);
  assert.ok(typeof g.summary().quantMix === 'object');
  assert.equal(g.ioStats.requests, 1);
  const direct = await openGguf(gguf);
  assert.deepEqual(g.tensors, direct.tensors);
  await assert.rejects(open(new Uint8Array(64)), /not a GGUF file/);
});

test('one wasm model handle for both formats: what both have works on each, a format\'s own methods throw naming it', async () => {
  const st = await open(path.join(GPTQ, 'b4_g32_v1/model.safetensors'));
  const g = await open(read(path.join(DEQUANT, 'Q4_K.gguf')));
  // GGUF headers parse in the small core module first; the full one (the checkpoint's) after preload.
  await g.preload();
  assert.equal(Object.getPrototypeOf(st.header), Object.getPrototypeOf(g.header));
  assert.deepEqual([st.header.format, g.header.format], ['safetensors', 'gguf']);
  for (const m of [st, g]) {
    assert.equal(m.header.dataOffset, m.dataOffset);
    assert.equal(m.header.headerLength, m.headerLength);
    assert.equal(m.header.summary().format, m.format);
    const t = m.tensors[0];
    const [start, end] = m.header.rowsRange(t.name, 0, 1);
    assert.equal(end - start, t.rowBytes);
  }
  assert.throws(() => st.header.tensorColumns(), /a safetensors model has no GGUF header/);
  assert.throws(() => st.header.version, /a safetensors model has no GGUF header/);
  assert.throws(() => g.header.gptqLayers(), /a GGUF model has no safetensors checkpoint/);
  assert.throws(() => g.header.addShard(st.header), /a GGUF model has no safetensors checkpoint/);
  // A compare side holds one model of one format.
  const side = new g.wasm.CompareSide();
  try {
    side.add(g.header);
    assert.throws(() => side.add(st.header), /one model of one format/);
  } finally {
    side.free();
  }
  await st.close();
  await g.close();
});

test('one model class for both formats: the aliases are it, GGUF-only methods throw one TypeError on a checkpoint', async () => {
  const st = await openSafetensors(path.join(GPTQ, 'b4_g32_v1/model.safetensors'));
  const g = await openGguf(read(path.join(DEQUANT, 'Q4_K.gguf')));
  assert.equal(GgufModel, Model);
  assert.equal(SafetensorsModel, Model);
  for (const m of [st, g]) {
    assert.ok(m instanceof Model && m instanceof GgufModel && m instanceof SafetensorsModel, m.format);
    assert.equal(m.constructor, Model, m.format);
  }
  // What a checkpoint has no such thing as, and what GGUF has no layers or config for.
  assert.deepEqual([st.version, st.endian, st.alignment], [null, null, null]);
  assert.equal(typeof g.version, 'number');
  for (const list of ['gptqLayers', 'gptqLayerErrors', 'mlxLayers', 'fp8Layers', 'ctLayers', 'mxfp4Layers']) assert.deepEqual(g[list], [], list);
  for (const config of ['quantConfig', 'mlxQuantization', 'fp8Config', 'ctConfig', 'mxfp4Config', 'quantConfigSource']) assert.equal(g[config], null, config);
  assert.equal(g.gptqLayer('model.layers.0.self_attn.q_proj'), undefined);
  assert.equal(st.gptqLayer('model.layers.0.self_attn.q_proj'), st.gptqLayers[0]);
  assert.equal(st.gptqLayers.length, 1);
  // One line naming the call, the same for each GGUF-only method (sync ones throw, async ones reject).
  const refused = (call) => (err) => err instanceof TypeError
    && err.message === `gguf-lens: ${call} needs a GGUF model; this is a safetensors checkpoint`;
  for (const [call, run] of [['specialTokens', () => st.specialTokens()], ['planMemory', () => st.planMemory()], ['fit', () => st.fit({ gpus: [2 ** 30] })]]) {
    assert.throws(run, refused(call), call);
  }
  const calls = [
    ['tokenize', () => st.tokenize('hi')], ['detokenize', () => st.detokenize([1])], ['tokenPiece', () => st.tokenPiece(1)],
    ['tokenPieces', () => st.tokenPieces([1])], ['renderChatTemplate', () => st.renderChatTemplate([{ role: 'user', content: 'hi' }])],
    ['edit', () => st.edit()], ['hash', () => st.hash()], ['lint', () => st.lint()],
  ];
  for (const [call, run] of calls) await assert.rejects(run, refused(call), call);
  // The same methods work on the GGUF model of the same class.
  assert.ok(Array.isArray(g.specialTokens()));
  assert.ok(Array.isArray((await g.lint()).findings));
  await st.close();
  await g.close();
});

test('open() by the first bytes: a header longer than the first read grows from them', async () => {
  const big = makeBigHeader({ nTokens: 60_000, nTensors: 50, bpe: true });
  const byMagic = await open(new Uint8Array(big.bytes));
  assert.equal(byMagic.dataOffset, big.dataOffset);
  assert.equal(byMagic.get('tokenizer.ggml.merges').len, 60_000);
  const direct = await openGguf(new Uint8Array(big.bytes));
  assert.deepEqual(byMagic.tensors, direct.tensors);
  assert.deepEqual(byMagic.get('tokenizer.ggml.tokens').items(59_990, 60_000), direct.get('tokenizer.ggml.tokens').items(59_990, 60_000));
});

test('a sharded checkpoint opens from its index, layers straddling shards included', async () => {
  const sh = manifest.sharded;
  const same = manifest.cases.find((x) => x.case === sh.same_as);
  const files = {};
  for (const f of fs.readdirSync(path.join(GPTQ, sh.dir))) files[`/${sh.dir}/${f}`] = path.join(GPTQ, sh.dir, f);
  const server = await startServer({ files });
  try {
    const model = await open(server.url(`/${sh.dir}/${sh.index}`));
    assert.equal(model.format, 'safetensors');
    assert.equal(model.shards.length, sh.shards.length);
    assert.equal(model.quantConfigSource, server.url(`/${sh.dir}/quantize_config.json`));
    assert.equal(typeof model.indexMetadata.total_size, 'number');
    for (const [tensor, shard] of Object.entries(sh.weight_map)) assert.equal(model.tensor(tensor).shard, sh.shards.indexOf(shard), tensor);
    assert.deepEqual(model.gptqLayers.map((l) => l.name), [same.layer]);
    const out = await model.readTensor(same.layer);
    assert.ok(sameBytes(bytesOf(out), read(path.join(GPTQ, same.case, 'expected.f32'))));
    for (const [name, info] of Object.entries(same.plain)) {
      assert.ok(sameBytes(bytesOf(await model.readTensor(name)), read(path.join(GPTQ, same.case, info.file))), name);
    }
    assert.equal(model.summary().parameterCount, Object.values(same.plain).reduce((s, p) => s + p.shape.reduce((x, y) => x * y, 1), 0) + same.in_features * same.out_features);
    await model.close();
    await assert.rejects(openSafetensors(server.url(`/${sh.dir}/missing.safetensors.index.json`)), /HTTP 404/);
  } finally {
    await server.close();
  }
});
