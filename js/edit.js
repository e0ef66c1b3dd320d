// Editing a GGUF's metadata and hashing its tensor data, on top of a GGUF model's source.
// The core plans the edited file (new header + pieces of the input); here the pieces become a
// Blob (File.slice: nothing is read) or a stream (read chunk by chunk), so a 100 GB file is
// never held in memory.

import { abortError } from './sources.js';
/** @import { EditChange, EditPlan, EditValue, GgufTypeName, HashOptions, HashReport, Progress, TensorInfo } from './types.js' */
/** @import { GgufModel } from './model.js' */
/** @typedef {{ key: string, value: EditValue, type?: GgufTypeName }} SetEntry */

/** Bytes per read when streaming or hashing. */
const STREAM_CHUNK_BYTES = 8 * 1024 * 1024;

/**
 * Pending metadata edits of one GGUF file (for a split model: its first shard, which holds the
 * metadata). Nothing is written until toBlob() or toStream().
 */
export class GgufEditor {
  /** The model edited (a split model's first shard). @internal @type {GgufModel} */
  model;
  /** @internal @type {Map<string, SetEntry | null>} */
  _changes;

  /** @internal @param {GgufModel} model */
  constructor(model) {
    this.model = model.shards ? model.shards[0] : model;
    /** @type {Map<string, SetEntry | null>} null: removed */
    this._changes = new Map();
  }

  /**
   * Sets `key` to `value` (string, number, boolean or an array of them). Without `type` the
   * value takes the existing key's type (arrays keep their item type), or for a new key string,
   * bool, int32/int64 or float32 by the value. `type` names a spec type (uint8 … float64, bool,
   * string; for an array, its items'). Checked now: throws on a value the type cannot hold.
   * @param {string} key
   * @param {EditValue} value
   * @param {GgufTypeName} [type]
   * @returns {this}
   */
  set(key, value, type) {
    const entry = type === undefined ? { key, value } : { key, value, type };
    this._check([entry], []);
    this._changes.set(key, entry);
    return this;
  }

  /**
   * Removes `key` (throws when the file has no such key).
   * @param {string} key
   * @returns {this}
   */
  remove(key) {
    if (this.model.get(key) === undefined) throw new Error(`gguf-lens: no key ${key} to remove`);
    this._changes.set(key, null);
    return this;
  }

  /**
   * Replaces the chat template (tokenizer.chat_template).
   * @param {string} text
   * @returns {this}
   */
  setChatTemplate(text) {
    return this.set('tokenizer.chat_template', String(text), 'string');
  }

  /**
   * Forgets the pending change of `key` (or every change).
   * @param {string} [key]
   * @returns {this}
   */
  reset(key) {
    if (key === undefined) this._changes.clear();
    else this._changes.delete(key);
    return this;
  }

  /**
   * The pending changes: [{ key, op: 'set' | 'add' | 'remove', before, after, type }].
   * @returns {EditChange[]}
   */
  changes() {
    return [...this._changes.entries()].map(([key, entry]) => {
      /** @type {(import('./types.js').MetadataEntry & { itemType?: string, len?: number, value?: unknown }) | undefined} */
      const old = this.model.metadata.find((e) => e.key === key);
      const before = old === undefined ? undefined : (old.type === 'array' ? `[${old.itemType} × ${old.len}]` : old.value);
      if (entry === null) return { key, op: 'remove', before, after: undefined, type: old?.type };
      return { key, op: old === undefined ? 'add' : 'set', before, after: entry.value, type: entry.type ?? old?.itemType ?? old?.type };
    });
  }

  /** The pending changes as the core's edit request: keys set and keys removed. @internal */
  _edits() {
    /** @type {SetEntry[]} */
    const set = [];
    /** @type {string[]} */
    const remove = [];
    for (const [key, entry] of this._changes) {
      if (entry === null) remove.push(key);
      else set.push(entry);
    }
    return { set, remove };
  }

  /**
   * Throws what the core says is wrong with these edits.
   * @param {SetEntry[]} set
   * @param {string[]} remove
   * @internal
   */
  _check(set, remove) {
    const plan = this.model.header.editPlan({ set, remove }, this.model.byteLength);
    plan.free();
  }

  /**
   * The edited file's layout: `{ header: Uint8Array, pieces: [{from, len}], len }` (len: its bytes).
   * @returns {EditPlan}
   */
  plan() {
    const plan = this.model.header.editPlan(this._edits(), this.model.byteLength);
    try {
      return { header: plan.header, pieces: plan.pieces, len: plan.len };
    } finally {
      plan.free();
    }
  }

  /**
   * The edited file as a Blob. From a File or Blob nothing is read: the Blob is the new header
   * plus slices of the original, so saving it streams straight from disk. From other inputs
   * (a URL, a path, bytes) the pieces are read into memory: use toStream() for big ones.
   * @param {{ signal?: AbortSignal }} [options]
   * @returns {Promise<Blob>}
   */
  async toBlob(options = {}) {
    const { header, pieces } = this.plan();
    const input = this.model.input;
    /** @type {(Uint8Array | Blob)[]} */
    const parts = [header];
    const sliceable = typeof Blob !== 'undefined' && input instanceof Blob;
    for (const piece of pieces) {
      if (piece.from === null) parts.push(new Uint8Array(piece.len));
      else if (sliceable) parts.push(input.slice(piece.from, piece.from + piece.len));
      else parts.push(await this.model.source.read(piece.from, piece.from + piece.len, options.signal));
    }
    // Every Uint8Array here is over an ArrayBuffer (TS types them as possibly shared).
    return new Blob(/** @type {BlobPart[]} */ (parts), { type: 'application/octet-stream' });
  }

  /**
   * The edited file as a ReadableStream of Uint8Array chunks, read from the model's source as
   * it is consumed (e.g. piped to a file from showSaveFilePicker, or to a Node write stream).
   * @param {{ signal?: AbortSignal, chunkBytes?: number, onProgress?: (p: Progress) => void }} [options]
   * @returns {ReadableStream<Uint8Array>}
   */
  toStream(options = {}) {
    const { header, pieces } = this.plan();
    const source = this.model.source;
    const chunkBytes = options.chunkBytes ?? STREAM_CHUNK_BYTES;
    let sentHeader = false;
    let piece = 0;
    let at = 0;
    let written = 0;
    const total = header.length + pieces.reduce((sum, p) => sum + p.len, 0);
    return new ReadableStream(/** @type {UnderlyingDefaultSource<Uint8Array>} */ ({
      async pull(controller) {
        if (options.signal?.aborted) throw abortError(options.signal);
        if (!sentHeader) {
          sentHeader = true;
          written += header.length;
          controller.enqueue(header);
          return;
        }
        while (piece < pieces.length && at >= pieces[piece].len) {
          piece++;
          at = 0;
        }
        if (piece >= pieces.length) {
          controller.close();
          return;
        }
        const p = pieces[piece];
        const n = Math.min(chunkBytes, p.len - at);
        const bytes = p.from === null ? new Uint8Array(n) : await source.read(p.from + at, p.from + at + n, options.signal);
        at += n;
        written += n;
        options.onProgress?.({ loaded: written, total });
        controller.enqueue(bytes);
      },
    }));
  }
}

/**
 * llama-gguf-hash's digests of a model's tensor data (each tensor's bytes in tensor-info
 * order; a split model's shards one after another): `{ tensors: [{name, xxh64?, sha1?, sha256?}],
 * model: {xxh64?, sha1?, sha256?, uuid?}, lines }`, `lines` being llama-gguf-hash's output.
 * @param {GgufModel} model
 * @param {HashOptions} [options] `{ xxh64, sha1, sha256, uuid, all, perTensor = true, fileName,
 *   onProgress({loaded, total}), signal, chunkBytes }`; no algorithm: xxh64, as llama-gguf-hash
 * @returns {Promise<HashReport>}
 * @internal
 */
export async function hashModel(model, options = {}) {
  const all = !!options.all;
  const hasher = new model.wasm.TensorHasher(
    all || !!options.xxh64, all || !!options.sha1, all || !!options.sha256, !!options.uuid,
    options.perTensor ?? true);
  /** @type {Promise<Uint8Array> | null} */
  let pending = null;
  try {
    const chunkBytes = options.chunkBytes ?? STREAM_CHUNK_BYTES;
    /** Every read: [tensor, start, end, last piece of its tensor]; an empty tensor is one empty read.
     * @type {[TensorInfo, number, number, boolean][]} */
    const reads = [];
    for (const t of model.tensors) {
      let at = 0;
      do {
        const end = Math.min(t.nBytes, at + chunkBytes);
        reads.push([t, at, end, end === t.nBytes]);
        at = end;
      } while (at < t.nBytes);
    }
    const total = model.tensors.reduce((sum, t) => sum + t.nBytes, 0);
    const fetch = (/** @type {[TensorInfo, number, number, boolean]} */ [t, start, end]) => model.shards[t.shard].source.read(t.offset + start, t.offset + end, options.signal);
    let loaded = 0;
    // The next read is on its way while this one is hashed.
    pending = reads.length ? fetch(reads[0]) : null;
    for (let i = 0; i < reads.length; i++) {
      const bytes = /** @type {Uint8Array} */ (await pending);
      pending = i + 1 < reads.length ? fetch(reads[i + 1]) : null;
      hasher.update(bytes);
      loaded += bytes.length;
      const [t, , , last] = reads[i];
      if (last) hasher.endTensor(t.name);
      options.onProgress?.({ loaded, total });
      if (options.signal?.aborted) throw abortError(options.signal);
    }
    return hasher.finish(options.fileName ?? nameOf(model.input));
  } finally {
    pending?.catch(() => {});
    hasher.free();
  }
}

/**
 * The name llama-gguf-hash would print for an input: a path or URL as given, a File's name.
 * @param {unknown} input
 */
function nameOf(input) {
  if (typeof input === 'string') return input;
  const name = /** @type {{ name?: unknown } | null | undefined} */ (input)?.name;
  if (typeof name === 'string' && name) return name;
  return 'model.gguf';
}
