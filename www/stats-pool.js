// The package's statistics workers (js/stats-worker.js, copied to ./pkg/), one per core (at most
// 4), started on first use and kept for every later tensorStats call of this worker.
let pool = null;

/** The pool, or undefined where module workers do not exist (Node, old browsers). */
export function statsPool() {
  if (pool || typeof Worker === 'undefined') return pool ?? undefined;
  const n = Math.min(4, Math.max(1, globalThis.navigator?.hardwareConcurrency ?? 2));
  pool = Array.from({ length: n }, () => new Worker(new URL('./pkg/stats-worker.js', import.meta.url), { type: 'module' }));
  return pool;
}
