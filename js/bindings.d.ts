// The wasm-bindgen glue's handles as the package's modules use them (tsc only, `@import` in the
// JSDoc; never loaded). Apart from internal.d.ts: the published declarations never reach these
// (the glue's types need lib esnext's Symbol.dispose).
import type * as bindings from './wasm/gguf_lens.js';
import type * as coreBindings from './wasm/gguf_lens_core.js';
import type { Source } from './internal.js';

/** The initialized glue's exports (behind wasm.js's trap guards). */
export type Wasm = typeof bindings;
/** The one wasm model handle (`ModelHeader`, over the core's `Model`), for both formats: the
 * names below say which format's handle a module holds (a format's own methods throw on the other). */
export type ModelHeader = bindings.ModelHeader;
export type GgufHeader = ModelHeader;
export type SafetensorsHeader = ModelHeader;
/** The core module's exports and header (the header path alone: wasm.js's loadCore). */
export type CoreWasm = typeof coreBindings;
export type CoreGgufHeader = coreBindings.ModelHeader;
export type TensorStatsJob = bindings.TensorStatsJob;
export type QuantErrorJob = bindings.QuantErrorJob;
export type RowReader = bindings.RowReader;
export type ByteBuffer = bindings.ByteBuffer;

/** A shard as the readers take it: a GGUF header and its source. */
export interface GgufShard {
  header: GgufHeader;
  source: Source;
}

/** A RowReader with the sizes it was made for (read-rows.js's ReaderCache). */
export interface ReaderEntry {
  reader: RowReader;
  bytes: number;
  values: number;
}
