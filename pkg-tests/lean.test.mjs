// The header path needs only the core wasm module (the crate without its wasm-full feature): in a
// fresh process, opening a GGUF, its summary, metadata, tensor infos, special tokens and the
// planner leave the full module unloaded; the first call that needs it loads it and gives the
// same answers as a model opened after it was loaded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { openGguf } from 'gguf-lens';

const REPO = process.env.GGUF_LENS_REPO;
const WASM = new URL('./wasm.js', import.meta.resolve('gguf-lens'));
const FILE = path.join(REPO, 'fixtures/sample/tiny-llama-Q4_K_M.gguf');

test('the header path runs on the core module; the first tokenize and read load the full one', async () => {
  const { wasmModule } = await import(WASM);
  const model = await openGguf(FILE);
  const summary = model.summary();
  const special = model.specialTokens();
  const plan = model.planMemory({ ctx: 512 });
  const vocab = model.get('tokenizer.ggml.tokens');
  const firstTokens = vocab.items(0, 8);
  assert.equal(model.header.module, 'core');
  assert.equal(wasmModule(), null, 'the full module was loaded by the header path');

  const ids = await model.tokenize('Hello world');
  assert.ok(wasmModule() instanceof WebAssembly.Module);
  assert.equal(model.header.module, 'full');
  // The metadata's readers follow the header into the full module.
  assert.deepEqual(vocab.items(0, 8), firstTokens);
  const rows = await model.readTensor('blk.0.attn_q.weight', { rows: [0, 2] });

  const again = await openGguf(FILE);
  await again.preload();
  assert.deepEqual(again.summary(), summary);
  assert.deepEqual(again.specialTokens(), special);
  assert.deepEqual(again.planMemory({ ctx: 512 }), plan);
  assert.deepEqual(await again.tokenize('Hello world'), ids);
  assert.deepEqual(await again.readTensor('blk.0.attn_q.weight', { rows: [0, 2] }), rows);
  await again.close();
  await model.close();
});
