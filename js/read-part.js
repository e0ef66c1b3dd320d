// The worker side of readTensor({ workers }), loaded by stats-worker.js so the same workers serve
// it: a request names the model (URL, path, File or Blob), the tensor, one run of rows and the
// caller's Float32Array over a SharedArrayBuffer. The worker opens the model once, reads the
// run's bytes into wasm memory (a local file in Node straight there, the next chunk while this
// one is dequantized), dequantizes them a cache-sized slice at a time and copies each slice into
// the shared array: one copy, and the shared array's pages are first touched here, on the
// workers, in parallel (read-pool.js hands out the runs).
import { loadWasm, wasmMemory } from './wasm.js';
import { readsToMemory } from './stats-read.js';
import { modelFor } from './worker-model.js';

const scope = globalThis;
/** Values per dequantize call: the slice is still in L2 when it is copied out. */
const SLICE_VALUES = 1 << 16;

// One reader (its buffers in wasm memory) kept for later requests: wasm memory never shrinks.
let kept = null; // { reader, bytes, values }
// Requests queued or running, and those the page cancelled.
const known = new Set();
const cancelled = new Set();

function readerFor(wasm, bytes, values) {
  if (kept && kept.bytes >= bytes && kept.values >= values) return kept.reader;
  const want = { bytes: Math.max(bytes, kept?.bytes ?? 0), values: Math.max(values, kept?.values ?? 0) };
  kept?.reader.free();
  kept = null;
  kept = { reader: new wasm.RowReader(want.bytes, want.values), ...want };
  return kept.reader;
}

function checkCancelled(id) {
  if (cancelled.has(id)) throw new Error('cancelled');
}

async function part(message) {
  checkCancelled(message.id);
  // The parent's compiled module: this worker neither fetches nor compiles its own.
  const wasm = await loadWasm(message.wasmModule ?? undefined);
  const model = await modelFor(message.input, message.inputId, message.openOptions);
  const t = model.tensor(message.name);
  const shard = model.shards[t.shard];
  const header = shard.header;
  const { buffer, byteOffset, length, firstRow } = message.out;
  const out = new Float32Array(buffer, byteOffset, length);
  const [a, b] = message.run;
  if (!(a >= firstRow && b >= a && (b - firstRow) * t.rowLength <= length)) {
    throw new Error(`rows ${a}..${b} do not fit the output array`);
  }
  if (a === b) return;
  const chunkRows = Math.min(b - a, Math.max(1, Math.floor(message.chunkBytes / Math.max(1, t.rowBytes))));
  const chunkBytes = chunkRows * t.rowBytes;
  const sliceRows = Math.min(chunkRows, Math.max(1, Math.floor(SLICE_VALUES / t.rowLength)));
  const reader = readerFor(wasm, (b - a > chunkRows ? 2 : 1) * chunkBytes, sliceRows * t.rowLength);
  const memory = wasmMemory();
  const direct = readsToMemory(shard.source, wasm);
  // Chunk k of 2 of the reader's bytes gets rows [first, first + chunkRows).
  const fill = async (first, k) => {
    const last = Math.min(b, first + chunkRows);
    const [start, end] = header.rowsRange(t.name, first, last);
    // Written at the reader's address: never past its chunk.
    if (end - start > chunkBytes) throw new Error(`${end - start} bytes read into a ${chunkBytes}-byte chunk`);
    const at = reader.bytesPtr() + k * chunkBytes;
    if (direct) {
      await shard.source.readToMemory(start, end, memory, at);
    } else {
      const bytes = await shard.source.read(start, end);
      // memory.buffer now: the memory may have grown during the read.
      new Uint8Array(memory.buffer, at, end - start).set(bytes);
    }
    return { first, last, k };
  };
  let pending = fill(a, 0);
  try {
    while (pending) {
      const chunk = await pending;
      pending = null;
      checkCancelled(message.id);
      if (chunk.last < b) pending = fill(chunk.last, 1 - chunk.k);
      for (let row = chunk.first; row < chunk.last; row += sliceRows) {
        const end = Math.min(chunk.last, row + sliceRows);
        const offset = chunk.k * chunkBytes + (row - chunk.first) * t.rowBytes;
        const n = reader.dequantize(header, t.name, offset, (end - row) * t.rowBytes);
        out.set(new Float32Array(memory.buffer, reader.valuesPtr(), n), (row - firstRow) * t.rowLength);
      }
    }
  } finally {
    // A read under way writes into the reader: wait for it before another request uses it.
    await pending?.catch(() => {});
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
  // One request at a time: they share the reader.
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
