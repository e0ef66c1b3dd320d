// The precompressed modules the build ships beside each wasm (scripts/precompress.mjs): each
// `.br` and `.gz` in the installed package decodes to exactly the module beside it, and is smaller,
// so a server sending it with Content-Encoding delivers the very bytes the glue instantiates.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';

const wasmDir = path.join(path.dirname(fileURLToPath(import.meta.resolve('gguf-lens'))), 'wasm');

for (const name of ['gguf_lens_bg.wasm', 'gguf_lens_scalar_bg.wasm']) {
  test(`${name}: .br and .gz decode to the module`, () => {
    const raw = fs.readFileSync(path.join(wasmDir, name));
    assert.deepEqual([...raw.subarray(0, 4)], [0, 0x61, 0x73, 0x6d], `${name} starts with the wasm magic`);
    const br = fs.readFileSync(path.join(wasmDir, `${name}.br`));
    const gz = fs.readFileSync(path.join(wasmDir, `${name}.gz`));
    assert.ok(zlib.brotliDecompressSync(br).equals(raw), `${name}.br decodes to ${name}`);
    assert.ok(zlib.gunzipSync(gz).equals(raw), `${name}.gz decodes to ${name}`);
    assert.ok(br.length < raw.length && gz.length < raw.length, 'each copy is smaller than the module');
  });
}
