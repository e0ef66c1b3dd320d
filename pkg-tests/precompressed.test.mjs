// The precompressed copies the build ships beside each wasm and single-file build (scripts/precompress.mjs): each
// `.br` and `.gz` in the installed package decodes to exactly the module beside it, and is smaller,
// so a server sending it with Content-Encoding delivers the very bytes the glue instantiates.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';

const packageDir = path.dirname(fileURLToPath(import.meta.resolve('gguf-lens')));

for (const name of ['wasm/gguf_lens_bg.wasm', 'wasm/gguf_lens_scalar_bg.wasm', 'wasm/gguf_lens_core_bg.wasm', 'index.bundle.js', 'preview.bundle.js']) {
  test(`${name}: .br and .gz decode to the file`, () => {
    const raw = fs.readFileSync(path.join(packageDir, name));
    if (name.endsWith('.wasm')) assert.deepEqual([...raw.subarray(0, 4)], [0, 0x61, 0x73, 0x6d], `${name} starts with the wasm magic`);
    const br = fs.readFileSync(path.join(packageDir, `${name}.br`));
    const gz = fs.readFileSync(path.join(packageDir, `${name}.gz`));
    assert.ok(zlib.brotliDecompressSync(br).equals(raw), `${name}.br decodes to ${name}`);
    assert.ok(zlib.gunzipSync(gz).equals(raw), `${name}.gz decodes to ${name}`);
    assert.ok(br.length < raw.length && gz.length < raw.length, 'each copy is smaller than the file');
  });
}
