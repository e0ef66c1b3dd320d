// The model a statistics/quantization worker has open (stats-worker.js and quant-error-part.js
// share it): opened once per input, reopened only when a request names another one, closed when
// the page closes the model it came from.
// open.js, not index.js: a worker needs no hub, compare or edit code (less to load at start-up).
import { openGguf } from './open.js';

let opened = null; // { key, model }

function keyOf(input) {
  if (Array.isArray(input)) return input.map(keyOf).join('|');
  return input; // a URL or path, or the same File/Blob object for the same file
}

/** The model for `input`; `inputId` (the sender's id for its model) wins over the input itself,
 * since each message clones a File anew. */
export async function modelFor(input, inputId, openOptions) {
  const key = inputId ?? keyOf(input);
  if (opened?.key !== key) {
    await opened?.model.close();
    opened = null;
    opened = { key, model: await openGguf(input, openOptions ?? {}) };
  }
  return opened.model;
}

/** Closes the open model if it is `inputId`'s (its file handle too); true when it was. */
export async function closeModel(inputId) {
  if (!opened || opened.key !== inputId) return false;
  const { model } = opened;
  opened = null;
  await model.close().catch(() => {});
  return true;
}
