// The Node side of tensorStats({ workers: N }): a worker_threads worker the package starts itself
// (model.js), running the same code as the browser's stats-worker.js behind a tiny adapter
// (worker_threads has parentPort.on/postMessage where a Web Worker has addEventListener).
import { parentPort } from 'node:worker_threads';
/** @import { WorkerScope } from './internal.js' */

// Started by stats-node-pool.js only, as a worker: there is a parent port.
const port = /** @type {import('node:worker_threads').MessagePort} */ (parentPort);
const scope = /** @type {WorkerScope} */ (/** @type {unknown} */ (globalThis));
scope.postMessage = (message) => port.postMessage(message);
scope.addEventListener = (type, listener) => port.on(type, (data) => listener(/** @type {MessageEvent} */ ({ data })));
await import('./stats-worker.js');
