// The worker side of quantError({ workers }), loaded by stats-worker.js so the same workers
// serve both: a request names the model (URL, path, File or Blob), the tensor, the types and
// runs of rows; the worker opens the model once, quantizes those rows to every type in wasm,
// reports progress per chunk and sends its exact sums back (quant-error-pool.js merges them).
import { openGguf } from './index.js';
import { loadWasm } from './wasm.js';

const scope = globalThis;
let opened = null; // { key, model }
const running = new Set();
const cancelled = new Set();

function keyOf(input) {
  if (Array.isArray(input)) return input.map(keyOf).join('|');
  return input; // a URL or path, or the same File/Blob object for the same file
}

async function modelFor(input, openOptions) {
  const key = keyOf(input);
  if (opened?.key !== key) {
    await opened?.model.close();
    opened = null;
    opened = { key, model: await openGguf(input, openOptions ?? {}) };
  }
  return opened.model;
}

async function part(message) {
  const wasm = await loadWasm();
  const model = await modelFor(message.input, message.openOptions);
  const t = model.tensor(message.name);
  const header = model.shards[t.shard].header;
  const job = new wasm.QuantErrorJob(message.types ?? [], t.rowLength);
  running.add(message.id);
  try {
    for (const [first, last] of message.runs) {
      await model._eachChunk(t, first, last, { chunkBytes: message.chunkBytes }, (bytes, a, b) => {
        if (cancelled.has(message.id)) throw new Error('cancelled');
        job.addRows(header, t.name, bytes);
        scope.postMessage({ type: 'gguf-lens-qerr-progress', id: message.id, rows: b - a });
      });
      if (cancelled.has(message.id)) throw new Error('cancelled');
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
