// The worker side of quantError({ workers }), loaded by stats-worker.js so the same workers
// serve both: a request names the model (URL, path, File or Blob), the tensor, the types and
// runs of rows; the worker opens the model once, quantizes those rows to every type in wasm,
// reports progress per chunk and sends its exact sums back (quant-error-pool.js merges them).
import { loadWasm } from './wasm.js';
import { useModel } from './worker-model.js';

const scope = globalThis;
const running = new Set();
const cancelled = new Set();
// A benchmark's timeline (requests carry the flag of benches/viewer-quant-error.mjs --timeline).
let timeline = false;
const mark = (name) => { if (timeline) performance.mark(`qerr:part:${name}`); };

async function part(message) {
  // The parent's compiled module when it sent one: this worker neither fetches nor compiles its own.
  const wasm = await loadWasm(message.wasmModule ?? undefined);
  mark('wasm');
  const { model, release } = await useModel(message.input, message.inputId, message.openOptions);
  mark('model');
  try {
    return await quantizeRuns(wasm, model, message);
  } finally {
    release();
  }
}

/** The request's runs of `model`'s tensor quantized to every type: the job's state. */
async function quantizeRuns(wasm, model, message) {
  const t = model.tensor(message.name);
  const header = model.shards[t.shard].header;
  const job = new wasm.QuantErrorJob(message.types ?? [], t.rowLength);
  running.add(message.id);
  try {
    // Reads of at most chunkBytes, each over one run or over several with the few rows between
    // them (a sample's rows, done before: read, not quantized; a gap is read only when it is at
    // most 1/16 of the run after it), so the runs between a sample's take no more reads than
    // one run; the next read is under way while one is quantized.
    const source = model.shards[t.shard].source;
    const perRead = Math.max(1, Math.floor(message.chunkBytes / Math.max(1, t.rowBytes)));
    const reads = []; // { first, last, runs: [[a, b]] } rows [first, last) read, runs quantized
    for (const [first, last] of message.runs) {
      for (let a = first; a < last; a += perRead) {
        const b = Math.min(last, a + perRead);
        const prev = reads.at(-1);
        if (prev && b - prev.first <= perRead && a >= prev.last && (a - prev.last) * 16 <= b - a) {
          prev.last = b;
          prev.runs.push([a, b]);
        } else {
          reads.push({ first: a, last: b, runs: [[a, b]] });
        }
      }
    }
    const fetchRead = (i) => {
      const [start, end] = header.rowsRange(t.name, reads[i].first, reads[i].last);
      return source.read(start, end);
    };
    let pending = reads.length ? fetchRead(0) : null;
    try {
      for (let i = 0; i < reads.length; i++) {
        const bytes = await pending;
        if (i === 0) mark('first-read');
        pending = i + 1 < reads.length ? fetchRead(i + 1) : null;
        if (cancelled.has(message.id)) throw new Error('cancelled');
        const { first, runs } = reads[i];
        let rows = 0;
        for (const [a, b] of runs) {
          job.addRows(header, t.name, bytes.subarray((a - first) * t.rowBytes, (b - first) * t.rowBytes));
          rows += b - a;
        }
        scope.postMessage({ type: 'gguf-lens-qerr-progress', id: message.id, rows });
        if (i === 0) mark('first-chunk');
      }
      mark('last-chunk');
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
  timeline = Boolean(message.timeline);
  mark('received');
  try {
    const state = await part(message);
    scope.postMessage({ type: 'gguf-lens-qerr-part', id: message.id, state }, [state.buffer]);
    mark('sent');
  } catch (err) {
    scope.postMessage({ type: 'gguf-lens-qerr-part', id: message.id, error: String(err?.message ?? err) });
  }
});
