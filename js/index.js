// gguf-lens: read GGUF model files and safetensors (plain or GPTQ) checkpoints in browsers (main thread or Web Worker) and Node >= 18.
// Headers are parsed from a prefix fetched with Range requests; tensor rows are fetched on
// demand and dequantized bit for bit as llama.cpp does (WebAssembly, simd128 kernels).
// The public data shapes (options, results, tensor and layer infos): JSDoc typedefs, no values.
export * from './types.js';
export { open, openGguf, FIRST_READ_BYTES } from './open.js';
export { openSafetensors, SAFETENSORS_FIRST_READ_BYTES } from './safetensors.js';
export { Model, GgufModel, SafetensorsModel, CHUNK_BYTES } from './model.js';
export { GgufEditor } from './edit.js';
export { SourceError, toSource } from './sources.js';
export { listRepoGgufs, inspectRepoGgufs, repoVerdict, closeRepoModels, scanRepo, parseRepo, checkHubEndpoint, HUB_ENDPOINT } from './hub.js';
export { compareModels, compareReport, compareTensor, COMPARE_CHUNK_ELEMENTS } from './compare.js';
import { loadWasm } from './wasm.js';
export { setWasmSimd, simdSupported } from './wasm.js';

/**
 * The dequantization kernel in use: "simd128" or "scalar".
 * @returns {Promise<string>}
 */
export async function kernelName() {
  return (await loadWasm()).kernelName();
}
