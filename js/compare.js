// Comparing two models with the core's definitions (src/compare.rs, as `gguf-lens diff`): the
// header diff computed in wasm, and the numeric metrics of one tensor read from both in row
// chunks and accumulated in wasm (f64 sums).
import { CHUNK_BYTES, Model } from './model.js';
import { abortError } from './sources.js';
/** @import { ModelDiff, Progress, ValueMetrics } from './types.js' */

/** Values per file and read in compareTensor when a file is not GGUF (at least one row). */
export const COMPARE_CHUNK_ELEMENTS = 1 << 20;

/**
 * `m`, checked to be a model (the one error of a compare given anything else).
 * @param {unknown} m
 * @param {string} label 'A' or 'B'
 * @param {string} call
 * @returns {Model}
 */
function modelOf(m, label, call) {
  if (!(m instanceof Model)) throw new TypeError(`gguf-lens: ${call} compares GGUF and safetensors models (${label} is not a model)`);
  return m;
}

/**
 * The core's CompareSide of a model (the headers that hold it, Model._coreHeaders).
 * @param {Model} model
 * @param {string} label
 * @param {string} call
 */
function sideOf(model, label, call) {
  const m = modelOf(model, label, call);
  const side = new m.wasm.CompareSide();
  try {
    for (const header of m._coreHeaders()) side.add(header);
    return side;
  } catch (err) {
    side.free();
    throw err;
  }
}

/**
 * Summary fields side by side, metadata and tensor differences of two models: GGUF (single or
 * split) and safetensors checkpoints (single, sharded, GPTQ) in any pairing. Shapes are
 * row-major, outermost first, for every pairing; two GGUF models compare ggml types, other
 * pairs type names (`layout: 'logical'`), a GPTQ layer as `<layer>.weight`.
 * Across formats `metadata` is null (GGUF key-values and `__metadata__` are not compared;
 * `metadataNotCompared` says so) and a `format` summary field comes first; summary fields
 * `count` (their difference makes `differs`) only between two GGUF models, as `gguf-lens diff`.
 * @param {Model} a
 * @param {Model} b
 * @returns {Promise<ModelDiff>}
 */
export async function compareModels(a, b) {
  await Promise.all([a?.preload?.(), b?.preload?.()]);
  const sa = sideOf(a, 'A', 'compareModels');
  let sb;
  try {
    sb = sideOf(b, 'B', 'compareModels');
    return a.wasm.compareSides(sa, sb);
  } finally {
    sa.free();
    sb?.free();
  }
}

/**
 * The diff of two models rendered as `gguf-lens diff` renders it (the same Rust renderer):
 * `format` 'markdown' (default), 'json' or 'text'; `paths` the names shown for A and B
 * (default 'A', 'B'); `values` the tensors compared so far, as a Map or an array of
 * [name, metrics] pairs (compareTensor's results), listed as `diff --values` lists them.
 * @param {Model} a
 * @param {Model} b
 * @param {{ format?: 'markdown' | 'json' | 'text', paths?: [string, string],
 *   values?: Map<string, ValueMetrics> | Iterable<[string, ValueMetrics]> }} [options]
 * @returns {Promise<string>}
 */
export async function compareReport(a, b, options = {}) {
  await Promise.all([a?.preload?.(), b?.preload?.()]);
  const { format = 'markdown', paths, values } = options;
  const list = values === undefined ? undefined : [...(values instanceof Map ? values.entries() : values)].map(([name, m]) => ({ ...m, name }));
  const sa = sideOf(a, 'A', 'compareReport');
  let sb;
  try {
    sb = sideOf(b, 'B', 'compareReport');
    return a.wasm.compareReport(sa, sb, { format, paths: paths && [String(paths[0]), String(paths[1])], values: list });
  } finally {
    sa.free();
    sb?.free();
  }
}

const sameDims = (/** @type {number[]} */ p, /** @type {number[]} */ q) => p.length === q.length && p.every((d, i) => Number(d) === Number(q[i]));

/**
 * Reads tensor `name` from both models in row chunks (reads of A and B in parallel, the next
 * chunk fetched while one is compared) and compares them: metrics over the finite pairs, NaN
 * and Inf mismatches over all (ValueDiff's definitions). Progress is reported in rows. Two GGUF
 * files are read in chunks of at most CHUNK_BYTES per file and dequantized in wasm a slice at a
 * time (no values cross into JS); other models as f32 in chunks of `chunkElements` values.
 * @param {Model} a
 * @param {Model} b
 * @param {string} name
 * @param {{ signal?: AbortSignal, onProgress?: (progress: Progress) => void, chunkElements?: number }} [options]
 * @returns {Promise<ValueMetrics>}
 */
export async function compareTensor(a, b, name, options = {}) {
  await Promise.all([a?.preload?.(), b?.preload?.()]);
  const ra = modelOf(a, 'A', 'compareTensor')._readable(name), rb = modelOf(b, 'B', 'compareTensor')._readable(name);
  const x = ra.info, y = rb.info;
  // Stored rows the core dequantizes on both sides (GGUF's): compared as bytes in wasm; else as values.
  const ha = ra.header, hb = rb.header;
  const raw = ha !== null && hb !== null;
  if (!sameDims(ra.shape, rb.shape)) throw new Error(`gguf-lens: tensor ${name} has another shape in each file`);
  const { signal, onProgress } = options;
  const step = Math.max(1, raw && options.chunkElements === undefined
    ? Math.floor(CHUNK_BYTES / Math.max(1, x.rowBytes ?? 0, y.rowBytes ?? 0))
    : Math.floor((options.chunkElements ?? COMPARE_CHUNK_ELEMENTS) / Math.max(1, x.rowLength)));
  /**
   * @param {Model} m
   * @param {[number, number]} rows
   * @returns {Promise<Uint8Array | Float32Array>}
   */
  const read = (m, rows) => (raw ? m.readTensorBytes(name, { rows, signal }) : m.readTensor((m === a ? ra : rb).read, { rows, signal }));
  const fetchChunk = (/** @type {number} */ first) => {
    /** @type {[number, number]} */
    const rows = [first, Math.min(x.nRows, first + step)];
    return Promise.all([read(a, rows), read(b, rows)]).then(([va, vb]) => ({ rows, va, vb }));
  };
  const acc = new a.wasm.ValueDiff();
  let pending = x.nRows > 0 ? fetchChunk(0) : null;
  try {
    while (pending) {
      const { rows, va, vb } = await pending;
      pending = rows[1] < x.nRows ? fetchChunk(rows[1]) : null;
      if (signal?.aborted) throw abortError(signal);
      if (raw) {
        acc.addRows(name, ha, /** @type {Uint8Array} */ (va), hb, /** @type {Uint8Array} */ (vb));
      } else {
        acc.add(/** @type {Float32Array} */ (va), /** @type {Float32Array} */ (vb));
      }
      onProgress?.({ loaded: rows[1], total: x.nRows });
    }
    return acc.result();
  } finally {
    pending?.catch(() => {});
    acc.free();
  }
}
