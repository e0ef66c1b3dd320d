// The package's statistics workers (js/stats-worker.js, copied to ./pkg/), one per core (at most
// 4), started on first use and kept for every later tensorStats call of this worker. A worker
// that fails (its error event: the package fails the calls waiting on it) is replaced in the
// pool for the calls after.
let pool = null;

function startWorker(i) {
  const w = new Worker(new URL('./pkg/stats-worker.js', import.meta.url), { type: 'module' });
  w.addEventListener('error', () => {
    if (pool[i] !== w) return;
    w.terminate();
    pool[i] = startWorker(i);
  });
  return w;
}

/** The pool, or undefined where module workers do not exist (Node, old browsers). */
export function statsPool() {
  if (pool || typeof Worker === 'undefined') return pool ?? undefined;
  const n = Math.min(4, Math.max(1, globalThis.navigator?.hardwareConcurrency ?? 2));
  pool = [];
  for (let i = 0; i < n; i++) pool.push(startWorker(i));
  return pool;
}
