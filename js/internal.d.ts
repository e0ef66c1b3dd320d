// Types the package's modules share but do not export (the public ones are types.js's): the
// byte source every input becomes, the workers the pools drive and the messages they exchange.
// Read by tsc only (`@import` in the JSDoc); never loaded. Shipped: the published declarations
// name a few (Source, AnyOpenOptions); the glue's handles are bindings.d.ts's, which they do not
// reach (the glue's own types need a newer lib than users may have).
import type { GgufInput, OpenOptions, Progress, SafetensorsOptions, TensorInfo } from './types.js';

/** T with its read-only fields settable: for the class that sets them (after its constructor). */
export type Writable<T> = { -readonly [K in keyof T]: T[K] };

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
  /** Set by openIndex for each shard: the joined model reads its bitsandbytes quant states, once. */
  shardOfIndex?: boolean;
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

/** A half-open range of rows [first, last). */
export type Run = [number, number];

/** A worker's global scope as the worker modules use it: a Web Worker's, or Node's behind
 * stats-worker-node.js's adapter. */
export interface WorkerScope {
  postMessage(message: unknown, transfer?: Transferable[]): void;
  addEventListener(type: 'message', fn: (event: MessageEvent) => void): void;
}
