// The package's public data shapes (options, results, tensor and layer descriptions), as JSDoc
// typedefs: index.js re-exports them, and the published index.d.ts is generated from them and the
// modules' JSDoc (scripts/build-npm.sh). No code: the module exports no value.
/** @import { GgufModel } from './model.js' */

/**
 * Anything openGguf reads bytes from: a string (a URL: http, https, blob or data; in Node also
 * a file path or file: URL), a URL, a Blob (a File included: read with slice(), never whole),
 * an ArrayBuffer or Uint8Array, or anything with a byteLength and a slice().
 * @typedef {string | URL | Blob | ArrayBuffer | Uint8Array | { byteLength: number; slice(start: number, end: number): Uint8Array | ArrayBuffer | Blob | Promise<Uint8Array | ArrayBuffer | Blob> }} GgufInput
 */

/**
 * @typedef {object} Progress
 * @property {number} loaded
 * @property {number | undefined} total
 */

/**
 * @typedef {object} OpenOptions
 * @property {typeof fetch} [fetch] fetch to use for URLs (default globalThis.fetch).
 * @property {Record<string, string>} [headers] Extra request headers (e.g. Authorization): sent only to the origin of the URL opened
 *   (a redirect elsewhere drops them; a shard or config named by a file is beside it).
 * @property {AbortSignal} [signal]
 * @property {(progress: Progress) => void} [onProgress]
 * @property {number} [retries] Retries of a transient failure (network error, 5xx, 429, truncated body). Default 3.
 * @property {number} [retryDelayMs]
 * @property {number} [firstReadBytes] First read length (default 64 KiB for GGUF, 256 KiB for safetensors).
 * @property {number} [stallTimeoutMs] A read (or a wait for a response) with no byte for this long fails with a SourceError
 *   naming it. Default 30000; 0 for none.
 * @property {number} [maxHeaderBytes] Longest header read: default 256 MiB (a safetensors header is also held to the core's
 *   100 MB). A longer header is refused, naming the limit.
 */

/**
 * @typedef {number | bigint | boolean | string | NestedArray} MetadataValue
 */

/**
 * @typedef {object} NestedArray
 * @property {string} itemType
 * @property {number} len
 * @property {MetadataValue[]} value
 */

/**
 * @typedef {object} ScalarEntry
 * @property {string} key
 * @property {string} type Spec type name: uint8 … float64, bool, string.
 * @property {number | bigint | boolean | string} value 64-bit integers are BigInts; strings are decoded lossily (U+FFFD).
 */

/**
 * @typedef {object} ArrayEntry
 * @property {string} key
 * @property {'array'} type
 * @property {string} itemType
 * @property {number} len
 * @property {(start?: number, end?: number) => MetadataValue[]} items Elements [start, end) decoded on demand (clamped to len).
 * @property {() => { bytes: Uint8Array; ends: Uint32Array | null }} packed Every item at once as bytes, to compare whole arrays without one JS value per item: numbers
 *   little-endian, bools 0/1, strings raw (undecoded), nested arrays in a canonical form.
 *   `ends[i]` is where item i ends in `bytes`; null for fixed-size items (bytes.length / len each).
 * @property {(needle: string, options?: { start?: number; limit?: number }) => number[]} findText Indices of the string items containing `needle` (ASCII letters without case), searched in
 *   wasm over the whole array without decoding it into JS; from `start`, at most `limit`.
 *   Non-string arrays match nothing.
 */

/**
 * @typedef {ScalarEntry | ArrayEntry} MetadataEntry
 */

/**
 * @typedef {object} TensorInfo
 * @property {string} name
 * @property {string} type ggml type name, e.g. "Q4_K" (SafetensorsTensorInfo.type is the dtype, same field).
 * @property {number} typeId
 * @property {number[]} shape Row-major, outermost first, as numpy, PyTorch and safetensors give it (the same order for
 *   every format); a row is the last dimension, `rowLength` elements.
 * @property {number[]} ne ggml's `ne`: the dimensions as GGUF stores them, innermost first (`shape` reversed), as
 *   llama.cpp prints them.
 * @property {number} nElements
 * @property {number} offset Absolute byte offset in the (shard's) file.
 * @property {number} relativeOffset Offset relative to the data section.
 * @property {number} nBytes
 * @property {number} rowLength
 * @property {number} nRows
 * @property {number} rowBytes
 * @property {number} shard Index of the shard holding it (0 for a single file).
 */

/**
 * @typedef {object} QuantShare
 * @property {string} type
 * @property {number} typeId
 * @property {number} tensors
 * @property {number} elements
 * @property {number} bytes
 * @property {number} share Fraction of all tensor bytes.
 */

/**
 * One summary for every format: a safetensors checkpoint's has these fields too (null where it
 * has no such thing) and a few of its own (SafetensorsSummary).
 * @typedef {object} Summary
 * @property {'gguf' | 'safetensors'} format
 * @property {number} tensorCount
 * @property {string | null} architecture
 * @property {string | null} name
 * @property {number} parameterCount
 * @property {number} tensorBytes
 * @property {number | null} fileType
 * @property {string | null} fileTypeLabel llama.cpp's label for general.file_type, e.g. "MOSTLY_Q4_K_M".
 * @property {QuantShare[]} quantMix
 * @property {number} bitsPerWeight
 * @property {number | null} contextLength
 * @property {number | null} layers
 * @property {number | null} heads
 * @property {number | null} kvHeads
 * @property {number | null} embeddingSize
 * @property {number | null} vocabSize
 */

/**
 * @typedef {object} SpecialToken
 * @property {string} name Short name: bos, eos, eot, eom, unknown, seperator, padding, cls, mask, fim_pre … fim_sep,
 *   prefix, suffix, middle (llama.cpp's keys), or sep / pad (spellings llama.cpp does not read).
 * @property {string} key The metadata key, e.g. "tokenizer.ggml.eos_token_id".
 * @property {number} id The id as stored (not checked against the vocabulary).
 * @property {boolean} recognized Whether llama.cpp reads this key.
 */

/**
 * @typedef {object} ReadOptions
 * @property {Float32Array} [into] readTensor: fill this array (at least the rows' values; the result is its first part)
 *   instead of a new one.
 * @property {[number, number]} [rows] Rows [a, b) (default: all).
 * @property {AbortSignal} [signal]
 * @property {(progress: Progress) => void} [onProgress]
 * @property {number} [chunkBytes] Bytes per request (default 8 MiB).
 */

/**
 * @typedef {ReadOptions & TensorReadOptionsFields} TensorReadOptions
 */

/**
 * The fields TensorReadOptions adds to ReadOptions.
 * @typedef {object} TensorReadOptionsFields
 * @property {Worker[] | number} [workers] Opt-in: workers (a number of the package's own pooled workers, or your module workers
 *   running `gguf-lens/stats-worker`, as for tensorStats) fill the result, each
 *   reading its own rows: the result is then a new Float32Array over a **SharedArrayBuffer**
 *   (postMessage shares it instead of copying; `buffer instanceof ArrayBuffer` is false). With an
 *   `into` over a SharedArrayBuffer, workers fill it (default: tensorStats' default count);
 *   with an `into` over an ArrayBuffer, or where memory cannot be shared (a page not
 *   cross-origin isolated), this thread reads. The same bits either way. The model must have
 *   been opened from a URL, path, File or Blob. 0: this thread. A dropped shared result is
 *   freed late (V8 does not count SharedArrayBuffers towards collections): for repeated reads,
 *   reuse one shared `into`.
 */

/**
 * Statistics as `gguf-lens stats` computes them (the same core, the same bits).
 * @typedef {object} TensorStats
 * @property {number} count
 * @property {number} finiteCount
 * @property {number | null} min min/max/mean/std of the finite values; null without any. std is the population's.
 * @property {number | null} max
 * @property {number | null} mean
 * @property {number | null} std
 * @property {number} nanCount
 * @property {number} infCount Infinities of either sign (posInfCount + negInfCount).
 * @property {number} posInfCount
 * @property {number} negInfCount
 * @property {number} zeroCount
 * @property {{ edges: number[]; counts: number[] }} histogram numpy's histogram over exactly [min, max] of the finite values (empty without any).
 * @property {{ p1: number; p50: number; p99: number }| null} percentiles Exact, as numpy.percentile (linear); null when `percentiles: false` or no finite value.
 */

/**
 * @typedef {ReadOptions & StatsOptionsFields} StatsOptions
 */

/**
 * The fields StatsOptions adds to ReadOptions.
 * @typedef {object} StatsOptionsFields
 * @property {number} [bins] Histogram bins (default 64; 0: none).
 * @property {boolean} [percentiles] p1/p50/p99 (default true; counted in the same two passes as the histogram).
 * @property {Worker[] | number} [workers] A number of workers the package starts and keeps for later calls (Node: worker_threads,
 *   idle and unreferenced; browsers: module workers running its stats-worker.js, which Vite and
 *   webpack bundle), or your own module workers running `gguf-lens/stats-worker`: each reads
 *   and dequantizes its own run of rows; the same numbers as without. The model must have been
 *   opened from a URL, path, File or Blob (each worker opens it too; a buffer throws a
 *   TypeError). Default: in Node, one worker per core (at most 8) for at least 2^25 values of a
 *   local file, else none; 0: this thread only.
 */

/**
 * @typedef {object} LintFinding
 * @property {string} code Stable code, e.g. 'file-type-lie', 'tensor-missing', 'token-id-out-of-vocab' (docs/cli.md lists them).
 * @property {'error' | 'warning' | 'info'} severity error: llama.cpp fails or misbehaves, or a label lies; warning: harmless untidiness.
 * @property {string} message
 * @property {number} [offset]
 * @property {string} [key]
 * @property {string} [tensor]
 * @property {number} [shard]
 */

/**
 * @typedef {object} LintReport
 * @property {LintFinding[]} findings
 * @property {number} errors
 * @property {number} warnings
 * @property {number} infos
 */

/**
 * A KV cache type, as llama.cpp's --cache-type-k/-v take it.
 * @typedef {'f32' | 'f16' | 'bf16' | 'q8_0' | 'q4_0' | 'q4_1' | 'iq4_nl' | 'q5_0' | 'q5_1'} KvCacheType
 */

/**
 * `llama-server -c ctx -np parallel -ngl ngl --cache-type-k/-v -fa on|off`.
 * @typedef {object} MemoryPlanOptions
 * @property {number} [ctx] Total context over every slot (default: the training context).
 * @property {number} [parallel] Parallel slots, each with its own KV cache (default 1).
 * @property {KvCacheType} [cacheTypeK]
 * @property {KvCacheType} [cacheTypeV]
 * @property {boolean} [flashAttn] -fa on (default off).
 * @property {number} [ngl] Layers offloaded (the output layer counts as one); with gpuMem and no ngl, the most that fit.
 * @property {number} [gpuMem] GPU memory in bytes: picks ngl (unless given) and answers maxCtx.
 * @property {string} [file] The model path in `command` (default "model.gguf").
 */

/**
 * @typedef {object} KvCachePlan
 * @property {boolean} swa
 * @property {number} cells Cells per slot.
 * @property {number} layers
 * @property {number} streams
 * @property {number} kBytes
 * @property {number} vBytes
 */

/**
 * The fields of `gguf-lens memory --json`, camelCased.
 * @typedef {object} MemoryPlan
 * @property {string} architecture
 * @property {number} nLayer
 * @property {number} nCtxTrain
 * @property {number} nCtx
 * @property {number} nCtxSeq
 * @property {number} nSeqMax
 * @property {number} ngl
 * @property {KvCacheType} cacheTypeK
 * @property {KvCacheType} cacheTypeV
 * @property {boolean} flashAttn
 * @property {number} weightsBytes
 * @property {{ cpuBytes: number; gpuBytes: number }} weights
 * @property {number} tiedOutputCopyBytes Of weights.gpuBytes: the GPU copy of token_embd a tied output reads once offloaded (else 0).
 * @property {number} kvCacheBytes K + V + recurrent state.
 * @property {{ kBytes: number; vBytes: number; swaBytes: number; cpuBytes: number; gpuBytes: number; caches: KvCachePlan[]; recurrentBytes: number; recurrent: { cells: number; layers: number; rBytes: number; sBytes: number } | null }} kvCache
 * @property {number} computeBytes The compute buffers, both devices: an estimate.
 * @property {{ cpuBytes: number; gpuBytes: number }} compute Each device's compute buffer (without `ngl` all the CPU's).
 * @property {boolean} computeEstimated False when the compute buffers are derived from the graph as llama.cpp allocates it
 *   (Llama, Mistral, Mixtral, Qwen2, Qwen3, Qwen3-MoE, Gemma 2, Gemma 3, OpenELM); true for the families where they are estimated.
 * @property {number} totalBytes
 * @property {number} cpuBytes
 * @property {number} gpuBytes
 * @property {number | null} gpuMem
 * @property {number | null} maxCtx The largest context whose GPU share fits gpuMem (null without gpuMem; may exceed nCtxTrain).
 * @property {string} command
 */

/**
 * llama-fit-params' inputs, in bytes (as planMemory's gpuMem).
 * @typedef {object} FitOptions
 * @property {number[]} gpus Each GPU's free memory (at least one GPU, at most 16).
 * @property {number | number[]} [margin] Memory left free on each GPU (llama.cpp's -fitt): one for all, or one per GPU (default 1 GiB).
 * @property {number} [ctx] -c set by the user: never reduced (default: the training context, reduced to fit).
 * @property {number} [nCtxMin] -fitc: the smallest context the fit reduces to (default 4096).
 * @property {number} [parallel]
 * @property {KvCacheType} [cacheTypeK]
 * @property {KvCacheType} [cacheTypeV]
 * @property {boolean} [flashAttn]
 * @property {string[]} [gpuNames] Each GPU's buffer name in `-ot` (default CUDA0, CUDA1, …).
 */

/**
 * One device's bytes in a fit (weights and KV exact, compute an estimate).
 * @typedef {object} FitDevice
 * @property {number} weightsBytes
 * @property {number} kvCacheBytes
 * @property {number} computeBytes
 * @property {number} totalBytes
 */

/**
 * `gguf-lens fit --json`, camelCased.
 * @typedef {object} FitResult
 * @property {number} nCtx
 * @property {number} ngl
 * @property {number[]} tensorSplit -ts: layers per GPU (empty with one GPU; trailing zeros are not printed in flags).
 * @property {Array<{ pattern: string; buffer: string }>} overrides -ot, in llama.cpp's order: buffer 'CPU' or a GPU's name.
 * @property {Array<FitDevice & { layers: number; partialLayers: number }>} gpus Each GPU: its layers, of them partial (experts or part of the FFN elsewhere), and bytes.
 * @property {FitDevice} cpu
 * @property {boolean} fits Whether every GPU keeps its margin (else the closest llama.cpp finds).
 * @property {boolean} defaultLayers llama.cpp keeps its default layers (`-ngl -1`, no -ts).
 * @property {boolean} computeEstimated False when the compute buffers are derived from the graph (Llama, Mistral, Mixtral, Qwen2,
 *   Qwen3, Qwen3-MoE, Gemma 2, Gemma 3, OpenELM); true where they are estimated.
 * @property {string} flags The line llama-fit-params prints: `-c N -ngl N [-ts a,b] [-ot "..."]`.
 */

/**
 * @typedef {object} TokenizeOptions
 * @property {boolean} [addSpecial] add_special (default true): BOS/EOS as the file says.
 * @property {boolean} [parseSpecial] parse_special (default false): special-token text becomes the special token.
 */

/**
 * One chat message: {role, content, tool_calls?, ...}, as transformers takes it.
 * @typedef {{ role: string, content?: unknown, [key: string]: unknown }} ChatMessage
 */

/**
 * @typedef {object} ChatTemplateOptions
 * @property {unknown[] | null} [tools] The tools list (none when absent).
 * @property {boolean} [addGenerationPrompt]
 * @property {Record<string, unknown>} [variables] Extra template variables, e.g. { enable_thinking: false }.
 * @property {string | null} [template] A template text instead of the file's tokenizer.chat_template.
 */

/**
 * A GGUF spec type name, as `set` takes it (for an array value: its items' type).
 * @typedef {'uint8' | 'int8' | 'uint16' | 'int16' | 'uint32' | 'int32' | 'uint64' | 'int64' | 'float32' | 'float64' | 'bool' | 'string'} GgufTypeName
 */

/**
 * @typedef {string | number | boolean | Array<string | number | boolean>} EditValue
 */

/**
 * @typedef {object} EditChange
 * @property {string} key
 * @property {'set' | 'add' | 'remove'} op
 * @property {unknown} before
 * @property {EditValue | undefined} after
 * @property {string | undefined} type
 */

/**
 * The edited file: the new header, then pieces of the input (`from: null`: `len` zero bytes).
 * @typedef {object} EditPlan
 * @property {Uint8Array} header
 * @property {Array<{ from: number | null; len: number }>} pieces
 * @property {number} len The edited file's bytes (the header's plus every piece's).
 */

/**
 * @typedef {object} HashOptions
 * @property {boolean} [xxh64]
 * @property {boolean} [sha1]
 * @property {boolean} [sha256]
 * @property {boolean} [uuid]
 * @property {boolean} [all] xxh64, sha1 and sha256 (not uuid, as llama-gguf-hash's --all).
 * @property {boolean} [perTensor] Per-tensor digests too (default true; false: llama-gguf-hash's --no-layer).
 * @property {string} [fileName] The name printed in `lines` (default: the path or File name given to open).
 * @property {number} [chunkBytes]
 * @property {AbortSignal} [signal]
 * @property {(p: Progress) => void} [onProgress]
 */

/**
 * @typedef {object} Digests
 * @property {string} [xxh64]
 * @property {string} [sha1]
 * @property {string} [sha256]
 * @property {string} [uuid]
 */

/**
 * @typedef {object} HashReport
 * @property {Array<Digests & { name: string }>} tensors
 * @property {Digests} model
 * @property {string} lines llama-gguf-hash's output, line for line.
 */

/**
 * @typedef {ReadOptions & QuantErrorOptionsFields} QuantErrorOptions
 */

/**
 * The fields QuantErrorOptions adds to ReadOptions.
 * @typedef {object} QuantErrorOptionsFields
 * @property {string[]} [types] ggml type names (default: every type gguf-lens quantizes to: F16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0
 *   Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_NL IQ4_XS BF16 TQ1_0 TQ2_0 MXFP4).
 * @property {number} [sampleRows] About this many rows, in up to 64 evenly spaced runs (default: every row of `rows`);
 *   progress then counts rows.
 * @property {Worker[] | number} [workers] GGUF: as for tensorStats, a number of the package's own workers (Node or browsers) or
 *   your module workers running `gguf-lens/stats-worker`: the rows are shared among them and the sums merged
 *   exactly (the same result bit for bit as without).
 */

/**
 * @typedef {object} QuantErrorResult
 * @property {string} type
 * @property {number} bitsPerWeight
 * @property {number} nValues
 * @property {number} rmse
 * @property {number} maxAbsError
 * @property {number} relativeRmse RMSE over the RMS of the values.
 * @property {number} cosine Cosine similarity of the values and their round trip.
 */

/**
 * @typedef {object} QuantErrorReport
 * @property {QuantErrorResult[]} results
 * @property {{ type: string; reason: string }[]} skipped Types whose block does not divide the row length, or whose scale overflowed f16.
 */

/**
 * @typedef {object} SummaryFieldDiff
 * @property {string} name architecture, name, parameters, file_type, bits_per_weight, file_size, context_length,
 *   block_count, embedding_length, vocab_size, tensor_count; `format` first when the formats
 *   differ.
 * @property {string | number | null} a null when the file does not say.
 * @property {string | number | null} b
 * @property {boolean} counts Whether a difference in this field counts: two GGUF models only (as `gguf-lens diff`).
 * @property {boolean} differs The values differ and the field counts.
 */

/**
 * @typedef {object} KeyChangeArray
 * @property {string} itemTypeA
 * @property {string} itemTypeB
 * @property {number} lenA
 * @property {number} lenB
 * @property {number | null} differingItems Indices below the shorter length whose items differ (null when the item types differ).
 * @property {number | null} firstDifference The first differing index, or the shorter length when only the lengths differ (null when the item types differ).
 */

/**
 * @typedef {object} KeyChange
 * @property {string} key
 * @property {string} typeA
 * @property {string} typeB
 * @property {KeyChangeArray | null} array When both values are arrays.
 */

/**
 * @typedef {object} ModelDiffMetadata
 * @property {string[]} onlyA Keys in file order. Values are equal when of the same type and value: floats by bits,
 *   strings by bytes, arrays item by item in full.
 * @property {string[]} onlyB
 * @property {KeyChange[]} changed
 * @property {number} same Keys with the same value in both.
 */

/**
 * @typedef {object} ModelDiffTensors
 * @property {{ name: string; type: string; shape: number[] }[]} onlyA
 * @property {{ name: string; type: string; shape: number[] }[]} onlyB
 * @property {{ name: string; a: number[]; b: number[] }[]} shapeChanges
 * @property {{ name: string; a: string; b: string }[]} typeChanges Whatever the shapes.
 * @property {{ a: string; b: string; tensors: number }[]} transitions Type changes counted per (A type, B type), in type id order (by name in the logical layout).
 * @property {{ name: string; typeA: string; typeB: string; shape: number[]; nElements: number }[]} matching Same name and shape in both (the ones compareTensor takes), A's order.
 */

/**
 * @typedef {object} ModelDiff
 * @property {['gguf' | 'safetensors', 'gguf' | 'safetensors']} formats Each model's format.
 * @property {'gguf' | 'logical'} layout 'gguf' for two GGUF models (ggml types); 'logical' otherwise (type names, a GPTQ layer as
 *   `<layer>.weight` [out, in] of type `GPTQ-<bits>bit`). Shapes are row-major, outermost
 *   first, either way.
 * @property {SummaryFieldDiff[]} summary Fields by name; null on a side whose format has no such field.
 * @property {ModelDiffMetadata | null} metadata null when the formats differ: GGUF key-values and safetensors `__metadata__` are not compared.
 * @property {string | null} metadataNotCompared Why `metadata` is null (a sentence), else null.
 * @property {ModelDiffTensors} tensors
 */

/**
 * @typedef {object} ValueMetrics
 * @property {number} elements Pairs seen.
 * @property {number} count Pairs where both values are finite; the metrics below are over those, null when there is none.
 * @property {number | null} rmse
 * @property {number | null} maxAbs
 * @property {number | null} meanAbs
 * @property {number | null} relRmse RMSE / RMS(a): 0 when RMSE is 0, null when RMS(a) is 0 and RMSE is not.
 * @property {number | null} cosine Σab / √(Σa²·Σb²): 1 when both are all zeros, 0 when only one is.
 * @property {number} nanMismatch Pairs with a NaN in one value only.
 * @property {number} infMismatch Pairs with an infinity in either value and a ≠ b.
 * @property {boolean} identical max |a−b| = 0 over the finite pairs and no NaN or Inf mismatch.
 */

/**
 * @typedef {OpenOptions & SafetensorsOptionsFields} SafetensorsOptions
 */

/**
 * The fields SafetensorsOptions adds to OpenOptions.
 * @typedef {object} SafetensorsOptionsFields
 * @property {object | string | URL} [quantizeConfig] A quantize_config.json object, or its URL (a Node path in Node).
 * @property {object | string | URL} [config] A transformers config.json object (its quantization_config is used), or its URL / path.
 * @property {boolean} [findConfig] Look for quantize_config.json, then config.json beside a URL or path (404 tolerated). Default true.
 * @property {'llama.cpp' | 'gptqmodel'} [v1Zeros] How v1 (checkpoint_format "gptq") zeros get their 1 back: llama.cpp's stored + 1 (default)
 *   or GPTQModel's (stored + 1) mod 2^bits. They differ only on a stored zero of 2^bits − 1.
 */

/**
 * @typedef {object} SafetensorsTensorInfo
 * @property {string} name
 * @property {string} type The dtype as the header spells it: "F16", "BF16", "I32", "F8_E4M3", ... (`type` for every
 *   format, as TensorInfo's).
 * @property {number} typeId -1: a safetensors dtype has no ggml type id.
 * @property {number[]} shape Outermost first (PyTorch order); a row is the last dimension.
 * @property {number} nElements
 * @property {number} offset Absolute byte offset in the file.
 * @property {number} relativeOffset Offset relative to the data section.
 * @property {number} nBytes
 * @property {number} rowLength
 * @property {number} nRows
 * @property {number | null} rowBytes null for sub-byte dtypes (F4, F6), which are not read as f32.
 * @property {number} shard Index of the shard holding it (0 for a single file).
 * @property {boolean} plain Whether readTensor converts it to f32.
 */

/**
 * @typedef {object} QuantConfig
 * @property {number | null} bits
 * @property {number | null} groupSize −1: one group over all inputs.
 * @property {boolean | null} descAct
 * @property {boolean | null} sym
 * @property {'gptq' | 'gptq_v2'} checkpointFormat
 */

/**
 * @typedef {object} GptqLayer
 * @property {string} name The prefix, e.g. "model.layers.0.self_attn.q_proj"; readTensor takes it.
 * @property {number} bits
 * @property {number} groupSize
 * @property {number} inFeatures
 * @property {number} outFeatures
 * @property {number} nGroups
 * @property {boolean} hasGIdx Whether a g_idx tensor gives each input's group.
 * @property {boolean | null} actOrder The config's desc_act (null without a config).
 * @property {'gptq' | 'gptq_v2'} checkpointFormat
 * @property {string} scalesDtype
 * @property {{ qweight: string; qzeros: string; scales: string; g_idx?: string }} parts
 * @property {number} nRows outFeatures: rows of the dequantized [out, in] weight.
 * @property {number} rowLength inFeatures.
 * @property {number} nElements
 * @property {number} nBytes Bytes of all its parts.
 */

/**
 * An MLX affine-quantized layer (config.json's `quantization`), read as `<path>.weight`.
 * @typedef {object} MlxLayer
 * @property {string} name `<path>.weight`: the name readTensor, tensorStats and quantError take.
 * @property {string} path The layer's path, e.g. "model.layers.0.mlp.up_proj".
 * @property {string} type "MLX-<bits>bit-g<group>".
 * @property {number} bits
 * @property {number} groupSize
 * @property {number[]} shape Logical, outermost first (the stored weight's last dimension unpacked).
 * @property {number} nRows
 * @property {number} rowLength
 * @property {number} nElements
 * @property {string} scalesDtype
 * @property {{ weight: string; scales: string; biases: string }} parts
 * @property {number} nBytes Bytes of all its parts.
 */

/**
 * An FP8 block-scaled layer (config.json's `quantization_config`, `quant_method: fp8`), read as
 * `<path>.weight`.
 * @typedef {object} Fp8Layer
 * @property {string} name `<path>.weight`: the name readTensor, tensorStats and quantError take.
 * @property {string} path
 * @property {string} type "FP8-E4M3-block128" (square blocks) or "FP8-E4M3-block<rows>x<columns>".
 * @property {number[]} shape [out, in].
 * @property {number[]} block Rows x columns of one scale's block.
 * @property {number} nRows
 * @property {number} rowLength
 * @property {number} nElements
 * @property {string} scaleDtype
 * @property {{ weight: string; weightScaleInv: string }} parts
 * @property {number} nBytes Bytes of both parts.
 */

/**
 * A compressed-tensors layer (config.json's `quantization_config`, `quant_method:
 * compressed-tensors`), read as `<path>.weight` (as the package's `decompress`).
 * @typedef {object} CtLayer
 * @property {string} name `<path>.weight`: the name readTensor, tensorStats and quantError take.
 * @property {string} path
 * @property {string} type "CT-W4A16-g128", "CT-W8A16-ch", "CT-W4A16-g32-asym", "CT-FP8-E4M3-t", ...
 * @property {'pack-quantized' | 'int-quantized' | 'float-quantized'} format
 * @property {number} bits
 * @property {'tensor' | 'channel' | 'group'} strategy
 * @property {number | null} groupSize null unless strategy is "group".
 * @property {boolean} symmetric
 * @property {number[]} shape [out, in].
 * @property {number} nRows
 * @property {number} rowLength
 * @property {number} nElements
 * @property {string} scaleDtype
 * @property {{ weight: string; weightScale: string; weightShape?: string; weightZeroPoint?: string }} parts Stored tensor names (weight: `.weight_packed` when pack-quantized, else `.weight`).
 * @property {number} nBytes Bytes of all its parts.
 */

/**
 * A gpt-oss MXFP4 tensor (config.json's `quantization_config`, `quant_method: mxfp4`):
 * `<name>_blocks` + e8m0 `<name>_scales`, read as `<name>` (as transformers'
 * `convert_moe_packed_tensors`).
 * @typedef {object} Mxfp4Layer
 * @property {string} name The logical name (`model.layers.0.mlp.experts.gate_up_proj`): what readTensor takes.
 * @property {string} path The same as name.
 * @property {'MXFP4'} type
 * @property {number[]} shape [experts, groups * 32, rowsPerExpert].
 * @property {number} experts
 * @property {number} rowsPerExpert
 * @property {number} groups Blocks of 32 values per stored row.
 * @property {number} nRows
 * @property {number} rowLength
 * @property {number} nElements
 * @property {{ blocks: string; scales: string }} parts
 * @property {number} nBytes Bytes of both parts.
 */

/**
 * A bitsandbytes 4-bit layer (transformers' `save_pretrained` of a `load_in_4bit` model): found
 * by its `<path>.weight.quant_state.bitsandbytes__nf4|fp4` tensor (config.json or not), read as
 * `<path>.weight` (as bitsandbytes' `dequantize_4bit`, rounded to the quant state's dtype).
 * @typedef {object} BnbLayer
 * @property {string} name `<path>.weight`: the name readTensor, tensorStats and quantError take.
 * @property {string} path
 * @property {string} type "NF4-b64", "FP4-b32-dq" (`-dq`: double-quantized scales), ...
 * @property {'nf4' | 'fp4'} quantType
 * @property {number} blocksize Values per scale (absmax).
 * @property {'float32' | 'float16' | 'bfloat16'} dtype The quant state's: values are rounded to it.
 * @property {boolean} doubleQuant Whether the scales are double-quantized (nested absmax).
 * @property {number[]} shape Logical, outermost first ([out, in] for a linear layer).
 * @property {number} nRows
 * @property {number} rowLength
 * @property {number} nElements
 * @property {{ weight: string; absmax: string; quantMap: string; quantState: string; nestedAbsmax?: string; nestedQuantMap?: string }} parts Stored tensor names.
 * @property {number} nBytes Bytes of all its parts.
 */

/**
 * config.json's bitsandbytes `quantization_config` (4-bit).
 * @typedef {object} BnbConfig
 * @property {'nf4' | 'fp4'} quantType `bnb_4bit_quant_type`.
 * @property {boolean} doubleQuant `bnb_4bit_use_double_quant`.
 * @property {string[]} modulesToNotConvert `llm_int8_skip_modules`, as the config lists them.
 */

/**
 * config.json's compressed-tensors `quantization_config`: its one weight scheme.
 * @typedef {object} CtConfig
 * @property {'pack-quantized' | 'int-quantized' | 'float-quantized'} format
 * @property {number} numBits
 * @property {'int' | 'float'} type
 * @property {'tensor' | 'channel' | 'group'} strategy
 * @property {number | null} groupSize
 * @property {boolean} symmetric
 * @property {number} inputActivationBits Input activations' bits (16 when they stay unquantized).
 * @property {string[]} ignore Modules left unquantized, as the config lists them.
 * @property {string} label The layers' type label ("CT-W4A16-g128").
 */

/**
 * config.json's FP8 `quantization_config`.
 * @typedef {object} Fp8Config
 * @property {'e4m3'} fmt
 * @property {number[]} weightBlockSize
 * @property {string[]} modulesToNotConvert
 * @property {string | null} activationScheme
 */

/**
 * config.json's MLX `quantization` (mode affine): the defaults and per-layer entries.
 * @typedef {object} MlxQuantization
 * @property {'affine'} mode
 * @property {number} bits
 * @property {number} groupSize
 * @property {Record<string, { bits: number; groupSize: number }| false>} layers By path: the layer's parameters, or false (left unquantized).
 */

/**
 * @typedef {object} DtypeShare
 * @property {string} type A dtype ("BF16"), "GPTQ-4bit" for GPTQ layers, "MLX-4bit-g64" for MLX layers,
 *   "FP8-E4M3-block128" for FP8 layers, "CT-W4A16-g128" for compressed-tensors layers, "MXFP4"
 *   for MXFP4 tensors or "NF4-b64-dq" for bitsandbytes layers (their
 *   parts counted there, elements as the logical weights).
 * @property {number} tensors
 * @property {number} elements
 * @property {number} bytes
 * @property {number} share
 */

/**
 * @typedef {object} SafetensorsSummaryGptq
 * @property {number} layers
 * @property {number | null} bits
 * @property {number | null} groupSize
 * @property {boolean | null} descAct
 * @property {boolean | null} sym
 * @property {'gptq' | 'gptq_v2'} checkpointFormat
 * @property {string | null} configSource Where the config came from (a URL, path, or "options.quantizeConfig"); null if none.
 */

/**
 * @typedef {object} SafetensorsSummaryMlx
 * @property {number} layers
 * @property {number} bits The defaults' (layers may override them: see dtypeMix).
 * @property {number} groupSize
 * @property {number} overrides Layers quantized otherwise than the defaults.
 */

/**
 * @typedef {object} SafetensorsSummaryFp8
 * @property {number} layers
 * @property {number[]} block
 * @property {string[]} notConverted modules_to_not_convert, as the config lists them.
 */

/**
 * @typedef {object} SafetensorsSummaryCt
 * @property {number} layers
 * @property {string} label The layers' type label ("CT-W4A16-g128").
 * @property {'pack-quantized' | 'int-quantized' | 'float-quantized'} format
 * @property {number} bits
 * @property {'tensor' | 'channel' | 'group'} strategy
 * @property {number | null} groupSize
 * @property {boolean} symmetric
 * @property {string[]} ignore The config's `ignore`: modules left unquantized.
 */

/**
 * @typedef {Summary & SafetensorsSummaryFields} SafetensorsSummary
 */

/**
 * The fields SafetensorsSummary adds to Summary.
 * @typedef {object} SafetensorsSummaryFields
 * @property {'safetensors'} format
 * @property {DtypeShare[]} dtypeMix The same shares as quantMix (typeId -1 there).
 * @property {SafetensorsSummaryGptq | null} gptq
 * @property {SafetensorsSummaryMlx | null} mlx null without an MLX config.
 * @property {SafetensorsSummaryFp8 | null} fp8 null without an FP8 config.
 * @property {{ layers: number; notConverted: string[] }| null} mxfp4 null without an MXFP4 config.
 * @property {SafetensorsSummaryCt | null} ct null without a compressed-tensors config.
 * @property {{ layers: number; config: BnbConfig | null } | null} bnb null without bitsandbytes layers or config
 *   (config null when the layers were found by their quant states alone).
 */

/**
 * Hugging Face Hub listing options (listRepoGgufs, inspectRepoGgufs, scanRepo).
 * @typedef {object} HubOptions
 * @property {string} [revision] Branch, tag or commit (default "main", or the one a Hub address names).
 * @property {string} [endpoint] Default https://huggingface.co (a mirror or a local mock): https, or http on 127.0.0.0/8,
 *   localhost or [::1] only (checkHubEndpoint).
 * @property {typeof fetch} [fetch]
 * @property {Record<string, string>} [headers] Sent to the tree API and every file read, e.g. { Authorization: 'Bearer hf_…' } for gated
 *   repos; only to the endpoint's origin (a redirect elsewhere drops them).
 * @property {AbortSignal} [signal]
 * @property {number} [stallTimeoutMs] As OpenOptions.stallTimeoutMs, for the listing and every file read. Default 30000.
 */

/**
 * @typedef {object} RepoGgufFile
 * @property {string} path
 * @property {number | null} size Bytes (the LFS object's size), or null when the API gives none.
 * @property {string} url {endpoint}/{owner}/{name}/resolve/{revision}/{path}
 * @property {number} [shard] 1-based shard number of a split file.
 */

/**
 * One model: a single .gguf file, or every shard of a split one (-00001-of-00003.gguf …).
 * @typedef {object} RepoGguf
 * @property {string} name The path, or for a split model "prefix-*-of-00003.gguf".
 * @property {string} path The (first shard's) path.
 * @property {RepoGgufFile[]} files
 * @property {number | null} size Sum of the files' sizes (null when one is unknown).
 * @property {{ count: number; missing: number[] }| null} split
 */

/**
 * @typedef {object} RepoListing
 * @property {string} repo
 * @property {string} revision
 * @property {string} endpoint
 * @property {number} requests Tree API pages fetched.
 * @property {RepoGguf[]} models
 */

/**
 * @typedef {object} RepoVerdictPlan
 * @property {number | null} gpuMem null: no GPU (all on the CPU).
 * @property {number} ctx
 * @property {number} ngl Most layers to offload (-ngl) at ctx within gpuMem.
 * @property {number} nglFull Every layer, the output layer included (n_layer + 1).
 * @property {boolean | null} fits Every layer fits the GPU at ctx (null without a GPU).
 * @property {number | null} maxCtx The largest context with every layer offloaded (null: not even 256 cells, or no GPU).
 * @property {number} gpuBytes
 * @property {number} totalBytes
 * @property {string} command
 */

/**
 * The planner's answer for one device (see repoVerdict).
 * @typedef {RepoVerdictPlan | { error: string }} RepoVerdict
 */

/**
 * A GPU budget and planMemory options.
 * @typedef {Omit<MemoryPlanOptions, 'gpuMem' | 'ngl'> & RepoDeviceFields} RepoDevice
 */

/**
 * The fields RepoDevice adds to MemoryPlanOptions' (without its gpuMem and ngl).
 * @typedef {object} RepoDeviceFields
 * @property {number | null} [gpuMem] GPU memory in bytes (absent or 0: no GPU).
 */

/**
 * @typedef {RepoGguf & RepoGgufRowFields} RepoGgufRow
 */

/**
 * The fields RepoGgufRow adds to RepoGguf.
 * @typedef {object} RepoGgufRowFields
 * @property {GgufModel | null} model The open model (headers only), until closeRepoModels; null on error.
 * @property {Summary | null} summary
 * @property {RepoVerdict | null} verdict
 * @property {string | null} error One line when a file could not be read or a split model is incomplete.
 * @property {number} requests Requests made and bytes received reading the headers.
 * @property {number} bytes
 */

/**
 * @typedef {HubOptions & InspectOptionsFields} InspectOptions
 */

/**
 * The fields InspectOptions adds to HubOptions.
 * @typedef {object} InspectOptionsFields
 * @property {number} [concurrency] Files read at a time (default 3).
 * @property {RepoDevice} [device]
 * @property {(progress: { done: number; total: number; row: RepoGgufRow }) => void} [onProgress] After each model: how many are done of how many.
 * @property {number} [firstReadBytes]
 * @property {number} [retries]
 * @property {boolean} [keepOpen] Keep models open for repoVerdict (default true).
 */

export {};
