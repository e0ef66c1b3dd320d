// openGguf: read a prefix, parse it in wasm, fetch only the missing suffix until the header is
// whole, then wrap the parsed header and its source in a Model.
import { loadCore } from './wasm.js';
import { toSource, deliver, openBounded } from './sources.js';
import { readGrowingPrefix } from './prefix.js';
import { Model } from './model.js';
import { openSafetensors, openSafetensorsSource } from './safetensors.js';

/** @import { GgufInput, OpenOptions, SafetensorsOptions } from './types.js' */
/** @import { GgufModel, SafetensorsModel } from './model.js' */
/** @import { AnyOpenOptions, Source } from './internal.js' */

/** First read: a header without a vocabulary in one request, and within the 64 KiB allowance when small. */
export const FIRST_READ_BYTES = 64 * 1024;

const SHARD_PATTERN = /-(\d{5})-of-(\d{5})\.gguf$/;

/**
 * Opens a GGUF file and parses its header, reading only the header's bytes. A URL or path
 * named `…-00001-of-0000N.gguf`, or an array of inputs, opens every shard of a split model.
 * @param {GgufInput | GgufInput[]} input a URL, File/Blob, ArrayBuffer/Uint8Array, Node path,
 *   {byteLength, slice}, or an array of those (the shards of a split model, in order)
 * @param {OpenOptions} [options]
 * @returns {Promise<GgufModel>}
 */
export async function openGguf(input, options = {}) {
  const shards = shardInputs(input);
  if (shards.length === 1) return openOne(shards[0], options);
  // A few shards at a time; the first failure stops the rest and closes those opened.
  const models = await openBounded(shards, (shard, _i, signal) => openOne(shard, { ...options, signal }),
    { signal: options.signal });
  try {
    return Model.merge(models, await loadCore());
  } catch (err) {
    await Promise.all(models.map((m) => m.close())); // shards that are not one model
    throw err;
  }
}

/**
 * @param {GgufInput | GgufInput[]} input
 * @returns {GgufInput[]}
 */
function shardInputs(input) {
  if (Array.isArray(input)) return input;
  if (typeof input === 'string' || input instanceof URL) {
    const text = String(input);
    const match = SHARD_PATTERN.exec(text.split(/[?#]/)[0]);
    if (match) {
      const count = Number(match[2]);
      const at = text.lastIndexOf(match[0]);
      return Array.from({ length: count }, (_, i) =>
        text.slice(0, at) + `-${String(i + 1).padStart(5, '0')}-of-${match[2]}.gguf` + text.slice(at + match[0].length));
    }
  }
  return [input];
}

/**
 * @param {GgufInput} input
 * @param {AnyOpenOptions} options
 * @param {Source} [made] a source already made from `input`
 */
async function openOne(input, options, made) {
  // The core module (the header path alone) compiles while the first bytes are on their way;
  // the full one loads when a feature needs it (Model.preload).
  const wasmReady = loadCore();
  wasmReady.catch(() => {}); // a failed load is reported where it is awaited
  const source = made ?? await toSource(input, options);
  try {
    const header = await readHeader(wasmReady, source, options);
    // What a worker opens to read its part of a tensor (a URL, path, File or Blob; with the
    // request options a worker can receive).
    // The core's exports and header stand for the full ones: what a model calls before
    // preload() moves it into the full module is in both.
    const wasm = /** @type {import('./bindings.js').Wasm} */ (/** @type {unknown} */ (await wasmReady));
    return /** @type {GgufModel} */ (new Model(wasm, /** @type {import('./bindings.js').GgufHeader} */ (/** @type {unknown} */ (header)), source, {
      input: input instanceof URL ? String(input) : input,
      openOptions: { headers: options.headers, retries: options.retries, stallTimeoutMs: options.stallTimeoutMs },
    }));
  } catch (err) {
    await source.close();
    throw err;
  }
}

/**
 * @param {Promise<import('./bindings.js').CoreWasm>} wasmReady
 * @param {Source} source
 * @param {AnyOpenOptions} options
 * @returns {Promise<import('./bindings.js').CoreGgufHeader>}
 */
function readHeader(wasmReady, source, options) {
  const firstRead = options.firstReadBytes ?? FIRST_READ_BYTES;
  const parse = async (/** @type {Uint8Array} */ prefix) => (await wasmReady).parseHeader(prefix, source.byteLength);
  return readGrowingPrefix(source, options, firstRead, parse, 'header');
}

/**
 * The name an input carries (URL path, file path, File name), lower-cased, or ''.
 * @param {unknown} input
 */
function nameOf(input) {
  if (typeof input === 'string' || input instanceof URL) return String(input).split(/[?#]/)[0].toLowerCase();
  const name = /** @type {{ name?: unknown } | null | undefined} */ (input)?.name;
  if (typeof name === 'string') return name.toLowerCase();
  return '';
}

/**
 * A source whose reads inside `prefix` (already read) are served from memory.
 * @param {Source} source
 * @param {Uint8Array} prefix
 * @returns {Source}
 */
function primed(source, prefix) {
  /** @type {Source} */
  const wrapper = Object.create(source);
  wrapper.read = (start, end, signal, onBytes, into) => {
    const stop = source.byteLength === undefined ? end : Math.min(end, source.byteLength);
    if (stop <= prefix.length) {
      onBytes?.(stop - start);
      return Promise.resolve(deliver(prefix.subarray(start, stop), into));
    }
    return source.read(start, end, signal, onBytes, into);
  };
  return wrapper;
}

/**
 * Opens a GGUF file (or split model) or a safetensors checkpoint: by extension (.gguf,
 * .safetensors) when the input has a name, else by the first bytes (a safetensors header
 * length followed by "{"; anything else goes to the GGUF parser), read once and reused.
 * @param {GgufInput | GgufInput[]} input any input openGguf or openSafetensors takes
 * @param {SafetensorsOptions} [options] their options
 * @returns {Promise<GgufModel | SafetensorsModel>}
 */
export async function open(input, options = {}) {
  if (Array.isArray(input)) return openGguf(input, options);
  const name = nameOf(input);
  if (name.endsWith('.safetensors') || name.endsWith('.safetensors.index.json')) return openSafetensors(input, options);
  if (name.endsWith('.gguf')) return openGguf(input, options);
  const source = await toSource(input, options);
  let prefix;
  try {
    let want = options.firstReadBytes ?? FIRST_READ_BYTES;
    if (source.byteLength !== undefined) want = Math.min(want, source.byteLength);
    prefix = await source.read(0, want, options.signal);
  } catch (err) {
    await source.close();
    throw err;
  }
  const ready = primed(source, prefix);
  const gguf = prefix.length >= 4 && String.fromCharCode(...prefix.subarray(0, 4)) === 'GGUF';
  if (!gguf && prefix.length >= 9 && prefix[8] === 0x7b) return openSafetensorsSource(input, ready, options);
  // GGUF, or neither: the GGUF parser's error says what the first bytes are.
  return openOne(input, options, ready);
}
