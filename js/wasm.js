// Loads the WebAssembly modules, each once: fetched next to this file in browsers and workers,
// read from disk in Node (whose fetch cannot load file: URLs). Two modules of the same crate: the
// core (`--no-default-features`: parse, summary, metadata, tensor infos, special tokens, the
// planner; a few hundred KB) that opening a GGUF needs, and the full one (tokenizer, templates,
// dequantization, stats, quant-error, compare, edit, lint, hashes, safetensors) loaded on first
// use. Engines without WebAssembly SIMD get the scalar build of the full module (the same
// exports, the same results bit for bit); the core has no SIMD code.
//
// No call can poison the package: a trap in wasm (out of memory, `unreachable` from a Rust
// abort, a stack overflow) leaves the instance's heap, stack pointer and borrow flags as they
// were mid-call, so every later call on it would fail. Each export is called through a guard
// that catches such an error, discards the instance and makes a fresh one from the compiled
// module (the glue's __wbg_reset_state, built with --experimental-reset-state-function). Objects
// made by the old instance (a model's header, a tokenizer, a job) cannot move to the new one:
// calls on them throw one line saying to reopen the model; new opens work.
import { importNodeFs } from './sources.js';
import initCore, { initSync as initCoreSync } from './wasm/gguf_lens_core.js';
import * as coreBindings from './wasm/gguf_lens_core.js';
import { errorMessage } from './sources.js';

// The full module's glue (bindings.d.ts's Wasm) is imported on first use (its JS is a few
// hundred KB).
/** @import { Wasm } from './bindings.js' */

/** A glue function or method, as the guards wrap it (any arguments, any `this`).
 * @typedef {(this: unknown, ...args: unknown[]) => unknown} AnyFunction */

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
 * bug). Call before the first tensor is read: the module is loaded once.
 * @param {boolean} enabled
 */
export function setWasmSimd(enabled) {
  if (full.ready) throw new Error('gguf-lens: setWasmSimd must be called before the first file is opened');
  simdWanted = Boolean(enabled);
}

/**
 * Compiles the module at `url` (fetched, or read from disk in Node).
 * @param {URL} url
 * @returns {Promise<WebAssembly.Module>}
 */
async function compileUrl(url) {
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

// ---------- one loaded module, its traps and guards ----------

/** The glue of either module, as the loader uses it.
 * @typedef {{ init: (options: { module_or_path: WebAssembly.Module }) => Promise<{ memory: WebAssembly.Memory }>,
 *   initSync: (options: { module: WebAssembly.Module }) => { memory: WebAssembly.Memory },
 *   bindings: Record<string, unknown> & { __wbg_reset_state(): void }, compile: () => Promise<WebAssembly.Module> }} Glue */

/**
 * A wasm-bindgen module loaded once, each export behind a guard: a trap discards the instance
 * and makes a fresh one from the compiled module (the glue's __wbg_reset_state).
 */
class Loaded {
  /** @param {() => Promise<Glue>} importGlue */
  constructor(importGlue) {
    this.importGlue = importGlue;
    /** Set by load().
     * @type {Glue | null} */
    this.glue = null;
    /** @type {Promise<unknown> | null} */
    this.ready = null;
    /** @type {WebAssembly.Module | null} */
    this.compiled = null;
    /** @type {WebAssembly.Memory | null} */
    this.memory = null;
    /** Instances discarded after a trap so far: the glue's instance id of the live one. */
    this.generation = 0;
    /** What trapped last (`ModelHeader.renderChatTemplate`), for the errors of stale objects.
     * @type {string | null} */
    this.lastTrap = null;
    /** Set when a fresh instance could not be made: every later call fails with it.
     * @type {Error | null} */
    this.broken = null;
    /** @type {Set<() => void>} */
    this.resetHooks = new Set();
  }

  /**
   * @param {WebAssembly.Module} [module] a module another thread compiled
   * @returns {Promise<unknown>} the guarded exports
   */
  load(module) {
    this.ready ??= (async () => {
      const glue = await this.importGlue();
      this.glue = glue;
      const made = module ?? await glue.compile();
      this.compiled = made;
      // Instantiated synchronously where that is allowed (workers, Node: no `document`; a browser
      // page may not for big modules): the async init probes the globals Response and Request,
      // which in Node load its whole fetch implementation, ~15 ms in each thread.
      const exports = typeof document === 'undefined'
        ? glue.initSync({ module: made })
        : await glue.init({ module_or_path: made });
      this.memory = exports.memory;
      return this.guarded();
    })();
    return this.ready;
  }

  /**
   * Whether `obj`, a wasm-bindgen object of this module, was made by the live instance.
   * @param {unknown} obj
   */
  isLive(obj) {
    const inst = /** @type {{ __wbg_inst?: number } | null | undefined} */ (obj)?.__wbg_inst;
    return inst === undefined || inst === this.generation;
  }

  /** @param {string} what */
  staleError(what) {
    const error = new Error(`gguf-lens: ${what}: the wasm module trapped in ${this.lastTrap ?? 'an earlier call'}; reopen the model`);
    error.name = 'WasmTrapError';
    return error;
  }

  /**
   * Discards the instance after a trap in `what` and makes a fresh one from the compiled module.
   * @param {string} what
   * @param {unknown} err
   */
  restart(what, err) {
    this.lastTrap = what;
    const glue = /** @type {Glue} */ (this.glue); // a trap comes from a loaded module
    try {
      glue.bindings.__wbg_reset_state();
      this.generation++;
      // The glue's initSync returns the instance it now holds (the fresh one), without
      // instantiating again.
      this.memory = glue.initSync({ module: /** @type {WebAssembly.Module} */ (this.compiled) }).memory;
    } catch (resetErr) {
      const error = new Error(`gguf-lens: the wasm module trapped in ${what} and could not be restarted (${errorMessage(resetErr)}); reload the page or process`);
      error.name = 'WasmTrapError';
      this.broken = error;
      throw error;
    }
    for (const fn of this.resetHooks) {
      try {
        fn();
      } catch {
        // A cache that cannot drop its entries keeps stale ones, which fail by themselves.
      }
    }
    return trapError(what, err);
  }

  /**
   * `fn` (a glue function or method named `what`) behind the guard.
   * @param {string} what
   * @param {AnyFunction} fn
   * @returns {AnyFunction}
   */
  guard(what, fn) {
    const loaded = this;
    return function guardedCall(...args) {
      if (loaded.broken) throw loaded.broken;
      if (!loaded.isLive(this)) throw loaded.staleError(what);
      for (const arg of args) if (arg !== null && typeof arg === 'object' && !loaded.isLive(arg)) throw loaded.staleError(what);
      try {
        return fn.apply(this, args);
      } catch (err) {
        if (isTrap(err)) throw loaded.restart(what, err);
        // The glue's own check, for an object inside an argument (an array of headers).
        if (/stale object from previous Wasm instance/.test(String(/** @type {{ message?: unknown } | null | undefined} */ (err)?.message))) throw loaded.staleError(what);
        throw err;
      }
    };
  }

  /** Guards every method, accessor and static of a glue class, in place (objects the glue makes
   * itself get the class's prototype), and its constructor through a Proxy.
   * @param {new (...args: any[]) => object} cls
   */
  guardClass(cls) {
    const name = cls.name;
    const patch = (/** @type {object} */ target, /** @type {string} */ label) => {
      for (const key of Reflect.ownKeys(target)) {
        if (typeof key === 'string' && (SKIP.has(key) || key.startsWith('__'))) continue;
        const d = Object.getOwnPropertyDescriptor(target, key);
        if (!d) continue;
        const what = `${name}${label}${String(typeof key === 'symbol' ? key.description : key)}`;
        if (key === 'free' || key === Symbol.dispose) {
          // Freeing an object of a discarded instance would free that pointer in the live one.
          const free = d.value;
          const loaded = this;
          /** @this {{ __wbg_ptr: number }} */
          d.value = function guardedFree() {
            if (loaded.isLive(this)) return free.call(this);
            this.__wbg_ptr = 0;
            return undefined;
          };
        } else if (typeof d.value === 'function') {
          d.value = this.guard(what, d.value);
        } else {
          if (d.get) d.get = this.guard(what, d.get);
          if (d.set) d.set = this.guard(what, d.set);
          if (!d.get && !d.set) continue;
        }
        Object.defineProperty(target, key, d);
      }
    };
    patch(cls.prototype, '.');
    patch(cls, '.');
    const loaded = this;
    return new Proxy(cls, {
      construct(target, args, newTarget) {
        return /** @type {object} */ (loaded.guard(`new ${name}`, (...a) => Reflect.construct(target, a, newTarget))(...args));
      },
    });
  }

  /** The glue's exports with every function and class behind the guard. */
  guarded() {
    /** @type {Record<string, unknown>} */
    const out = {};
    for (const [key, value] of Object.entries(/** @type {Glue} */ (this.glue).bindings)) {
      if (typeof value !== 'function' || key === 'default' || key === 'initSync' || key.startsWith('__wbg')) {
        out[key] = value;
      } else if (/^class\b/.test(Function.prototype.toString.call(value))) {
        out[key] = this.guardClass(/** @type {new (...args: any[]) => object} */ (value));
      } else {
        out[key] = this.guard(key, /** @type {AnyFunction} */ (value));
      }
    }
    return Object.freeze(out);
  }
}

// The glue's own helpers (__wrap, __destroy_into_raw, …) are not calls into wasm.
const SKIP = new Set(['constructor', 'length', 'name', 'prototype']);

/** Whether `err`, thrown out of a call into wasm, means the instance is no longer sound: a
 * trap (RuntimeError: unreachable, out of bounds, …), a stack overflow, or wasm-bindgen's borrow
 * checks failing, which happens only when an earlier trap left a borrow held. The Rust errors
 * every export returns (Error with the core's message) are not.
 * @param {unknown} err
 */
function isTrap(err) {
  if (err instanceof WebAssembly.RuntimeError) return true;
  const message = String(/** @type {{ message?: unknown } | null | undefined} */ (err)?.message ?? '');
  if (err instanceof RangeError && /call stack/i.test(message)) return true;
  return /attempted to take ownership of Rust value while it was borrowed|recursive use of an object detected/.test(message);
}

/**
 * @param {string} what
 * @param {unknown} err
 */
function trapError(what, err) {
  const cause = errorMessage(err).split('\n')[0];
  const error = new Error(`gguf-lens: the wasm module trapped in ${what} (${cause}); it was restarted: models opened before must be reopened`, { cause: err });
  error.name = 'WasmTrapError';
  return error;
}

const full = new Loaded(async () => {
  const bindings = await import('./wasm/gguf_lens.js');
  return {
    init: /** @type {Glue['init']} */ (/** @type {unknown} */ (bindings.default)),
    initSync: /** @type {Glue['initSync']} */ (/** @type {unknown} */ (bindings.initSync)),
    bindings: /** @type {Glue['bindings']} */ (/** @type {unknown} */ (bindings)),
    // Two literal `new URL(…, import.meta.url)`: bundlers see (and emit) both modules.
    compile: () => compileUrl(simdSupported()
      ? new URL('./wasm/gguf_lens_bg.wasm', import.meta.url)
      : new URL('./wasm/gguf_lens_scalar_bg.wasm', import.meta.url)),
  };
});

const core = new Loaded(async () => ({
  init: /** @type {Glue['init']} */ (/** @type {unknown} */ (initCore)),
  initSync: /** @type {Glue['initSync']} */ (/** @type {unknown} */ (initCoreSync)),
  bindings: /** @type {Glue['bindings']} */ (/** @type {unknown} */ (coreBindings)),
  compile: () => compileUrl(new URL('./wasm/gguf_lens_core_bg.wasm', import.meta.url)),
}));

/**
 * The full module (every feature), loaded once.
 * @param {WebAssembly.Module} [module] a module another thread compiled (a statistics worker gets
 *   its parent's, so each worker neither fetches nor compiles it again); used on the first call only
 * @returns {Promise<Wasm>} the initialized wasm-bindgen exports (behind the trap guards)
 * @internal
 */
export function loadWasm(module) {
  return /** @type {Promise<Wasm>} */ (full.load(module));
}

/**
 * The core module (the header path: parse, summary, metadata, tensor infos, special tokens, the
 * planner), loaded once; a few hundred KB where the full module is a few MB.
 * @returns {Promise<typeof coreBindings>}
 * @internal
 */
export function loadCore() {
  return /** @type {Promise<typeof coreBindings>} */ (core.load());
}

/**
 * The full module's compiled WebAssembly.Module (postMessage it to a worker's loadWasm), after loadWasm.
 * @returns {WebAssembly.Module | null}
 * @internal
 */
export function wasmModule() {
  return full.compiled;
}

/**
 * The full instance's WebAssembly.Memory (its buffer is replaced whenever the memory grows).
 * @returns {WebAssembly.Memory | null}
 * @internal
 */
export function wasmMemory() {
  return full.memory;
}

/**
 * Calls `fn()` (with no argument) after each trap of the full module, once the fresh instance is
 * in place: the caches of wasm objects (readers, buffers, a worker's open models) drop what the
 * old one made.
 * @param {() => void} fn
 * @internal
 */
export function onWasmReset(fn) {
  full.resetHooks.add(fn);
  core.resetHooks.add(fn);
}

/**
 * Whether `obj`, a wasm-bindgen object of the full module, was made by the live instance (false
 * once a trap discarded the one that made it).
 * @param {unknown} obj
 * @internal
 */
export function isLive(obj) {
  return full.isLive(obj);
}

/** How many times a trap replaced an instance (for tests). @internal */
export function wasmResets() {
  return full.generation + core.generation;
}
