// tensorStats against numpy (fixtures/diff/expected.json, made by fixtures/make_diff.py from
// gguf-py + numpy): counts, min/max exact, mean/std to 1e-9, histogram counts and edges, and
// percentiles; the same numbers whatever the chunk size; the histogram spans [min, max].
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { open } from 'gguf-lens';
import { REPO } from './helpers.mjs';

const expected = JSON.parse(fs.readFileSync(path.join(REPO, 'fixtures/diff/expected.json'), 'utf8'));
/** got within rel of want, relative to |want| or to `scale` when larger (the CLI test's rule). */
const close = (got, want, rel, what, scale = 0) => assert.ok(Math.abs(got - want) <= rel * Math.max(Math.abs(want), scale), `${what}: ${got} vs ${want}`);

function rowsOf(c) {
  const i = c.args.indexOf('--rows');
  return i < 0 ? undefined : c.args[i + 1].split(':').map(Number);
}

for (const c of [...expected.stats, ...expected.st_stats]) {
  test(`tensorStats of ${c.file} ${c.tensor} ${c.args.join(' ')} equals numpy`, async () => {
    const model = await open(path.join(REPO, c.file));
    const rows = rowsOf(c);
    const bins = Number(c.args[c.args.indexOf('--bins') + 1]);
    const runs = [];
    for (const chunkBytes of [undefined, 1]) runs.push(await model.tensorStats(c.tensor, { rows, bins, chunkBytes }));
    assert.deepEqual(runs[1], runs[0], 'the same numbers for any chunk size');
    const s = runs[0];
    assert.equal(s.count, c.elements);
    assert.equal(s.finiteCount, c.finite);
    assert.equal(s.nanCount, c.nan);
    assert.equal(s.posInfCount, c.pos_inf);
    assert.equal(s.negInfCount, c.neg_inf);
    assert.equal(s.zeroCount, c.zeros);
    // === (not Object.is): numpy's min of {-0, 0} may be either zero.
    assert.ok(s.min === c.min && s.max === c.max, `min/max ${s.min} ${s.max} vs ${c.min} ${c.max}`);
    if (c.mean === null) {
      assert.equal(s.mean, null);
      assert.equal(s.percentiles, null);
    } else {
      // Sums of values of very different magnitudes cancel differently: the mean is checked
      // relative to the spread, as the CLI test does.
      close(s.mean, c.mean, 1e-9, 'mean', c.std);
      close(s.std, c.std, 1e-9, 'std');
      assert.deepEqual(s.histogram.counts, c.histogram.counts);
      assert.deepEqual(s.histogram.edges, c.histogram.edges, 'edges: numpy\'s, over exactly [min, max]');
      for (const p of ['p1', 'p50', 'p99']) close(s.percentiles[p], c.percentiles[p], 1e-12, p);
    }
    await model.close();
  });
}

test('tensorStats({ workers: N }) in Node: worker_threads give the same numbers as one thread', async () => {
  const c = expected.stats.find((x) => x.mean !== null && x.elements >= 256) ?? expected.stats[0];
  const model = await open(path.join(REPO, c.file));
  const rows = rowsOf(c);
  const one = await model.tensorStats(c.tensor, { rows, bins: 17 });
  for (const workers of [1, 2, 3]) {
    assert.deepEqual(await model.tensorStats(c.tensor, { rows, bins: 17, workers, chunkBytes: 64 }), one, `${workers} workers`);
  }
  await model.close();
});
