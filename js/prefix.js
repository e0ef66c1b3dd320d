// Reading a header from the start of a source, growing the read until the parser has all of it.
// Shared by GGUF and safetensors: only the parse function differs.

import { errorMessage } from './sources.js';
/** @import { OnBytes, Source } from './internal.js' */
/** @import { OpenOptions } from './types.js' */

/** Slack added to the parser's estimate, so a slightly low guess does not cost a request. */
const SLACK_BYTES = 32 * 1024;
const SLACK_FRACTION = 0.05;
/** Largest header read by default (`maxHeaderBytes`): far beyond any real model's. */
export const MAX_HEADER_BYTES = 256 * 1024 * 1024;
/** How far one step may go past the bytes already read, beyond what the parser knows it needs:
 * an estimate is a guess (a crafted header can make it absurd), so it is trusted only this far.
 * Reading on from an open stream costs bytes, not a request: small steps. */
const STREAM_STEP = { fraction: 0.5, bytes: 4 * 1024 * 1024 };
const REQUEST_STEP = { fraction: 15, bytes: 16 * 1024 * 1024 };
/** The least a stream is read on by between two parses. */
const STREAM_MIN_STEP = 128 * 1024;

/**
 * Reads `firstRead` bytes, then calls `parse(prefix)` until it returns something other than
 * `{ needMore, estimate? }`, each time fetching only the missing suffix up to
 * max(needMore, estimate + slack) (a stream: halfway to the estimate), straight into the grown
 * buffer (no second copy). `parse`
 * may return a promise (the wasm module loads while the first read is in flight). `what`
 * names the header in errors. The read never goes past `options.maxHeaderBytes` (default
 * MAX_HEADER_BYTES, or `limit` when lower) nor the file, and an estimate is trusted only a
 * step at a time (STREAM_STEP, REQUEST_STEP), so a crafted header cannot make it fetch more
 * than about one and a half times its own length.
 * @template {object} T
 * @param {Source} source
 * @param {Pick<OpenOptions, 'signal' | 'onProgress' | 'maxHeaderBytes'>} options
 * @param {number} firstRead
 * @param {(prefix: Uint8Array) => T | NeedMore | Promise<T | NeedMore>} parse
 * @param {string} what
 * @param {number} [limit]
 * @returns {Promise<T>}
 */
export async function readGrowingPrefix(source, options, firstRead, parse, what, limit = Infinity) {
  const { signal, onProgress } = options;
  const maxHeader = Math.min(limit, options.maxHeaderBytes ?? MAX_HEADER_BYTES);
  if (!(maxHeader > 0)) throw new TypeError(`gguf-lens: maxHeaderBytes must be a positive number, not ${options.maxHeaderBytes}`);
  let loaded = 0;
  /** @type {OnBytes} */
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
      throw new Error(`gguf-lens: ${errorMessage(err)}`, { cause: err });
    }
    if (!isNeedMore(result)) {
      // A Range-ignoring server's stream is not needed past the header.
      source.release?.();
      return result;
    }
    if (result.needMore > maxHeader) {
      throw new Error(`gguf-lens: ${what} needs at least ${result.needMore} bytes, more than maxHeaderBytes (${maxHeader})`);
    }
    const cap = Math.min(maxHeader, source.byteLength ?? Infinity);
    const step = source.streaming ? STREAM_STEP : REQUEST_STEP;
    const trusted = prefix.length + Math.max(prefix.length * step.fraction, step.bytes);
    const guess = result.estimate ?? 0;
    // A request costs a round trip, so it reads past the guess by a slack. A stream's bytes come
    // whatever is asked, and the read ends where a parse first succeeds: a stream parses again
    // halfway to the guess, so a high guess costs half its error (and a low one a short step).
    const estimate = source.streaming
      ? prefix.length + Math.max(0, guess - prefix.length) / 2
      : guess * (1 + SLACK_FRACTION) + SLACK_BYTES;
    const least = prefix.length + (source.streaming ? STREAM_MIN_STEP : 1);
    let next = Math.ceil(Math.max(result.needMore, Math.min(estimate, trusted), least));
    next = Math.min(next, cap);
    if (next <= prefix.length) {
      if (cap === maxHeader && next < result.needMore) {
        throw new Error(`gguf-lens: ${what} is longer than maxHeaderBytes (${maxHeader})`);
      }
      throw new Error(`gguf-lens: ${what} needs ${result.needMore} bytes but the file has ${source.byteLength}`);
    }
    if (signal?.aborted) throw signal.reason;
    const grown = new Uint8Array(next);
    grown.set(prefix, 0);
    const room = grown.subarray(prefix.length);
    const suffix = await source.read(prefix.length, next, signal, progress, room);
    if (suffix.length === 0) throw new Error(`gguf-lens: reading the ${what}: the source gave no bytes at byte ${prefix.length}`);
    // A source that ignores `into` (a user's own) returns its own bytes: copy them in.
    if (suffix.buffer !== room.buffer || suffix.byteOffset !== room.byteOffset) room.set(suffix);
    prefix = grown.subarray(0, prefix.length + suffix.length);
  }
}

/** @typedef {{ needMore: number, estimate?: number }} NeedMore a parser's ask for more bytes */

/**
 * @param {object} result
 * @returns {result is NeedMore}
 */
function isNeedMore(result) {
  return 'needMore' in result;
}
