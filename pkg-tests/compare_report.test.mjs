// compareReport (the package) and `gguf-lens diff --format …` (the CLI) render a diff with the
// same Rust renderer (src/diff_report): for every pairing of fixtures, the package's Markdown,
// JSON and text equal the CLI's byte for byte (run from target/debug, as quant_error.test.mjs),
// values included when both compared the same tensors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { openGguf, openSafetensors, compareReport, compareTensor } from 'gguf-lens';
import { REPO } from './helpers.mjs';

const CLI = path.join(REPO, 'target/debug/gguf-lens');

/** The CLI's stdout (exit 0 identical, 1 different). */
function cli(args) {
  const r = spawnSync(CLI, ['diff', ...args], { cwd: REPO, encoding: 'utf8' });
  assert.ok(r.status === 0 || r.status === 1, `${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return r.stdout;
}

const openAny = (p) => (p.endsWith('.gguf') ? openGguf(path.join(REPO, p)) : openSafetensors(path.join(REPO, p)));

const PAIRS = [
  ['fixtures/sample/tiny-llama-Q4_K_M.gguf', 'fixtures/sample/tiny-llama-Q8_0.gguf'],
  ['fixtures/diff/arrays-a.gguf', 'fixtures/diff/arrays-b.gguf'],
  ['fixtures/diff/arrays-a.safetensors', 'fixtures/diff/arrays-b.safetensors'],
  ['fixtures/diff/arrays-a.safetensors', 'fixtures/diff/arrays-b.gguf'],
  ['fixtures/diff/gptq-f16.safetensors', 'fixtures/diff/arrays-a.gguf'],
];

for (const [pa, pb] of PAIRS) {
  test(`compareReport equals gguf-lens diff: ${path.basename(pa)} vs ${path.basename(pb)}`, async () => {
    const a = await openAny(pa), b = await openAny(pb);
    try {
      for (const format of ['markdown', 'json', 'text']) {
        assert.equal(await compareReport(a, b, { format, paths: [pa, pb] }), cli([pa, pb, '--format', format]), format);
      }
      assert.equal(await compareReport(a, b, { paths: [pa, pb] }), cli([pa, pb, '--format', 'markdown']), 'markdown is the default');
    } finally {
      await a.close();
      await b.close();
    }
  });
}

test('compareReport with compared values equals gguf-lens diff --values (arrays pair)', async () => {
  const [pa, pb] = ['fixtures/diff/arrays-a.gguf', 'fixtures/diff/arrays-b.gguf'];
  const a = await openGguf(path.join(REPO, pa)), b = await openGguf(path.join(REPO, pb));
  try {
    const values = new Map();
    for (const name of ['w', 'h']) values.set(name, await compareTensor(a, b, name));
    for (const format of ['markdown', 'json', 'text']) {
      const got = await compareReport(a, b, { format, paths: [pa, pb], values });
      assert.equal(got, cli([pa, pb, '--format', format, '--tensor', 'w', '--tensor', 'h']), format);
    }
    const j = JSON.parse(await compareReport(a, b, { format: 'json', values: [] }));
    assert.deepEqual([j.a.path, j.b.path, j.values], ['A', 'B', []]);
    await assert.rejects(() => compareReport(a, b, { format: 'html' }), /unknown format "html"/);
  } finally {
    await a.close();
    await b.close();
  }
});

test('compareReport of split models equals gguf-lens diff from their first shards', async () => {
  const a = await openGguf(['fixtures/diff/split-a-00001-of-00002.gguf', 'fixtures/diff/split-a-00002-of-00002.gguf'].map((p) => path.join(REPO, p)));
  const bs = [1, 2, 3].map((i) => `fixtures/diff/split-b-0000${i}-of-00003.gguf`);
  const b = await openGguf(bs.map((p) => path.join(REPO, p)));
  try {
    const paths = ['fixtures/diff/split-a-00001-of-00002.gguf', bs[0]];
    for (const format of ['markdown', 'json']) assert.equal(await compareReport(a, b, { format, paths }), cli([...paths, '--format', format]), format);
  } finally {
    await a.close();
    await b.close();
  }
});
