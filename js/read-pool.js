// The page side of readTensor({ workers }): the result is a Float32Array over a
// SharedArrayBuffer (a new one, or the caller's `into`), which the workers fill themselves
// (read-part.js, running in the same workers as tensorStats'). The rows are cut into runs that
// shrink as the work left does, handed to whichever worker is free, so the workers end together
// on a busy machine; each worker writes only its runs' values, bit for bit what this thread's
// readTensor writes.

import { askWorker, tellWorker, inputForWorkers } from './worker-protocol.js';
import { abortError } from './sources.js';
/** @import { OnBytes, PoolWorker, ReadableTensor, Run } from './internal.js' */
/** @import { GgufModel } from './model.js' */

/** Whether this thread can share memory with workers (browsers: only when cross-origin isolated). */
export function canShareMemory() {
  return typeof SharedArrayBuffer === 'function' && globalThis.crossOriginIsolated !== false;
}

/**
 * Whether `array` (a Float32Array) lies in a SharedArrayBuffer.
 * @param {Float32Array | undefined} array
 */
export function isShared(array) {
  return typeof SharedArrayBuffer === 'function' && array?.buffer instanceof SharedArrayBuffer;
}

/**
 * A new zeroed Float32Array of `n` values over a SharedArrayBuffer.
 * @param {number} n
 */
export function sharedFloat32Array(n) {
  return new Float32Array(new SharedArrayBuffer(n * 4));
}

/** Runs covering rows [a, b) for `workers` workers: each a share of the rows left (half of an
 * even share: a quarter of them at first for two workers), down to 1/64 of the rows.
 * @param {number} a
 * @param {number} b
 * @param {number} workers
 */
export function readRuns(a, b, workers) {
  const least = Math.max(1, Math.ceil((b - a) / 64));
  /** @type {Run[]} */
  const runs = [];
  for (let at = a; at < b;) {
    const take = Math.min(b - at, Math.max(least, Math.ceil((b - at) / (2 * workers))));
    runs.push([at, at + take]);
    at += take;
  }
  return runs;
}

let nextJob = 0;

/**
 * Fills `out` (a Float32Array over a SharedArrayBuffer holding rows [a, b) of tensor `t` of
 * `model`) on `workers`. Settles only once no worker writes into `out` any more (on an error or
 * abort too: the workers are told to stop and are waited for).
 * @param {GgufModel} model
 * @param {ReadableTensor} t
 * @param {number} a
 * @param {number} b
 * @param {Float32Array} out
 * @param {PoolWorker[]} workers
 * @param {{ signal?: AbortSignal, chunkBytes: number, onBytes?: OnBytes, inputId: string,
 *   wasmModule: WebAssembly.Module | null }} options
 * @returns {Promise<Float32Array>}
 */
export async function readOnWorkers(model, t, a, b, out, workers, options) {
  const { signal, chunkBytes, onBytes, inputId, wasmModule } = options;
  const jobId = `read${++nextJob}`;
  const runs = readRuns(a, b, workers.length);
  const target = { buffer: out.buffer, byteOffset: out.byteOffset, length: out.length, firstRow: a };
  /** @type {Map<string, PoolWorker>} request id → worker */
  const busy = new Map();
  let asked = 0;
  let next = 0;
  /** @type {unknown} */
  let failure = null;
  const stop = (/** @type {unknown} */ err) => {
    failure ??= err;
    for (const [id, w] of busy) tellWorker(w, 'cancel', { id });
  };
  const onAbort = () => stop(abortError(signal));
  const ask = async (/** @type {PoolWorker} */ worker, /** @type {Run} */ run) => {
    const id = `${jobId}:${++asked}`;
    busy.set(id, worker);
    try {
      await askWorker(worker, 'read', id, {
        input: inputForWorkers(model.input), inputId, openOptions: model.openOptions,
        name: t.name, run, out: target, chunkBytes, wasmModule,
      }, 'a read worker');
    } finally {
      busy.delete(id);
    }
  };
  const serve = async (/** @type {PoolWorker} */ worker) => {
    while (next < runs.length && !failure) {
      const run = runs[next++];
      try {
        await ask(worker, run);
      } catch (err) {
        stop(err);
        return;
      }
      onBytes?.((run[1] - run[0]) * t.rowBytes);
    }
  };
  // Node's workers keep the process alive only while they work for us.
  for (const w of workers) w.ref?.();
  try {
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort);
    await Promise.all(workers.map(serve));
  } finally {
    signal?.removeEventListener('abort', onAbort);
    for (const w of workers) w.unref?.();
  }
  if (failure) throw failure;
  return out;
}
