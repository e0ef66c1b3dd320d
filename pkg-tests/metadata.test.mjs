// Metadata and tensor infos read through the installed package equal gguf-py's view
// (fixtures/meta/*.expected.json).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openGguf } from 'gguf-lens';
import { META, REPO } from './helpers.mjs';

/** JSON with integers too big for a double kept as strings. */
function parseExpected(text) {
  return JSON.parse(text.replace(/([[,:]\s*)(-?\d{16,})(?=\s*[,\]}])/g, '$1"$2"'));
}

/** One comparable form: integers as decimal strings, non-finite floats as their JSON names. */
function norm(v) {
  if (typeof v === 'bigint') return String(v);
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return 'NaN';
    if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity';
    return Number.isInteger(v) ? String(v) : v;
  }
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return v.map(norm);
  if (v && typeof v === 'object') {
    if ('itemType' in v) return { item_type: v.itemType, len: norm(v.len), value: norm(v.value) };
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, norm(x)]));
  }
  return v;
}

/** An array entry's items read back from packed(): strings as UTF-8 slices, numbers little-endian. */
function unpack(m) {
  const { bytes, ends } = m.packed();
  if (ends) return Array.from(ends, (end, i) => new TextDecoder().decode(bytes.subarray(i ? ends[i - 1] : 0, end)));
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const [size, get] = {
    uint8: [1, (o) => dv.getUint8(o)], int8: [1, (o) => dv.getInt8(o)], uint16: [2, (o) => dv.getUint16(o, true)], int16: [2, (o) => dv.getInt16(o, true)],
    uint32: [4, (o) => dv.getUint32(o, true)], int32: [4, (o) => dv.getInt32(o, true)], float32: [4, (o) => dv.getFloat32(o, true)], bool: [1, (o) => dv.getUint8(o) === 1],
    uint64: [8, (o) => dv.getBigUint64(o, true)], int64: [8, (o) => dv.getBigInt64(o, true)], float64: [8, (o) => dv.getFloat64(o, true)],
  }[m.itemType];
  assert.equal(bytes.length, size * m.len);
  return Array.from({ length: m.len }, (_, i) => get(i * size));
}

const cases = fs.readdirSync(META).filter((f) => f.endsWith('.gguf')).map((f) => path.join(META, f));
cases.push(path.join(REPO, 'fixtures/real/ggml-vocab-bert-bge.gguf'));

for (const file of cases) {
  test(`metadata of ${path.basename(file)} equals gguf-py's`, async () => {
    const expected = parseExpected(fs.readFileSync(file.replace(/\.gguf$/, '.expected.json'), 'utf8'));
    const model = await openGguf(file, { firstReadBytes: 1024 });
    assert.equal(model.version, expected.version);
    assert.equal(model.endian, expected.endian);
    assert.equal(model.alignment, expected.alignment);
    assert.equal(model.dataOffset, expected.data_offset);
    assert.equal(model.byteLength, expected.file_size);
    const ours = model.metadata.map((m) => {
      const entry = { key: m.key, type: m.type };
      if (m.type === 'array') Object.assign(entry, { item_type: m.itemType, len: m.len, value: m.items() });
      else entry.value = m.value;
      return norm(entry);
    });
    assert.deepEqual(ours, norm(expected.metadata));
    // packed(): the same items as canonical bytes (for comparing whole arrays without one JS value per item)
    model.metadata.forEach((m, i) => {
      if (m.type === 'array' && m.itemType !== 'array') assert.deepEqual(norm(unpack(m)), norm(expected.metadata[i].value), `${m.key} packed`);
    });
    // gguf-py's `shape` is ggml's ne (innermost first): the package's `ne`; its `shape` is that
    // reversed (outermost first, as numpy/PyTorch/safetensors).
    const tensors = model.tensors.map((t) => ({
      name: t.name, type: t.type, type_id: t.typeId, shape: t.ne, offset: t.relativeOffset,
      n_elements: t.nElements, n_bytes: t.nBytes,
    }));
    for (const t of model.tensors) assert.deepEqual(t.shape, [...t.ne].reverse(), t.name);
    assert.deepEqual(norm(tensors), norm(expected.tensors));
    await model.close();
  });
}

test('summary of the bundled sample model', async () => {
  const model = await openGguf(path.join(REPO, 'fixtures/sample/tiny-llama-Q4_K_M.gguf'));
  const s = model.summary();
  assert.equal(s.architecture, model.get('general.architecture'));
  assert.equal(s.parameterCount, model.tensors.reduce((n, t) => n + t.nElements, 0));
  assert.equal(s.quantMix.reduce((n, m) => n + m.tensors, 0), model.tensors.length);
  assert.ok(Math.abs(s.quantMix.reduce((n, m) => n + m.share, 0) - 1) < 1e-9);
  if (s.fileType === 15) assert.equal(s.fileTypeLabel, 'MOSTLY_Q4_K_M');
  await model.close();
});

test('specialTokens() gives every tokenizer.ggml.*_token_id key of a real vocab, as gguf-py reads it', async () => {
  const dir = path.join(REPO, 'fixtures/real');
  const expected = JSON.parse(fs.readFileSync(path.join(dir, 'ggml-vocab-bert-bge.expected.json'), 'utf8'));
  const want = expected.metadata
    .filter((e) => e.key.startsWith('tokenizer.ggml.') && e.key.endsWith('_token_id'))
    .map((e) => [e.key, e.value])
    .sort();
  assert.ok(want.length >= 5);
  const model = await openGguf(path.join(dir, 'ggml-vocab-bert-bge.gguf'));
  const got = model.specialTokens();
  assert.deepEqual(got.map((t) => [t.key, t.id]).sort(), want);
  for (const t of got) {
    assert.equal(t.key, `tokenizer.ggml.${t.name}_token_id`);
    assert.equal(t.recognized, true);
  }
  await model.close();
});

test('a split model opened from its shards has the summary over every shard, as gguf-py reads it', async () => {
  const expected = JSON.parse(fs.readFileSync(path.join(REPO, 'fixtures/diff/expected-split.json'), 'utf8')).pair;
  const field = (name, side) => expected.summary.find((f) => f.field === name)[side];
  for (const side of ['a', 'b']) {
    const model = await openGguf(expected[side].map((p) => path.join(REPO, p)));
    const s = model.summary();
    assert.equal(model.shards.length, expected[side].length);
    assert.equal(s.parameterCount, field('parameters', side));
    assert.ok(Math.abs(s.bitsPerWeight - field('bits_per_weight', side)) < 1e-12);
    assert.equal(model.tensors.length, field('tensor_count', side));
    assert.equal(s.name, field('name', side));
    assert.equal(s.contextLength, field('context_length', side));
    const bytes = s.quantMix.reduce((sum, q) => sum + q.bytes, 0);
    assert.equal(bytes, s.tensorBytes);
    assert.ok(Math.abs(s.quantMix.reduce((sum, q) => sum + q.share, 0) - 1) < 1e-12);
    // The one handle over the shards moves to the full module with them (lint loads it): the
    // same summary after. (plan.test.mjs plans split models.)
    const lint = await model.lint();
    assert.ok(Array.isArray(lint.findings));
    assert.deepEqual(model.summary(), s);
    await model.close();
  }
});

test('shards that are not one model are refused with the core split check, naming the problem', async () => {
  const diff = path.join(REPO, 'fixtures/diff');
  // B's first shard says split.count 3: two of its shards are not the whole model.
  await assert.rejects(
    openGguf([path.join(diff, 'split-b-00001-of-00003.gguf'), path.join(diff, 'split-b-00002-of-00003.gguf')]),
    /split model, shard 1 of the model: split\.count is 3 but 2 shards were given/);
  // Out of order: shard 2 given first.
  await assert.rejects(
    openGguf([path.join(diff, 'split-a-00002-of-00002.gguf'), path.join(diff, 'split-a-00001-of-00002.gguf')]),
    /split\.no is 1, expected 0/);
});

test('one summary for every format: a checkpoint has every field a GGUF model has, of the same kind', async () => {
  const { open } = await import('gguf-lens');
  const gguf = await open(path.join(REPO, 'fixtures/sample/tiny-llama-Q4_K_M.gguf'));
  const st = await open(path.join(REPO, 'fixtures/gptq/b4_g32_v1/model.safetensors'));
  const [a, b] = [gguf.summary(), st.summary()];
  assert.equal(a.format, 'gguf');
  assert.equal(b.format, 'safetensors');
  for (const key of Object.keys(a)) {
    assert.ok(key in b, `safetensors summary lacks ${key}`);
    const kind = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
    if (b[key] !== null && a[key] !== null) assert.equal(kind(b[key]), kind(a[key]), key);
  }
  assert.equal(a.tensorCount, gguf.tensors.length);
  assert.deepEqual(b.quantMix.map((m) => m.type), b.dtypeMix.map((m) => m.type));
  await gguf.close();
  await st.close();
});
