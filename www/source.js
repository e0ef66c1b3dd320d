// The adapter: the ONLY module that talks to the gguf-lens npm package. Everything else in the
// viewer (worker.js, app.js) sees the small contract below, so following a change in the
// package's API is an edit to this one file.
//
// Contract — openModel(source, {signal, onProgress}) resolves to a Model:
//   info      {version, endian, alignment, dataOffset, fileSize, engine: 'package' | 'lite'}
//   metadata  [{key, type, value}]           scalars; u64/i64 as BigInt
//             [{key, type: 'array', itemType, length}]   arrays: elements through metaRange
//   tensors   [{name, type, typeId, shape, nElements, offset, nBytes}]  shape innermost first,
//             offset relative to the data section
//   summary   {architecture, name, parameterCount, fileType, fileTypeLabel, bitsPerWeight,
//              tensorBytes, contextLength, embeddingLength, blockCount, headCount, headCountKv,
//              keyLength, valueLength, vocabSize, tokenizerModel,
//              quantMix: [{type, tensors, elements, bytes, share}]}
//   metaRange(key, start, end)               → array elements start..end (end exclusive)
//   readRows(name, [a, b], {signal, onProgress})   → Float32Array of rows a..b
//   stats(name, {bins, signal, onProgress})  → {count, min, max, mean, std, nan, inf, zero,
//                                               histogram: number[bins], histogramRange: [lo, hi]}
// source: a URL string, a File/Blob or an ArrayBuffer. Errors reject with an Error whose
// message is readable as is; an abort rejects with a DOMException named AbortError.
//
// Engine: the npm package's ESM build copied to ./pkg/ by scripts/build-site.sh (entry
// ./pkg/index.js); without it, ./lite/gguf-lite.js, a stand-in with the same planned API
// (header parsed in JS, types and dequantization from gguf-lens compiled to wasm).

const PACKAGE_ENTRY = './pkg/index.js';
const LITE_ENTRY = './lite/gguf-lite.js';

let enginePromise = null;
async function loadEngine() {
  if (!enginePromise) {
    enginePromise = (async () => {
      try {
        const mod = await import(PACKAGE_ENTRY);
        if (typeof mod.openGguf === 'function') return { kind: 'package', mod };
      } catch (_) { /* not built into this site: use the stand-in */ }
      return { kind: 'lite', mod: await import(LITE_ENTRY) };
    })();
  }
  return enginePromise;
}

const num = (v) => (typeof v === 'bigint' ? Number(v) : v);

function metadataEntries(md) {
  if (!md) return [];
  if (md instanceof Map) return [...md].map(([key, v]) => ({ key, ...(v && typeof v === 'object' && 'type' in v ? v : { value: v }) }));
  if (Array.isArray(md)) return md;
  return Object.entries(md).map(([key, v]) => ({ key, ...(v && typeof v === 'object' && 'type' in v ? v : { value: v }) }));
}

function isLazyArray(v) {
  return v && typeof v === 'object' && typeof v.length === 'number' && (typeof v.slice === 'function' || typeof v.get === 'function') && !(typeof v === 'string');
}

function arraySlice(v, start, end) {
  if (Array.isArray(v) || ArrayBuffer.isView(v)) return Array.from(v.slice(start, end));
  if (typeof v.slice === 'function') return Array.from(v.slice(start, end));
  if (typeof v.get === 'function') return Array.from(v.get(start, end));
  return [];
}

export async function openModel(source, { signal, onProgress } = {}) {
  const engine = await loadEngine();
  const f = await engine.mod.openGguf(source, { signal, onProgress });
  const s = f.summary();
  const entries = metadataEntries(f.metadata);
  const arrays = new Map();
  const metadata = entries.map((m) => {
    const type = m.type || typeof m.value;
    if (type === 'array' || isLazyArray(m.value)) {
      arrays.set(m.key, m.value);
      return { key: m.key, type: 'array', itemType: m.itemType || m.item_type || '?', length: num(m.length ?? m.value.length) };
    }
    return { key: m.key, type, value: m.value };
  });
  const tensors = f.tensors.map((t) => ({
    name: t.name,
    type: t.type ?? t.typeName,
    typeId: t.typeId ?? t.type_id,
    shape: Array.from(t.shape, num),
    nElements: num(t.nElements ?? t.elementCount ?? t.n_elements),
    offset: num(t.offset ?? t.byteOffset),
    nBytes: num(t.byteLength ?? t.nBytes ?? t.n_bytes),
  }));
  return {
    info: { version: f.version, endian: f.endian, alignment: f.alignment, dataOffset: num(f.dataOffset), fileSize: num(f.byteLength), engine: engine.kind },
    metadata,
    tensors,
    summary: {
      architecture: s.architecture, name: s.name, parameterCount: num(s.parameterCount),
      fileType: num(s.fileType), fileTypeLabel: s.fileTypeLabel, bitsPerWeight: s.bitsPerWeight,
      tensorBytes: num(s.tensorBytes), contextLength: num(s.contextLength), embeddingLength: num(s.embeddingLength),
      blockCount: num(s.blockCount), headCount: num(s.headCount), headCountKv: num(s.headCountKv),
      keyLength: num(s.keyLength), valueLength: num(s.valueLength), vocabSize: num(s.vocabSize),
      tokenizerModel: s.tokenizerModel,
      quantMix: (s.quantMix || []).map((q) => ({ type: q.type, tensors: q.tensors, elements: num(q.elements), bytes: num(q.bytes), share: q.share })),
    },
    metaRange: (key, start, end) => {
      const v = arrays.get(key);
      if (!v) throw new Error(`no array metadata key ${key}`);
      return arraySlice(v, start, end);
    },
    readRows: (name, rows, opts = {}) => f.readTensor(name, { rows, signal: opts.signal, onProgress: opts.onProgress }),
    stats: (name, opts = {}) => f.tensorStats(name, { bins: opts.bins, signal: opts.signal, onProgress: opts.onProgress }),
  };
}
