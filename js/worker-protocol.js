// The one message protocol between a thread and the package's workers (stats-worker.js, which
// also serves read-part.js and quant-error-part.js), both sides:
//   to a worker    { gguf: op, id, ...fields }   a request (op 'stats', 'read', 'quant-error'),
//                                                 answered once; or a notice (no answer):
//                  { gguf: 'cancel', id }         stop request `id` (its signal aborts)
//                  { gguf: op, ... }              a notice a part handles ('more', 'stats-done', ...)
//   from a worker  { gguf: 'reply', id, error?, ...result }   the request's end
//                  { gguf: event, id, ...fields }             on its way ('need', 'progress', ...)
// A request's id is unique per thread: the asking side makes it (`${jobId}:${n}`).

import { errorMessage } from './sources.js';
/** @import { ModelInput, PoolWorker, WorkerScope } from './internal.js' */

/**
 * @typedef {{ gguf: string, id: string, [field: string]: unknown }} Message
 * @typedef {(event: string, fields?: object, transfer?: Transferable[]) => void} Emit
 *   sends an event of the running request to the asking side
 * @typedef {{ signal: AbortSignal, emit: Emit }} RequestContext
 * @typedef {(message: any, context: RequestContext) =>
 *   Promise<{ result?: object, transfer?: Transferable[] } | void>} RequestHandler
 * @typedef {(message: any) => unknown} NoticeHandler
 */

/**
 * Sends request `op` with `payload` to `worker` and settles on its reply: resolves with the
 * reply's fields, or rejects with its `error` (as on the worker's `error` event: a worker that
 * dies fails the request instead of hanging it). Events of the request go to `onEvent`. `what`
 * names the worker in the error ("a read worker").
 * @param {PoolWorker} worker
 * @param {string} op
 * @param {string} id
 * @param {object} payload
 * @param {string} what
 * @param {(message: Message) => void} [onEvent]
 * @returns {Promise<Message>}
 */
export function askWorker(worker, op, id, payload, what, onEvent) {
  return new Promise((resolve, reject) => {
    const done = () => {
      worker.removeEventListener('message', onMessage);
      worker.removeEventListener('error', onError);
    };
    const onMessage = (/** @type {MessageEvent} */ event) => {
      /** @type {Message | undefined} */
      const data = event.data;
      if (data?.id !== id || typeof data.gguf !== 'string') return;
      if (data.gguf !== 'reply') {
        onEvent?.(data);
        return;
      }
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
    worker.postMessage({ ...payload, gguf: op, id });
  });
}

/**
 * Sends notice `op` to `worker` (no answer).
 * @param {PoolWorker} worker
 * @param {string} op
 * @param {object} [fields]
 */
export function tellWorker(worker, op, fields = {}) {
  worker.postMessage({ ...fields, gguf: op });
}

/**
 * The input a worker opens a model from: the model's `input`, with a relative URL made absolute
 * against this page (a worker would resolve it against its own script's URL, elsewhere in a
 * bundled app). Node paths, Files, Blobs and absolute URLs are sent as they are.
 * @param {ModelInput | undefined} input
 * @returns {ModelInput | undefined}
 */
export function inputForWorkers(input) {
  if (Array.isArray(input)) return input.map((shard) => /** @type {import('./types.js').GgufInput} */ (inputForWorkers(shard)));
  const base = globalThis.location?.href;
  const inBrowser = typeof process === 'undefined' || !process.versions?.node;
  return typeof input === 'string' && inBrowser && base ? new URL(input, base).href : input;
}

// The worker side.

/** @type {Map<string, { handler: RequestHandler | NoticeHandler, request: boolean, queue: SerialQueue | null }>} */
const handlers = new Map();
/** Requests received and not yet answered: id → their abort controller. */
const running = new Map();
let listening = false;

/** Runs the tasks given to it one after another, in order. */
export class SerialQueue {
  /** @type {Promise<unknown>} */
  #tail = Promise.resolve();

  /** @param {() => Promise<unknown> | unknown} task */
  run(task) {
    const result = this.#tail.then(task);
    this.#tail = result.catch(() => {});
    return result;
  }
}

function listen() {
  if (listening) return;
  listening = true;
  const scope = /** @type {WorkerScope} */ (/** @type {unknown} */ (globalThis));
  scope.addEventListener('message', (event) => {
    /** @type {Message | undefined} */
    const message = event.data;
    if (typeof message?.gguf !== 'string') return;
    if (message.gguf === 'cancel') {
      running.get(message.id)?.abort();
      return;
    }
    const entry = handlers.get(message.gguf);
    if (!entry) return;
    if (!entry.request) {
      const notice = /** @type {NoticeHandler} */ (entry.handler);
      if (entry.queue) entry.queue.run(() => notice(message));
      else notice(message);
      return;
    }
    const controller = new AbortController();
    running.set(message.id, controller);
    /** @type {Emit} */
    const emit = (name, fields = {}, transfer = []) => scope.postMessage({ ...fields, gguf: name, id: message.id }, transfer);
    const handle = async () => {
      try {
        const answer = await /** @type {RequestHandler} */ (entry.handler)(message, { signal: controller.signal, emit });
        scope.postMessage({ ...answer?.result, gguf: 'reply', id: message.id }, answer?.transfer ?? []);
      } catch (err) {
        scope.postMessage({ gguf: 'reply', id: message.id, error: errorMessage(err) });
      } finally {
        running.delete(message.id);
      }
    };
    if (entry.queue) entry.queue.run(handle);
    else handle();
  });
}

/**
 * Serves requests `op` in this worker with `handler` (one at a time in `queue`'s order when
 * given, else as they come). The handler's `signal` aborts when the asking side cancels.
 * @param {string} op
 * @param {RequestHandler} handler
 * @param {SerialQueue} [queue]
 */
export function serveRequests(op, handler, queue) {
  handlers.set(op, { handler, request: true, queue: queue ?? null });
  listen();
}

/**
 * Handles notices `op` in this worker (in `queue`'s order when given).
 * @param {string} op
 * @param {NoticeHandler} handler
 * @param {SerialQueue} [queue]
 */
export function handleNotices(op, handler, queue) {
  handlers.set(op, { handler, request: false, queue: queue ?? null });
  listen();
}

