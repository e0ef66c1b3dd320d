// The worker side of readTensor({ workers }), loaded by stats-worker.js so the same workers serve
// it: a request names the model (URL, path, File or Blob), the tensor, one run of rows and the
// caller's Float32Array over a SharedArrayBuffer. The worker opens the model once and reads the
// run into the shared array (read-rows.js: one copy), so the array's pages are first touched
// here, on the workers, in parallel (read-pool.js hands out the runs).
import { loadWasm } from './wasm.js';
import { ReaderCache, readerSize, readRows } from './read-rows.js';
import { useModel } from './worker-model.js';

const scope = globalThis;
const readers = new ReaderCache();
// Requests queued or running, and those the page cancelled.
const known = new Set();
const cancelled = new Set();

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

/** The request's run of `model`'s tensor read into the shared array. */
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

async function handle(message) {
  try {
    await part(message);
    scope.postMessage({ type: 'gguf-lens-read-done', id: message.id });
  } catch (err) {
    scope.postMessage({ type: 'gguf-lens-read-done', id: message.id, error: String(err?.message ?? err) });
  } finally {
    known.delete(message.id);
    cancelled.delete(message.id);
  }
}
