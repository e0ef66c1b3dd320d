// Node's statistics workers for tensorStats: a pool of worker_threads running
// stats-worker-node.js, started on first use and kept for later calls (unreferenced while idle,
// so they never keep the process alive), and the default worker count for big tensors.
// Node modules are loaded only on these paths, through variable specifiers that bundlers leave
// alone in browser builds.

import { errorMessage } from './sources.js';

const NODE_WORKER_THREADS = 'node:worker_threads';
const NODE_OS = 'node:os';
const NODE_STATS_WORKER = './stats-worker-node.js';
/** This module's URL, kept out of `new URL(…, import.meta.url)`, which bundlers resolve at build. */
const MODULE_URL = import.meta.url;

/** Values from which tensorStats without `workers` uses one Node worker per core (a local file):
 * below this, one thread finishes before workers would have started on a first call. */
export const AUTO_WORKERS_ELEMENTS = 1 << 25;
/** At most this many workers by default (the pool grows to what a call asks for). */
const AUTO_WORKERS_MAX = 8;

/** @import { PoolWorker, Source } from './internal.js' */
/** @import { Worker as NodeWorker } from 'node:worker_threads' */

export const isNode = typeof process !== 'undefined' && !!process.versions?.node;
/** @type {PoolWorker[]} */
let pool = [];
/** @type {number | null} */
let cores = null;

/**
 * The worker count tensorStats uses when not told: 0 (this thread) unless in Node, reading a
 * local file, at least AUTO_WORKERS_ELEMENTS values, and more than one core.
 * @param {Source | undefined} source
 * @param {number} elements
 * @returns {Promise<number>}
 */
export async function autoWorkers(source, elements) {
  if (!isNode || typeof source?.readToMemory !== 'function' || elements < AUTO_WORKERS_ELEMENTS) return 0;
  if (cores === null) {
    /** @type {typeof import('node:os')} */
    const os = await import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_OS);
    cores = os.availableParallelism?.() ?? os.cpus().length;
  }
  return cores > 1 ? Math.min(cores, AUTO_WORKERS_MAX) : 0;
}

/**
 * `n` pooled workers, each behind the Web Worker interface runStatsOnWorkers uses (plus ref /
 * unref). A worker that exits (crashes, runs out of memory, is terminated) fails the calls
 * waiting on it with an error and leaves the pool; the next call starts another.
 * @param {number} n
 * @returns {Promise<PoolWorker[]>}
 */
export async function nodeStatsWorkers(n) {
  if (!isNode) {
    // Browsers start theirs in stats-browser-pool.js (model.js picks).
    throw new TypeError('gguf-lens: nodeStatsWorkers runs in Node only');
  }
  /** @type {typeof import('node:worker_threads')} */
  const { Worker } = await import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_WORKER_THREADS);
  const count = Math.min(Math.floor(n), 256);
  while (pool.length < count) pool.push(adapt(new Worker(new URL(NODE_STATS_WORKER, MODULE_URL))));
  return pool.slice(0, count);
}

/** How many workers the pool holds (for tests). */
export function nodeStatsPoolSize() {
  return pool.length;
}

/**
 * @param {NodeWorker} worker
 * @returns {PoolWorker}
 */
function adapt(worker) {
  worker.unref();
  let users = 0;
  /** @type {Error | null} the error a call on this worker gets once it has exited */
  let exited = null;
  /** @typedef {(event: any) => void} Listener */
  /** @type {Map<Listener, (data: unknown) => void>} message listener → Node's */
  const listeners = new Map();
  // Kept here, not on the Worker: Node drops a worker's listeners once it has exited.
  /** @type {Set<Listener>} */
  const errorListeners = new Set();
  const fail = (/** @type {unknown} */ err) => {
    for (const fn of [...errorListeners]) fn({ message: errorMessage(err) });
  };
  /** @type {PoolWorker} */
  const adapted = {
    postMessage: (message) => {
      // A message to a worker that has exited would never be answered: the caller's 'error'
      // listener (added before it posts) hears of it instead.
      const error = exited;
      if (error) setImmediate(() => fail(error));
      else worker.postMessage(message);
    },
    addEventListener: (type, fn) => {
      // Node gives the message itself, or the Error; a Web Worker gives an event.
      if (type === 'error') {
        errorListeners.add(fn);
        return;
      }
      const on = (/** @type {unknown} */ data) => fn({ data });
      listeners.set(fn, on);
      worker.on(type, on);
    },
    removeEventListener: (type, fn) => {
      if (type === 'error') {
        errorListeners.delete(fn);
        return;
      }
      const on = listeners.get(fn);
      listeners.delete(fn);
      if (on) worker.off(type, on);
    },
    // Counted: a call ending must not unreference a worker another call still waits on (the
    // process would exit under it).
    ref: () => {
      if (users++ === 0) worker.ref();
    },
    unref: () => {
      if (users > 0 && --users === 0) worker.unref();
    },
    /** Stops the worker (as Worker.terminate): its calls fail, the pool starts another. */
    terminate: () => worker.terminate(),
  };
  worker.on('exit', (/** @type {number} */ code) => {
    pool = pool.filter((w) => w !== adapted);
    exited = new Error(`the worker exited (code ${code})`);
    // A call waiting on this worker hears of it as an error.
    fail(exited);
  });
  // Also the listener without which an 'error' event would throw in this thread.
  worker.on('error', fail);
  return adapted;
}
