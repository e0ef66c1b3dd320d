// Types the package's modules share but do not export (the public ones are index.d.ts's): the
// wasm-bindgen glue's handles, the byte source every input becomes, the workers the pools drive
// and the messages they exchange. Read by tsc only (`@import` in the JSDoc); never loaded.
import type * as bindings from './wasm/gguf_lens.js';
import type * as coreBindings from './wasm/gguf_lens_core.js';
import type { GgufInput, OpenOptions, Progress, SafetensorsOptions, TensorInfo } from './index.js';

/** The initialized glue's exports (behind wasm.js's trap guards). */
export type Wasm = typeof bindings;
/** The one wasm model handle (`ModelHeader`, over the core's `Model`), for both formats: the
 * names below say which format's handle a module holds (a format's own methods throw on the other). */
export type ModelHeader = bindings.ModelHeader;
export type GgufHeader = ModelHeader;
/** The core module's exports and header (the header path alone: wasm.js's loadCore). */
export type CoreWasm = typeof coreBindings;
export type CoreGgufHeader = coreBindings.ModelHeader;
export type SafetensorsHeader = ModelHeader;
export type TensorStatsJob = bindings.TensorStatsJob;
export type QuantErrorJob = bindings.QuantErrorJob;
export type RowReader = bindings.RowReader;
export type ByteBuffer = bindings.ByteBuffer;

/** Told of each chunk's bytes (or rows) as they arrive. */
export type OnBytes = (n: number) => void;
export type OnProgress = (progress: Progress) => void;

/** What a source has served so far. */
export interface SourceStats {
  requests: number;
  bytes: number;
}

/**
 * One shape for every input (sources.js): `read` returns exactly end - start bytes (end clamped
 * to byteLength) or throws; given `into` it fills and returns `into`'s first bytes.
 */
export interface Source {
  byteLength: number | undefined;
  stats: SourceStats;
  read(start: number, end: number, signal?: AbortSignal, onBytes?: OnBytes, into?: Uint8Array): Promise<Uint8Array>;
  /** A local file in Node: reads [start, end) into `memory` at byte `at`; the bytes read. */
  readToMemory?(start: number, end: number, memory: WebAssembly.Memory, at: number): Promise<number>;
  /** A URL: the next read is one open-ended request whose body stays open (prefix.js). */
  streamNextRead?(): void;
  /** A URL: cancels an open body stream. */
  release?(): void;
  /** A URL: whether reading on costs bytes of an open stream rather than a new request. */
  readonly streaming?: boolean;
  /** A URL whose server ignores Range requests (read forward only). */
  rangeIgnored?: boolean;
  close(): void | Promise<void>;
}

/** What a model was opened from, for a worker to open it again (a URL or path, a File or Blob,
 * or a split model's shards); model.js checks that it is one a worker can open. */
export type ModelInput = GgufInput | GgufInput[];

/** The request options a worker can receive with an input. */
export interface WorkerOpenOptions {
  headers?: OpenOptions['headers'];
  retries?: number;
  stallTimeoutMs?: number;
}

/** Where a model came from, for workers that open it again. */
export interface ModelOrigin {
  input?: ModelInput;
  openOptions?: WorkerOpenOptions;
}

/** Every option any open function reads (openGguf's, openSafetensors' and the internal ones). */
export interface AnyOpenOptions extends SafetensorsOptions {
  /** Set by openBounded for each shard. */
  signal?: AbortSignal;
}

/**
 * A worker as the pools drive it: a Web Worker, or Node's worker_threads one behind
 * stats-node-pool.js's adapter (which adds ref / unref).
 */
export interface PoolWorker {
  postMessage(message: unknown, transfer?: Transferable[]): void;
  // `any`: a Web Worker's listeners take a MessageEvent or an ErrorEvent by type, the adapter's
  // { data } or { message }; each listener here reads what its type gets.
  addEventListener(type: 'message' | 'error', fn: (event: any) => void): void;
  removeEventListener(type: 'message' | 'error', fn: (event: any) => void): void;
  terminate(): unknown;
  ref?(): void;
  unref?(): void;
}

/** A tensor as the readers take it: rows of rowLength values, rowBytes bytes each. */
export type RowShape = Pick<TensorInfo, 'rowLength' | 'rowBytes'>;
export type ReadableTensor = Pick<TensorInfo, 'name' | 'rowLength' | 'rowBytes' | 'nRows' | 'shard'>;

/** A shard as the readers take it: a GGUF header and its source. */
export interface GgufShard {
  header: GgufHeader;
  source: Source;
}

/** A half-open range of rows [first, last). */
export type Run = [number, number];

/** A RowReader with the sizes it was made for (read-rows.js's ReaderCache). */
export interface ReaderEntry {
  reader: RowReader;
  bytes: number;
  values: number;
}

/** A worker's global scope as the worker modules use it: a Web Worker's, or Node's behind
 * stats-worker-node.js's adapter. */
export interface WorkerScope {
  postMessage(message: unknown, transfer?: Transferable[]): void;
  addEventListener(type: 'message', fn: (event: MessageEvent) => void): void;
}
