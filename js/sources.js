// Byte sources: one shape for every input. A source is
//   { byteLength: number | undefined, read(start, end, signal, onBytes, into) → Promise<Uint8Array>,
//     stats: { requests, bytes }, close() }
// byteLength may be unknown for a URL until its first response. `read` returns exactly
// end - start bytes (end clamped to byteLength) or throws; given `into` (a Uint8Array of at
// least that length) it fills and returns `into`'s first bytes instead of allocating, so a
// growing header is read straight into its final buffer.

/** @import { OnBytes, Source } from './internal.js' */
/** @import { OpenOptions } from './types.js' */

const isNode = typeof process !== 'undefined' && !!process.versions?.node;

/** Node's fs/promises, loaded only on Node paths. The specifier is a variable and the import
 * marked ignored so that bundlers (webpack, Vite, esbuild) leave it alone in browser builds. */
const NODE_FS = 'node:fs/promises';
/** @returns {Promise<typeof import('node:fs/promises')>} @internal */
export function importNodeFs() {
  return import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_FS);
}

/** A transport failure (HTTP status, dropped connection, truncated body, missing size);
 * `retryable` tells the retry loop whether to try again. */
export class SourceError extends Error {
  /** Whether trying again may succeed (a 5xx, 429, dropped connection, truncated body).
   * @readonly @type {boolean} */
  retryable;

  /**
   * @internal
   * @param {string} message
   * @param {{ retryable?: boolean, cause?: unknown }} [options]
   */
  constructor(message, { retryable = false, cause } = {}) {
    super(message, { cause });
    this.name = 'SourceError';
    this.retryable = retryable;
  }
}

/**
 * The error an aborted signal rejects with: its reason, else an AbortError.
 * @param {AbortSignal | undefined} signal
 * @returns {unknown}
 * @internal
 */
export function abortError(signal) {
  return signal?.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}

/**
 * @param {number} ms
 * @param {AbortSignal} [signal]
 * @returns {Promise<void>}
 */
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(abortError(signal));
    }, { once: true });
  });
}

/** @returns {import('./internal.js').SourceStats} */
function countingStats() {
  return { requests: 0, bytes: 0 };
}

/**
 * Turns any supported input into a source.
 * @param {unknown} input
 * @param {OpenOptions} [options]
 * @returns {Promise<Source>}
 */
export async function toSource(input, options = {}) {
  if (typeof input === 'string' || input instanceof URL) {
    const text = String(input);
    if (/^(https?|blob|data):/i.test(text) || !isNode) return urlSource(text, options);
    if (/^file:/i.test(text)) return nodeFileSource(new URL(text), options);
    return nodeFileSource(text, options);
  }
  if (typeof Blob !== 'undefined' && input instanceof Blob) return blobSource(input);
  if (input instanceof ArrayBuffer) return bufferSource(new Uint8Array(input));
  if (ArrayBuffer.isView(input)) {
    return bufferSource(new Uint8Array(input.buffer, input.byteOffset, input.byteLength));
  }
  const object = /** @type {Record<string, any> | null | undefined} */ (input);
  if (object && typeof object.read === 'function' && 'byteLength' in object && object.stats) {
    return /** @type {Source} */ (object); // already a source
  }
  if (object && typeof object.slice === 'function' && Number.isFinite(object.byteLength ?? object.size)) {
    return sliceableSource(/** @type {Sliceable} */ (object));
  }
  throw new TypeError(
    'gguf-lens: a source is a URL, File/Blob, ArrayBuffer/Uint8Array, Node file path, ' +
      'or an object with byteLength and slice(start, end)'
  );
}

/**
 * `into`'s first `length` bytes, or a new array when no destination is given.
 * @param {Uint8Array | undefined} into
 * @param {number} length
 */
function destination(into, length) {
  return into ? into.subarray(0, length) : new Uint8Array(length);
}

/**
 * `bytes`, copied into `into` when a destination is given.
 * @param {Uint8Array} bytes
 * @param {Uint8Array} [into]
 * @internal
 */
export function deliver(bytes, into) {
  if (!into) return bytes;
  into.set(bytes);
  return into.subarray(0, bytes.byteLength);
}

/**
 * @param {{ byteLength: number | undefined }} source
 * @param {number} start
 * @param {number} end
 */
function clampEnd(source, start, end) {
  if (!(start >= 0) || !(end >= start)) throw new RangeError(`bad byte range ${start}..${end}`);
  return source.byteLength === undefined ? end : Math.min(end, source.byteLength);
}

/**
 * @param {Uint8Array} bytes
 * @returns {Source}
 */
function bufferSource(bytes) {
  /** @type {Source} */
  const source = {
    byteLength: bytes.byteLength,
    stats: countingStats(),
    async read(start, end, _signal, _onBytes, into) {
      end = clampEnd(source, start, end);
      source.stats.requests++;
      source.stats.bytes += end - start;
      return deliver(bytes.subarray(start, end), into);
    },
    close() {},
  };
  return source;
}

/**
 * @param {Blob} blob
 * @returns {Source}
 */
function blobSource(blob) {
  /** @type {Source} */
  const source = {
    byteLength: blob.size,
    stats: countingStats(),
    async read(start, end, signal, _onBytes, into) {
      end = clampEnd(source, start, end);
      if (signal?.aborted) throw abortError(signal);
      source.stats.requests++;
      const bytes = new Uint8Array(await blob.slice(start, end).arrayBuffer());
      source.stats.bytes += bytes.byteLength;
      return deliver(bytes, into);
    },
    close() {},
  };
  return source;
}

/**
 * @param {unknown} part
 * @returns {Promise<Uint8Array>}
 */
async function toBytes(part) {
  part = await part;
  if (part instanceof Uint8Array) return part;
  if (part instanceof ArrayBuffer) return new Uint8Array(part);
  if (ArrayBuffer.isView(part)) return new Uint8Array(part.buffer, part.byteOffset, part.byteLength);
  if (typeof Blob !== 'undefined' && part instanceof Blob) return new Uint8Array(await part.arrayBuffer());
  throw new TypeError('gguf-lens: slice() must give bytes (Uint8Array, ArrayBuffer or Blob)');
}

/** @typedef {{ byteLength?: number, size?: number, slice(start: number, end: number): unknown }} Sliceable */

/**
 * @param {Sliceable} object
 * @returns {Source}
 */
function sliceableSource(object) {
  /** @type {Source} */
  const source = {
    byteLength: object.byteLength ?? object.size,
    stats: countingStats(),
    async read(start, end, signal, _onBytes, into) {
      end = clampEnd(source, start, end);
      if (signal?.aborted) throw abortError(signal);
      source.stats.requests++;
      const bytes = await toBytes(object.slice(start, end));
      if (bytes.byteLength !== end - start) {
        throw new SourceError(`slice(${start}, ${end}) gave ${bytes.byteLength} bytes, expected ${end - start}`);
      }
      source.stats.bytes += bytes.byteLength;
      return deliver(bytes, into);
    },
    close() {},
  };
  return source;
}

/**
 * @param {string | URL} path
 * @param {OpenOptions} _options
 * @returns {Promise<Source>}
 */
async function nodeFileSource(path, _options) {
  const fs = await importNodeFs();
  const handle = await fs.open(path, 'r');
  const { size } = await handle.stat();
  /** @type {Source} */
  const source = {
    byteLength: size,
    stats: countingStats(),
    async read(start, end, signal, _onBytes, into) {
      end = clampEnd(source, start, end);
      if (signal?.aborted) throw abortError(signal);
      source.stats.requests++;
      const bytes = destination(into, end - start);
      let done = 0;
      while (done < bytes.length) {
        const { bytesRead } = await handle.read(bytes, done, bytes.length - done, start + done);
        if (bytesRead === 0) throw new SourceError(`${path}: file ended at byte ${start + done}`);
        done += bytesRead;
      }
      source.stats.bytes += done;
      return bytes;
    },
    /** Reads [start, end) into `memory` (a WebAssembly.Memory) at byte `at`: straight into
     * wasm memory, no JS buffer. The view is taken afresh per read since growing the memory
     * replaces its buffer (in place, so a read under way still lands right). */
    async readToMemory(start, end, memory, at) {
      end = clampEnd(source, start, end);
      source.stats.requests++;
      let done = 0;
      while (start + done < end) {
        const view = new Uint8Array(memory.buffer, at + done, end - start - done);
        const { bytesRead } = await handle.read(view, 0, view.length, start + done);
        if (bytesRead === 0) throw new SourceError(`${path}: file ended at byte ${start + done}`);
        done += bytesRead;
      }
      source.stats.bytes += done;
      return done;
    },
    close() {
      return handle.close();
    },
  };
  return source;
}

const TRANSIENT_STATUS = new Set([408, 425, 429, 500, 502, 503, 504]);

/** No byte (nor response) for this long fails a read: a stalled server cannot hang a call. @internal */
export const STALL_TIMEOUT_MS = 30_000;
/** Redirects followed (by hand in Node, so that headers stay on the opened origin). */
const MAX_REDIRECTS = 10;
/** Requests in flight when opening the shards of a split model or a sharded checkpoint. @internal */
export const OPEN_CONCURRENCY = 4;

/** Waits for `promise`, failing first if `signal` aborts or `ms` pass with no answer. The
 * promise is always given handlers, so a later rejection of it is never unhandled. */
/**
 * @template T
 * @param {Promise<T>} promise
 * @param {AbortSignal | undefined} signal
 * @param {number} ms
 * @param {() => unknown} stalled the error when `ms` pass
 * @returns {Promise<T>}
 * @internal
 */
export function waitFor(promise, signal, ms, stalled) {
  return new Promise((resolve, reject) => {
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    const finish = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      finish();
      reject(abortError(signal));
    };
    promise.then((value) => { finish(); resolve(value); }, (err) => { finish(); reject(err); });
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    if (ms > 0 && Number.isFinite(ms)) timer = setTimeout(() => { finish(); reject(stalled()); }, ms);
  });
}

/**
 * The stall timeout from options: a positive number of ms, or 0 / Infinity for none.
 * @param {{ stallTimeoutMs?: unknown }} options
 * @internal
 */
export function stallTimeoutOf(options) {
  const ms = options.stallTimeoutMs ?? STALL_TIMEOUT_MS;
  if (!(typeof ms === 'number' && ms >= 0)) throw new TypeError(`gguf-lens: stallTimeoutMs must be a number of ms >= 0, not ${ms}`);
  return ms;
}

/** @param {string} url */
function originOf(url) {
  return new URL(url, globalThis.location?.href).origin;
}

/**
 * `headers` (a Headers, an array of pairs or a plain object) as a plain object.
 * @param {HeadersInit | undefined} headers
 */
function plainHeaders(headers) {
  /** @type {Record<string, string>} */
  const out = {};
  if (!headers) return out;
  const entries = typeof headers.entries === 'function' && !Array.isArray(headers) ? headers.entries()
    : Array.isArray(headers) ? headers : Object.entries(headers);
  for (const [name, value] of entries) out[name] = value;
  return out;
}

/**
 * fetch() that sends the caller's `headers` (a token) only to the origin of `url`, however the
 * server redirects: redirects are followed by hand (`redirect: 'manual'`), and once a hop leaves
 * that origin the headers are dropped for it and every hop after. Browsers hide a manual
 * redirect's target (an opaque response); there the request is repeated with `redirect:
 * 'follow'` and only `Authorization`, which the Fetch standard removes on a cross-origin redirect,
 * and `state.follow` remembers it so later requests skip the manual try. `extra` headers (Range,
 * Accept) go on every hop.
 * @param {typeof fetch} fetchFn
 * @param {string} url
 * @param {{ headers?: HeadersInit, extra?: Record<string, string>, signal?: AbortSignal, state?: { follow?: boolean } }} init
 * @returns {Promise<Response>}
 * @internal
 */
export async function guardedFetch(fetchFn, url, { headers, extra = {}, signal, state = {} }) {
  const own = plainHeaders(headers);
  const names = Object.keys(own);
  if (names.length === 0) return fetchFn(url, { headers: extra, signal });
  const authOnly = Object.fromEntries(Object.entries(own).filter(([name]) => name.toLowerCase() === 'authorization'));
  if (state.follow) return fetchFn(url, { headers: { ...authOnly, ...extra }, signal, redirect: 'follow' });
  const origin = originOf(url);
  let at = url;
  let keep = true;
  for (let hop = 0; ; hop++) {
    const response = await fetchFn(at, { headers: keep ? { ...own, ...extra } : extra, signal, redirect: 'manual' });
    if (response.type === 'opaqueredirect') {
      state.follow = true;
      return fetchFn(at, { headers: { ...(keep ? authOnly : {}), ...extra }, signal, redirect: 'follow' });
    }
    const location = response.status >= 300 && response.status < 400 ? response.headers.get('location') : null;
    if (location === null) return response;
    response.body?.cancel?.().catch?.(() => {});
    if (hop >= MAX_REDIRECTS) throw new SourceError(`${url}: more than ${MAX_REDIRECTS} redirects`);
    at = new URL(location, at).href;
    if (keep && originOf(at) !== origin) keep = false;
  }
}

/**
 * Why `name` (read from a file: a shard, config or split name) is not a plain file name, or
 * null when it is one: the core's rule (src/safetensors/index.rs), so Rust paths and JS URLs
 * agree. Refused: the empty name, a name of dots only (`.`, `..`), a separator (`/`, `\`), a
 * colon (a URL scheme as in `https:host:port`, a drive as in `C:x`), `?` and `#` (a URL's query
 * and fragment), a percent escape (`%2f`, `%2e%2e`: a URL would decode it), control characters.
 */
/** @param {unknown} name @internal */
export function plainNameProblem(name) {
  if (typeof name !== 'string' || name === '') return 'it is empty';
  if (name.length > 255) return 'it is longer than 255 characters';
  if (/^\.+$/.test(name)) return 'it is a dot segment';
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) return 'it holds a control character';
  if (/[/\\]/.test(name)) return 'it holds a path separator';
  if (/^[A-Za-z]:/.test(name)) return 'it starts with a drive';
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(name)) return 'it starts with a URL scheme';
  if (name.includes(':')) return 'it holds a colon';
  if (/[?#]/.test(name)) return 'it holds a URL query or fragment';
  if (name.includes('%')) return 'it holds a percent escape';
  return null;
}

/**
 * A name for an error message: quoted, escaped, and cut short.
 * @param {unknown} name
 * @internal
 */
export function quoteName(name) {
  const text = JSON.stringify(String(name));
  return text.length > 120 ? `${text.slice(0, 117)}..."` : text;
}

/**
 * The file `name` (read from a file) beside `base` (a URL or Node path the user gave), or a
 * thrown Error naming it: only a plain file name, resolved in base's own directory and origin.
 * @param {string} base
 * @param {string} name
 * @param {string} what what the name is, for the error ("shard", "config")
 * @internal
 */
export function siblingOf(base, name, what) {
  const problem = plainNameProblem(name);
  if (problem) {
    throw new Error(`gguf-lens: ${base}: ${what} name ${quoteName(name)} refused: ${problem} ` +
      '(a name from a file must be a plain file name beside it)');
  }
  const text = String(base);
  if (isNode && !/^(https?|blob|data|file):/i.test(text)) return text.slice(0, text.search(/[^/\\]*$/)) + name;
  const from = new URL(text, globalThis.location?.href);
  const url = new URL(encodeURIComponent(name), from);
  const dir = (/** @type {URL} */ u) => u.pathname.slice(0, u.pathname.lastIndexOf('/') + 1);
  if (url.origin !== from.origin || dir(url) !== dir(from)) {
    throw new Error(`gguf-lens: ${base}: ${what} name ${quoteName(name)} refused: it resolves to ${url.href}, outside ${from.origin}${dir(from)}`);
  }
  return url.href;
}

/**
 * Opens `items` with `openItem(item, index, signal)`, at most `limit` at a time, in order. On
 * the first failure no more are started, those under way are aborted, every one opened is
 * closed, and that first error is thrown.
 * @template I
 * @template {{ close(): unknown }} M
 * @param {I[]} items
 * @param {(item: I, index: number, signal: AbortSignal) => Promise<M>} openItem
 * @param {{ limit?: number, signal?: AbortSignal }} [options]
 * @returns {Promise<M[]>}
 * @internal
 */
export async function openBounded(items, openItem, { limit = OPEN_CONCURRENCY, signal } = {}) {
  const inner = new AbortController();
  const onAbort = () => inner.abort(abortError(signal));
  if (signal?.aborted) throw abortError(signal);
  signal?.addEventListener('abort', onAbort, { once: true });
  /** @type {(M | null)[]} */
  const opened = new Array(items.length).fill(null);
  let next = 0;
  /** @type {{ err: unknown } | null} */
  let failure = null;
  const worker = async () => {
    while (!failure && next < items.length) {
      const i = next++;
      try {
        opened[i] = await openItem(items[i], i, inner.signal);
      } catch (err) {
        if (!failure) {
          failure = { err: signal?.aborted ? abortError(signal) : err };
          inner.abort(failure.err);
        }
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  if (failure) {
    await Promise.all(opened.map((m) => m && Promise.resolve().then(() => m.close()).catch(() => {})));
    throw /** @type {{ err: unknown }} */ (failure).err;
  }
  return /** @type {M[]} */ (opened);
}

/**
 * A URL read with HTTP Range requests. Every 206 is checked: its Content-Range must be the
 * range asked for (start, end, and the total once known). A server that ignores Range (200
 * with the whole body) is found once and then read forward only, as one stream: the stream
 * stays open for a following read that continues where the last one stopped, and a read
 * behind it fails (it would download the file again from byte 0). No byte for
 * `stallTimeoutMs` fails a read; `signal` aborts it in any state, a stalled one included.
 * @param {string} url
 * @param {OpenOptions} options
 * @returns {Source}
 */
function urlSource(url, options) {
  const fetchFn = options.fetch ?? globalThis.fetch;
  if (typeof fetchFn !== 'function') throw new TypeError('gguf-lens: no fetch() available');
  const retries = options.retries ?? 3;
  const retryDelay = options.retryDelayMs ?? 200;
  const stallMs = stallTimeoutOf(options);
  /** @type {{ follow?: boolean }} */
  const redirects = {};
  /** An open body stream — a Range-ignoring server's whole body, or an open-ended range asked
   * for by streamNextRead() — read sequentially: reader + position + leftovers.
   * @type {{ reader: ReadableStreamDefaultReader<Uint8Array>, position: number, leftover: Uint8Array | null, abort: AbortController } | null} */
  let stream = null;
  /** The next range request asks for everything from its start (`bytes=start-`). */
  let openEnded = false;
  /** Where the last read of a Range-ignoring server ended: reads before it are refused. */
  let forwardFrom = 0;
  /** Reads that use the stream run one at a time.
   * @type {Promise<unknown>} */
  let queue = Promise.resolve();

  const stalled = (/** @type {number} */ at) => () => new SourceError(`${url}: no bytes for ${stallMs} ms at byte ${at} ` +
    `(stallTimeoutMs ${stallMs})`);

  /** @type {Source & { streamNextRead(): void, release(): void, rangeIgnored: boolean }} */
  const source = {
    byteLength: undefined,
    rangeIgnored: false,
    stats: countingStats(),
    /** Whether reading on costs bytes of an open stream rather than a new request. */
    get streaming() {
      return openEnded || stream !== null;
    },
    read(start, end, signal, onBytes, into) {
      if (!(openEnded || stream || source.rangeIgnored)) return readNow(start, end, signal, onBytes, into);
      const run = queue.then(() => readNow(start, end, signal, onBytes, into));
      queue = run.catch(() => {});
      return run;
    },
    /**
     * Makes the next read one open-ended request (`Range: bytes=start-`) whose body stays open:
     * reads that go on from where it stopped are served from it, with no new request, until
     * release(). For a header read in growing steps: one request, cancelled once it is whole.
     */
    streamNextRead() {
      openEnded = true;
    },
    /** Cancels an open body stream once the header is read. */
    release() {
      closeStream();
    },
    close() {
      closeStream();
    },
  };

  /**
   * @param {number} start
   * @param {number} end
   * @param {AbortSignal} [signal]
   * @param {OnBytes} [onBytes]
   * @param {Uint8Array} [into]
   * @returns {Promise<Uint8Array>}
   */
  async function readNow(start, end, signal, onBytes, into) {
    end = clampEnd(source, start, end);
    if (signal?.aborted) throw abortError(signal);
    if (end === start) return destination(into, 0);
    for (let attempt = 0; ; attempt++) {
      try {
        if (stream && stream.position <= start) return await readStream(start, end, signal, onBytes, into);
        if (source.rangeIgnored && start < forwardFrom) {
          throw new SourceError(`${url} ignores Range requests (HTTP 200): bytes ${start}-${end - 1} are behind ` +
            `byte ${forwardFrom}, and this server is read forward only (it would send the file again from byte 0)`);
        }
        return await readRange(start, end, signal, onBytes, into);
      } catch (err) {
        if (signal?.aborted) throw abortError(signal);
        if (!(err instanceof SourceError && err.retryable) || attempt >= retries) throw err;
        await sleep(retryDelay * 2 ** attempt, signal);
      }
    }
  }

  function closeStream() {
    if (stream) {
      stream.reader.cancel().catch(() => {});
      stream.abort.abort();
      stream = null;
    }
  }

  /**
   * @param {number} start
   * @param {number} end
   * @param {AbortSignal} [signal]
   * @param {OnBytes} [onBytes]
   * @param {Uint8Array} [into]
   * @returns {Promise<Uint8Array>}
   */
  async function readRange(start, end, signal, onBytes, into) {
    closeStream();
    const abort = new AbortController();
    /** @type {Response} */
    let response;
    const streamed = openEnded;
    openEnded = false;
    const range = streamed ? `bytes=${start}-` : `bytes=${start}-${end - 1}`;
    try {
      source.stats.requests++;
      response = await waitFor(
        guardedFetch(fetchFn, url, { headers: options.headers, extra: { Range: range }, signal: abort.signal, state: redirects }),
        signal, stallMs, stalled(start));
    } catch (err) {
      abort.abort();
      if (signal?.aborted) throw abortError(signal);
      if (err instanceof SourceError) throw err;
      throw new SourceError(`network error fetching ${url} (bytes ${start}-${end - 1}): ${errorMessage(err)} ` +
        '(offline, DNS, or blocked by CORS?)', { retryable: true, cause: err });
    }
    try {
      if (response.status === 206) {
        const stop = checkContentRange(response, start, end, streamed);
        if (streamed) {
          stream = { reader: bodyOf(response).getReader(), position: start, leftover: null, abort };
          return await readStream(start, Math.min(end, stop), signal, onBytes, into);
        }
        const expected = stop - start;
        const bytes = await readBody(response, start, expected, signal, onBytes, into, abort);
        if (bytes.byteLength < expected) {
          throw new SourceError(`truncated response from ${url}: got ${bytes.byteLength} of ${expected} bytes ` +
            `at byte ${start}`, { retryable: true });
        }
        return bytes;
      }
      if (response.status === 200) {
        const length = response.headers.get('content-length');
        const size = length === null ? undefined : Number(length);
        if (source.byteLength === undefined) {
          if (!Number.isSafeInteger(size)) {
            throw new SourceError(`${url} ignores Range requests and sends no Content-Length: ` +
              'the file size is unknown');
          }
          source.byteLength = size;
        } else if (size !== undefined && size !== source.byteLength) {
          throw new SourceError(`${url}: HTTP 200 of ${size} bytes for a file of ${source.byteLength} bytes`);
        }
        source.rangeIgnored = true;
        stream = { reader: bodyOf(response).getReader(), position: 0, leftover: null, abort };
        return await readStream(start, Math.min(end, /** @type {number} */ (source.byteLength)), signal, onBytes, into);
      }
      if (response.status === 416) {
        learnSizeFrom416(response);
        throw new SourceError(`${url}: range ${start}-${end - 1} not satisfiable (HTTP 416)` +
          (source.byteLength !== undefined ? `; the file is ${source.byteLength} bytes` : ''));
      }
      throw new SourceError(`${url}: HTTP ${response.status} ${response.statusText ?? ''}`.trim(),
        { retryable: TRANSIENT_STATUS.has(response.status) });
    } catch (err) {
      if (!stream || stream.abort !== abort) {
        response.body?.cancel?.().catch?.(() => {});
        abort.abort();
      }
      throw err;
    }
  }

  /**
   * Checks a 206's Content-Range against the range asked ([start, end), or from start on when
   * open-ended) and learns the file size from it; returns where the body ends.
   * @param {Response} response
   * @param {number} start
   * @param {number} end
   * @param {boolean} openEndedAsk
   */
  function checkContentRange(response, start, end, openEndedAsk) {
    const text = response.headers.get('content-range');
    const asked = openEndedAsk ? `bytes ${start}-` : `bytes ${start}-${end - 1}`;
    const m = /^\s*bytes\s+(\d+)-(\d+)\/(\d+|\*)\s*$/i.exec(text ?? '');
    if (!m) {
      throw new SourceError(`${url}: HTTP 206 for ${asked} with ${text === null ? 'no Content-Range' : `Content-Range ${quoteName(text)}, which is not one range`}`);
    }
    const first = Number(m[1]);
    const last = Number(m[2]);
    const total = m[3] === '*' ? undefined : Number(m[3]);
    const mismatch = (/** @type {string} */ why) => new SourceError(`${url}: HTTP 206 Content-Range ${quoteName(text)} does not match the range asked (${asked}): ${why}`);
    if (total !== undefined && source.byteLength !== undefined && total !== source.byteLength) {
      throw mismatch(`the file was ${source.byteLength} bytes`);
    }
    const size = total ?? source.byteLength;
    if (size === undefined) throw new SourceError(`${url}: 206 response without a Content-Range total: the file size is unknown`);
    if (first !== start) throw mismatch(`it starts at byte ${first}`);
    const stop = openEndedAsk ? size : Math.min(end, size);
    if (last + 1 !== stop) throw mismatch(`it ends at byte ${last}, not ${stop - 1}`);
    const length = response.headers.get('content-length');
    if (length !== null && Number(length) !== stop - start) {
      throw mismatch(`its Content-Length is ${length}, not ${stop - start}`);
    }
    source.byteLength = size;
    return stop;
  }

  /** @param {Response} response */
  function learnSizeFrom416(response) {
    const match = /^\s*bytes\s+\*\/(\d+)\s*$/i.exec(response.headers.get('content-range') ?? '');
    if (match && source.byteLength === undefined) source.byteLength = Number(match[1]);
  }

  /** The next chunk of `reader`, bounded by the stall timeout and the caller's signal; on
   * either the request is aborted.
   * @param {ReadableStreamDefaultReader<Uint8Array>} reader
   * @param {AbortSignal | undefined} signal
   * @param {number} at
   * @param {AbortController} abort
   */
  async function nextChunk(reader, signal, at, abort) {
    try {
      return await waitFor(reader.read(), signal, stallMs, stalled(at));
    } catch (err) {
      if (signal?.aborted || (err instanceof SourceError && !err.retryable)) {
        reader.cancel().catch(() => {});
        abort.abort();
        throw err;
      }
      throw new SourceError(`connection to ${url} dropped at byte ${at}: ${errorMessage(err)}`, { retryable: true, cause: err });
    }
  }

  /**
   * @param {Response} response
   * @param {number} start
   * @param {number} expected
   * @param {AbortSignal | undefined} signal
   * @param {OnBytes | undefined} onBytes
   * @param {Uint8Array | undefined} into
   * @param {AbortController} abort
   */
  async function readBody(response, start, expected, signal, onBytes, into, abort) {
    const out = destination(into, expected);
    let filled = 0;
    const reader = bodyOf(response).getReader();
    try {
      while (filled < expected) {
        const chunk = await nextChunk(reader, signal, start + filled, abort);
        if (chunk.done) break;
        const take = Math.min(chunk.value.byteLength, expected - filled);
        out.set(chunk.value.subarray(0, take), filled);
        filled += take;
        source.stats.bytes += chunk.value.byteLength;
        if (take) onBytes?.(take);
      }
      if (filled === expected) await reader.cancel().catch(() => {});
    } finally {
      reader.releaseLock?.();
    }
    return out.subarray(0, filled);
  }

  /**
   * Reads [start, end) from the open stream, skipping bytes before start.
   * @param {number} start
   * @param {number} end
   * @param {AbortSignal | undefined} signal
   * @param {OnBytes | undefined} onBytes
   * @param {Uint8Array | undefined} into
   */
  async function readStream(start, end, signal, onBytes, into) {
    const s = /** @type {NonNullable<typeof stream>} */ (stream);
    const out = destination(into, end - start);
    let filled = 0;
    const take = (/** @type {Uint8Array} */ chunk) => {
      // chunk covers [s.position, s.position + chunk.length)
      const from = Math.max(0, start - s.position);
      const to = Math.min(chunk.byteLength, end - s.position);
      if (to > from) {
        out.set(chunk.subarray(from, to), s.position + from - start);
        filled += to - from;
        onBytes?.(to - from);
      }
      const consumed = Math.min(Math.max(to, from), chunk.byteLength);
      s.leftover = consumed < chunk.byteLength ? chunk.subarray(consumed) : null;
      s.position += consumed;
    };
    if (s.leftover) {
      const chunk = s.leftover;
      s.leftover = null;
      take(chunk);
    }
    while (filled < out.length) {
      let chunk;
      try {
        chunk = await nextChunk(s.reader, signal, s.position, s.abort);
      } catch (err) {
        if (stream === s) stream = null;
        throw err;
      }
      if (chunk.done) {
        if (stream === s) stream = null;
        throw new SourceError(`truncated response from ${url}: body ended at byte ${s.position}, ` +
          `expected ${source.byteLength}`, { retryable: true });
      }
      source.stats.bytes += chunk.value.byteLength;
      take(chunk.value);
    }
    if (source.rangeIgnored) forwardFrom = Math.max(forwardFrom, end);
    return out;
  }

  return source;
}

/** Largest JSON text fetched beside a model (a shard index, a config). @internal */
export const MAX_TEXT_BYTES = 64 * 1024 * 1024;

/**
 * The text at `url` (a shard index or config): headers only to its origin, at most
 * MAX_TEXT_BYTES, and the stall timeout and signal as for byte reads. Returns
 * { status, text } (text undefined when the status is not 2xx).
 * @param {string} url
 * @param {OpenOptions} options
 * @returns {Promise<{ status: number, text: string | undefined }>}
 * @internal
 */
export async function fetchTextBounded(url, options) {
  const fetchFn = options.fetch ?? globalThis.fetch;
  if (typeof fetchFn !== 'function') throw new TypeError('gguf-lens: no fetch() available');
  const stallMs = stallTimeoutOf(options);
  const signal = options.signal;
  const abort = new AbortController();
  const stalled = (/** @type {number} */ at) => () => new SourceError(`${url}: no bytes for ${stallMs} ms at byte ${at} (stallTimeoutMs ${stallMs})`);
  try {
    const response = await waitFor(guardedFetch(fetchFn, url, { headers: options.headers, signal: abort.signal }), signal, stallMs, stalled(0));
    if (!response.ok) {
      response.body?.cancel?.().catch?.(() => {});
      return { status: response.status, text: undefined };
    }
    if (!response.body?.getReader) return { status: response.status, text: await waitFor(response.text(), signal, stallMs, stalled(0)) };
    const reader = response.body.getReader();
    /** @type {Uint8Array[]} */
    const parts = [];
    let length = 0;
    for (;;) {
      const chunk = await waitFor(reader.read(), signal, stallMs, stalled(length));
      if (chunk.done) break;
      length += chunk.value.byteLength;
      if (length > MAX_TEXT_BYTES) {
        reader.cancel().catch(() => {});
        throw new SourceError(`${url}: more than ${MAX_TEXT_BYTES} bytes, too long for a shard index or config`);
      }
      parts.push(chunk.value);
    }
    const bytes = new Uint8Array(length);
    let at = 0;
    for (const part of parts) {
      bytes.set(part, at);
      at += part.byteLength;
    }
    return { status: response.status, text: new TextDecoder().decode(bytes) };
  } catch (err) {
    abort.abort();
    throw err;
  }
}

/**
 * A response's body stream (a fetch that is not the platform's may give none: a TypeError then,
 * as reading `null` would throw).
 * @param {Response} response
 */
function bodyOf(response) {
  if (!response.body) throw new TypeError('gguf-lens: the response has no body');
  return response.body;
}

/**
 * The message of a thrown value (an Error's, else the value as text).
 * @param {unknown} err
 * @returns {string}
 * @internal
 */
export function errorMessage(err) {
  return String(/** @type {{ message?: unknown } | null | undefined} */ (err)?.message ?? err);
}
