// The Node side of tensorStats({ workers: N }): a worker_threads worker the package starts itself
// (model.js), running the same code as the browser's stats-worker.js behind a tiny adapter
// (worker_threads has parentPort.on/postMessage where a Web Worker has addEventListener).
import { parentPort } from 'node:worker_threads';

globalThis.postMessage = (message) => parentPort.postMessage(message);
globalThis.addEventListener = (type, listener) => parentPort.on(type, (data) => listener({ data }));
await import('./stats-worker.js');
