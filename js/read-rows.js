// Rows of a tensor into a Float32Array with one copy, on this thread (readTensor) or a worker
// (read-part.js): the bytes land in a RowReader's buffer in wasm memory (a local file in Node
// straight there; other sources through one copy of each chunk), the next chunk is read while
// this one is dequantized, a cache-sized slice at a time, and each slice is copied into the
// array. Nothing copies the array into wasm memory first (which a fresh array would pay for in
// page faults twice).
import { isLive, wasmMemory } from './wasm.js';
import { readsToMemory } from './stats-read.js';
import { abortError } from './sources.js';
/** @import { OnBytes, ReadableTensor, RowShape } from './internal.js' */
/** @import { GgufShard, ReaderEntry, Wasm } from './bindings.js' */

/** Values per dequantize call: the slice is still in L2 when it is copied out. */
const SLICE_VALUES = 1 << 16;

/**
 * Rows [a, b) in chunks of `rowsPerChunk`: `fetch(first, last)` for each, the next one started
 * while `consume` works on the one before; a failure of `consume` drops the one in flight.
 * @template T
 * @param {number} a
 * @param {number} b
 * @param {number} rowsPerChunk
 * @param {(first: number, last: number) => Promise<T>} fetch
 * @param {AbortSignal | undefined} signal
 * @param {(got: T, first: number, last: number) => void} consume
 */
export async function eachChunkAhead(a, b, rowsPerChunk, fetch, signal, consume) {
  const start = (/** @type {number} */ first) => {
    const last = Math.min(b, first + rowsPerChunk);
    return fetch(first, last).then((got) => ({ got, first, last }));
  };
  let pending = a < b ? start(a) : null;
  while (pending) {
    const chunk = await pending;
    if (signal?.aborted) throw abortError(signal);
    pending = chunk.last < b ? start(chunk.last) : null;
    try {
      consume(chunk.got, chunk.first, chunk.last);
    } catch (err) {
      pending?.catch(() => {});
      throw err;
    }
  }
}

/** Rows per read of `chunkBytes`: all `rows` at once when a row has no bytes (a zero-width
 * tensor: 2^62 empty rows must not be 2^39 empty reads).
 * @param {number} rowBytes
 * @param {number} chunkBytes
 * @param {number} rows
 */
export function rowsPerRead(rowBytes, chunkBytes, rows) {
  return rowBytes > 0 ? Math.max(1, Math.floor(chunkBytes / rowBytes)) : Math.max(1, rows);
}

/**
 * The RowReader sizes `readRows` needs for `chunkBytes` requests of tensor `t` over `rows` rows.
 * @param {RowShape} t
 * @param {number} rows
 * @param {number} chunkBytes
 */
export function readerSize(t, rows, chunkBytes) {
  const chunkRows = Math.min(rows, rowsPerRead(t.rowBytes, chunkBytes, rows));
  const sliceRows = t.rowLength > 0 ? Math.min(chunkRows, Math.max(1, Math.floor(SLICE_VALUES / t.rowLength))) : chunkRows;
  return { chunkRows, sliceRows, bytes: (rows > chunkRows ? 2 : 1) * chunkRows * t.rowBytes, values: sliceRows * t.rowLength };
}

/**
 * Reads rows [a, b) of tensor `t` of `shard` (a GgufModel) into `out`, row `firstRow` of which
 * is out[0], with `reader` (a RowReader of at least readerSize's sizes). `stop()` is called
 * between chunks (it throws to stop); `progress(n)` is told of each chunk's bytes.
 * @param {Wasm} wasm
 * @param {GgufShard} shard
 * @param {ReadableTensor} t
 * @param {number} a
 * @param {number} b
 * @param {Float32Array} out
 * @param {number} firstRow
 * @param {{ reader: import('./bindings.js').RowReader, chunkBytes: number, signal?: AbortSignal,
 *   progress?: OnBytes, stop?: () => void }} options
 */
export async function readRows(wasm, shard, t, a, b, out, firstRow, { reader, chunkBytes, signal, progress, stop }) {
  if (a >= b) return;
  const header = shard.header;
  const { chunkRows, sliceRows } = readerSize(t, b - a, chunkBytes);
  const half = chunkRows * t.rowBytes;
  const memory = /** @type {WebAssembly.Memory} */ (wasmMemory());
  const source = shard.source;
  const direct = readsToMemory(source, wasm);
  /**
   * Half k of the reader's bytes gets rows [first, first + chunkRows).
   * @param {number} first
   * @param {number} k
   */
  const fill = async (first, k) => {
    const last = Math.min(b, first + chunkRows);
    const [start, end] = header.rowsRange(t.name, first, last);
    // Written at the reader's address: never past its half.
    if (end - start > half) throw new Error(`gguf-lens: ${end - start} bytes read into a ${half}-byte chunk`);
    const at = reader.bytesPtr() + k * half;
    if (direct) {
      await source.readToMemory(start, end, memory, at);
      progress?.(end - start);
    } else {
      const bytes = await shard.source.read(start, end, signal, progress);
      // memory.buffer now: the memory may have grown during the read.
      new Uint8Array(memory.buffer, at, end - start).set(bytes);
    }
    return { first, last, k };
  };
  /** @type {ReturnType<typeof fill> | null} */
  let pending = fill(a, 0);
  try {
    while (pending) {
      const chunk = await pending;
      pending = null;
      if (signal?.aborted) throw abortError(signal);
      stop?.();
      if (chunk.last < b) pending = fill(chunk.last, 1 - chunk.k);
      for (let row = chunk.first; row < chunk.last; row += sliceRows) {
        const end = Math.min(chunk.last, row + sliceRows);
        const offset = chunk.k * half + (row - chunk.first) * t.rowBytes;
        const n = reader.dequantize(header, t.name, offset, (end - row) * t.rowBytes);
        out.set(new Float32Array(memory.buffer, reader.valuesPtr(), n), (row - firstRow) * t.rowLength);
      }
    }
  } finally {
    // A read under way writes into the reader: wait for it before anyone else uses it.
    await pending?.catch(() => {});
  }
}

/** Keeps one RowReader per thread for later calls (wasm memory never shrinks: reuse it). */
export class ReaderCache {
  constructor() {
    /** @type {ReaderEntry | null} */
    this.spare = null;
  }

  /**
   * A reader of at least these sizes: the spare one if it is big enough and free.
   * @param {Wasm} wasm
   * @param {{ bytes: number, values: number }} size
   * @returns {ReaderEntry}
   */
  take(wasm, { bytes, values }) {
    // A reader from before a trap is gone with the instance that made it (wasm.js).
    const spare = isLive(this.spare?.reader) ? this.spare : null;
    this.spare = null;
    if (spare && spare.bytes >= bytes && spare.values >= values) return spare;
    spare?.reader.free();
    const size = { bytes: Math.max(bytes, spare?.bytes ?? 0), values: Math.max(values, spare?.values ?? 0) };
    return { reader: new wasm.RowReader(size.bytes, size.values), ...size };
  }

  /**
   * Gives a reader back (the bigger one is kept).
   * @param {ReaderEntry} entry
   */
  give(entry) {
    if (!isLive(entry.reader)) return;
    if (this.spare && this.spare.bytes >= entry.bytes && this.spare.values >= entry.values) {
      entry.reader.free();
      return;
    }
    this.spare?.reader.free();
    this.spare = entry;
  }
}
