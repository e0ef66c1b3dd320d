// compareModels / compareTensor through the installed package equal gguf-py + numpy's facts for
// `gguf-lens diff` (fixtures/diff/expected.json, fixtures/make_diff.py): one definition, the core's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openGguf, openSafetensors, compareModels, compareTensor } from 'gguf-lens';
import { REPO } from './helpers.mjs';

const expected = JSON.parse(fs.readFileSync(path.join(REPO, 'fixtures/diff/expected.json'), 'utf8'));
const close = (a, b) => Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b)) || Math.abs(a - b) < 1e-15;

for (const pair of expected.pairs) {
  test(`compareModels and compareTensor: ${path.basename(pair.a)} vs ${path.basename(pair.b)}`, async () => {
    const a = await openGguf(path.join(REPO, pair.a)), b = await openGguf(path.join(REPO, pair.b));
    try {
      const d = await compareModels(a, b);
      assert.deepEqual(d.summary.map((f) => [f.name, f.a, f.b, f.differs]), pair.summary.map((f) => [f.field, f.a, f.b, f.differs]));
      assert.deepEqual(d.metadata.onlyA, pair.metadata.only_a);
      assert.deepEqual(d.metadata.onlyB, pair.metadata.only_b);
      assert.equal(d.metadata.same, pair.metadata.same);
      assert.deepEqual(d.metadata.changed.map((c) => [c.key, c.typeA, c.typeB, c.array && [c.array.itemTypeA, c.array.itemTypeB, c.array.lenA, c.array.lenB, c.array.differingItems, c.array.firstDifference]]),
        pair.metadata.changed.map((c) => [c.key, c.type_a, c.type_b, c.item_type_a ? [c.item_type_a, c.item_type_b, c.len_a, c.len_b, c.differing_items, c.first_difference] : null]));
      const t = pair.tensors;
      assert.deepEqual(d.tensors.onlyA, t.only_a);
      assert.deepEqual(d.tensors.onlyB, t.only_b);
      assert.deepEqual(d.tensors.shapeChanges, t.shape_changes);
      assert.deepEqual(d.tensors.typeChanges, t.type_changes);
      if (t.transitions) assert.deepEqual(d.tensors.transitions, t.transitions);
      assert.deepEqual(d.tensors.matching.map((m) => m.name), pair.values.map((v) => v.name));
      for (const v of pair.values) {
        const m = await compareTensor(a, b, v.name, { chunkElements: 7 });
        assert.deepEqual([m.elements, m.count, m.nanMismatch, m.infMismatch], [v.elements, v.count, v.nan_mismatch, v.inf_mismatch], v.name);
        for (const [k, o] of [['rmse', 'rmse'], ['maxAbs', 'max_abs'], ['meanAbs', 'mean_abs'], ['relRmse', 'rel_rmse'], ['cosine', 'cosine']]) {
          assert.ok(v[o] === null ? m[k] === null : close(m[k], v[o]), `${v.name} ${k}: ${m[k]} vs ${v[o]}`);
        }
      }
    } finally {
      await a.close();
      await b.close();
    }
  });
}

const metricsMatch = (m, v) => {
  assert.deepEqual([m.elements, m.count, m.nanMismatch, m.infMismatch], [v.elements, v.count, v.nan_mismatch, v.inf_mismatch], v.name);
  for (const [k, o] of [['rmse', 'rmse'], ['maxAbs', 'max_abs'], ['meanAbs', 'mean_abs'], ['relRmse', 'rel_rmse'], ['cosine', 'cosine']]) {
    assert.ok(v[o] === null ? m[k] === null : close(m[k], v[o]), `${v.name} ${k}: ${m[k]} vs ${v[o]}`);
  }
};

/** The tensor part of a diff against make_diff.py's facts. */
function assertTensorDiff(d, t) {
  assert.deepEqual(d.tensors.onlyA, t.only_a);
  assert.deepEqual(d.tensors.onlyB, t.only_b);
  assert.deepEqual(d.tensors.shapeChanges, t.shape_changes);
  assert.deepEqual(d.tensors.typeChanges, t.type_changes);
  assert.deepEqual(d.tensors.transitions, t.transitions);
  assert.equal(d.tensors.matching.length, t.matching);
}

const openAny = (p) => (p.endsWith('.gguf') ? openGguf(path.join(REPO, p)) : openSafetensors(path.join(REPO, p)));

// Safetensors vs safetensors (plain, GPTQ layers as <layer>.weight) and GGUF vs safetensors:
// logical row-major shapes, as `gguf-lens diff` (expected.json's cross_pairs: the safetensors
// package + gguf-py + numpy).
for (const pair of expected.cross_pairs.filter((p) => !p.args.length)) {
  test(`compareModels and compareTensor across formats: ${pair.a} vs ${pair.b}`, async () => {
    const a = await openAny(pair.a), b = await openAny(pair.b);
    try {
      const d = await compareModels(a, b);
      assert.deepEqual(d.formats, pair.formats);
      assert.equal(d.layout, 'logical');
      const field = (name) => d.summary.find((f) => f.name === name);
      for (const f of pair.summary.filter((x) => x.field !== 'format')) {
        assert.deepEqual([field(f.field).a, field(f.field).b], [f.a, f.b], f.field);
      }
      // no summary field counts when a safetensors checkpoint is involved (as gguf-lens diff)
      assert.deepEqual(d.summary.filter((f) => f.counts || f.differs).map((f) => f.name), []);
      if (pair.metadata) {
        assert.deepEqual(d.metadata.onlyA, pair.metadata.only_a.map((e) => e.key));
        assert.deepEqual(d.metadata.onlyB, pair.metadata.only_b.map((e) => e.key));
        assert.deepEqual(d.metadata.changed.map((c) => [c.key, c.typeA, c.typeB]), pair.metadata.changed.map((c) => [c.key, 'string', 'string']));
        assert.equal(d.metadata.same, pair.metadata.same);
        assert.equal(d.metadataNotCompared, null);
      } else {
        // across formats gguf-lens diff has no metadata part (null in its JSON)
        assert.equal(d.metadata, null);
        assert.equal(d.metadataNotCompared, 'Metadata is not compared between a GGUF file and a safetensors checkpoint (different key sets).');
        assert.deepEqual([field('format').a, field('format').b], pair.formats);
      }
      assertTensorDiff(d, pair.tensors);
      for (const v of pair.values) {
        const m = d.tensors.matching.find((x) => x.name === v.name);
        assert.deepEqual([m.typeA, m.typeB, m.shape], [v.type_a, v.type_b, v.shape], v.name);
        metricsMatch(await compareTensor(a, b, v.name, { chunkElements: 7 }), v);
      }
    } finally {
      await a.close();
      await b.close();
    }
  });
}

// Split GGUF models: metadata of the first shard, tensors of every shard (make_diff_split.py:
// gguf-py's split writer and reader + numpy).
test('compareModels and compareTensor: split GGUF models (2 shards vs 3)', async () => {
  const { pair } = JSON.parse(fs.readFileSync(path.join(REPO, 'fixtures/diff/expected-split.json'), 'utf8'));
  const a = await openGguf(pair.a.map((p) => path.join(REPO, p))), b = await openGguf(pair.b.map((p) => path.join(REPO, p)));
  try {
    assert.deepEqual([a.shards.length, b.shards.length], [2, 3]);
    const d = await compareModels(a, b);
    assert.deepEqual(d.formats, ['gguf', 'gguf']);
    assert.equal(d.layout, 'gguf');
    assert.deepEqual(d.summary.map((f) => f.name), pair.summary.map((f) => f.field));
    for (const [f, e] of d.summary.map((x, i) => [x, pair.summary[i]])) {
      assert.equal(f.differs, e.differs, f.name);
      if (typeof e.a === 'number' && !Number.isInteger(e.a)) assert.ok(close(f.a, e.a) && close(f.b, e.b), f.name);
      else assert.deepEqual([f.a, f.b], [e.a, e.b], f.name);
    }
    assert.deepEqual(d.metadata.onlyA, pair.metadata.only_a);
    assert.deepEqual(d.metadata.onlyB, pair.metadata.only_b);
    assert.deepEqual(d.metadata.changed.map((c) => [c.key, c.typeA, c.typeB]), pair.metadata.changed.map((c) => [c.key, c.type_a, c.type_b]));
    assert.equal(d.metadata.same, pair.metadata.same);
    assertTensorDiff(d, pair.tensors);
    assert.deepEqual(d.tensors.matching.map((m) => m.name), pair.values.map((v) => v.name));
    for (const v of pair.values) {
      metricsMatch(await compareTensor(a, b, v.name), v);
      metricsMatch(await compareTensor(a, b, v.name, { chunkElements: 7 }), v);
    }
  } finally {
    await a.close();
    await b.close();
  }
});

test('compareTensor refuses tensors of another shape; compareModels refuses what is not a model', async () => {
  const [pair] = expected.pairs.filter((p) => p.tensors.shape_changes.length);
  const a2 = await openGguf(path.join(REPO, pair.a)), b2 = await openGguf(path.join(REPO, pair.b));
  await assert.rejects(compareTensor(a2, b2, pair.tensors.shape_changes[0].name), /has another shape in each file/);
  await a2.close();
  await b2.close();

  const a = await openGguf(path.join(REPO, expected.pairs[0].a));
  await assert.rejects(() => compareModels(a, {}), /compares GGUF and safetensors models \(B is not a model\)/);
  await assert.rejects(() => compareModels({ format: 'gguf', wasm: a.wasm, shards: a.shards }, a), /\(A is not a model\)/);
  await assert.rejects(() => compareTensor(a, { format: 'gguf' }, a.tensors[0].name), /^TypeError: gguf-lens: compareTensor compares GGUF and safetensors models \(B is not a model\)$/);
  await a.close();
});
