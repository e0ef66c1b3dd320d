// The worker side of quantError({ workers }), loaded by stats-worker.js so the same workers
// serve both: a request names the model (URL, path, File or Blob), the tensor, the types and
// runs of rows; the worker opens the model once, quantizes those rows to every type in wasm,
// reports progress per chunk and sends its exact sums back (quant-error-pool.js merges them).
import { loadWasm } from './wasm.js';
import { modelFor } from './worker-model.js';

const scope = globalThis;
const running = new Set();
const cancelled = new Set();

async function part(message) {
  // The parent's compiled module when it sent one: this worker neither fetches nor compiles its own.
  const wasm = await loadWasm(message.wasmModule ?? undefined);
  const model = await modelFor(message.input, message.inputId, message.openOptions);
  const t = model.tensor(message.name);
  const header = model.shards[t.shard].header;
  const job = new wasm.QuantErrorJob(message.types ?? [], t.rowLength);
  running.add(message.id);
  try {
    // Chunks of at most chunkBytes within each run; the next one (of this run or the next) is
    // read while one is quantized, so many short runs cost no waits.
    const source = model.shards[t.shard].source;
    const perChunk = Math.max(1, Math.floor(message.chunkBytes / Math.max(1, t.rowBytes)));
    const chunks = [];
    for (const [first, last] of message.runs) {
      for (let a = first; a < last; a += perChunk) chunks.push([a, Math.min(last, a + perChunk)]);
    }
    const fetchChunk = (i) => {
      const [start, end] = header.rowsRange(t.name, chunks[i][0], chunks[i][1]);
      return source.read(start, end);
    };
    let pending = chunks.length ? fetchChunk(0) : null;
    try {
      for (let i = 0; i < chunks.length; i++) {
        const bytes = await pending;
        pending = i + 1 < chunks.length ? fetchChunk(i + 1) : null;
        if (cancelled.has(message.id)) throw new Error('cancelled');
        job.addRows(header, t.name, bytes);
        scope.postMessage({ type: 'gguf-lens-qerr-progress', id: message.id, rows: chunks[i][1] - chunks[i][0] });
      }
    } catch (err) {
      pending?.catch(() => {}); // a read still under way fails unheard
      throw err;
    }
    return job.toState();
  } finally {
    job.free();
    running.delete(message.id);
    cancelled.delete(message.id);
  }
}

scope.addEventListener('message', async (event) => {
  const message = event.data;
  if (message?.type === 'gguf-lens-qerr-cancel') {
    if (running.has(message.id)) cancelled.add(message.id);
    return;
  }
  if (message?.type !== 'gguf-lens-qerr') return;
  try {
    const state = await part(message);
    scope.postMessage({ type: 'gguf-lens-qerr-part', id: message.id, state }, [state.buffer]);
  } catch (err) {
    scope.postMessage({ type: 'gguf-lens-qerr-part', id: message.id, error: String(err?.message ?? err) });
  }
});
