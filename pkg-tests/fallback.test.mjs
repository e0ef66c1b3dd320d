// The scalar WebAssembly build (what engines without SIMD load, picked by WebAssembly.validate):
// forced with setWasmSimd(false) in a fresh Node process, every oracle tensor comes out bit for
// bit as llama.cpp's ggml gives it (fixtures/dequant), with the scalar kernels.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { DEQUANT } from './helpers.mjs';

const SCRIPT = `
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { openGguf, kernelName, setWasmSimd, simdSupported } from 'gguf-lens';
const [dir, want] = process.argv.slice(2);
setWasmSimd(want === 'simd');
const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
const bad = [];
for (const e of manifest) {
  const model = await openGguf(path.join(dir, e.file));
  const got = new Uint8Array((await model.readTensor(e.tensor)).buffer);
  const exp = readFileSync(path.join(dir, e.expected));
  if (got.length !== exp.length || !got.every((b, i) => b === exp[i])) bad.push(e.file + ' ' + e.tensor);
  await model.close();
}
console.log(JSON.stringify({ kernel: await kernelName(), simd: simdSupported(), bad, n: manifest.length }));
`;

for (const variant of ['scalar', 'simd']) {
  test(`the ${variant} build gives every oracle tensor bit for bit`, () => {
    writeFileSync('fallback-check.mjs', SCRIPT);
    const run = spawnSync(process.execPath, ['fallback-check.mjs', DEQUANT, variant], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    const result = JSON.parse(run.stdout);
    assert.equal(result.kernel, variant === 'simd' ? 'simd128' : 'scalar');
    assert.deepEqual(result.bad, []);
    assert.ok(result.n >= 60, `${result.n} tensors`);
  });
}
