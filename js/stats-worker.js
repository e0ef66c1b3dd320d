// The worker side of tensorStats({ workers }): start it as a module worker,
//   new Worker(new URL('gguf-lens/stats-worker', import.meta.url), { type: 'module' })
// (or the path of this file), and pass such workers to tensorStats. Each request names the model
// (its URL, path, File or Blob), the tensor, a run of rows and the job's state for the pass; the
// worker opens the model once, reads and dequantizes its rows in wasm (a local file in Node
// straight into wasm memory, where its bytes stay for the job's later passes when they fit;
// other sources keep their bytes in JS when they fit), and sends its part of the statistics back.
import { loadWasm } from './wasm.js';
import { STATS_KEEP_BYTES } from './model.js';
import { feedHeldRows, feedRowsFromFile, readsToMemory } from './stats-read.js';
import { modelFor, closeModel } from './worker-model.js';
// The same workers quantize for quantError({ workers }).
import './quant-error-part.js';

const scope = globalThis;
let kept = null; // { jobId, rows, chunks: [[bytes, firstRow]] }
// A local file's rows in wasm memory: one buffer, reused by later calls (grown when too small).
let hold = null; // { buffer, size, jobId, rows, busy } (jobId null: the bytes are stale)

async function part(message) {
  // The parent's compiled module: this worker neither fetches nor compiles its own.
  const wasm = await loadWasm(message.wasmModule ?? undefined);
  const model = await modelFor(message.input, message.inputId, message.openOptions);
  const t = model.tensor(message.name);
  const header = model.shards[t.shard].header;
  const [a, b] = message.rows;
  const job = wasm.TensorStatsJob.fromState(message.state);
  try {
    const shard = model.shards[t.shard];
    if (readsToMemory(shard.source, wasm)) {
      // A local file: the first pass reads its rows straight into wasm memory, kept there for
      // the next pass when they fit (else each pass reads them again).
      const bytes = (b - a) * t.rowBytes;
      if (hold?.jobId === message.jobId && hold.rows[0] === a && hold.rows[1] === b) {
        feedHeldRows(shard, t, a, b, job, hold.buffer);
        return job.toState();
      }
      // (A request of another call arriving while this one reads leaves the buffer alone.)
      const keep = bytes <= STATS_KEEP_BYTES && !hold?.busy;
      if (keep && (!hold || hold.size < bytes)) {
        hold?.buffer.free();
        hold = null;
        hold = { buffer: new wasm.ByteBuffer(bytes), size: bytes };
      }
      if (keep) Object.assign(hold, { jobId: null, rows: null, busy: true });
      const rowsPerChunk = job.chunkRows(Math.max(1, Math.floor(message.chunkBytes / Math.max(1, t.rowBytes))) * t.rowLength);
      try {
        await feedRowsFromFile(wasm, shard, t, a, b, rowsPerChunk, job, undefined, undefined, keep ? hold.buffer : undefined);
        if (keep) Object.assign(hold, { jobId: message.jobId, rows: [a, b] });
      } finally {
        if (keep) hold.busy = false;
      }
      return job.toState();
    }
    const sameRun = kept && kept.jobId === message.jobId && kept.rows[0] === a && kept.rows[1] === b;
    if (sameRun) {
      for (const [bytes, first] of kept.chunks) job.addRows(header, t.name, first, bytes);
    } else {
      const keep = (b - a) * t.rowBytes <= STATS_KEEP_BYTES ? [] : null;
      const rowsPerChunk = job.chunkRows(Math.max(1, Math.floor(message.chunkBytes / Math.max(1, t.rowBytes))) * t.rowLength);
      await model._eachChunk(t, a, b, { rowsPerChunk }, (bytes, first) => {
        job.addRows(header, t.name, first, bytes);
        keep?.push([bytes, first]);
      });
      kept = keep ? { jobId: message.jobId, rows: [a, b], chunks: keep } : null;
    }
    return job.toState();
  } finally {
    job.free();
  }
}

scope.addEventListener('message', async (event) => {
  const message = event.data;
  if (message?.type === 'gguf-lens-stats-done') {
    if (kept?.jobId === message.jobId) kept = null;
    if (hold?.jobId === message.jobId) hold.jobId = null;
    return;
  }
  if (message?.type === 'gguf-lens-stats-close') {
    // The model was closed where it was opened: close this copy (its file handle) too.
    if (await closeModel(message.inputId)) {
      kept = null;
      if (hold) hold.jobId = null;
    }
    return;
  }
  if (message?.type !== 'gguf-lens-stats') return;
  try {
    scope.postMessage({ type: 'gguf-lens-stats-part', id: message.id, state: await part(message) });
  } catch (err) {
    scope.postMessage({ type: 'gguf-lens-stats-part', id: message.id, error: String(err?.message ?? err) });
  }
});
