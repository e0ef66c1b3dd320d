// One statistics pass fed from a local file (Node) straight into wasm memory: the next chunk is
// read (on libuv's thread pool) while the current one is dequantized, and no JS buffer is
// allocated or copied. Either two chunk buffers take turns (a later pass reads the file again:
// the page cache serves it), or every chunk lands in its place in one buffer holding the whole
// run of rows, which a later pass then reads without touching the file (a worker does this).
import { wasmMemory } from './wasm.js';
import { abortError } from './sources.js';
/** @import { OnBytes, ReadableTensor, Source } from './internal.js' */
/** @import { ByteBuffer, GgufShard, TensorStatsJob, Wasm } from './bindings.js' */

/**
 * Whether `source` can be read straight into this wasm instance's memory.
 * @param {Source | undefined} source
 * @param {Wasm} wasm
 * @returns {source is Source & { readToMemory: NonNullable<Source['readToMemory']> }}
 */
export function readsToMemory(source, wasm) {
  return typeof source?.readToMemory === 'function' && typeof wasm.ByteBuffer === 'function' && !!wasmMemory();
}

/**
 * Feeds rows [a, b) of tensor `t` of `shard` (a GgufModel) to `job` once, `rowsPerChunk` rows at
 * a time; `progress(n)` is told each chunk's bytes. With `hold` (a ByteBuffer of at least the
 * rows' bytes), the bytes are read into it and stay there for feedHeldRows.
 * @param {Wasm} wasm
 * @param {GgufShard} shard
 * @param {ReadableTensor} t
 * @param {number} a
 * @param {number} b
 * @param {number} rowsPerChunk
 * @param {TensorStatsJob} job
 * @param {AbortSignal | undefined} signal
 * @param {OnBytes | undefined} progress
 * @param {ByteBuffer} [hold]
 */
export async function feedRowsFromFile(wasm, shard, t, a, b, rowsPerChunk, job, signal, progress, hold) {
  if (a >= b) return;
  const memory = /** @type {WebAssembly.Memory} */ (wasmMemory());
  // The callers checked readsToMemory.
  const source = /** @type {Source & { readToMemory: NonNullable<Source['readToMemory']> }} */ (shard.source);
  const size = Math.min(b - a, rowsPerChunk) * t.rowBytes;
  const [origin] = shard.header.rowsRange(t.name, a, a);
  const sizes = [size, b - a > rowsPerChunk ? size : 0];
  const own = hold ? [] : sizes.map((n) => new wasm.ByteBuffer(n));
  /**
   * @param {number} first
   * @param {number} k
   */
  const read = (first, k) => {
    const last = Math.min(b, first + rowsPerChunk);
    const [start, end] = shard.header.rowsRange(t.name, first, last);
    // The read writes into wasm memory at the buffer's address: never past its end.
    if (!hold && end - start > sizes[k]) throw new Error(`gguf-lens: ${end - start} bytes read into a ${sizes[k]}-byte buffer`);
    const [buffer, offset] = hold ? [hold, start - origin] : [own[k], 0];
    return source.readToMemory(start, end, memory, buffer.ptr() + offset)
      .then((n) => ({ first, last, n, k, buffer, offset }));
  };
  /** @type {ReturnType<typeof read> | null} */
  let pending = null;
  try {
    pending = read(a, 0);
    while (pending) {
      const chunk = await pending;
      pending = null;
      if (signal?.aborted) throw abortError(signal);
      if (chunk.last < b) pending = read(chunk.last, 1 - chunk.k);
      job.addRowsFrom(shard.header, t.name, chunk.first, chunk.buffer, chunk.offset, chunk.n);
      progress?.(chunk.n);
    }
  } finally {
    // A read under way writes into a buffer: wait for it before the buffer is freed.
    await pending?.catch(() => {});
    for (const buffer of own) buffer.free();
  }
}

/**
 * Feeds rows [a, b) from `hold`, where feedRowsFromFile read them, in one call.
 * @param {GgufShard} shard
 * @param {ReadableTensor} t
 * @param {number} a
 * @param {number} b
 * @param {TensorStatsJob} job
 * @param {ByteBuffer} hold
 */
export function feedHeldRows(shard, t, a, b, job, hold) {
  if (a >= b) return;
  const [start, end] = shard.header.rowsRange(t.name, a, b);
  job.addRowsFrom(shard.header, t.name, a, hold, 0, end - start);
}
