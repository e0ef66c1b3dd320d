// One request to a pooled worker and its one reply, for the pools that hand out work a request
// at a time (read-pool.js, model.js's statistics pool).

/** @import { ModelInput, PoolWorker } from './internal.js' */

/**
 * Posts `{ type, id, ...payload }` to `worker` and settles on the worker's message of type
 * `replyType` with the same `id`: resolves with its data, or rejects with its `error`, as it
 * does on the worker's `error` event. `what` names the worker in the error ("a read worker").
 * @param {PoolWorker} worker
 * @param {string} type
 * @param {string} replyType
 * @param {string} id
 * @param {object} payload
 * @param {string} what
 * @returns {Promise<{ type: string, id: string, [field: string]: unknown }>}
 */
export function askWorker(worker, type, replyType, id, payload, what) {
  return new Promise((resolve, reject) => {
    const done = () => {
      worker.removeEventListener('message', onMessage);
      worker.removeEventListener('error', onError);
    };
    const onMessage = (/** @type {MessageEvent} */ event) => {
      const data = event.data;
      if (data?.type !== replyType || data.id !== id) return;
      done();
      if (data.error) reject(new Error(`gguf-lens: ${what} failed: ${data.error}`));
      else resolve(data);
    };
    const onError = (/** @type {{ message?: string } | undefined} */ event) => {
      done();
      reject(new Error(`gguf-lens: ${what} failed: ${event?.message ?? 'an error'}`));
    };
    worker.addEventListener('message', onMessage);
    worker.addEventListener('error', onError);
    worker.postMessage({ type, id, ...payload });
  });
}

/**
 * The input a worker opens a model from: the model's `input`, with a relative URL made absolute
 * against this page (a worker would resolve it against its own script's URL, elsewhere in a
 * bundled app). Node paths, Files, Blobs and absolute URLs are sent as they are.
 * @param {ModelInput | undefined} input
 * @returns {ModelInput | undefined}
 */
export function inputForWorkers(input) {
  if (Array.isArray(input)) return input.map((shard) => /** @type {import('./index.js').GgufInput} */ (inputForWorkers(shard)));
  const base = globalThis.location?.href;
  const inBrowser = typeof process === 'undefined' || !process.versions?.node;
  return typeof input === 'string' && inBrowser && base ? new URL(input, base).href : input;
}
