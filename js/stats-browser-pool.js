// The package's own statistics workers in browsers, for `workers: N` (tensorStats, readTensor,
// quantError): module workers running stats-worker.js, started on first use and kept for later
// calls, as Node's pool (stats-node-pool.js) keeps worker_threads. The worker is named by the
// literal `new Worker(new URL('./stats-worker.js', import.meta.url), { type: 'module' })`, which
// Vite and webpack recognize: they bundle the worker and emit it beside the app.

/** @type {Worker[]} */
let pool = [];

/**
 * `n` pooled module workers (at most 256). A worker whose script fails to load or that reports
 * an uncaught error leaves the pool (the call waiting on it fails); the next call starts another.
 * @param {number} n
 * @returns {Worker[]}
 */
export function browserStatsWorkers(n) {
  if (typeof Worker !== 'function') {
    throw new TypeError('gguf-lens: `workers: N` needs Web Workers (none here); pass workers: 0');
  }
  const count = Math.min(Math.floor(n), 256);
  while (pool.length < count) {
    const worker = new Worker(new URL('./stats-worker.js', import.meta.url), { type: 'module' });
    worker.addEventListener('error', () => {
      pool = pool.filter((w) => w !== worker);
      worker.terminate();
    });
    pool.push(worker);
  }
  return pool.slice(0, count);
}

/** How many workers the pool holds (for tests). */
export function browserStatsPoolSize() {
  return pool.length;
}

