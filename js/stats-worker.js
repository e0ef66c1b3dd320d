// The worker side of tensorStats({ workers }): start it as a module worker,
//   new Worker(new URL('gguf-lens/stats-worker', import.meta.url), { type: 'module' })
// (or the path of this file), and pass such workers to tensorStats. Each request names the model
// (its URL, path, File or Blob), the tensor, runs of rows and the job's state for the pass; the
// worker opens the model once, reads and dequantizes the rows in wasm (a local file in Node
// straight into wasm memory) and sends its part of the statistics back. The bytes of the runs it
// read in the first pass stay (in wasm memory, or in JS for other sources) while they fit
// STATS_KEEP_BYTES, so the job's later passes, sent the same runs, read nothing. Requests are
// handled one at a time, in order. A request with `hold` adds its runs to a part the worker keeps
// for the job (and answers with no state); `flush` sends that part back: the first pass, handed
// out a run at a time, then crosses back once per worker instead of once per run.
import { loadWasm, onWasmReset } from './wasm.js';
import { STATS_KEEP_BYTES } from './model.js';
import { feedHeldRows, feedRowsFromFile, readsToMemory } from './stats-read.js';
import { useModel, closeModel } from './worker-model.js';
// The same workers quantize for quantError({ workers }).
import './quant-error-part.js';
// And fill shared arrays for readTensor({ workers }).
import './read-part.js';
import { serveRequests, handleNotices, SerialQueue } from './worker-protocol.js';
/** @import { GgufModel } from './model.js' */
/** @import { ModelInput, ReadableTensor, Run, WorkerOpenOptions } from './internal.js' */
/** @import { ByteBuffer, TensorStatsJob, Wasm } from './bindings.js' */

/**
 * A statistics request (model.js's runStatsOnWorkers; worker-protocol.js's op 'stats'), and the
 * notices 'stats-done' (a job ended) and 'close' (the page closed a model).
 * @typedef {{ id: string, jobId: number, input: ModelInput, inputId?: string,
 *   openOptions?: WorkerOpenOptions, name: string, runs: Run[], state: Uint8Array, chunkBytes: number,
 *   wasmModule?: WebAssembly.Module | null, hold?: boolean, flush?: boolean }} StatsRequest
 */

/** A buffer in wasm memory and its size in bytes. @typedef {{ buffer: ByteBuffer, size: number }} Held */

/** @typedef {{ jobId: number | null, runs: Map<string, Held | [Uint8Array, number][]>, bytes: number }} Kept */
// The rows of one job read in its first pass: run key `a:b` → a ByteBuffer in wasm memory (a
// local file) or [[bytes, firstRow]] chunks (other sources).
/** @type {Kept} */
let kept = { jobId: null, runs: new Map(), bytes: 0 };
// ByteBuffers no run holds, kept for later jobs (wasm memory never shrinks: reusing them keeps
// it from growing further).
/** @type {Held[]} */
const spare = [];

// The parts being built for `hold` requests, by job (calls on one pool may overlap).
/** @type {Map<number, TensorStatsJob>} */
const held = new Map();

// A trap discarded the wasm instance the buffers and parts live in (wasm.js): forget them
// (freeing them would free their pointers in the fresh instance).
onWasmReset(() => {
  kept = { jobId: null, runs: new Map(), bytes: 0 };
  spare.length = 0;
  held.clear();
});

/** Gives the kept runs' buffers back to the spare ones (a new job starts, or it ended). */
function release() {
  for (const entry of kept.runs.values()) if (!Array.isArray(entry)) spare.push(entry);
  kept = { jobId: null, runs: new Map(), bytes: 0 };
}

/** @param {number} jobId */
function dropHeld(jobId) {
  held.get(jobId)?.free();
  held.delete(jobId);
}

/**
 * A ByteBuffer of at least `bytes` for `jobId`'s rows, or null when it would not fit.
 * @param {Wasm} wasm
 * @param {number} bytes
 * @returns {Held | null}
 */
function keepBuffer(wasm, bytes) {
  const spareBytes = spare.reduce((n, b) => n + b.size, 0);
  if (kept.bytes + bytes > STATS_KEEP_BYTES) return null;
  // The smallest spare buffer that fits (the next runs of a job are often as long).
  let i = -1;
  spare.forEach((b, k) => {
    if (b.size >= bytes && (i < 0 || b.size < spare[i].size)) i = k;
  });
  if (i >= 0) return spare.splice(i, 1)[0];
  // Spare buffers too small are dropped when a new one would pass the limit with them.
  if (kept.bytes + spareBytes + bytes > STATS_KEEP_BYTES) {
    for (const b of spare.splice(0)) b.buffer.free();
  }
  return { buffer: new wasm.ByteBuffer(bytes), size: bytes };
}

/**
 * @param {Wasm} wasm
 * @param {GgufModel} model
 * @param {ReadableTensor} t
 * @param {TensorStatsJob} job
 * @param {StatsRequest} message
 * @param {number} a
 * @param {number} b
 */
async function feedRun(wasm, model, t, job, message, a, b) {
  const shard = model.shards[t.shard];
  const header = shard.header;
  const key = `${a}:${b}`;
  const entry = kept.jobId === message.jobId ? kept.runs.get(key) : undefined;
  if (entry && !Array.isArray(entry)) {
    feedHeldRows(shard, t, a, b, job, entry.buffer);
    return;
  }
  if (entry) {
    for (const [bytes, first] of entry) job.addRows(header, t.name, first, bytes);
    return;
  }
  if (kept.jobId !== message.jobId) {
    release();
    kept.jobId = message.jobId;
  }
  const bytes = (b - a) * t.rowBytes;
  const rowsPerChunk = job.chunkRows(Math.max(1, Math.floor(message.chunkBytes / Math.max(1, t.rowBytes))) * t.rowLength);
  if (readsToMemory(shard.source, wasm)) {
    const hold = keepBuffer(wasm, bytes);
    try {
      await feedRowsFromFile(wasm, shard, t, a, b, rowsPerChunk, job, undefined, undefined, hold?.buffer);
    } catch (err) {
      if (hold) spare.push(hold);
      throw err;
    }
    if (hold) {
      kept.runs.set(key, hold);
      kept.bytes += hold.size;
    }
    return;
  }
  /** @type {[Uint8Array, number][] | null} */
  const keep = kept.bytes + bytes <= STATS_KEEP_BYTES ? [] : null;
  await model._eachChunk(t, a, b, { rowsPerChunk }, (chunk, first) => {
    job.addRows(header, t.name, first, chunk);
    keep?.push([chunk, first]);
  });
  if (keep) {
    kept.runs.set(key, keep);
    kept.bytes += bytes;
  }
}

/** @param {StatsRequest} message */
async function part(message) {
  // The parent's compiled module: this worker neither fetches nor compiles its own.
  const wasm = await loadWasm(message.wasmModule ?? undefined);
  const { model, release: done } = await useModel(message.input, message.inputId, message.openOptions);
  try {
    return await statsPart(wasm, model, message);
  } finally {
    done();
  }
}

/**
 * The request's runs of `model`'s tensor fed to its job: the part's state (null when held).
 * @param {Wasm} wasm
 * @param {GgufModel} model
 * @param {StatsRequest} message
 */
async function statsPart(wasm, model, message) {
  const t = model.tensor(message.name);
  if (message.flush) {
    const job = held.get(message.jobId);
    if (!job) throw new Error('no part held for this job');
    try {
      return job.toState();
    } finally {
      dropHeld(message.jobId);
    }
  }
  if (message.hold) {
    let job = held.get(message.jobId);
    if (!job) {
      job = wasm.TensorStatsJob.fromState(message.state);
      held.set(message.jobId, job);
    }
    for (const [a, b] of message.runs) await feedRun(wasm, model, t, job, message, a, b);
    return null;
  }
  const job = wasm.TensorStatsJob.fromState(message.state);
  try {
    for (const [a, b] of message.runs) await feedRun(wasm, model, t, job, message, a, b);
    return job.toState();
  } finally {
    job.free();
  }
}

// One request or notice at a time: a run read while another is fed would share the kept buffers.
const queue = new SerialQueue();

serveRequests('stats', async (/** @type {StatsRequest} */ message) => ({ result: { state: await part(message) } }), queue);
handleNotices('stats-done', (/** @type {{ jobId: number }} */ message) => {
  dropHeld(message.jobId);
  if (kept.jobId === message.jobId) release();
}, queue);
// The model was closed where it was opened: close this copy (its file handle) too.
handleNotices('close', async (/** @type {{ inputId: string }} */ message) => {
  if (await closeModel(message.inputId)) release();
}, queue);
