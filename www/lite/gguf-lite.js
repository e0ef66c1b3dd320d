// Stand-in for the gguf-lens npm package, used by www/source.js only when the package's build
// is not in the site (pkg/ missing). It mirrors the subset of the package's API (js/index.d.ts
// on the npm branch) that the viewer uses — openGguf(input, {fetch, headers, signal,
// onProgress}) → model with version, endian, alignment, dataOffset, byteLength, metadata
// ({key, type, value} | {key, type: 'array', itemType, len, items(start, end)}), tensors
// ({name, type, typeId, shape, nElements, offset, relativeOffset, nBytes, rowLength, nRows,
// rowBytes}), get(key), summary(), readTensor(), readTensorBytes(), tensorStats() — with the
// header parsed here in JS and the ggml type table and every dequantized number from gguf-lens
// itself (viewer/engine, built to lite/engine.wasm). No data is made up: if the engine is
// missing, opening a file fails with a readable error.

const GGUF_MAGIC = 0x46554747; // "GGUF" read little-endian
const T = { U8: 0, I8: 1, U16: 2, I16: 3, U32: 4, I32: 5, F32: 6, BOOL: 7, STRING: 8, ARRAY: 9, U64: 10, I64: 11, F64: 12 };
export const VALUE_TYPE_NAMES = ['uint8', 'int8', 'uint16', 'int16', 'uint32', 'int32', 'float32', 'bool', 'string', 'array', 'uint64', 'int64', 'float64'];
const FIXED_SIZE = [1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8];
const MAX_HEADER = 2 ** 31;
const CHUNK_ELEMENTS = 1 << 20;

class NeedMore extends Error {
  constructor(atLeast) { super('need more bytes'); this.atLeast = atLeast; }
}

export class GgufError extends Error {
  constructor(message, offset) {
    super(offset === undefined ? message : `${message} at byte ${offset}`);
    this.name = 'GgufError';
    this.offset = offset;
  }
}

function abortError() {
  return new DOMException('The operation was aborted.', 'AbortError');
}
function checkAbort(signal) {
  if (signal && signal.aborted) throw signal.reason instanceof Error ? signal.reason : abortError();
}

// ---------- engine (gguf-lens compiled to wasm with a raw C ABI) ----------
let enginePromise = null;
function loadEngine() {
  if (!enginePromise) {
    enginePromise = (async () => {
      const url = new URL('./engine.wasm', import.meta.url);
      const res = await fetch(url);
      if (!res.ok) throw new Error(`gguf-lens engine not found (${url.pathname}: HTTP ${res.status}); build the site with scripts/serve.sh`);
      const { instance } = await WebAssembly.instantiate(await res.arrayBuffer(), {});
      const e = instance.exports;
      const types = new Map();
      const namePtr = e.gl_alloc(64);
      for (let id = 0; id < 64; id++) {
        const n = e.gl_type_name(id, namePtr, 64);
        if (!n) continue;
        const name = new TextDecoder().decode(new Uint8Array(e.memory.buffer, namePtr, n));
        types.set(id, { id, name, blockSize: e.gl_block_size(id), typeSize: e.gl_type_size(id) });
      }
      e.gl_free(namePtr, 64);
      return { e, types };
    })();
    enginePromise.catch(() => { enginePromise = null; });
  }
  return enginePromise;
}

function dequantize(engine, typeId, bytes, nElements) {
  const { e } = engine;
  const src = e.gl_alloc(bytes.length);
  const dst = e.gl_alloc(nElements * 4);
  if (!src || !dst) throw new Error('out of wasm memory');
  try {
    new Uint8Array(e.memory.buffer, src, bytes.length).set(bytes);
    const rc = e.gl_dequant(typeId, src, bytes.length, dst, nElements);
    if (rc !== 0) throw new Error(rc === 1 ? `unsupported tensor type ${typeId}` : 'tensor byte length does not match its element count');
    return new Float32Array(e.memory.buffer, dst, nElements).slice();
  } finally {
    e.gl_free(src, bytes.length);
    e.gl_free(dst, nElements * 4);
  }
}

// ---------- byte sources ----------
function makeReader(source, opts) {
  const signal = opts.signal;
  if (typeof source === 'string' || source instanceof URL) return urlReader(String(source), opts);
  if (source instanceof ArrayBuffer) source = new Uint8Array(source);
  if (ArrayBuffer.isView(source)) {
    const u8 = new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
    return { size: async () => u8.length, read: async (a, b) => { checkAbort(signal); return u8.subarray(a, b); } };
  }
  if (typeof Blob !== 'undefined' && source instanceof Blob) {
    return { size: async () => source.size, read: async (a, b, sig) => { checkAbort(sig || signal); return new Uint8Array(await source.slice(a, b).arrayBuffer()); } };
  }
  if (source && typeof source.slice === 'function' && typeof source.byteLength === 'number') {
    return {
      size: async () => source.byteLength,
      read: async (a, b) => { const r = await source.slice(a, b); return r instanceof Uint8Array ? r : new Uint8Array(r instanceof ArrayBuffer ? r : await r.arrayBuffer()); },
    };
  }
  throw new TypeError('unsupported source: give a URL, File/Blob, ArrayBuffer/Uint8Array or {byteLength, slice}');
}

function urlReader(url, opts) {
  const doFetch = opts.fetch || fetch;
  let total = null;
  let whole = null; // the server ignored Range: we hold the whole body
  async function get(a, b, sig) {
    const headers = new Headers(opts.headers || {});
    headers.set('Range', `bytes=${a}-${b - 1}`);
    const res = await doFetch(url, { headers, signal: sig || opts.signal });
    if (res.status === 206) {
      const cr = res.headers.get('Content-Range');
      const m = cr && /\/(\d+)\s*$/.exec(cr);
      if (m) total = Number(m[1]);
      return new Uint8Array(await res.arrayBuffer());
    }
    if (res.status === 200) {
      whole = new Uint8Array(await res.arrayBuffer());
      total = whole.length;
      return whole.subarray(a, b);
    }
    if (res.status === 416) return new Uint8Array(0);
    throw new Error(`HTTP ${res.status} ${res.statusText || ''} for ${url}`.trim());
  }
  return {
    size: async () => {
      if (total === null) await get(0, 1);
      return total;
    },
    read: async (a, b, sig) => {
      if (whole) return whole.subarray(a, b);
      return get(a, b, sig);
    },
  };
}

// ---------- header parser ----------
class Cur {
  constructor(u8, le) { this.u8 = u8; this.dv = new DataView(u8.buffer, u8.byteOffset, u8.byteLength); this.p = 0; this.le = le; }
  need(n) { if (this.p + n > this.u8.length) throw new NeedMore(this.p + n); }
  u8v() { this.need(1); return this.dv.getUint8(this.p++); }
  i8v() { this.need(1); return this.dv.getInt8(this.p++); }
  u16() { this.need(2); const v = this.dv.getUint16(this.p, this.le); this.p += 2; return v; }
  i16() { this.need(2); const v = this.dv.getInt16(this.p, this.le); this.p += 2; return v; }
  u32() { this.need(4); const v = this.dv.getUint32(this.p, this.le); this.p += 4; return v; }
  i32() { this.need(4); const v = this.dv.getInt32(this.p, this.le); this.p += 4; return v; }
  f32() { this.need(4); const v = this.dv.getFloat32(this.p, this.le); this.p += 4; return v; }
  f64() { this.need(8); const v = this.dv.getFloat64(this.p, this.le); this.p += 8; return v; }
  u64() { this.need(8); const v = this.dv.getBigUint64(this.p, this.le); this.p += 8; return v; }
  i64() { this.need(8); const v = this.dv.getBigInt64(this.p, this.le); this.p += 8; return v; }
  len64(what) {
    const at = this.p;
    const v = this.u64();
    if (v > BigInt(MAX_HEADER)) throw new GgufError(`${what} ${v} is too large`, at);
    return Number(v);
  }
  str() {
    const n = this.len64('string length');
    this.need(n);
    const s = decoder.decode(this.u8.subarray(this.p, this.p + n));
    this.p += n;
    return s;
  }
}
const decoder = new TextDecoder('utf-8', { fatal: false });

function readScalar(c, t) {
  switch (t) {
    case T.U8: return c.u8v();
    case T.I8: return c.i8v();
    case T.U16: return c.u16();
    case T.I16: return c.i16();
    case T.U32: return c.u32();
    case T.I32: return c.i32();
    case T.F32: return c.f32();
    case T.BOOL: return c.u8v() !== 0;
    case T.STRING: return c.str();
    case T.U64: return c.u64();
    case T.I64: return c.i64();
    case T.F64: return c.f64();
    default: throw new GgufError(`unknown value type ${t}`, c.p);
  }
}

// A lazily read array: its elements stay in the header bytes; strings get an offset index.
class LazyArray {
  constructor(c, itemType, length, depth) {
    this.itemType = itemType;
    this.length = length;
    this.c = c;
    this.start = c.p;
    if (itemType === T.ARRAY) {
      if (depth >= 8) throw new GgufError('arrays nested too deeply', c.p);
      this.items = [];
      for (let i = 0; i < length; i++) {
        const at = c.p;
        const it = c.u32();
        const n = c.len64('array length');
        this.items.push(new LazyArray(c, it, n, depth + 1));
        void at;
      }
    } else if (itemType === T.STRING) {
      if (length * 8 > c.u8.length - c.p) c.need(length * 8);
      this.offsets = new Float64Array(length);
      for (let i = 0; i < length; i++) {
        this.offsets[i] = c.p;
        const n = c.len64('string length');
        c.need(n);
        c.p += n;
      }
    } else {
      const size = FIXED_SIZE[itemType];
      if (!size) throw new GgufError(`unknown array item type ${itemType}`, c.p);
      c.need(size * length);
      c.p += size * length;
    }
  }
  get(i) {
    const c = this.c;
    if (this.itemType === T.ARRAY) return this.items[i];
    const saved = c.p;
    c.p = this.itemType === T.STRING ? this.offsets[i] : this.start + i * FIXED_SIZE[this.itemType];
    const v = readScalar(c, this.itemType);
    c.p = saved;
    return v;
  }
  get itemTypeName() { return VALUE_TYPE_NAMES[this.itemType] || String(this.itemType); }
  // Elements as the package gives them: nested arrays as {itemType, len, value}.
  values(start = 0, end = this.length) {
    return this.slice(start, end).map((v) => (v instanceof LazyArray ? { itemType: v.itemTypeName, len: v.length, value: v.values() } : v));
  }
  slice(start = 0, end = this.length) {
    start = Math.max(0, Math.min(this.length, start));
    end = Math.max(start, Math.min(this.length, end));
    const out = [];
    for (let i = start; i < end; i++) out.push(this.get(i));
    return out;
  }
}

function parseHeader(u8) {
  let c = new Cur(u8, true);
  const magic = c.u32();
  if (magic !== GGUF_MAGIC) throw new GgufError('not a GGUF file (bad magic)', 0);
  let version = c.u32();
  let endian = 'little';
  if (version > 0xffff) {
    c = new Cur(u8, false);
    c.p = 4;
    version = c.u32();
    endian = 'big';
  }
  if (version < 2 || version > 3) throw new GgufError(`unsupported GGUF version ${version}`, 4);
  const nTensors = c.len64('tensor count');
  const nKv = c.len64('metadata count');
  const metadata = [];
  for (let i = 0; i < nKv; i++) {
    const key = c.str();
    const at = c.p;
    const type = c.u32();
    if (type === T.ARRAY) {
      const itemType = c.u32();
      const length = c.len64('array length');
      const arr = new LazyArray(c, itemType, length, 0);
      metadata.push({ key, type: 'array', itemType: arr.itemTypeName, len: length, items: (start = 0, end = length) => arr.values(start, end) });
    } else {
      if (type > 12) throw new GgufError(`unknown value type ${type} for ${key}`, at);
      metadata.push({ key, type: VALUE_TYPE_NAMES[type], value: readScalar(c, type) });
    }
  }
  const tensors = [];
  for (let i = 0; i < nTensors; i++) {
    const name = c.str();
    const nd = c.u32();
    if (nd > 4) throw new GgufError(`tensor ${name} has ${nd} dimensions`, c.p - 4);
    const shape = [];
    for (let d = 0; d < nd; d++) shape.push(Number(c.u64()));
    const typeId = c.u32();
    const offset = Number(c.u64());
    tensors.push({ name, typeId, shape, offset });
  }
  const alignEntry = metadata.find((m) => m.key === 'general.alignment');
  const alignment = alignEntry && typeof alignEntry.value === 'number' ? alignEntry.value : 32;
  if (!alignment || alignment & (alignment - 1)) throw new GgufError(`general.alignment ${alignment} is not a power of two`);
  const headerEnd = c.p;
  const dataOffset = Math.ceil(headerEnd / alignment) * alignment;
  return { version, endian, alignment, metadata, tensors, dataOffset, headerEnd };
}


function numberOf(v) {
  return typeof v === 'bigint' ? Number(v) : typeof v === 'number' ? v : undefined;
}

export async function openGguf(source, options = {}) {
  const { signal, onProgress } = options;
  const engine = await loadEngine();
  checkAbort(signal);
  const reader = makeReader(source, options);
  const byteLength = await reader.size();
  let want = Math.min(byteLength, 1 << 20);
  let prefix = new Uint8Array(0);
  let header;
  for (;;) {
    checkAbort(signal);
    if (want > prefix.length) {
      const more = await reader.read(prefix.length, want, signal);
      const grown = new Uint8Array(prefix.length + more.length);
      grown.set(prefix);
      grown.set(more, prefix.length);
      prefix = grown;
      if (onProgress) onProgress({ loaded: prefix.length, total: byteLength });
    }
    try {
      header = parseHeader(prefix);
      break;
    } catch (err) {
      if (!(err instanceof NeedMore)) throw err;
      if (prefix.length >= byteLength) throw new GgufError('file ends inside the header', prefix.length);
      if (prefix.length >= MAX_HEADER) throw new GgufError('header larger than 2 GiB');
      want = Math.min(byteLength, Math.max(err.atLeast, prefix.length * 2));
    }
  }
  const tensors = header.tensors.map((t) => {
    const info = engine.types.get(t.typeId);
    if (!info) throw new GgufError(`tensor ${t.name} has unknown or removed type id ${t.typeId}`);
    const nElements = t.shape.reduce((a, b) => a * b, 1);
    const nBytes = nElements / info.blockSize * info.typeSize;
    if (!Number.isInteger(nBytes)) throw new GgufError(`tensor ${t.name}: row not a whole number of ${info.name} blocks`);
    const start = header.dataOffset + t.offset;
    if (start + nBytes > byteLength) throw new GgufError(`tensor ${t.name} extends past end of file (offset ${t.offset}, size ${nBytes}, file size ${byteLength})`);
    const rowLength = t.shape[0] || 1;
    return {
      name: t.name, type: info.name, typeId: t.typeId, shape: t.shape, nElements, offset: start, relativeOffset: t.offset, nBytes,
      rowLength, nRows: nElements / rowLength, rowBytes: rowLength / info.blockSize * info.typeSize,
    };
  });
  const byName = new Map(tensors.map((t) => [t.name, t]));
  const meta = new Map(header.metadata.map((m) => [m.key, m]));
  const get = (k) => { const e = meta.get(k); return e && (e.type === 'array' ? e : e.value); };

  async function readRowsBytes(t, a, b, sig) {
    const info = engine.types.get(t.typeId);
    const rowLen = t.shape[0] || 1;
    const rowBytes = rowLen / info.blockSize * info.typeSize;
    const start = t.offset + a * rowBytes;
    return reader.read(start, start + (b - a) * rowBytes, sig);
  }

  function rowsOf(t) {
    return t.shape.length ? t.nElements / t.shape[0] : 1;
  }

  async function readTensor(name, opts = {}) {
    const t = byName.get(name);
    if (!t) throw new Error(`no tensor named ${name}`);
    const nRows = rowsOf(t);
    const [a, b] = opts.rows || [0, nRows];
    if (!(a >= 0 && b <= nRows && a <= b)) throw new RangeError(`rows ${a}..${b} out of 0..${nRows}`);
    const rowLen = t.shape[0] || 1;
    const out = new Float32Array((b - a) * rowLen);
    const step = Math.max(1, Math.floor(CHUNK_ELEMENTS / rowLen));
    for (let r = a; r < b; r += step) {
      checkAbort(opts.signal);
      const e = Math.min(b, r + step);
      const bytes = await readRowsBytes(t, r, e, opts.signal);
      out.set(dequantize(engine, t.typeId, bytes, (e - r) * rowLen), (r - a) * rowLen);
      if (opts.onProgress) opts.onProgress({ loaded: (e - a) * t.rowBytes, total: (b - a) * t.rowBytes });
    }
    return out;
  }

  async function tensorStats(name, opts = {}) {
    const t = byName.get(name);
    if (!t) throw new Error(`no tensor named ${name}`);
    const bins = opts.bins || 64;
    const [a, b] = opts.rows || [0, rowsOf(t)];
    if (!(a >= 0 && b <= rowsOf(t) && a <= b)) throw new RangeError(`rows ${a}..${b} out of 0..${rowsOf(t)}`);
    const rowLen = t.shape[0] || 1;
    const step = Math.max(1, Math.floor(CHUNK_ELEMENTS / rowLen));
    let min = Infinity, max = -Infinity, sum = 0, n = 0, nan = 0, inf = 0, zero = 0;
    const chunks = [];
    const count = (b - a) * rowLen;
    const keep = count <= 16 * CHUNK_ELEMENTS;
    const total = (keep ? 1 : 2) * (b - a) * t.rowBytes;
    const pass = async (fn, base) => {
      for (let r = a, k = 0; r < b; r += step, k++) {
        checkAbort(opts.signal);
        const e = Math.min(b, r + step);
        const vals = keep && chunks.length > k ? chunks[k] : await readTensor(name, { rows: [r, e], signal: opts.signal });
        fn(vals);
        if (opts.onProgress && base !== null) opts.onProgress({ loaded: base + (e - a) * t.rowBytes, total });
      }
    };
    await pass((v) => {
      if (keep) chunks.push(v);
      for (let i = 0; i < v.length; i++) {
        const x = v[i];
        if (x !== x) { nan++; continue; }
        if (x === Infinity || x === -Infinity) { inf++; continue; }
        if (x === 0) zero++;
        if (x < min) min = x;
        if (x > max) max = x;
        sum += x; n++;
      }
    }, 0);
    const mean = n ? sum / n : NaN;
    let ss = 0; // squared deviations from the mean, summed in the second pass (two-pass std)
    const histogram = new Array(bins).fill(0);
    if (n) {
      const width = max - min || 1;
      await pass((v) => {
        for (let i = 0; i < v.length; i++) {
          const x = v[i];
          if (x !== x || x === Infinity || x === -Infinity) continue;
          ss += (x - mean) * (x - mean);
          histogram[Math.min(bins - 1, Math.floor((x - min) / width * bins))]++;
        }
      }, keep ? null : (b - a) * t.rowBytes); // null: replaying kept chunks, nothing read
    }
    const std = n ? Math.sqrt(ss / n) : NaN;
    const edges = [];
    for (let i = 0; i <= bins; i++) edges.push(n ? min + (max - min) * i / bins : 0);
    return { count, min: n ? min : null, max: n ? max : null, mean: n ? mean : null, std: n ? std : null, nanCount: nan, infCount: inf, zeroCount: zero, histogram: { edges, counts: histogram } };
  }

  // The package's Summary (js/index.d.ts): fileTypeLabel is left null here — the viewer labels
  // general.file_type itself.
  function summary() {
    const arch = get('general.architecture');
    const a = (k) => numberOf(get(`${arch}.${k}`)) ?? null;
    const mix = new Map();
    let params = 0, bytes = 0;
    for (const t of tensors) {
      const m = mix.get(t.type) || { type: t.type, typeId: t.typeId, tensors: 0, elements: 0, bytes: 0 };
      m.tensors++; m.elements += t.nElements; m.bytes += t.nBytes;
      mix.set(t.type, m);
      params += t.nElements; bytes += t.nBytes;
    }
    const tokens = meta.get('tokenizer.ggml.tokens');
    return {
      architecture: typeof arch === 'string' ? arch : null, name: get('general.name') ?? null, parameterCount: params, tensorBytes: bytes,
      fileType: numberOf(get('general.file_type')) ?? null, fileTypeLabel: null,
      quantMix: [...mix.values()].map((m) => ({ ...m, share: bytes ? m.bytes / bytes : 0 })).sort((x, y) => x.typeId - y.typeId),
      bitsPerWeight: params ? bytes * 8 / params : 0,
      contextLength: a('context_length'), layers: a('block_count'), heads: a('attention.head_count'),
      kvHeads: a('attention.head_count_kv'), embeddingSize: a('embedding_length'),
      vocabSize: a('vocab_size') ?? (tokens && tokens.type === 'array' ? tokens.len : null),
    };
  }


  return {
    get,
    version: header.version, endian: header.endian, alignment: header.alignment, dataOffset: header.dataOffset,
    byteLength, metadata: header.metadata, tensors, summary, readTensor, tensorStats,
    readTensorBytes: async (name, opts = {}) => {
      const t = byName.get(name);
      if (!t) throw new Error(`no tensor named ${name}`);
      const [a, b] = opts.rows || [0, rowsOf(t)];
      return readRowsBytes(t, a, b, opts.signal);
    },
  };
}
