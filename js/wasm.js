// Loads the WebAssembly module once: fetched next to this file in browsers and workers, read
// from disk in Node (whose fetch cannot load file: URLs). Engines without WebAssembly SIMD get
// the scalar build of the same crate (the same exports, the same results bit for bit).
import { importNodeFs } from './sources.js';
import init, { initSync } from './wasm/gguf_lens.js';
import * as bindings from './wasm/gguf_lens.js';

let ready = null;
let simdWanted = true;

// A module whose one function uses v128 (i8x16.splat, i8x16.popcnt): valid only where the
// engine has SIMD.
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0,
  10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11]);

/** Whether this engine runs WebAssembly SIMD (and it was not turned off). */
export function simdSupported() {
  return simdWanted && WebAssembly.validate(SIMD_PROBE);
}

/**
 * Chooses the scalar module even where SIMD works (to compare, or to work around an engine
 * bug). Call before the first file is opened: the module is loaded once.
 * @param {boolean} enabled
 */
export function setWasmSimd(enabled) {
  if (ready) throw new Error('gguf-lens: setWasmSimd must be called before the first file is opened');
  simdWanted = Boolean(enabled);
}

/** The compiled module and the instance's memory, once loaded. */
let compiled = null;
let memory = null;

/**
 * @param {WebAssembly.Module} [module] a module another thread compiled (a statistics worker gets
 *   its parent's, so each worker neither fetches nor compiles it again); used on the first call only
 * @returns {Promise<typeof bindings>} the initialized wasm-bindgen exports
 */
export function loadWasm(module) {
  ready ??= (async () => {
    compiled = module ?? await compileWasm();
    // Instantiated synchronously where that is allowed (workers, Node: no `document`; a browser
    // page may not for big modules): the async init probes the globals Response and Request,
    // which in Node load its whole fetch implementation, ~15 ms in each thread.
    const exports = typeof document === 'undefined' ? initSync({ module: compiled }) : await init({ module_or_path: compiled });
    memory = exports.memory;
    return bindings;
  })();
  return ready;
}

/** The compiled WebAssembly.Module (postMessage it to a worker's loadWasm), after loadWasm. */
export function wasmModule() {
  return compiled;
}

/** The instance's WebAssembly.Memory (its buffer is replaced whenever the memory grows). */
export function wasmMemory() {
  return memory;
}

async function compileWasm() {
  // Two literal `new URL(…, import.meta.url)`: bundlers see (and emit) both modules.
  const url = simdSupported()
    ? new URL('./wasm/gguf_lens_bg.wasm', import.meta.url)
    : new URL('./wasm/gguf_lens_scalar_bg.wasm', import.meta.url);
  if (url.protocol === 'file:') {
    const { readFile } = await importNodeFs();
    return WebAssembly.compile(await readFile(url));
  }
  const response = fetch(url);
  if (typeof WebAssembly.compileStreaming === 'function') {
    try {
      return await WebAssembly.compileStreaming(response);
    } catch (err) {
      // A server sending another Content-Type than application/wasm: compile the bytes.
      if (!(err instanceof TypeError)) throw err;
    }
  }
  const res = await response;
  if (!res.ok) throw new Error(`gguf-lens: failed to fetch ${url}: ${res.status} ${res.statusText}`);
  return WebAssembly.compile(await res.arrayBuffer());
}
