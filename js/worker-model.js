// The models a statistics/quantization/read worker has open (stats-worker.js, quant-error-part.js
// and read-part.js share them): opened once per input and kept while requests use them, so calls
// on different models at the same time on one pool never close each other's model; the two
// idle models used last stay open for the next request; a model is closed when the page closes
// the model it came from (after the requests still using it).
// open.js, not index.js: a worker needs no hub, compare or edit code (less to load at start-up).
import { openGguf } from './open.js';
import { onWasmReset } from './wasm.js';

/** @import { ModelInput, WorkerOpenOptions } from './internal.js' */
/** @import { GgufModel } from './model.js' */

/** @typedef {{ model: Promise<GgufModel>, users: number, closing: boolean }} Entry */

const IDLE_KEPT = 2;
/** key → entry, least recently used first
 * @type {Map<unknown, Entry>} */
const models = new Map();

/**
 * @param {ModelInput} input
 * @returns {unknown}
 */
function keyOf(input) {
  if (Array.isArray(input)) return input.map(keyOf).join('|');
  return input; // a URL or path, or the same File/Blob object for the same file
}

/** @param {Entry} entry */
function close(entry) {
  entry.model.then((m) => m.close()).catch(() => {});
}

/** Closes the idle models but the IDLE_KEPT used last. */
function closeIdle() {
  const idle = [...models].filter(([, e]) => e.users === 0);
  for (const [key, entry] of idle.slice(0, Math.max(0, idle.length - IDLE_KEPT))) {
    models.delete(key);
    close(entry);
  }
}

// A trap discarded the wasm instance these models' headers live in (wasm.js): the next request
// opens its model again (a request still using one fails, with the error to reopen it).
onWasmReset(() => {
  for (const entry of models.values()) {
    entry.closing = true;
    if (entry.users === 0) close(entry);
  }
  models.clear();
});

/**
 * The model for `input` (`inputId`, the sender's id for its model, wins over the input itself,
 * since each message clones a File anew), as `{ model, release }`: call `release()` when the
 * request is done with it.
 * @param {ModelInput} input
 * @param {string | undefined} inputId
 * @param {WorkerOpenOptions | undefined} openOptions
 * @returns {Promise<{ model: GgufModel, release: () => void }>}
 */
export async function useModel(input, inputId, openOptions) {
  const key = inputId ?? keyOf(input);
  let entry = models.get(key);
  if (entry) {
    models.delete(key); // to the most recently used end
  } else {
    // A worker reads, so it moves the header into the full module at once.
    entry = { model: openGguf(input, openOptions ?? {}).then(withFullModule), users: 0, closing: false };
  }
  const used = entry;
  models.set(key, entry);
  entry.users++;
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    used.users--;
    if (used.closing && used.users === 0) close(used);
    else closeIdle();
  };
  try {
    return { model: await entry.model, release };
  } catch (err) {
    if (models.get(key) === entry) models.delete(key);
    release();
    throw err;
  }
}

/**
 * Closes `inputId`'s model (its file handle too) once no request uses it; true when it was open.
 * @param {string} inputId
 */
export async function closeModel(inputId) {
  const entry = models.get(inputId);
  if (!entry) return false;
  models.delete(inputId);
  entry.closing = true;
  if (entry.users === 0) close(entry);
  return true;
}

/**
 * `model` with its header in the full module (closed when that cannot load).
 * @param {GgufModel} model
 * @returns {Promise<GgufModel>}
 */
async function withFullModule(model) {
  try {
    await model.preload();
  } catch (err) {
    await model.close();
    throw err;
  }
  return model;
}
