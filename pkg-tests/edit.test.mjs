// Editing and hashing through the installed package, against the oracles: the editor's output
// for every fixtures/edit case has the sha256 of the file gguf-py writes with the same edits
// (fixtures/make_edit.py), and model.hash() prints what llama.cpp's llama-gguf-hash prints
// (fixtures/hash/expected.json, fixtures/make_hash.py).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { openGguf } from 'gguf-lens';
import { REPO } from './helpers.mjs';

const EDIT = path.join(REPO, 'fixtures/edit');
const TYPES = { STRING: 'string', FLOAT32: 'float32', FLOAT64: 'float64', UINT32: 'uint32', UINT64: 'uint64', INT64: 'int64' };

function sha256(bytes) {
  return crypto.createHash('sha256').update(bytes).digest('hex');
}

async function streamBytes(stream) {
  const parts = [];
  for (const reader = stream.getReader(); ;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
  }
  return Buffer.concat(parts);
}

function applyCase(editor, c) {
  for (const [key, type, value] of c.sets) editor.set(key, value, TYPES[type]);
  for (const key of c.removes) editor.remove(key);
}

test('every edit case is byte-identical to gguf-py (Blob from a File, Blob from bytes, stream from a path)', async () => {
  const cases = JSON.parse(fs.readFileSync(path.join(EDIT, 'expected.json'), 'utf8'));
  assert.ok(Object.keys(cases).length >= 8);
  const input = path.join(EDIT, 'input.gguf');
  const bytes = fs.readFileSync(input);
  for (const [name, c] of Object.entries(cases)) {
    for (const from of ['blob', 'bytes', 'path']) {
      const model = await openGguf(from === 'blob' ? new Blob([bytes]) : from === 'bytes' ? new Uint8Array(bytes) : input);
      try {
        const editor = await model.edit();
        applyCase(editor, c);
        const out = from === 'path'
          ? await streamBytes(editor.toStream({ chunkBytes: 7 }))
          : Buffer.from(await (await editor.toBlob()).arrayBuffer());
        assert.equal(sha256(out), c.sha256, `${name} from ${from}`);
        assert.equal(out.length, editor.plan().len);
      } finally {
        await model.close();
      }
    }
  }
});

test('the edited file opens with the change, and changes() lists it', async () => {
  const model = await openGguf(path.join(REPO, 'fixtures/sample/tiny-llama-Q8_0.gguf'));
  const editor = (await model.edit())
    .set('general.name', 'renamed — ✓')
    .set('tokenizer.ggml.eos_token_id', 7)
    .set('general.tags', ['a', 'b'])
    .setChatTemplate('{{ messages }}');
  const key = model.metadata.find((m) => m.key !== 'general.architecture' && m.type !== 'array' && m.key.startsWith('general.') && m.key !== 'general.name' && m.key !== 'general.alignment');
  if (key) editor.remove(key.key);
  const changes = editor.changes();
  assert.deepEqual(changes.find((c) => c.key === 'general.tags'), { key: 'general.tags', op: 'add', before: undefined, after: ['a', 'b'], type: undefined });
  assert.equal(changes.find((c) => c.key === 'tokenizer.ggml.eos_token_id').type, 'uint32');
  const edited = await openGguf(await editor.toBlob());
  try {
    assert.equal(edited.get('general.name'), 'renamed — ✓');
    assert.equal(edited.get('tokenizer.ggml.eos_token_id'), 7);
    assert.deepEqual(edited.get('general.tags').items(), ['a', 'b']);
    assert.equal(edited.get('tokenizer.chat_template'), '{{ messages }}');
    if (key) assert.equal(edited.get(key.key), undefined);
    // The tensor data is untouched.
    for (const t of model.tensors) {
      assert.deepEqual(await edited.readTensorBytes(t.name), await model.readTensorBytes(t.name), t.name);
    }
  } finally {
    await edited.close();
    await model.close();
  }
});

test('bad edits throw one line naming the key, and nothing is pending', async () => {
  const model = await openGguf(path.join(REPO, 'fixtures/sample/tiny-llama-Q8_0.gguf'));
  try {
    const editor = await model.edit();
    assert.throws(() => editor.set('tokenizer.ggml.eos_token_id', 'x'), /tokenizer\.ggml\.eos_token_id/);
    assert.throws(() => editor.set('general.alignment', 48, 'uint32'), /general\.alignment: 48 is not a power of two/);
    assert.throws(() => editor.set('general.name', 1, 'nonsense'), /unknown type/);
    assert.throws(() => editor.remove('no.such.key'), /no\.such\.key/);
    assert.deepEqual(editor.changes(), []);
  } finally {
    await model.close();
  }
});

test('model.hash() prints llama-gguf-hash lines for every fixture file', async () => {
  const expected = JSON.parse(fs.readFileSync(path.join(REPO, 'fixtures/hash/expected.json'), 'utf8'));
  for (const [name, c] of Object.entries(expected.files)) {
    const model = await openGguf(path.join(REPO, name));
    try {
      let last;
      const report = await model.hash({ all: true, uuid: true, fileName: name, chunkBytes: 1000, onProgress: (p) => { last = p; } });
      assert.equal(report.lines, c.all_uuid, name);
      if (model.tensors.length) assert.equal(last.loaded, last.total);
      const plain = await model.hash({ fileName: name });
      assert.equal(plain.lines, c.default, name);
      const noLayer = await model.hash({ sha256: true, perTensor: false, fileName: name });
      assert.equal(noLayer.lines, c.no_layer_sha256, name);
      assert.equal(noLayer.tensors.length, 0);
    } finally {
      await model.close();
    }
  }
});

test('model.hash() stops on abort', async () => {
  const model = await openGguf(path.join(REPO, 'fixtures/sample/tiny-llama-Q8_0.gguf'));
  try {
    const controller = new AbortController();
    const run = model.hash({ sha256: true, chunkBytes: 4096, signal: controller.signal, onProgress: () => controller.abort() });
    await assert.rejects(run, /abort/i);
  } finally {
    await model.close();
  }
});
