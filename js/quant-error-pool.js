// The page side of quantError({ workers }): the rows to quantize (every row, or the sampled
// runs) are cut into pieces, large first and smaller towards the end (cutPieces); each worker
// opens the model from `model.input` (once), takes a piece, asks for the next while it works,
// quantizes each piece's rows to every type and sends its sums back (quant-error-part.js,
// running in the same workers as tensorStats'), so the workers finish together however fast
// each one runs. The pieces' sums are absorbed in row order and are exact
// (src/quantize/error.rs), so the result is bit for bit the one a single pass gives. The last
// call's sums are kept per model: a call over more rows of the same tensor and types (the
// viewer's exact pass after its sample) quantizes only the rows not yet done and adds them.

import { askWorker, tellWorker, inputForWorkers } from './worker-protocol.js';
import { abortError } from './sources.js';
/** @import { QuantErrorReport, TensorInfo } from './types.js' */
/** @import { GgufModel } from './model.js' */
/** @import { PoolWorker, Run } from './internal.js' */
/** @import { QuantErrorJob } from './bindings.js' */

/**
 * Cuts `runs` ([first, last) row ranges, in order) into pieces in row order for `n` workers
 * taking them as they free up: each piece is 1/(2n) of the rows left, at least `minRows`, so
 * the last ones are small and the workers end close together.
 * @param {Run[]} runs
 * @param {number} n
 * @param {number} minRows
 * @returns {Run[][]}
 */
export function cutPieces(runs, n, minRows) {
  let left = runs.reduce((s, [a, b]) => s + b - a, 0);
  /** @type {Run[][]} */
  const pieces = [];
  let r = 0;
  let at = runs.length ? runs[0][0] : 0;
  while (left > 0) {
    let want = Math.min(left, Math.max(minRows, Math.ceil(left / (2 * n))));
    left -= want;
    /** @type {Run[]} */
    const piece = [];
    while (want > 0) {
      const end = Math.min(runs[r][1], at + want);
      piece.push([at, end]);
      want -= end - at;
      at = end;
      if (at >= runs[r][1]) {
        r++;
        if (r < runs.length) at = runs[r][0];
      }
    }
    pieces.push(piece);
  }
  return pieces;
}

/**
 * `runs` less `done` (both sorted, disjoint [first, last) ranges) when every run of `done` lies
 * inside one of `runs` and something is left; otherwise null.
 * @param {Run[]} runs
 * @param {Run[]} done
 * @returns {Run[] | null}
 */
export function runsLeft(runs, done) {
  /** @type {Run[]} */
  const left = [];
  let d = 0;
  for (const [a, b] of runs) {
    let at = a;
    while (d < done.length && done[d][0] < b) {
      const [c, e] = done[d];
      if (c < at || e > b) return null; // not inside this run
      if (c > at) left.push([at, c]);
      at = e;
      d++;
    }
    if (at < b) left.push([at, b]);
  }
  return d === done.length && left.length ? left : null;
}

/** model → { key, runs, state, clean } of its last call on workers (`clean`: no type failed in
 * it, so a later pass's first failure, in row order, is in the rows it adds).
 * @type {WeakMap<GgufModel, { key: string, runs: Run[], state: Uint8Array, clean: boolean }>} */
const lastCall = new WeakMap();

let nextJob = 0;

// A benchmark's timeline (benches/viewer-quant-error.mjs --timeline sets the flag in this worker
// and the pool's requests carry it): no marks otherwise.
const mark = (/** @type {string} */ name) => { if (timelineFlag()) performance.mark(`qerr:pool:${name}`); };

/** The benchmark's flag, set on this thread's global object. */
function timelineFlag() {
  return /** @type {{ GGUF_LENS_TIMELINE?: boolean }} */ (globalThis).GGUF_LENS_TIMELINE;
}

/**
 * The quantization error of `runs` of tensor `t` on `workers`; `job` is the page's empty
 * QuantErrorJob (its types and row length), which absorbs the parts in row order.
 * `onRows(n)` is told of every chunk of rows quantized.
 * @param {GgufModel} model
 * @param {TensorInfo} t
 * @param {Run[]} runs
 * @param {QuantErrorJob} job
 * @param {string[]} types
 * @param {PoolWorker[]} workers
 * @param {{ signal?: AbortSignal, chunkBytes: number, onRows?: (n: number) => void, inputId: string,
 *   wasmModule: WebAssembly.Module | null }} options
 * @returns {Promise<QuantErrorReport>}
 */
export async function quantErrorOnWorkers(model, t, runs, job, types, workers, options) {
  const { signal, chunkBytes, onRows, inputId, wasmModule } = options;
  mark('request');
  const input = inputForWorkers(model.input); // model.js checked that workers can open it
  const jobId = `qerr${++nextJob}`;
  const key = `${t.name}\u0000${types.join(',')}\u0000${t.rowLength}`;
  const absent = job.result().skipped.length; // types whose block does not divide the row
  const last = lastCall.get(model);
  const left = last && last.key === key && last.clean ? runsLeft(runs, last.runs) : null;
  // The smallest piece: about 1/256 of a read (a few milliseconds of quantizing), so the
  // workers end within about that of each other.
  const minRows = Math.max(1, Math.floor(chunkBytes / 256 / Math.max(1, t.rowBytes)));
  const pieces = cutPieces(left ?? runs, workers.length, minRows);
  const used = workers.slice(0, pieces.length);
  /** @type {Uint8Array[]} */
  const states = new Array(pieces.length);
  let nextPiece = 0;
  let over = false;
  /** @type {(err: unknown) => void} */
  let stop = () => {};
  /** @type {Promise<never>} */
  const stopped = new Promise((_, reject) => { stop = reject; });
  stopped.catch(() => {});
  const cancelAll = () => {
    for (const [i, w] of used.entries()) tellWorker(w, 'cancel', { id: `${jobId}:${i}` });
  };
  const onAbort = () => {
    cancelAll();
    stop(abortError(signal));
  };
  for (const w of used) w.ref?.();
  try {
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort);
    if (left && last) onRows?.(last.runs.reduce((n, [a, b]) => n + b - a, 0));
    const parts = used.map(async (worker, i) => {
      const id = `${jobId}:${i}`;
      const piece = nextPiece++;
      const asked = askWorker(worker, 'quant-error', id, {
        input, inputId, openOptions: model.openOptions, name: t.name,
        types, piece, runs: pieces[piece], chunkBytes, wasmModule, timeline: timelineFlag(),
      }, 'a quantization worker', (data) => {
        if (over) return; // a cancelled worker's last events, after this call ended
        if (data.gguf === 'progress') {
          onRows?.(/** @type {number} */ (data.rows));
        } else if (data.gguf === 'need') {
          const next = nextPiece < pieces.length ? nextPiece++ : -1;
          tellWorker(worker, 'more', next >= 0 ? { id, piece: next, runs: pieces[next] } : { id });
        } else if (data.gguf === 'piece') {
          states[/** @type {number} */ (data.piece)] = /** @type {Uint8Array} */ (data.state);
        }
      });
      mark(`part-sent:${i}`);
      await asked;
      mark(`part-in:${i}`);
    });
    try {
      await Promise.race([Promise.all(parts), stopped]);
    } catch (err) {
      cancelAll(); // one worker failed: the others stop too
      throw err;
    }
    // The earlier call's rows had no failure: any reason comes from the parts, in row order.
    if (left && last) job.absorbState(last.state);
    for (const state of states) job.absorbState(state); // every piece's, in row order
    const result = job.result();
    lastCall.set(model, { key, runs, state: job.toState(), clean: result.skipped.length === absent });
    mark('merged');
    return result;
  } finally {
    over = true;
    signal?.removeEventListener('abort', onAbort);
    for (const w of used) w.unref?.();
  }
}
