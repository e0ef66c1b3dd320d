// Reading a header from the start of a source, growing the read until the parser has all of it.
// Shared by GGUF and safetensors: only the parse function differs.

/** Slack added to the parser's estimate, so a slightly low guess does not cost a request. */
const SLACK_BYTES = 32 * 1024;
const SLACK_FRACTION = 0.05;

/**
 * Reads `firstRead` bytes, then calls `parse(prefix)` until it returns something other than
 * `{ needMore, estimate? }`, each time fetching only the missing suffix up to
 * max(needMore, estimate + slack), straight into the grown buffer (no second copy). `parse`
 * may return a promise (the wasm module loads while the first read is in flight). `what`
 * names the header in errors.
 * @template T
 * @param {{ byteLength?: number, read: Function, release?: Function }} source
 * @param {{ signal?: AbortSignal, onProgress?: Function }} options
 * @param {number} firstRead
 * @param {(prefix: Uint8Array) => T | { needMore: number, estimate?: number } | Promise<T | { needMore: number, estimate?: number }>} parse
 * @param {string} what
 * @returns {Promise<T>}
 */
export async function readGrowingPrefix(source, options, firstRead, parse, what) {
  const { signal, onProgress } = options;
  let loaded = 0;
  const progress = (n) => {
    loaded += n;
    onProgress?.({ loaded, total: source.byteLength });
  };
  let want = firstRead;
  if (source.byteLength !== undefined) want = Math.min(want, source.byteLength);
  // A URL: one open-ended request whose body is read as far as the header goes, then cancelled.
  source.streamNextRead?.();
  let prefix = await source.read(0, want, signal, progress);
  for (;;) {
    if (signal?.aborted) throw signal.reason;
    let result;
    try {
      result = await parse(prefix);
    } catch (err) {
      throw new Error(`gguf-lens: ${err.message ?? err}`, { cause: err });
    }
    if (!('needMore' in result)) {
      // A Range-ignoring server's stream is not needed past the header.
      source.release?.();
      return result;
    }
    const estimate = result.estimate === undefined ? 0 : result.estimate * (1 + SLACK_FRACTION) + SLACK_BYTES;
    let next = Math.ceil(Math.max(result.needMore, estimate, prefix.length + 1));
    if (source.byteLength !== undefined) next = Math.min(next, source.byteLength);
    if (next <= prefix.length) {
      throw new Error(`gguf-lens: ${what} needs ${result.needMore} bytes but the file has ${source.byteLength}`);
    }
    const grown = new Uint8Array(next);
    grown.set(prefix, 0);
    const room = grown.subarray(prefix.length);
    const suffix = await source.read(prefix.length, next, signal, progress, room);
    // A source that ignores `into` (a user's own) returns its own bytes: copy them in.
    if (suffix.buffer !== room.buffer || suffix.byteOffset !== room.byteOffset) room.set(suffix);
    prefix = grown.subarray(0, prefix.length + suffix.length);
  }
}
