// Comparing two models with the core's definitions (src/compare.rs, as `gguf-lens diff`): the
// header diff computed in wasm, and the numeric metrics of one tensor read from both in row
// chunks and accumulated in wasm (f64 sums).
import { CHUNK_BYTES } from './model.js';

/** Values per file and read in compareTensor when a file is not GGUF (at least one row). */
export const COMPARE_CHUNK_ELEMENTS = 1 << 20;

function ggufHeader(m, side) {
  if (m?.format !== 'gguf') throw new TypeError(`gguf-lens: compareModels compares GGUF models (${side} is ${m?.format ?? 'not a model'})`);
  if (m.shards.length > 1) throw new TypeError(`gguf-lens: compareModels compares single-file GGUF models (${side} has ${m.shards.length} shards)`);
  return m.header;
}

/** Summary fields side by side, metadata and tensor differences of two GGUF models. */
export function compareModels(a, b) {
  return a.wasm.compareHeaders(ggufHeader(a, 'A'), ggufHeader(b, 'B'));
}

/** A tensor's (or GPTQ layer's) rows: {nRows, rowLength, shape}. */
const infoOf = (m, name) => m.gptqLayer?.(name) ?? m.tensor(name);

/** GGUF tensors by their whole shape (as `gguf-lens diff`), others by rows and row length. */
const sameShape = (x, y, gguf) => (gguf
  ? x.shape.length === y.shape.length && x.shape.every((d, i) => d === y.shape[i])
  : x.nRows === y.nRows && x.rowLength === y.rowLength);

/**
 * Reads tensor `name` from both models in row chunks (reads of A and B in parallel, the next
 * chunk fetched while one is compared) and compares them: metrics over the finite pairs, NaN
 * and Inf mismatches over all (ValueDiff's definitions). Progress is reported in rows. Two GGUF
 * files are read in chunks of at most CHUNK_BYTES per file and dequantized in wasm a slice at a
 * time (no values cross into JS); other models as f32 in chunks of `chunkElements` values.
 */
export async function compareTensor(a, b, name, options = {}) {
  const x = infoOf(a, name), y = infoOf(b, name);
  const gguf = a.format === 'gguf' && b.format === 'gguf';
  if (!sameShape(x, y, gguf)) throw new Error(`gguf-lens: tensor ${name} has another shape in each file`);
  const { signal, onProgress } = options;
  const step = Math.max(1, gguf && options.chunkElements === undefined
    ? Math.floor(CHUNK_BYTES / Math.max(1, x.rowBytes, y.rowBytes))
    : Math.floor((options.chunkElements ?? COMPARE_CHUNK_ELEMENTS) / Math.max(1, x.rowLength)));
  const read = (m, rows) => (gguf ? m.readTensorBytes(name, { rows, signal }) : m.readTensor(name, { rows, signal }));
  const fetchChunk = (first) => {
    const rows = [first, Math.min(x.nRows, first + step)];
    return Promise.all([read(a, rows), read(b, rows)]).then(([va, vb]) => ({ rows, va, vb }));
  };
  const acc = new a.wasm.ValueDiff();
  let pending = x.nRows > 0 ? fetchChunk(0) : null;
  try {
    while (pending) {
      const { rows, va, vb } = await pending;
      pending = rows[1] < x.nRows ? fetchChunk(rows[1]) : null;
      if (signal?.aborted) throw signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
      if (gguf) acc.addRows(name, a.shards[x.shard].header, va, b.shards[y.shard].header, vb);
      else acc.add(va, vb);
      onProgress?.({ loaded: rows[1], total: x.nRows });
    }
    return acc.result();
  } finally {
    pending?.catch(() => {});
    acc.free();
  }
}
