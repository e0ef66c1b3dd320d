// Loads the WebAssembly module once: fetched next to this file in browsers and workers, read
// from disk in Node (whose fetch cannot load file: URLs).
import { importNodeFs } from './sources.js';
import init, * as bindings from './wasm/gguf_lens.js';

let ready = null;

/** @returns {Promise<typeof bindings>} the initialized wasm-bindgen exports */
export function loadWasm() {
  ready ??= (async () => {
    const url = new URL('./wasm/gguf_lens_bg.wasm', import.meta.url);
    if (url.protocol === 'file:') {
      const { readFile } = await importNodeFs();
      await init({ module_or_path: await readFile(url) });
    } else {
      await init({ module_or_path: url });
    }
    return bindings;
  })();
  return ready;
}
