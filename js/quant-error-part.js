// The worker side of quantError({ workers }), loaded by stats-worker.js so the same workers
// serve both: a request names the model (URL, path, File or Blob), the tensor, the types and a
// first piece of rows (runs); the worker opens the model once, quantizes the piece's rows to
// every type in wasm, reports progress per chunk and sends each piece's exact sums back
// (quant-error-pool.js merges them in row order). It asks for its next piece as it starts the
// last read it knows, so that piece's reads start meanwhile; a `done` answer ends the request.
import { loadWasm } from './wasm.js';
import { useModel } from './worker-model.js';
import { serveRequests, handleNotices } from './worker-protocol.js';
/** @import { GgufModel } from './model.js' */
/** @import { ModelInput, Run, WorkerOpenOptions } from './internal.js' */
/** @import { QuantErrorJob, Wasm } from './bindings.js' */
/** @import { Emit } from './worker-protocol.js' */

/**
 * A quantization request (quant-error-pool.js; worker-protocol.js's op 'quant-error'), and the
 * 'more' notices that answer its 'need' events (a next piece, or none: done).
 * @typedef {{ id: string, input: ModelInput, inputId?: string,
 *   openOptions?: WorkerOpenOptions, name: string, types?: string[], piece: number, runs: Run[],
 *   chunkBytes: number, wasmModule?: WebAssembly.Module | null, timeline?: boolean }} QuantRequest
 * @typedef {{ id: string, piece?: number, runs?: Run[] }} MoreNotice
 * @typedef {{ pieces: { piece: number, runs: Run[] }[], done: boolean,
 *   wake: (() => void) | null, cancelled: boolean }} Inbox
 *   a request's pieces not yet read, whether the pool has no more, a waiting loop's resolve
 * @typedef {{ piece: number, first: number, last: number, cap: number, runs: Run[], ends?: boolean }} Read
 *   rows [first, last) read (at most cap), runs quantized
 */

/** @type {Map<string, Inbox>} request id → its inbox */
const requests = new Map();
/** One turn of the event loop, unclamped (a chain of setTimeout(0) waits 4 ms from the fifth).
 * @type {() => Promise<void>} */
const pause = typeof setImmediate === 'function'
  ? () => new Promise((resolve) => setImmediate(resolve))
  : (() => {
    const channel = new MessageChannel();
    /** @type {(() => void)[]} */
    const waiting = [];
    channel.port1.onmessage = () => waiting.shift()?.();
    return () => new Promise((resolve) => { waiting.push(() => resolve()); channel.port2.postMessage(0); });
  })();
// Quantized between two pauses while a read or the next piece has not arrived: a browser feeds
// a Blob's bytes (and the pool's answers) to this thread only while its event loop runs, so a
// read waiting behind a whole chunk's quantizing would start only after it (and each pause
// costs: none once they are in).
const SLICE_BYTES = 128 << 10;
// Small reads (a sample's rows) take longer to arrive than to quantize: several are under way.
const AHEAD = 8;
// A benchmark's timeline (requests carry the flag of benches/viewer-quant-error.mjs --timeline).
let timeline = false;
const mark = (/** @type {string} */ name) => { if (timeline) performance.mark(`qerr:part:${name}`); };

/**
 * @param {QuantRequest} message
 * @param {Inbox} inbox
 * @param {Emit} emit
 */
async function part(message, inbox, emit) {
  // The parent's compiled module when it sent one: this worker neither fetches nor compiles its own.
  const wasm = await loadWasm(message.wasmModule ?? undefined);
  mark('wasm');
  const { model, release } = await useModel(message.input, message.inputId, message.openOptions);
  mark('model');
  try {
    await quantizePieces(wasm, model, message, inbox, emit);
  } finally {
    release();
  }
}

/**
 * Reads of at most `perRead` rows for one piece's runs, each over one run or over several with
 * the few rows between them (a sample's rows, done before: read, not quantized; a gap is read
 * only when it is at most 1/16 of the run after it), so the runs between a sample's take no
 * more reads than one run. `firstRead` caps the first read (the first quantizing waits for it).
 * @param {number} piece
 * @param {Run[]} runs
 * @param {number} perRead
 * @param {number} firstRead
 */
function readsOf(piece, runs, perRead, firstRead) {
  /** @type {Read[]} */
  const reads = [];
  for (const [first, last] of runs) {
    for (let a = first; a < last;) {
      const prev = reads.at(-1);
      const cap = prev ? perRead : firstRead; // of a new read
      const b = Math.min(last, a + cap);
      if (prev && b - prev.first <= prev.cap && a >= prev.last && (a - prev.last) * 16 <= b - a) {
        prev.last = b;
        prev.runs.push([a, b]);
      } else {
        reads.push({ piece, first: a, last: b, cap, runs: [[a, b]] });
      }
      a = b;
    }
  }
  if (reads.length) reads[reads.length - 1].ends = true;
  return reads;
}

/**
 * The request's pieces of `model`'s tensor quantized to every type, each piece's state sent.
 * @param {Wasm} wasm
 * @param {GgufModel} model
 * @param {QuantRequest} message
 * @param {Inbox} inbox
 * @param {Emit} emit
 */
async function quantizePieces(wasm, model, message, inbox, emit) {
  const t = model.tensor(message.name);
  const header = model.shards[t.shard].header;
  const source = model.shards[t.shard].source;
  const perRead = Math.max(1, Math.floor(message.chunkBytes / Math.max(1, t.rowBytes)));
  // The first read small (an eighth): quantizing starts sooner, the next read comes meanwhile.
  let firstRead = Math.max(1, Math.floor(perRead / 8));
  const sliceRows = Math.max(1, Math.floor(SLICE_BYTES / Math.max(1, t.rowBytes)));
  /** @type {Read[]} */
  const reads = [];
  const take = () => {
    for (const { piece, runs } of inbox.pieces.splice(0)) {
      reads.push(...readsOf(piece, runs, perRead, firstRead));
      firstRead = perRead;
    }
  };
  let asked = false;
  const ask = () => {
    asked = true;
    emit('need');
  };
  // Messages are handled between tasks: a wait for the pool's answer lets them in.
  const answered = () => new Promise((resolve) => { inbox.wake = () => resolve(undefined); });
  const fetchRead = (/** @type {number} */ i) => {
    const [start, end] = header.rowsRange(t.name, reads[i].first, reads[i].last);
    return source.read(start, end);
  };
  /** @type {QuantErrorJob | null} */
  let job = null;
  /** Reads under way, in order: up to AHEAD of them, at most a chunk's bytes (or one read).
   * @type {{ bytes: number, read: Promise<Uint8Array>, done: boolean }[]} */
  const ahead = [];
  let next = 0; // the next read to start
  let aheadBytes = 0;
  const fetchAhead = () => {
    while (next < reads.length && ahead.length < AHEAD) {
      const bytes = (reads[next].last - reads[next].first) * t.rowBytes;
      if (ahead.length && aheadBytes + bytes > message.chunkBytes) break;
      const entry = { bytes, read: fetchRead(next++), done: false };
      entry.read.then(() => { entry.done = true; }, () => { entry.done = true; });
      ahead.push(entry);
      aheadBytes += bytes;
    }
  };
  const arrived = () => {
    const { bytes, read } = /** @type {typeof ahead[number]} */ (ahead.shift());
    aheadBytes -= bytes;
    return read;
  };
  /** ms, for a benchmark's timeline */
  const waited = { reads: 0, answers: 0, long: /** @type {string[]} */ ([]) };
  // The pool's answer, when it has come: its reads start at once.
  const taken = () => {
    if (!inbox.pieces.length) return;
    asked = false;
    take();
    fetchAhead();
  };
  try {
    take();
    fetchAhead(); // a request has a piece
    for (let i = 0; ; i++) {
      if (i >= reads.length) {
        if (!asked && !inbox.done) ask();
        const t0 = timeline ? performance.now() : 0;
        while (!inbox.pieces.length && !inbox.done && !inbox.cancelled) await answered();
        if (timeline) waited.answers += performance.now() - t0;
        if (inbox.cancelled) throw new Error('cancelled');
        taken();
        if (i >= reads.length) break; // done
      }
      const t1 = timeline ? performance.now() : 0;
      const bytes = await arrived();
      if (timeline) {
        const ms = performance.now() - t1;
        waited.reads += ms;
        if (ms > 2) waited.long.push(`${i}:${reads[i].last - reads[i].first}r:${ms.toFixed(0)}`);
      }
      if (i === 0) mark('first-read');
      taken();
      fetchAhead();
      // At most one read as long as this one left: the next piece is asked for now, to come (and
      // its first read to start) while these are quantized; asking earlier would hold more rows
      // at the end. (A sample's piece is several short reads: one is too short to wait on.)
      const rowsOf = (/** @type {number} */ k) => reads[k].last - reads[k].first;
      if (!asked && !inbox.done && (i + 1 >= reads.length || (i + 2 === reads.length && rowsOf(i + 1) <= rowsOf(i)))) ask();
      if (inbox.cancelled) throw new Error('cancelled');
      const read = reads[i];
      job ??= new wasm.QuantErrorJob(message.types ?? [], t.rowLength);
      let rows = 0;
      for (const [a, b] of read.runs) {
        for (let c = a; c < b; c += sliceRows) {
          if (ahead.some((e) => !e.done) || (asked && !inbox.done)) {
            await pause();
            taken();
          }
          const d = Math.min(b, c + sliceRows);
          job.addRows(header, t.name, bytes.subarray((c - read.first) * t.rowBytes, (d - read.first) * t.rowBytes));
        }
        rows += b - a;
      }
      emit('progress', { rows });
      if (i === 0) mark('first-chunk');
      if (read.ends) {
        const state = job.toState();
        job.free();
        job = null;
        emit('piece', { piece: read.piece, state }, [state.buffer]);
      }
    }
    mark(`last-chunk (waited ${waited.reads.toFixed(1)} ms for reads [${waited.long.join(' ')}], ${waited.answers.toFixed(1)} for pieces)`);
  } catch (err) {
    for (const { read } of ahead) read.catch(() => {}); // reads still under way fail unheard
    throw err;
  } finally {
    job?.free();
  }
}

serveRequests('quant-error', async (/** @type {QuantRequest} */ message, { signal, emit }) => {
  timeline = Boolean(message.timeline);
  mark('received');
  /** @type {Inbox} */
  const mine = { pieces: [{ piece: message.piece, runs: message.runs }], done: false, wake: null, cancelled: false };
  const cancel = () => {
    mine.cancelled = true;
    mine.wake?.();
  };
  signal.addEventListener('abort', cancel);
  requests.set(message.id, mine);
  try {
    await part(message, mine, emit);
    mark('sent');
  } finally {
    signal.removeEventListener('abort', cancel);
    requests.delete(message.id);
  }
});

handleNotices('more', (/** @type {MoreNotice} */ message) => {
  const inbox = requests.get(message.id);
  if (!inbox) return;
  if (message.runs) inbox.pieces.push({ piece: /** @type {number} */ (message.piece), runs: message.runs });
  else inbox.done = true;
  inbox.wake?.();
});
