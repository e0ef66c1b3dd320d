// Types for gguf-lens (hand-written; mirrors js/*.js).

/** Anything openGguf reads bytes from. */
export type GgufInput =
  | string // URL (http/https/blob/data) or, in Node, a file path or file: URL
  | URL
  | Blob // File included: read with slice(), never whole
  | ArrayBuffer
  | Uint8Array
  | { byteLength: number; slice(start: number, end: number): Uint8Array | ArrayBuffer | Blob | Promise<Uint8Array | ArrayBuffer | Blob> };

export interface Progress {
  loaded: number;
  total: number | undefined;
}

export interface OpenOptions {
  /** fetch to use for URLs (default globalThis.fetch). */
  fetch?: typeof fetch;
  /** Extra request headers (e.g. Authorization): sent only to the origin of the URL opened
   * (a redirect elsewhere drops them; a shard or config named by a file is beside it). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
  onProgress?: (progress: Progress) => void;
  /** Retries of a transient failure (network error, 5xx, 429, truncated body). Default 3. */
  retries?: number;
  retryDelayMs?: number;
  /** First read length (default 64 KiB for GGUF, 256 KiB for safetensors). */
  firstReadBytes?: number;
  /** A read (or a wait for a response) with no byte for this long fails with a SourceError
   * naming it. Default 30000; 0 for none. */
  stallTimeoutMs?: number;
  /** Longest header read: default 256 MiB (a safetensors header is also held to the core's
   * 100 MB). A longer header is refused, naming the limit. */
  maxHeaderBytes?: number;
}

export type MetadataValue = number | bigint | boolean | string | NestedArray;

export interface NestedArray {
  itemType: string;
  len: number;
  value: MetadataValue[];
}

export interface ScalarEntry {
  key: string;
  /** Spec type name: uint8 … float64, bool, string. */
  type: string;
  /** 64-bit integers are BigInts; strings are decoded lossily (U+FFFD). */
  value: number | bigint | boolean | string;
}

export interface ArrayEntry {
  key: string;
  type: 'array';
  itemType: string;
  len: number;
  /** Elements [start, end) decoded on demand (clamped to len). */
  items(start?: number, end?: number): MetadataValue[];
  /**
   * Every item at once as bytes, to compare whole arrays without one JS value per item: numbers
   * little-endian, bools 0/1, strings raw (undecoded), nested arrays in a canonical form.
   * `ends[i]` is where item i ends in `bytes`; null for fixed-size items (bytes.length / len each).
   */
  packed(): { bytes: Uint8Array; ends: Uint32Array | null };
  /**
   * Indices of the string items containing `needle` (ASCII letters without case), searched in
   * wasm over the whole array without decoding it into JS; from `start`, at most `limit`.
   * Non-string arrays match nothing.
   */
  findText(needle: string, options?: { start?: number; limit?: number }): number[];
}

export type MetadataEntry = ScalarEntry | ArrayEntry;

export interface TensorInfo {
  name: string;
  /** ggml type name, e.g. "Q4_K" (SafetensorsTensorInfo.type is the dtype, same field). */
  type: string;
  typeId: number;
  /** Row-major, outermost first, as numpy, PyTorch and safetensors give it (the same order for
   * every format); a row is the last dimension, `rowLength` elements. */
  shape: number[];
  /** ggml's `ne`: the dimensions as GGUF stores them, innermost first (`shape` reversed), as
   * llama.cpp prints them. */
  ne: number[];
  nElements: number;
  /** Absolute byte offset in the (shard's) file. */
  offset: number;
  /** Offset relative to the data section. */
  relativeOffset: number;
  nBytes: number;
  rowLength: number;
  nRows: number;
  rowBytes: number;
  /** Index of the shard holding it (0 for a single file). */
  shard: number;
}

export interface QuantShare {
  type: string;
  typeId: number;
  tensors: number;
  elements: number;
  bytes: number;
  /** Fraction of all tensor bytes. */
  share: number;
}

/** One summary for every format: a safetensors checkpoint's has these fields too (null where it
 * has no such thing) and a few of its own (SafetensorsSummary). */
export interface Summary {
  format: 'gguf' | 'safetensors';
  tensorCount: number;
  architecture: string | null;
  name: string | null;
  parameterCount: number;
  tensorBytes: number;
  fileType: number | null;
  /** llama.cpp's label for general.file_type, e.g. "MOSTLY_Q4_K_M". */
  fileTypeLabel: string | null;
  quantMix: QuantShare[];
  bitsPerWeight: number;
  contextLength: number | null;
  layers: number | null;
  heads: number | null;
  kvHeads: number | null;
  embeddingSize: number | null;
  vocabSize: number | null;
}

export interface SpecialToken {
  /** Short name: bos, eos, eot, eom, unknown, seperator, padding, cls, mask, fim_pre … fim_sep,
   * prefix, suffix, middle (llama.cpp's keys), or sep / pad (spellings llama.cpp does not read). */
  name: string;
  /** The metadata key, e.g. "tokenizer.ggml.eos_token_id". */
  key: string;
  /** The id as stored (not checked against the vocabulary). */
  id: number;
  /** Whether llama.cpp reads this key. */
  recognized: boolean;
}

export interface ReadOptions {
  /** readTensor: fill this array (at least the rows' values; the result is its first part)
   * instead of a new one. */
  into?: Float32Array;
  /** Rows [a, b) (default: all). */
  rows?: [number, number];
  signal?: AbortSignal;
  onProgress?: (progress: Progress) => void;
  /** Bytes per request (default 8 MiB). */
  chunkBytes?: number;
}

export interface TensorReadOptions extends ReadOptions {
  /** Opt-in: workers (a number of the package's own pooled workers, or your module workers
   * running `gguf-lens/stats-worker`, as for tensorStats) fill the result, each
   * reading its own rows: the result is then a new Float32Array over a **SharedArrayBuffer**
   * (postMessage shares it instead of copying; `buffer instanceof ArrayBuffer` is false). With an
   * `into` over a SharedArrayBuffer, workers fill it (default: tensorStats' default count);
   * with an `into` over an ArrayBuffer, or where memory cannot be shared (a page not
   * cross-origin isolated), this thread reads. The same bits either way. The model must have
   * been opened from a URL, path, File or Blob. 0: this thread. A dropped shared result is
   * freed late (V8 does not count SharedArrayBuffers towards collections): for repeated reads,
   * reuse one shared `into`. */
  workers?: Worker[] | number;
}

/** Statistics as `gguf-lens stats` computes them (the same core, the same bits). */
export interface TensorStats {
  count: number;
  finiteCount: number;
  /** min/max/mean/std of the finite values; null without any. std is the population's. */
  min: number | null;
  max: number | null;
  mean: number | null;
  std: number | null;
  nanCount: number;
  /** Infinities of either sign (posInfCount + negInfCount). */
  infCount: number;
  posInfCount: number;
  negInfCount: number;
  zeroCount: number;
  /** numpy's histogram over exactly [min, max] of the finite values (empty without any). */
  histogram: { edges: number[]; counts: number[] };
  /** Exact, as numpy.percentile (linear); null when `percentiles: false` or no finite value. */
  percentiles: { p1: number; p50: number; p99: number } | null;
}

export interface StatsOptions extends ReadOptions {
  /** Histogram bins (default 64; 0: none). */
  bins?: number;
  /** p1/p50/p99 (default true; counted in the same two passes as the histogram). */
  percentiles?: boolean;
  /** A number of workers the package starts and keeps for later calls (Node: worker_threads,
   * idle and unreferenced; browsers: module workers running its stats-worker.js, which Vite and
   * webpack bundle), or your own module workers running `gguf-lens/stats-worker`: each reads
   * and dequantizes its own run of rows; the same numbers as without. The model must have been
   * opened from a URL, path, File or Blob (each worker opens it too; a buffer throws a
   * TypeError). Default: in Node, one worker per core (at most 8) for at least 2^25 values of a
   * local file, else none; 0: this thread only. */
  workers?: Worker[] | number;
}

export declare class GgufModel {
  readonly format: 'gguf';
  readonly version: number;
  readonly endian: 'little' | 'big';
  readonly alignment: number;
  readonly dataOffset: number;
  readonly headerLength: number;
  /** Total bytes (all shards). */
  readonly byteLength: number;
  readonly metadata: MetadataEntry[];
  readonly tensors: TensorInfo[];
  readonly shards: GgufModel[];
  /** Requests made and bytes received so far. */
  readonly ioStats: { requests: number; bytes: number };
  get(key: string): number | bigint | boolean | string | ArrayEntry | undefined;
  summary(): Summary;
  /** Every special-token id the metadata names, in llama.cpp's order. */
  specialTokens(): SpecialToken[];
  tensor(name: string): TensorInfo;
  readTensor(name: string, options?: TensorReadOptions): Promise<Float32Array>;
  readTensorBytes(name: string, options?: ReadOptions): Promise<Uint8Array>;
  tensorStats(name: string, options?: StatsOptions): Promise<TensorStats>;
  /** Loads the full wasm module (tokenizer, templates, dequantization, stats, …) and moves the
   * header into it, once. Opening parses in the small core module, so a summary never waits for
   * the full one; every method that needs it calls this itself. Call it ahead (after showing the
   * summary) so that the first tokenize or read does not wait for the download. */
  preload(): Promise<void>;
  /** An editor of the metadata (a split model's first shard): set, remove, then toBlob/toStream. */
  edit(): Promise<GgufEditor>;
  /** What is wrong with the file, from its header (every shard of a split model). */
  lint(): Promise<LintReport>;
  /** llama-gguf-hash's tensor-data digests (no algorithm chosen: xxh64, as there). */
  hash(options?: HashOptions): Promise<HashReport>;
  /** The error of quantizing the tensor's values to each type, bit-exact to ggml's quantizers
   * without an importance matrix. */
  quantError(name: string, options?: QuantErrorOptions): Promise<QuantErrorReport>;
  /** What llama.cpp allocates to run this model (llama-server's defaults; see MemoryPlanOptions).
   * Throws llama.cpp's refusals (a quantized V cache without flashAttn, mixed K/V types on MLA). */
  planMemory(options?: MemoryPlanOptions): MemoryPlan;
  /** The flags llama.cpp's llama-fit-params chooses for these GPUs (`gguf-lens fit --json`,
   * camelCased), from the header alone: `-c`, `-ngl`, `-ts`, `-ot` and the per-device plan. */
  fit(options: FitOptions): FitResult;
  /** Token ids as llama.cpp's llama_tokenize gives them (SPM, BPE, WPM and UGM vocabularies). */
  tokenize(text: string | Uint8Array, options?: TokenizeOptions): Promise<Int32Array>;
  /** The ids' pieces concatenated, as a string (or bytes with `bytes: true`). */
  detokenize(ids: ArrayLike<number>, options?: { special?: boolean; bytes?: false }): Promise<string>;
  detokenize(ids: ArrayLike<number>, options: { special?: boolean; bytes: true }): Promise<Uint8Array>;
  /** llama_token_to_piece(id, special) as bytes. */
  tokenPiece(id: number, options?: { special?: boolean }): Promise<Uint8Array>;
  /** Each id's piece as text, and whether it is a control token (for colouring tokens). */
  tokenPieces(ids: ArrayLike<number>, options?: { special?: boolean }): Promise<{ pieces: string[]; control: boolean[] }>;
  /** The chat template rendered as transformers' apply_chat_template does (jinja2). */
  renderChatTemplate(messages: ChatMessage[], options?: ChatTemplateOptions): Promise<string>;
  close(): Promise<void>;
}

export interface LintFinding {
  /** Stable code, e.g. 'file-type-lie', 'tensor-missing', 'token-id-out-of-vocab' (docs/cli.md lists them). */
  code: string;
  /** error: llama.cpp fails or misbehaves, or a label lies; warning: harmless untidiness. */
  severity: 'error' | 'warning' | 'info';
  message: string;
  offset?: number;
  key?: string;
  tensor?: string;
  shard?: number;
}

export interface LintReport {
  findings: LintFinding[];
  errors: number;
  warnings: number;
  infos: number;
}

/** A KV cache type, as llama.cpp's --cache-type-k/-v take it. */
export type KvCacheType = 'f32' | 'f16' | 'bf16' | 'q8_0' | 'q4_0' | 'q4_1' | 'iq4_nl' | 'q5_0' | 'q5_1';

/** `llama-server -c ctx -np parallel -ngl ngl --cache-type-k/-v -fa on|off`. */
export interface MemoryPlanOptions {
  /** Total context over every slot (default: the training context). */
  ctx?: number;
  /** Parallel slots, each with its own KV cache (default 1). */
  parallel?: number;
  cacheTypeK?: KvCacheType;
  cacheTypeV?: KvCacheType;
  /** -fa on (default off). */
  flashAttn?: boolean;
  /** Layers offloaded (the output layer counts as one); with gpuMem and no ngl, the most that fit. */
  ngl?: number;
  /** GPU memory in bytes: picks ngl (unless given) and answers maxCtx. */
  gpuMem?: number;
  /** The model path in `command` (default "model.gguf"). */
  file?: string;
}

export interface KvCachePlan {
  swa: boolean;
  /** Cells per slot. */
  cells: number;
  layers: number;
  streams: number;
  kBytes: number;
  vBytes: number;
}

/** The fields of `gguf-lens memory --json`, camelCased. */
export interface MemoryPlan {
  architecture: string;
  nLayer: number;
  nCtxTrain: number;
  nCtx: number;
  nCtxSeq: number;
  nSeqMax: number;
  ngl: number;
  cacheTypeK: KvCacheType;
  cacheTypeV: KvCacheType;
  flashAttn: boolean;
  weightsBytes: number;
  weights: { cpuBytes: number; gpuBytes: number };
  /** Of weights.gpuBytes: the GPU copy of token_embd a tied output reads once offloaded (else 0). */
  tiedOutputCopyBytes: number;
  /** K + V + recurrent state. */
  kvCacheBytes: number;
  kvCache: {
    kBytes: number;
    vBytes: number;
    swaBytes: number;
    cpuBytes: number;
    gpuBytes: number;
    caches: KvCachePlan[];
    recurrentBytes: number;
    recurrent: { cells: number; layers: number; rBytes: number; sBytes: number } | null;
  };
  /** The compute buffers, both devices: an estimate. */
  computeBytes: number;
  /** Each device's compute buffer (without `ngl` all the CPU's). */
  compute: { cpuBytes: number; gpuBytes: number };
  /** False when the compute buffers are derived from the graph as llama.cpp allocates it
   * (Llama, Mistral, Mixtral, Qwen2, Qwen3, Qwen3-MoE); true for the families where they are estimated. */
  computeEstimated: boolean;
  totalBytes: number;
  cpuBytes: number;
  gpuBytes: number;
  gpuMem: number | null;
  /** The largest context whose GPU share fits gpuMem (null without gpuMem; may exceed nCtxTrain). */
  maxCtx: number | null;
  command: string;
}

/** llama-fit-params' inputs, in bytes (as planMemory's gpuMem). */
export interface FitOptions {
  /** Each GPU's free memory (at least one GPU, at most 16). */
  gpus: number[];
  /** Memory left free on each GPU (llama.cpp's -fitt): one for all, or one per GPU (default 1 GiB). */
  margin?: number | number[];
  /** -c set by the user: never reduced (default: the training context, reduced to fit). */
  ctx?: number;
  /** -fitc: the smallest context the fit reduces to (default 4096). */
  nCtxMin?: number;
  parallel?: number;
  cacheTypeK?: KvCacheType;
  cacheTypeV?: KvCacheType;
  flashAttn?: boolean;
  /** Each GPU's buffer name in `-ot` (default CUDA0, CUDA1, …). */
  gpuNames?: string[];
}

/** One device's bytes in a fit (weights and KV exact, compute an estimate). */
export interface FitDevice {
  weightsBytes: number;
  kvCacheBytes: number;
  computeBytes: number;
  totalBytes: number;
}

/** `gguf-lens fit --json`, camelCased. */
export interface FitResult {
  nCtx: number;
  ngl: number;
  /** -ts: layers per GPU (empty with one GPU; trailing zeros are not printed in flags). */
  tensorSplit: number[];
  /** -ot, in llama.cpp's order: buffer 'CPU' or a GPU's name. */
  overrides: Array<{ pattern: string; buffer: string }>;
  /** Each GPU: its layers, of them partial (experts or part of the FFN elsewhere), and bytes. */
  gpus: Array<FitDevice & { layers: number; partialLayers: number }>;
  cpu: FitDevice;
  /** Whether every GPU keeps its margin (else the closest llama.cpp finds). */
  fits: boolean;
  /** llama.cpp keeps its default layers (`-ngl -1`, no -ts). */
  defaultLayers: boolean;
  /** False when the compute buffers are derived from the graph (Llama, Mistral, Mixtral, Qwen2,
   * Qwen3, Qwen3-MoE: exact); true where they are estimated. */
  computeEstimated: boolean;
  /** The line llama-fit-params prints: `-c N -ngl N [-ts a,b] [-ot "..."]`. */
  flags: string;
}

export interface TokenizeOptions {
  /** add_special (default true): BOS/EOS as the file says. */
  addSpecial?: boolean;
  /** parse_special (default false): special-token text becomes the special token. */
  parseSpecial?: boolean;
}

/** One chat message: {role, content, tool_calls?, ...}, as transformers takes it. */
export interface ChatMessage {
  role: string;
  content?: unknown;
  [key: string]: unknown;
}

export interface ChatTemplateOptions {
  /** The tools list (none when absent). */
  tools?: unknown[] | null;
  addGenerationPrompt?: boolean;
  /** Extra template variables, e.g. { enable_thinking: false }. */
  variables?: Record<string, unknown>;
  /** A template text instead of the file's tokenizer.chat_template. */
  template?: string | null;
}

/** A GGUF spec type name, as `set` takes it (for an array value: its items' type). */
export type GgufTypeName = 'uint8' | 'int8' | 'uint16' | 'int16' | 'uint32' | 'int32' | 'uint64' | 'int64'
  | 'float32' | 'float64' | 'bool' | 'string';

export type EditValue = string | number | boolean | Array<string | number | boolean>;

export interface EditChange {
  key: string;
  op: 'set' | 'add' | 'remove';
  before: unknown;
  after: EditValue | undefined;
  type: string | undefined;
}

/** The edited file: the new header, then pieces of the input (`from: null`: `len` zero bytes). */
export interface EditPlan {
  header: Uint8Array;
  pieces: Array<{ from: number | null; len: number }>;
  /** The edited file's bytes (the header's plus every piece's). */
  len: number;
}

/** Pending metadata edits; checked as they are made (a bad value throws one line naming the key). */
export declare class GgufEditor {
  /** Without `type`: the existing key's type, or one guessed from the value for a new key. */
  set(key: string, value: EditValue, type?: GgufTypeName): this;
  remove(key: string): this;
  setChatTemplate(text: string): this;
  /** Forgets the pending change of `key`, or every change. */
  reset(key?: string): this;
  changes(): EditChange[];
  plan(): EditPlan;
  /** From a File/Blob nothing is read (header + slices); other inputs are read into memory. */
  toBlob(options?: { signal?: AbortSignal }): Promise<Blob>;
  /** Reads the input as the stream is consumed. */
  toStream(options?: { signal?: AbortSignal; chunkBytes?: number; onProgress?: (p: Progress) => void }): ReadableStream<Uint8Array>;
}

export interface HashOptions {
  xxh64?: boolean;
  sha1?: boolean;
  sha256?: boolean;
  uuid?: boolean;
  /** xxh64, sha1 and sha256 (not uuid, as llama-gguf-hash's --all). */
  all?: boolean;
  /** Per-tensor digests too (default true; false: llama-gguf-hash's --no-layer). */
  perTensor?: boolean;
  /** The name printed in `lines` (default: the path or File name given to open). */
  fileName?: string;
  chunkBytes?: number;
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
}

export interface Digests {
  xxh64?: string;
  sha1?: string;
  sha256?: string;
  uuid?: string;
}

export interface HashReport {
  tensors: Array<Digests & { name: string }>;
  model: Digests;
  /** llama-gguf-hash's output, line for line. */
  lines: string;
}

export interface QuantErrorOptions extends ReadOptions {
  /** ggml type names (default: every type gguf-lens quantizes to: F16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0
   * Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_NL IQ4_XS BF16 TQ1_0 TQ2_0 MXFP4). */
  types?: string[];
  /** About this many rows, in up to 64 evenly spaced runs (default: every row of `rows`);
   * progress then counts rows. */
  sampleRows?: number;
  /** GGUF: as for tensorStats, a number of the package's own workers (Node or browsers) or
   * your module workers running `gguf-lens/stats-worker`: the rows are shared among them and the sums merged
   * exactly (the same result bit for bit as without). */
  workers?: Worker[] | number;
}

export interface QuantErrorResult {
  type: string;
  bitsPerWeight: number;
  nValues: number;
  rmse: number;
  maxAbsError: number;
  /** RMSE over the RMS of the values. */
  relativeRmse: number;
  /** Cosine similarity of the values and their round trip. */
  cosine: number;
}

export interface QuantErrorReport {
  results: QuantErrorResult[];
  /** Types whose block does not divide the row length, or whose scale overflowed f16. */
  skipped: { type: string; reason: string }[];
}

/** A transport failure (HTTP status, dropped connection, truncated body, missing size). */
export declare class SourceError extends Error {
  readonly retryable: boolean;
}

/**
 * Opens a GGUF file and parses its header, reading only the header's bytes. A URL or path
 * named `…-00001-of-0000N.gguf`, or an array of inputs, opens every shard of a split model.
 */
export declare function openGguf(input: GgufInput | GgufInput[], options?: OpenOptions): Promise<GgufModel>;

/** "simd128" or "scalar". */
export declare function kernelName(): Promise<string>;

/** Whether the engine runs WebAssembly SIMD (the package then loads its simd128 build). */
export declare function simdSupported(): boolean;

/** Load the scalar build even where SIMD works; call before the first file is opened. */
export declare function setWasmSimd(enabled: boolean): void;

export declare const FIRST_READ_BYTES: number;
export declare const SAFETENSORS_FIRST_READ_BYTES: number;
export declare const CHUNK_BYTES: number;
export declare function toSource(input: GgufInput, options?: OpenOptions): Promise<unknown>;

// ---------- comparing two models (the definitions of `gguf-lens diff`, src/compare.rs) ----------

export interface SummaryFieldDiff {
  /** architecture, name, parameters, file_type, bits_per_weight, file_size, context_length,
   * block_count, embedding_length, vocab_size, tensor_count; `format` first when the formats
   * differ. */
  name: string;
  /** null when the file does not say. */
  a: string | number | null;
  b: string | number | null;
  /** Whether a difference in this field counts: two GGUF models only (as `gguf-lens diff`). */
  counts: boolean;
  /** The values differ and the field counts. */
  differs: boolean;
}

export interface KeyChange {
  key: string;
  typeA: string;
  typeB: string;
  /** When both values are arrays. */
  array: {
    itemTypeA: string;
    itemTypeB: string;
    lenA: number;
    lenB: number;
    /** Indices below the shorter length whose items differ (null when the item types differ). */
    differingItems: number | null;
    /** The first differing index, or the shorter length when only the lengths differ (null when the item types differ). */
    firstDifference: number | null;
  } | null;
}

export interface ModelDiff {
  /** Each model's format. */
  formats: ['gguf' | 'safetensors', 'gguf' | 'safetensors'];
  /** 'gguf' for two GGUF models (ggml types); 'logical' otherwise (type names, a GPTQ layer as
   * `<layer>.weight` [out, in] of type `GPTQ-<bits>bit`). Shapes are row-major, outermost
   * first, either way. */
  layout: 'gguf' | 'logical';
  /** Fields by name; null on a side whose format has no such field. */
  summary: SummaryFieldDiff[];
  /** null when the formats differ: GGUF key-values and safetensors `__metadata__` are not compared. */
  metadata: {
    /** Keys in file order. Values are equal when of the same type and value: floats by bits,
     * strings by bytes, arrays item by item in full. */
    onlyA: string[];
    onlyB: string[];
    changed: KeyChange[];
    /** Keys with the same value in both. */
    same: number;
  } | null;
  /** Why `metadata` is null (a sentence), else null. */
  metadataNotCompared: string | null;
  tensors: {
    onlyA: { name: string; type: string; shape: number[] }[];
    onlyB: { name: string; type: string; shape: number[] }[];
    shapeChanges: { name: string; a: number[]; b: number[] }[];
    /** Whatever the shapes. */
    typeChanges: { name: string; a: string; b: string }[];
    /** Type changes counted per (A type, B type), in type id order (by name in the logical layout). */
    transitions: { a: string; b: string; tensors: number }[];
    /** Same name and shape in both (the ones compareTensor takes), A's order. */
    matching: { name: string; typeA: string; typeB: string; shape: number[]; nElements: number }[];
  };
}

export interface ValueMetrics {
  /** Pairs seen. */
  elements: number;
  /** Pairs where both values are finite; the metrics below are over those, null when there is none. */
  count: number;
  rmse: number | null;
  maxAbs: number | null;
  meanAbs: number | null;
  /** RMSE / RMS(a): 0 when RMSE is 0, null when RMS(a) is 0 and RMSE is not. */
  relRmse: number | null;
  /** Σab / √(Σa²·Σb²): 1 when both are all zeros, 0 when only one is. */
  cosine: number | null;
  /** Pairs with a NaN in one value only. */
  nanMismatch: number;
  /** Pairs with an infinity in either value and a ≠ b. */
  infMismatch: number;
  /** max |a−b| = 0 over the finite pairs and no NaN or Inf mismatch. */
  identical: boolean;
}

/** Summary fields side by side, metadata and tensor differences of two models: GGUF (single or
 * split) and safetensors checkpoints (single, sharded, GPTQ) in any pairing. A split GGUF
 * model's metadata is its first shard's, its tensors every shard's; a checkpoint's metadata is
 * `__metadata__` (a key's first value across shards). */
export declare function compareModels(a: GgufModel | SafetensorsModel, b: GgufModel | SafetensorsModel): Promise<ModelDiff>;

/**
 * The diff of two models as `gguf-lens diff` renders it (one Rust renderer for both):
 * 'markdown' (default), 'json' (the document of `diff --format json`, with a newline) or
 * 'text'. `paths` are the names shown for A and B (default 'A', 'B'); `values`, the tensors
 * compared so far (compareTensor's results by name), are listed as `diff --values` lists them.
 */
export declare function compareReport(
  a: GgufModel | SafetensorsModel,
  b: GgufModel | SafetensorsModel,
  options?: {
    format?: 'markdown' | 'json' | 'text';
    paths?: [string, string];
    values?: Map<string, ValueMetrics> | Iterable<[string, ValueMetrics]>;
  },
): Promise<string>;

/** Values per file and read in compareTensor when a model is not GGUF (default chunkElements). */
export declare const COMPARE_CHUNK_ELEMENTS: number;

/**
 * Reads a tensor (the same name and shape in both) from both models in row chunks and compares
 * the values, a[i] with b[i], summed in f64 in wasm. Progress is in rows. Two GGUF models are
 * read in chunks of at most CHUNK_BYTES per file unless `chunkElements` is given.
 */
export declare function compareTensor(
  a: GgufModel | SafetensorsModel,
  b: GgufModel | SafetensorsModel,
  name: string,
  options?: { signal?: AbortSignal; onProgress?: (progress: Progress) => void; chunkElements?: number },
): Promise<ValueMetrics>;

// ---------- safetensors and GPTQ ----------

export interface SafetensorsOptions extends OpenOptions {
  /** A quantize_config.json object, or its URL (a Node path in Node). */
  quantizeConfig?: object | string | URL;
  /** A transformers config.json object (its quantization_config is used), or its URL / path. */
  config?: object | string | URL;
  /** Look for quantize_config.json, then config.json beside a URL or path (404 tolerated). Default true. */
  findConfig?: boolean;
  /** How v1 (checkpoint_format "gptq") zeros get their 1 back: llama.cpp's stored + 1 (default)
   * or GPTQModel's (stored + 1) mod 2^bits. They differ only on a stored zero of 2^bits − 1. */
  v1Zeros?: 'llama.cpp' | 'gptqmodel';
}

export interface SafetensorsTensorInfo {
  name: string;
  /** The dtype as the header spells it: "F16", "BF16", "I32", "F8_E4M3", ... (`type` for every
   * format, as TensorInfo's). */
  type: string;
  /** -1: a safetensors dtype has no ggml type id. */
  typeId: number;
  /** Outermost first (PyTorch order); a row is the last dimension. */
  shape: number[];
  nElements: number;
  /** Absolute byte offset in the file. */
  offset: number;
  /** Offset relative to the data section. */
  relativeOffset: number;
  nBytes: number;
  rowLength: number;
  nRows: number;
  /** null for sub-byte dtypes (F4, F6), which are not read as f32. */
  rowBytes: number | null;
  /** Index of the shard holding it (0 for a single file). */
  shard: number;
  /** Whether readTensor converts it to f32. */
  plain: boolean;
}

export interface QuantConfig {
  bits: number | null;
  /** −1: one group over all inputs. */
  groupSize: number | null;
  descAct: boolean | null;
  sym: boolean | null;
  checkpointFormat: 'gptq' | 'gptq_v2';
}

export interface GptqLayer {
  /** The prefix, e.g. "model.layers.0.self_attn.q_proj"; readTensor takes it. */
  name: string;
  bits: number;
  groupSize: number;
  inFeatures: number;
  outFeatures: number;
  nGroups: number;
  /** Whether a g_idx tensor gives each input's group. */
  hasGIdx: boolean;
  /** The config's desc_act (null without a config). */
  actOrder: boolean | null;
  checkpointFormat: 'gptq' | 'gptq_v2';
  scalesDtype: string;
  parts: { qweight: string; qzeros: string; scales: string; g_idx?: string };
  /** outFeatures: rows of the dequantized [out, in] weight. */
  nRows: number;
  /** inFeatures. */
  rowLength: number;
  nElements: number;
  /** Bytes of all its parts. */
  nBytes: number;
}

/** An MLX affine-quantized layer (config.json's `quantization`), read as `<path>.weight`. */
export interface MlxLayer {
  /** `<path>.weight`: the name readTensor, tensorStats and quantError take. */
  name: string;
  /** The layer's path, e.g. "model.layers.0.mlp.up_proj". */
  path: string;
  /** "MLX-<bits>bit-g<group>". */
  type: string;
  bits: number;
  groupSize: number;
  /** Logical, outermost first (the stored weight's last dimension unpacked). */
  shape: number[];
  nRows: number;
  rowLength: number;
  nElements: number;
  scalesDtype: string;
  parts: { weight: string; scales: string; biases: string };
  /** Bytes of all its parts. */
  nBytes: number;
}

/** An FP8 block-scaled layer (config.json's `quantization_config`, `quant_method: fp8`), read as
 * `<path>.weight`. */
export interface Fp8Layer {
  /** `<path>.weight`: the name readTensor, tensorStats and quantError take. */
  name: string;
  path: string;
  /** "FP8-E4M3-block128" (square blocks) or "FP8-E4M3-block<rows>x<columns>". */
  type: string;
  /** [out, in]. */
  shape: number[];
  /** Rows x columns of one scale's block. */
  block: number[];
  nRows: number;
  rowLength: number;
  nElements: number;
  scaleDtype: string;
  parts: { weight: string; weightScaleInv: string };
  /** Bytes of both parts. */
  nBytes: number;
}

/** A compressed-tensors layer (config.json's `quantization_config`, `quant_method:
 * compressed-tensors`), read as `<path>.weight` (as the package's `decompress`). */
export interface CtLayer {
  /** `<path>.weight`: the name readTensor, tensorStats and quantError take. */
  name: string;
  path: string;
  /** "CT-W4A16-g128", "CT-W8A16-ch", "CT-W4A16-g32-asym", "CT-FP8-E4M3-t", ... */
  type: string;
  format: 'pack-quantized' | 'int-quantized' | 'float-quantized';
  bits: number;
  strategy: 'tensor' | 'channel' | 'group';
  /** null unless strategy is "group". */
  groupSize: number | null;
  symmetric: boolean;
  /** [out, in]. */
  shape: number[];
  nRows: number;
  rowLength: number;
  nElements: number;
  scaleDtype: string;
  /** Stored tensor names (weight: `.weight_packed` when pack-quantized, else `.weight`). */
  parts: { weight: string; weightScale: string; weightShape?: string; weightZeroPoint?: string };
  /** Bytes of all its parts. */
  nBytes: number;
}

/** A gpt-oss MXFP4 tensor (config.json's `quantization_config`, `quant_method: mxfp4`):
 * `<name>_blocks` + e8m0 `<name>_scales`, read as `<name>` (as transformers'
 * `convert_moe_packed_tensors`). */
export interface Mxfp4Layer {
  /** The logical name (`model.layers.0.mlp.experts.gate_up_proj`): what readTensor takes. */
  name: string;
  /** The same as name. */
  path: string;
  type: 'MXFP4';
  /** [experts, groups * 32, rowsPerExpert]. */
  shape: number[];
  experts: number;
  rowsPerExpert: number;
  /** Blocks of 32 values per stored row. */
  groups: number;
  nRows: number;
  rowLength: number;
  nElements: number;
  parts: { blocks: string; scales: string };
  /** Bytes of both parts. */
  nBytes: number;
}

/** config.json's compressed-tensors `quantization_config`: its one weight scheme. */
export interface CtConfig {
  format: 'pack-quantized' | 'int-quantized' | 'float-quantized';
  numBits: number;
  type: 'int' | 'float';
  strategy: 'tensor' | 'channel' | 'group';
  groupSize: number | null;
  symmetric: boolean;
  /** Input activations' bits (16 when they stay unquantized). */
  inputActivationBits: number;
  /** Modules left unquantized, as the config lists them. */
  ignore: string[];
  /** The layers' type label ("CT-W4A16-g128"). */
  label: string;
}

/** config.json's FP8 `quantization_config`. */
export interface Fp8Config {
  fmt: 'e4m3';
  weightBlockSize: number[];
  modulesToNotConvert: string[];
  activationScheme: string | null;
}

/** config.json's MLX `quantization` (mode affine): the defaults and per-layer entries. */
export interface MlxQuantization {
  mode: 'affine';
  bits: number;
  groupSize: number;
  /** By path: the layer's parameters, or false (left unquantized). */
  layers: Record<string, { bits: number; groupSize: number } | false>;
}

export interface DtypeShare {
  /** A dtype ("BF16"), "GPTQ-4bit" for GPTQ layers, "MLX-4bit-g64" for MLX layers,
   * "FP8-E4M3-block128" for FP8 layers or "CT-W4A16-g128" for compressed-tensors layers (their
   * parts counted there, elements as the logical weights). */
  type: string;
  tensors: number;
  elements: number;
  bytes: number;
  share: number;
}

export interface SafetensorsSummary extends Summary {
  format: 'safetensors';
  /** The same shares as quantMix (typeId -1 there). */
  dtypeMix: DtypeShare[];
  gptq: {
    layers: number;
    bits: number | null;
    groupSize: number | null;
    descAct: boolean | null;
    sym: boolean | null;
    checkpointFormat: 'gptq' | 'gptq_v2';
    /** Where the config came from (a URL, path, or "options.quantizeConfig"); null if none. */
    configSource: string | null;
  } | null;
  /** null without an MLX config. */
  mlx: {
    layers: number;
    /** The defaults' (layers may override them: see dtypeMix). */
    bits: number;
    groupSize: number;
    /** Layers quantized otherwise than the defaults. */
    overrides: number;
  } | null;
  /** null without an FP8 config. */
  fp8: {
    layers: number;
    block: number[];
    /** modules_to_not_convert, as the config lists them. */
    notConverted: string[];
  } | null;
  /** null without an MXFP4 config. */
  mxfp4: { layers: number; notConverted: string[] } | null;
  /** null without a compressed-tensors config. */
  ct: {
    layers: number;
    /** The layers' type label ("CT-W4A16-g128"). */
    label: string;
    format: 'pack-quantized' | 'int-quantized' | 'float-quantized';
    bits: number;
    strategy: 'tensor' | 'channel' | 'group';
    groupSize: number | null;
    symmetric: boolean;
    /** The config's `ignore`: modules left unquantized. */
    ignore: string[];
  } | null;
}

export declare class SafetensorsModel {
  readonly format: 'safetensors';
  readonly byteLength: number;
  readonly dataOffset: number;
  readonly headerLength: number;
  /** __metadata__ as entries, the shape of GgufModel.metadata (every value a string). */
  readonly metadata: ScalarEntry[];
  /** A __metadata__ value, or undefined. */
  get(key: string): string | undefined;
  readonly tensors: SafetensorsTensorInfo[];
  /** The shards' models of a sharded checkpoint (opened from its index); [this] for one file. */
  readonly shards: SafetensorsModel[];
  /** The index's "metadata" (e.g. total_size), for a sharded checkpoint. */
  readonly indexMetadata?: Record<string, unknown>;
  readonly gptqLayers: GptqLayer[];
  /** Why some `.qweight` (GPTQ) or `.scales` (MLX) tensors are not layers. */
  readonly gptqLayerErrors: string[];
  /** MLX layers, each read (dequantized as `mx.dequantize`) as its `<path>.weight`. */
  readonly mlxLayers: MlxLayer[];
  /** config.json's MLX `quantization` (quantConfigSource says where it came from). */
  readonly mlxQuantization: MlxQuantization | null;
  /** FP8 block-scaled layers, each read (dequantized as transformers' `Fp8Dequantize`) as its `<path>.weight`. */
  readonly fp8Layers: Fp8Layer[];
  /** config.json's FP8 `quantization_config` (quantConfigSource says where it came from). */
  readonly fp8Config: Fp8Config | null;
  /** compressed-tensors layers, each read (dequantized as the package's `decompress`) as its `<path>.weight`. */
  readonly ctLayers: CtLayer[];
  /** config.json's compressed-tensors `quantization_config` (quantConfigSource says where it came from). */
  readonly ctConfig: CtConfig | null;
  /** gpt-oss MXFP4 tensors, each read (dequantized as transformers' `convert_moe_packed_tensors`) as its `name`. */
  readonly mxfp4Layers: Mxfp4Layer[];
  /** config.json's MXFP4 `quantization_config`. */
  readonly mxfp4Config: { modulesToNotConvert: string[] } | null;
  readonly quantConfig: QuantConfig | null;
  readonly quantConfigSource: string | null;
  /** Set when a config found beside the file could not be used. */
  readonly quantConfigError?: string;
  readonly ioStats: { requests: number; bytes: number };
  tensor(name: string): SafetensorsTensorInfo;
  gptqLayer(name: string): GptqLayer | undefined;
  summary(): SafetensorsSummary;
  /** A stored tensor's rows as f32 (torch's conversion), a GPTQ layer's output rows
   * dequantized ([out, in], bit for bit as llama.cpp / GPTQModel; a layer's parts are fetched
   * whole), or an MLX, FP8 block-scaled or compressed-tensors layer's rows (by `<path>.weight`,
   * as `mx.dequantize` / transformers' `Fp8Dequantize` / compressed-tensors' `decompress`; rows
   * fetched by Range). */
  readTensor(name: string, options?: ReadOptions & { v1Zeros?: 'llama.cpp' | 'gptqmodel' }): Promise<Float32Array>;
  readTensorBytes(name: string, options?: ReadOptions): Promise<Uint8Array>;
  tensorStats(name: string, options?: StatsOptions & { v1Zeros?: 'llama.cpp' | 'gptqmodel' }): Promise<TensorStats>;
  /** The error of quantizing a stored tensor's or GPTQ layer's values to each ggml type. */
  quantError(name: string, options?: QuantErrorOptions & { v1Zeros?: 'llama.cpp' | 'gptqmodel' }): Promise<QuantErrorReport>;
  /** Resolves at once: a checkpoint is read with the full module from the start. */
  preload(): Promise<void>;
  close(): Promise<void>;
}

/** Opens a safetensors checkpoint (plain or GPTQ), reading only its header (at most 2 requests).
 * A URL or Node path naming `model.safetensors.index.json` opens every shard beside it as one
 * model (GPTQ layers whose parts straddle shards included). */
export declare function openSafetensors(input: GgufInput, options?: SafetensorsOptions): Promise<SafetensorsModel>;

/** Opens a GGUF file or a safetensors checkpoint, by extension or by its first bytes. */
export declare function open(input: GgufInput | GgufInput[], options?: SafetensorsOptions): Promise<GgufModel | SafetensorsModel>;

/** Hugging Face Hub listing options (listRepoGgufs, inspectRepoGgufs, scanRepo). */
export interface HubOptions {
  /** Branch, tag or commit (default "main", or the one a Hub address names). */
  revision?: string;
  /** Default https://huggingface.co (a mirror or a local mock): https, or http on 127.0.0.0/8,
   * localhost or [::1] only (checkHubEndpoint). */
  endpoint?: string;
  fetch?: typeof fetch;
  /** Sent to the tree API and every file read, e.g. { Authorization: 'Bearer hf_…' } for gated
   * repos; only to the endpoint's origin (a redirect elsewhere drops them). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** As OpenOptions.stallTimeoutMs, for the listing and every file read. Default 30000. */
  stallTimeoutMs?: number;
}

export interface RepoGgufFile {
  path: string;
  /** Bytes (the LFS object's size), or null when the API gives none. */
  size: number | null;
  /** {endpoint}/{owner}/{name}/resolve/{revision}/{path} */
  url: string;
  /** 1-based shard number of a split file. */
  shard?: number;
}

/** One model: a single .gguf file, or every shard of a split one (-00001-of-00003.gguf …). */
export interface RepoGguf {
  /** The path, or for a split model "prefix-*-of-00003.gguf". */
  name: string;
  /** The (first shard's) path. */
  path: string;
  files: RepoGgufFile[];
  /** Sum of the files' sizes (null when one is unknown). */
  size: number | null;
  split: { count: number; missing: number[] } | null;
}

export interface RepoListing {
  repo: string;
  revision: string;
  endpoint: string;
  /** Tree API pages fetched. */
  requests: number;
  models: RepoGguf[];
}

/** The planner's answer for one device (see repoVerdict). */
export type RepoVerdict = {
  /** null: no GPU (all on the CPU). */
  gpuMem: number | null;
  ctx: number;
  /** Most layers to offload (-ngl) at ctx within gpuMem. */
  ngl: number;
  /** Every layer, the output layer included (n_layer + 1). */
  nglFull: number;
  /** Every layer fits the GPU at ctx (null without a GPU). */
  fits: boolean | null;
  /** The largest context with every layer offloaded (null: not even 256 cells, or no GPU). */
  maxCtx: number | null;
  gpuBytes: number;
  totalBytes: number;
  command: string;
} | { error: string };

/** A GPU budget and planMemory options. */
export interface RepoDevice extends Omit<MemoryPlanOptions, 'gpuMem' | 'ngl'> {
  /** GPU memory in bytes (absent or 0: no GPU). */
  gpuMem?: number | null;
}

export interface RepoGgufRow extends RepoGguf {
  /** The open model (headers only), until closeRepoModels; null on error. */
  model: GgufModel | null;
  summary: Summary | null;
  verdict: RepoVerdict | null;
  /** One line when a file could not be read or a split model is incomplete. */
  error: string | null;
  /** Requests made and bytes received reading the headers. */
  requests: number;
  bytes: number;
}

export interface InspectOptions extends HubOptions {
  /** Files read at a time (default 3). */
  concurrency?: number;
  device?: RepoDevice;
  /** After each model: how many are done of how many. */
  onProgress?: (progress: { done: number; total: number; row: RepoGgufRow }) => void;
  firstReadBytes?: number;
  retries?: number;
  /** Keep models open for repoVerdict (default true). */
  keepOpen?: boolean;
}

export declare const HUB_ENDPOINT: string;
/** `endpoint` checked as listRepoGgufs checks it (https, or http on 127.0.0.0/8, localhost or
 * [::1]) and without its trailing slash; throws a TypeError otherwise. */
export declare function checkHubEndpoint(endpoint: string): string;
/** "owner/name" or a Hub address as { repo, revision }; throws on anything else. */
export declare function parseRepo(text: string): { repo: string; revision: string | undefined };
/** A repo's GGUF files from the Hub's tree API (every page), split files grouped. */
export declare function listRepoGgufs(repo: string, options?: HubOptions): Promise<RepoListing>;
/** Reads every listed model's headers over Range, `concurrency` files at a time. */
export declare function inspectRepoGgufs(listing: RepoListing, options?: InspectOptions): Promise<RepoGgufRow[]>;
/** The planner's verdict for a device: fits, layers to offload, largest context. */
export declare function repoVerdict(model: GgufModel, device?: RepoDevice): RepoVerdict;
export declare function closeRepoModels(rows: RepoGgufRow[]): Promise<void>;
/** listRepoGgufs then inspectRepoGgufs. */
export declare function scanRepo(repo: string, options?: InspectOptions): Promise<RepoListing & { rows: RepoGgufRow[] }>;
