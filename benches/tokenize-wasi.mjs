// Runs the tokenize bench built for WASI in Node (no npm package build needed):
//   cargo build --release --target wasm32-wasip1 --bench tokenize
//   node --no-warnings benches/tokenize-wasi.mjs target/wasm32-wasip1/release/deps/tokenize-*.wasm TEXT RUNS GGUF...
// Same output as the native bench; the whole file system is preopened at '/', so give absolute paths.
import { WASI } from 'node:wasi';
import { readFileSync } from 'node:fs';

const [wasmPath, ...args] = process.argv.slice(2);
const wasi = new WASI({ version: 'preview1', args: ['tokenize', ...args], preopens: { '/': '/' } });
const mod = await WebAssembly.compile(readFileSync(wasmPath));
wasi.start(await WebAssembly.instantiate(mod, wasi.getImportObject()));
