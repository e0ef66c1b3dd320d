// The worker side of readTensor({ workers }), loaded by stats-worker.js so the same workers serve
// it: a request names the model (URL, path, File or Blob), the tensor, one run of rows and the
// caller's Float32Array over a SharedArrayBuffer. The worker opens the model once and reads the
// run into the shared array (read-rows.js: one copy), so the array's pages are first touched
// here, on the workers, in parallel (read-pool.js hands out the runs).
import { loadWasm } from './wasm.js';
import { ReaderCache, readerSize, readRows } from './read-rows.js';
import { useModel } from './worker-model.js';
import { serveRequests, SerialQueue } from './worker-protocol.js';

/** @import { GgufModel } from './model.js' */
/** @import { ModelInput, Run, WorkerOpenOptions } from './internal.js' */
/** @import { Wasm } from './bindings.js' */

/**
 * A read request (read-pool.js; worker-protocol.js's op 'read'): rows `run` of tensor `name`
 * into the shared array `out` holds.
 * @typedef {{ id: string, input: ModelInput, inputId?: string,
 *   openOptions?: WorkerOpenOptions, name: string, run: Run, chunkBytes: number,
 *   wasmModule?: WebAssembly.Module | null,
 *   out: { buffer: SharedArrayBuffer, byteOffset: number, length: number, firstRow: number } }} ReadRequest
 */

const readers = new ReaderCache();

/**
 * @param {ReadRequest} message
 * @param {AbortSignal} signal aborts when the page cancels the request
 */
async function part(message, signal) {
  const stop = () => {
    if (signal.aborted) throw new Error('cancelled');
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

// One request at a time: a worker's runs follow each other anyway.
const queue = new SerialQueue();
serveRequests('read', async (/** @type {ReadRequest} */ message, { signal }) => { await part(message, signal); }, queue);
