// The worker side of readTensor({ workers }), loaded by stats-worker.js so the same workers serve
// it: a request names the model (URL, path, File or Blob), the tensor, one run of rows and the
// caller's Float32Array over a SharedArrayBuffer. The worker opens the model once and reads the
// run into the shared array (read-rows.js: one copy), so the array's pages are first touched
// here, on the workers, in parallel (read-pool.js hands out the runs).
import { loadWasm } from './wasm.js';
import { ReaderCache, readerSize, readRows } from './read-rows.js';
import { useModel } from './worker-model.js';
import { errorMessage } from './sources.js';

/** @import { GgufModel } from './model.js' */
/** @import { WorkerScope } from './internal.js' */
/** @import { ModelInput, Run, Wasm, WorkerOpenOptions } from './internal.js' */

/**
 * A read request (read-pool.js): rows `run` of tensor `name` into the shared array `out` holds.
 * @typedef {{ type: 'gguf-lens-read', id: string, input: ModelInput, inputId?: string,
 *   openOptions?: WorkerOpenOptions, name: string, run: Run, chunkBytes: number,
 *   wasmModule?: WebAssembly.Module | null,
 *   out: { buffer: SharedArrayBuffer, byteOffset: number, length: number, firstRow: number } }} ReadRequest
 */

/** This worker's global scope (a Web Worker's, or Node's behind stats-worker-node.js's adapter). */
const scope = /** @type {WorkerScope} */ (/** @type {unknown} */ (globalThis));
const readers = new ReaderCache();
// Requests queued or running, and those the page cancelled.
/** @type {Set<string>} */
const known = new Set();
/** @type {Set<string>} */
const cancelled = new Set();

/** @param {ReadRequest} message */
async function part(message) {
  const stop = () => {
    if (cancelled.has(message.id)) throw new Error('cancelled');
  };
  stop();
  // The parent's compiled module: this worker neither fetches nor compiles its own.
  const wasm = await loadWasm(message.wasmModule ?? undefined);
  const { model, release } = await useModel(message.input, message.inputId, message.openOptions);
  try {
    return await readRun(wasm, model, message, stop);
  } finally {
    release();
  }
}

/**
 * The request's run of `model`'s tensor read into the shared array.
 * @param {Wasm} wasm
 * @param {GgufModel} model
 * @param {ReadRequest} message
 * @param {() => void} stop
 */
async function readRun(wasm, model, message, stop) {
  const t = model.tensor(message.name);
  const { buffer, byteOffset, length, firstRow } = message.out;
  const out = new Float32Array(buffer, byteOffset, length);
  const [a, b] = message.run;
  if (!(a >= firstRow && b >= a && (b - firstRow) * t.rowLength <= length)) {
    throw new Error(`rows ${a}..${b} do not fit the output array`);
  }
  const entry = readers.take(wasm, readerSize(t, b - a, message.chunkBytes));
  try {
    await readRows(wasm, model.shards[t.shard], t, a, b, out, firstRow, { reader: entry.reader, chunkBytes: message.chunkBytes, stop });
  } finally {
    readers.give(entry);
  }
}

/** @type {Promise<unknown>} */
let queue = Promise.resolve();

scope.addEventListener('message', (event) => {
  const message = event.data;
  if (message?.type === 'gguf-lens-read-cancel') {
    if (known.has(message.id)) cancelled.add(message.id);
    return;
  }
  if (message?.type !== 'gguf-lens-read') return;
  known.add(message.id);
  // One request at a time: a worker's runs follow each other anyway.
  queue = queue.then(() => handle(message));
});

/** @param {ReadRequest} message */
async function handle(message) {
  try {
    await part(message);
    scope.postMessage({ type: 'gguf-lens-read-done', id: message.id });
  } catch (err) {
    scope.postMessage({ type: 'gguf-lens-read-done', id: message.id, error: errorMessage(err) });
  } finally {
    known.delete(message.id);
    cancelled.delete(message.id);
  }
}
