// A trap in wasm does not poison the package (js/wasm.js): the instance that trapped is replaced
// by a fresh one from the compiled module; objects it made (a model's header) fail with one line
// saying to reopen the model, and new opens work as before. The trap is a real one, the one a
// runaway chat template ends in: the wasm memory is grown to its maximum from JS, so the next
// allocation in Rust fails and aborts (`unreachable`), whatever limits templates get.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { openGguf } from 'gguf-lens';
import { REPO } from './helpers.mjs';

const FILE = path.join(REPO, 'fixtures/sample/tiny-llama-Q4_K_M.gguf');
const TENSOR = 'token_embd.weight';
// The package's own modules, by file URL (the package's exports do not name them): the same
// module instances the package uses.
const WASM = new URL('./wasm.js', import.meta.resolve('gguf-lens'));
const WORKER_MODEL = new URL('./worker-model.js', import.meta.resolve('gguf-lens'));

/** Bytes more than the live instance's heap holds (its memory's size, and 1 MiB). */
async function moreThanTheHeap() {
  const { wasmMemory } = await import(WASM);
  return wasmMemory().buffer.byteLength + (1 << 20);
}

/** Makes the live instance run out of memory inside a call on `model`: the error it throws. */
async function trapIn(model) {
  await model.preload(); // the header moves into the full module before its memory runs out
  const { wasmMemory } = await import(WASM);
  const memory = wasmMemory();
  const size = await moreThanTheHeap();
  // Grown from JS up to the engine's maximum: Rust's allocator cannot grow it any more.
  for (let pages = 1 << 15; pages >= 1;) {
    try {
      memory.grow(pages);
    } catch {
      pages >>= 1;
    }
  }
  // Text longer than the heap was: its copy into wasm needs memory there is not.
  try {
    await model.tokenize(new Uint8Array(size));
  } catch (err) {
    return err;
  }
  assert.fail('tokenizing with no memory left did not trap');
}

const oneLine = (re) => (err) => re.test(err.message) && !err.message.includes('\n');

test('after a trap the next open works, and the models opened before say to reopen them', async () => {
  const { wasmResets } = await import(WASM);
  const old = await openGguf(FILE);
  const summary = old.summary();
  const stats = await old.tensorStats(TENSOR);
  const rows = await old.readTensor(TENSOR, { rows: [0, 4] });
  const resets = wasmResets();

  const size = await moreThanTheHeap();
  const err = await trapIn(old);
  assert.equal(err.name, 'WasmTrapError');
  assert.match(err.message, /^gguf-lens: the wasm module trapped in TokenizerJs\.tokenize \(unreachable\); it was restarted: models opened before must be reopened$/);
  assert.equal(wasmResets(), resets + 1);

  // The old model's header lived in the discarded instance.
  assert.throws(() => old.summary(), oneLine(/^gguf-lens: ModelHeader\.summary: the wasm module trapped in TokenizerJs\.tokenize; reopen the model$/));
  await assert.rejects(old.tensorStats(TENSOR), oneLine(/reopen the model/));
  // Closing it frees nothing in the fresh instance.
  await old.close();

  // The allocation that trapped fits now (on the instance that trapped, its memory used up, it
  // traps again).
  const { loadWasm } = await import(WASM);
  const wasm = await loadWasm();
  new wasm.ByteBuffer(size).free();
  // A new open: the same answers as before the trap.
  const model = await openGguf(FILE);
  assert.deepEqual(model.summary(), summary);
  assert.deepEqual(await model.tensorStats(TENSOR), stats);
  assert.deepEqual(await model.readTensor(TENSOR, { rows: [0, 4] }), rows);
  assert.ok((await model.tokenize('Hello world')).length > 0);
  await model.close();
});

test('two traps in a row: each gets a fresh instance', async () => {
  for (let i = 0; i < 2; i++) {
    const model = await openGguf(FILE);
    assert.match((await trapIn(model)).message, /trapped in TokenizerJs\.tokenize/);
    await model.close();
  }
  const model = await openGguf(FILE);
  assert.equal((await model.tensorStats(TENSOR)).count, model.tensor(TENSOR).nElements);
  await model.close();
});

test('a worker\'s open models are opened again after a trap (worker-model.js)', async () => {
  const { useModel } = await import(WORKER_MODEL);
  const first = await useModel(FILE, 'trap-test');
  const summary = first.model.summary();
  first.release();
  await trapIn(first.model);
  const again = await useModel(FILE, 'trap-test');
  try {
    assert.notEqual(again.model, first.model);
    assert.deepEqual(again.model.summary(), summary);
  } finally {
    again.release();
  }
});
