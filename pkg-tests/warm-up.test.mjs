// The viewer's warm-up vocabulary (www/warm-up.js) is a GGUF the package opens as a byte-level
// BPE tokenizer: every token and merge is there, and a mixed line tokenizes into merged tokens and
// detokenizes back to itself. If it stopped opening, the viewer would silently lose its warm-up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openGguf } from 'gguf-lens';
import { REPO } from './helpers.mjs';

// www/ has no package.json saying "module": Node 18 loads a .js there as CommonJS, so import a
// copy named .mjs.
const copy = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'warm-up-')), 'warm-up.mjs');
fs.copyFileSync(path.join(REPO, 'www/warm-up.js'), copy);
const { warmUpGguf, warmUp } = await import(copy);

test('the warm-up vocabulary opens and round-trips text', async () => {
  const bytes = warmUpGguf(5000);
  const model = await openGguf({ byteLength: bytes.length, slice: (a, b) => bytes.subarray(a, b) });
  try {
    assert.equal(model.get('tokenizer.ggml.model'), 'gpt2');
    assert.equal(model.get('tokenizer.ggml.tokens').len, 5000);
    assert.equal(model.get('tokenizer.ggml.merges').len, 5000 - 256);
    const text = 'Hello world! def f(x): return x * 2  # 12345 你好 🙂\n';
    const ids = await model.tokenize(text, { addSpecial: false });
    const utf8 = new TextEncoder().encode(text).length;
    assert.ok(ids.length > 0 && ids.length < utf8, `${ids.length} ids for ${utf8} bytes: merges applied`);
    assert.equal(await model.detokenize(ids), text);
    // Text spelled with printable merged tokens tokenizes into fewer ids than bytes (merges apply).
    const pieces = [];
    for (let id = 256; id < 5000 && pieces.length < 1000; id++) {
      const piece = await model.tokenPiece(id);
      if (piece.every((b) => b >= 0x20 && b < 0x7f)) pieces.push(piece);
    }
    assert.ok(pieces.length >= 100, `${pieces.length} printable merged tokens`);
    const spelled = Buffer.concat(pieces);
    const spelledIds = await model.tokenize(new Uint8Array(spelled), { addSpecial: false });
    assert.ok(spelledIds.length * 4 < spelled.length * 3, `${spelledIds.length} ids for ${spelled.length} bytes`);
    assert.deepEqual(Buffer.from(await model.detokenize(spelledIds, { bytes: true })), spelled);
  } finally {
    await model.close();
  }
});

test('warmUp runs to the end with the package', async () => {
  await warmUp(openGguf);
});
