// Byte sources: one shape for every input. A source is
//   { byteLength: number | undefined, read(start, end, signal, onBytes, into) → Promise<Uint8Array>,
//     stats: { requests, bytes }, close() }
// byteLength may be unknown for a URL until its first response. `read` returns exactly
// end - start bytes (end clamped to byteLength) or throws; given `into` (a Uint8Array of at
// least that length) it fills and returns `into`'s first bytes instead of allocating, so a
// growing header is read straight into its final buffer.

const isNode = typeof process !== 'undefined' && !!process.versions?.node;

/** Node's fs/promises, loaded only on Node paths. The specifier is a variable and the import
 * marked ignored so that bundlers (webpack, Vite, esbuild) leave it alone in browser builds. */
const NODE_FS = 'node:fs/promises';
export function importNodeFs() {
  return import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_FS);
}

/** Thrown for transport problems; `retryable` tells the retry loop whether to try again. */
export class SourceError extends Error {
  constructor(message, { retryable = false, cause } = {}) {
    super(message, { cause });
    this.name = 'SourceError';
    this.retryable = retryable;
  }
}

function abortError(signal) {
  return signal?.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}

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

function countingStats() {
  return { requests: 0, bytes: 0 };
}

/**
 * Turns any supported input into a source.
 * @param {unknown} input
 * @param {object} [options]
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
  if (input && typeof input.read === 'function' && 'byteLength' in input && input.stats) {
    return input; // already a source
  }
  if (input && typeof input.slice === 'function' && Number.isFinite(input.byteLength ?? input.size)) {
    return sliceableSource(input);
  }
  throw new TypeError(
    'gguf-lens: a source is a URL, File/Blob, ArrayBuffer/Uint8Array, Node file path, ' +
      'or an object with byteLength and slice(start, end)'
  );
}

/** `into`'s first `length` bytes, or a new array when no destination is given. */
function destination(into, length) {
  return into ? into.subarray(0, length) : new Uint8Array(length);
}

/** `bytes`, copied into `into` when a destination is given. */
export function deliver(bytes, into) {
  if (!into) return bytes;
  into.set(bytes);
  return into.subarray(0, bytes.byteLength);
}

function clampEnd(source, start, end) {
  if (!(start >= 0) || !(end >= start)) throw new RangeError(`bad byte range ${start}..${end}`);
  return source.byteLength === undefined ? end : Math.min(end, source.byteLength);
}

function bufferSource(bytes) {
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

function blobSource(blob) {
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

async function toBytes(part) {
  part = await part;
  if (part instanceof Uint8Array) return part;
  if (part instanceof ArrayBuffer) return new Uint8Array(part);
  if (ArrayBuffer.isView(part)) return new Uint8Array(part.buffer, part.byteOffset, part.byteLength);
  if (typeof Blob !== 'undefined' && part instanceof Blob) return new Uint8Array(await part.arrayBuffer());
  throw new TypeError('gguf-lens: slice() must give bytes (Uint8Array, ArrayBuffer or Blob)');
}

function sliceableSource(object) {
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

async function nodeFileSource(path, _options) {
  const fs = await importNodeFs();
  const handle = await fs.open(path, 'r');
  const { size } = await handle.stat();
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

/**
 * A URL read with HTTP Range requests. A server that ignores Range (200 with the whole body)
 * is read as one stream, only as far as needed: the stream stays open for a following read
 * that continues where the last one stopped, and is cancelled on close().
 */
function urlSource(url, options) {
  const fetchFn = options.fetch ?? globalThis.fetch;
  if (typeof fetchFn !== 'function') throw new TypeError('gguf-lens: no fetch() available');
  const retries = options.retries ?? 3;
  const retryDelay = options.retryDelayMs ?? 200;
  /** An open body stream — a Range-ignoring server's whole body, or an open-ended range asked
   * for by streamNextRead() — read sequentially: reader + position + leftovers. */
  let stream = null;
  /** The next range request asks for everything from its start (`bytes=start-`). */
  let openEnded = false;

  const source = {
    byteLength: undefined,
    rangeIgnored: false,
    stats: countingStats(),
    async read(start, end, signal, onBytes, into) {
      end = clampEnd(source, start, end);
      if (end === start) return new Uint8Array(0);
      for (let attempt = 0; ; attempt++) {
        try {
          if (stream && stream.position <= start) return await readStream(start, end, signal, onBytes, into);
          return await readRange(start, end, signal, onBytes, into);
        } catch (err) {
          if (signal?.aborted) throw abortError(signal);
          if (!(err instanceof SourceError && err.retryable) || attempt >= retries) throw err;
          await sleep(retryDelay * 2 ** attempt, signal);
        }
      }
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

  function closeStream() {
    if (stream) {
      stream.reader.cancel().catch(() => {});
      stream.abort.abort();
      stream = null;
    }
  }

  async function readRange(start, end, signal, onBytes, into) {
    closeStream();
    const abort = new AbortController();
    const onAbort = () => abort.abort(abortError(signal));
    signal?.addEventListener('abort', onAbort, { once: true });
    let response;
    const streamed = openEnded;
    openEnded = false;
    try {
      source.stats.requests++;
      response = await fetchFn(url, {
        headers: { ...(options.headers ?? {}), Range: streamed ? `bytes=${start}-` : `bytes=${start}-${end - 1}` },
        signal: abort.signal,
      });
    } catch (err) {
      signal?.removeEventListener('abort', onAbort);
      if (signal?.aborted) throw abortError(signal);
      throw new SourceError(`network error fetching ${url} (bytes ${start}-${end - 1}): ${err.message} ` +
        '(offline, DNS, or blocked by CORS?)', { retryable: true, cause: err });
    }
    try {
      if (response.status === 206 && streamed) {
        learnSizeFromContentRange(response);
        stream = { reader: response.body.getReader(), position: start, leftover: null, abort };
        return await readStream(start, Math.min(end, source.byteLength ?? end), signal, onBytes, into);
      }
      if (response.status === 206) {
        learnSizeFromContentRange(response);
        const expected = Math.min(end, source.byteLength ?? end) - start;
        const bytes = await readBody(response, expected, onBytes, into);
        if (bytes.byteLength < expected) {
          throw new SourceError(`truncated response from ${url}: got ${bytes.byteLength} of ${expected} bytes ` +
            `at byte ${start}`, { retryable: true });
        }
        return bytes.subarray(0, expected);
      }
      if (response.status === 200) {
        source.rangeIgnored = true;
        const length = response.headers.get('content-length');
        if (source.byteLength === undefined) {
          if (length === null) {
            throw new SourceError(`${url} ignores Range requests and sends no Content-Length: ` +
              'the file size is unknown');
          }
          source.byteLength = Number(length);
        }
        stream = { reader: response.body.getReader(), position: 0, leftover: null, abort };
        return await readStream(start, Math.min(end, source.byteLength), signal, onBytes, into);
      }
      if (response.status === 416) {
        learnSizeFromContentRange(response);
        throw new SourceError(`${url}: range ${start}-${end - 1} not satisfiable (HTTP 416)` +
          (source.byteLength !== undefined ? `; the file is ${source.byteLength} bytes` : ''));
      }
      throw new SourceError(`${url}: HTTP ${response.status} ${response.statusText}`.trim(),
        { retryable: TRANSIENT_STATUS.has(response.status) });
    } catch (err) {
      if (!stream) abort.abort();
      throw err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  function learnSizeFromContentRange(response) {
    const match = /\/(\d+)\s*$/.exec(response.headers.get('content-range') ?? '');
    if (match) {
      source.byteLength = Number(match[1]);
    } else if (source.byteLength === undefined && response.status === 206) {
      throw new SourceError(`${url}: 206 response without a Content-Range total: the file size is unknown`);
    }
  }

  async function readBody(response, expected, onBytes, into) {
    const out = destination(into, expected);
    let filled = 0;
    const reader = response.body.getReader();
    try {
      for (;;) {
        let chunk;
        try {
          chunk = await reader.read();
        } catch (err) {
          throw new SourceError(`connection to ${url} dropped after ${filled} of ${expected} bytes: ${err.message}`,
            { retryable: true, cause: err });
        }
        if (chunk.done) break;
        const take = Math.min(chunk.value.byteLength, expected - filled);
        out.set(chunk.value.subarray(0, take), filled);
        filled += take;
        source.stats.bytes += chunk.value.byteLength;
        onBytes?.(take);
        if (filled === expected) {
          await reader.cancel().catch(() => {});
          break;
        }
      }
    } finally {
      reader.releaseLock?.();
    }
    return out.subarray(0, filled);
  }

  /** Reads [start, end) from the open whole-body stream, skipping bytes before start. */
  async function readStream(start, end, signal, onBytes, into) {
    const s = stream;
    const out = destination(into, end - start);
    let filled = 0;
    const take = (chunk) => {
      // chunk covers [s.position, s.position + chunk.length)
      const from = Math.max(0, start - s.position);
      const to = Math.min(chunk.byteLength, end - s.position);
      if (to > from) {
        out.set(chunk.subarray(from, to), s.position + from - start);
        filled += to - from;
        onBytes?.(to - from);
      }
      const consumed = Math.max(to, from);
      s.leftover = consumed < chunk.byteLength ? chunk.subarray(consumed) : null;
      s.position += Math.min(consumed, chunk.byteLength);
    };
    if (s.leftover) {
      const chunk = s.leftover;
      s.leftover = null;
      take(chunk);
    }
    while (filled < out.length) {
      if (signal?.aborted) {
        closeStream();
        throw abortError(signal);
      }
      let chunk;
      try {
        chunk = await s.reader.read();
      } catch (err) {
        stream = null;
        throw new SourceError(`connection to ${url} dropped at byte ${s.position}: ${err.message}`,
          { retryable: true, cause: err });
      }
      if (chunk.done) {
        stream = null;
        throw new SourceError(`truncated response from ${url}: body ended at byte ${s.position}, ` +
          `expected ${source.byteLength}`, { retryable: true });
      }
      source.stats.bytes += chunk.value.byteLength;
      take(chunk.value);
    }
    return out;
  }

  return source;
}
