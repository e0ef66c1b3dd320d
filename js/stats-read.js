// One statistics pass fed from a local file (Node) straight into wasm memory: two buffers live in
// wasm memory, the next chunk is read (on libuv's thread pool) while the current one is
// dequantized, and no JS buffer is allocated or copied. A pass reads the file again rather than
// keeping its bytes: the page cache serves it at the cost of the one copy a replay would make.
import { wasmMemory } from './wasm.js';

/** Whether `source` can be read straight into this wasm instance's memory. */
export function readsToMemory(source, wasm) {
  return typeof source?.readToMemory === 'function' && typeof wasm.ByteBuffer === 'function' && !!wasmMemory();
}

/**
 * Feeds rows [a, b) of tensor `t` of `shard` (a GgufModel) to `job` once, `rowsPerChunk` rows at
 * a time; `progress(n)` is told each chunk's bytes.
 */
export async function feedRowsFromFile(wasm, shard, t, a, b, rowsPerChunk, job, signal, progress) {
  if (a >= b) return;
  const memory = wasmMemory();
  const size = Math.min(b - a, rowsPerChunk) * t.rowBytes;
  const buffers = [new wasm.ByteBuffer(size), new wasm.ByteBuffer(b - a > rowsPerChunk ? size : 0)];
  const read = (first, k) => {
    const last = Math.min(b, first + rowsPerChunk);
    const [start, end] = shard.header.rowsRange(t.name, first, last);
    return shard.source.readToMemory(start, end, memory, buffers[k].ptr()).then((n) => ({ first, last, n, k }));
  };
  let pending = read(a, 0);
  try {
    while (pending) {
      const chunk = await pending;
      pending = null;
      if (signal?.aborted) throw signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
      if (chunk.last < b) pending = read(chunk.last, 1 - chunk.k);
      job.addRowsFrom(shard.header, t.name, chunk.first, buffers[chunk.k], chunk.n);
      progress?.(chunk.n);
    }
  } finally {
    // A read under way writes into a buffer: wait for it before the buffer is freed.
    await pending?.catch(() => {});
    for (const buffer of buffers) buffer.free();
  }
}
