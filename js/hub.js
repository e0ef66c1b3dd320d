// A Hugging Face repo's GGUF files: the Hub's public tree API lists them (paginated by a Link
// header), split files are grouped, and each model's headers are read over Range through open()
// a few files at a time, for the quant label, size, bits per weight, parameters and the memory
// planner's verdict for a device (fits / largest context / layers to offload).
import { openGguf } from './open.js';
import { Model } from './model.js';
/** @import { GgufModel } from './model.js' */
import { loadCore } from './wasm.js';
import { SourceError, abortError, errorMessage, guardedFetch, plainNameProblem, quoteName, waitFor, stallTimeoutOf } from './sources.js';
/** @import { HubOptions, InspectOptions, RepoDevice, RepoGguf, RepoGgufFile, RepoListing, RepoVerdict, Summary, RepoGgufRow } from './types.js' */
/** @typedef {Omit<RepoGgufRow, 'model'> & { model: GgufModel | null, opened?: (GgufModel | null)[] }} Row a row, with the shards opened so far */

export const HUB_ENDPOINT = 'https://huggingface.co';
const SPLIT = /^(.*)-(\d{5})-of-(\d{5})\.gguf$/i;
// A listing is bounded: a hostile or broken API cannot keep us paging or growing forever.
const MAX_PAGES = 200;
const MAX_ENTRIES = 200_000;


/**
 * "owner/name", or a Hub address (https://huggingface.co/owner/name[/tree/revision]), as
 * { repo, revision } (revision undefined when the text names none).
 * @param {string} text
 * @returns {{ repo: string, revision: string | undefined }}
 */
export function parseRepo(text) {
  let s = String(text ?? '').trim();
  /** @type {string | undefined} */
  let revision;
  const url = /^https?:\/\/[^/]+\/(.*)$/i.exec(s);
  if (url) {
    const parts = url[1].split(/[?#]/)[0].split('/').filter(Boolean);
    if (parts[0] === 'models') parts.shift();
    if ((parts[2] === 'tree' || parts[2] === 'blob' || parts[2] === 'resolve') && parts[3]) {
      revision = decodeURIComponent(parts[3]);
    }
    s = parts.slice(0, 2).join('/');
  }
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,95}\/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$/.test(s)) {
    throw new TypeError(`gguf-lens: not a Hugging Face repo: ${JSON.stringify(String(text))} (expected owner/name)`);
  }
  return { repo: s, revision };
}

const encodePath = (/** @type {string} */ p) => p.split('/').map(encodeURIComponent).join('/');

/**
 * Whether `hostname` (of a URL) is this machine: 127.0.0.0/8, localhost, [::1].
 * @param {string} hostname
 * @internal
 */
export function isLoopbackHost(hostname) {
  const h = String(hostname).toLowerCase().replace(/\.$/, '');
  if (h === 'localhost' || h.endsWith('.localhost') || h === '[::1]') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/**
 * The endpoint without a trailing slash, checked to be an https origin (plus optional path),
 * or http on this machine only (a local mirror, a test server): a token sent over plain http
 * to another host could be read on the way.
 * @param {HubOptions} options
 */
function endpointOf(options) {
  return checkHubEndpoint(options.endpoint ?? HUB_ENDPOINT);
}

/**
 * `endpoint` checked as listRepoGgufs checks it (https, or http on 127.0.0.0/8, localhost or
 * [::1]) and without its trailing slash; throws a TypeError otherwise.
 * @param {string} endpoint
 * @returns {string}
 */
export function checkHubEndpoint(endpoint) {
  const text = String(endpoint).replace(/\/+$/, '');
  let u;
  try {
    u = new URL(text);
  } catch {
    throw new TypeError(`gguf-lens: endpoint is not a URL: ${quoteName(text)}`);
  }
  if (u.protocol === 'https:' || (u.protocol === 'http:' && isLoopbackHost(u.hostname))) return text;
  throw new TypeError(`gguf-lens: endpoint must be https (or http on 127.0.0.1, localhost or [::1]): ${quoteName(text)}`);
}

/**
 * The next page's address from a Link header, or null.
 * @param {string | null} header
 */
function nextLink(header) {
  if (!header) return null;
  for (const part of header.split(',')) {
    const m = /<([^>]*)>\s*;(.*)$/.exec(part.trim());
    if (m && /\brel\s*=\s*"?next"?/i.test(m[2])) return m[1];
  }
  return null;
}

/**
 * A JSON answer and the next page's address, within the stall timeout.
 * @param {typeof fetch} fetchFn
 * @param {string} url
 * @param {HubOptions} options
 * @param {string} what
 */
async function getJson(fetchFn, url, options, what) {
  const stallMs = stallTimeoutOf(options);
  const stalled = () => new SourceError(`${what}: no answer from ${url} for ${stallMs} ms (stallTimeoutMs ${stallMs})`);
  const abort = new AbortController();
  const onAbort = () => abort.abort(abortError(options.signal));
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await getJsonOnce(fetchFn, url, options, what, abort.signal, (p) => waitFor(p, options.signal, stallMs, stalled));
  } catch (err) {
    abort.abort();
    throw err;
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * @param {typeof fetch} fetchFn
 * @param {string} url
 * @param {HubOptions} options
 * @param {string} what
 * @param {AbortSignal} signal
 * @param {<T>(p: Promise<T>) => Promise<T>} bounded
 * @returns {Promise<{ body: unknown, next: string | null }>}
 */
async function getJsonOnce(fetchFn, url, options, what, signal, bounded) {
  let response;
  try {
    response = await bounded(guardedFetch(fetchFn, url, { headers: options.headers, extra: { Accept: 'application/json' }, signal }));
  } catch (err) {
    if (options.signal?.aborted) throw abortError(options.signal);
    if (err instanceof SourceError) throw err;
    throw new SourceError(`network error listing ${what}: ${errorMessage(err)} (offline, or blocked by CORS?)`, { cause: err });
  }
  if (response.status === 401 || response.status === 403) {
    throw new SourceError(`${what}: HTTP ${response.status}: gated or private, a token with access is needed`);
  }
  if (response.status === 404) throw new SourceError(`${what}: not found (HTTP 404): no such repo or revision`);
  if (!response.ok) throw new SourceError(`${what}: HTTP ${response.status} ${response.statusText}`.trim());
  let body;
  try {
    body = await bounded(response.json());
  } catch (err) {
    if (err instanceof SourceError || options.signal?.aborted) throw err;
    throw new SourceError(`${what}: the answer is not JSON`, { cause: err });
  }
  return { body, next: nextLink(response.headers.get('link')) };
}

/**
 * Lists a repo's GGUF files from the Hub's tree API, split files grouped into one model each.
 * @param {string} repoText "owner/name" or a Hub address
 * @param {HubOptions} [options] { revision = 'main', endpoint, fetch, headers, signal }
 * @returns {Promise<RepoListing>}
 */
export async function listRepoGgufs(repoText, options = {}) {
  const parsed = parseRepo(repoText);
  const revision = options.revision || parsed.revision || 'main';
  const endpoint = endpointOf(options);
  const fetchFn = options.fetch ?? globalThis.fetch;
  if (typeof fetchFn !== 'function') throw new TypeError('gguf-lens: no fetch() available');
  const [owner, name] = parsed.repo.split('/');
  const base = `${endpoint}/api/models/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/tree/${encodeURIComponent(revision)}`;
  const origin = new URL(base).origin;
  /** @type {unknown[]} */
  const entries = [];
  /** @type {string | null} */
  let url = `${base}?recursive=true`;
  let requests = 0;
  while (url) {
    if (requests >= MAX_PAGES) throw new SourceError(`${parsed.repo}: more than ${MAX_PAGES} pages of files`);
    requests++;
    const { body, next } = await getJson(fetchFn, url, options, `${parsed.repo}@${revision}`);
    if (!Array.isArray(body)) throw new SourceError(`${parsed.repo}: the tree API did not answer a list`);
    for (const e of body) {
      if (entries.length >= MAX_ENTRIES) throw new SourceError(`${parsed.repo}: more than ${MAX_ENTRIES} files`);
      entries.push(e);
    }
    // The headers (a token) go only where the endpoint is: a next link elsewhere is refused.
    url = next ? new URL(next, url).href : null;
    if (url && new URL(url).origin !== origin) throw new SourceError(`${parsed.repo}: next page on another origin (${new URL(url).origin})`);
  }
  const resolve = (/** @type {string} */ path) => `${endpoint}/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/resolve/${encodeURIComponent(revision)}/${encodePath(path)}`;
  return { repo: parsed.repo, revision, endpoint, requests, models: groupGguf(entries, resolve) };
}

/**
 * A tree API entry (the fields read; anything may be missing in a hostile answer).
 * @typedef {{ type?: unknown, path?: unknown, size?: unknown, lfs?: { size?: unknown } }} TreeEntry
 */

/**
 * File size from a tree entry: the LFS object's size when there is one.
 * @param {TreeEntry} e
 */
function sizeOf(e) {
  const n = Number(e?.lfs?.size ?? e?.size);
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/**
 * *.gguf files as models: single files, and split files grouped by prefix and count.
 * @param {unknown[]} entries the tree API's
 * @param {(path: string) => string} resolve a path's download URL
 * @returns {RepoGguf[]}
 */
function groupGguf(entries, resolve) {
  /** @typedef {Omit<RepoGguf, 'size' | 'path'> & { size?: number | null, path: string | null }} Group */
  /** @type {Group[]} */
  const models = [];
  /** @type {Map<string, Group & { split: { count: number, missing: number[] } }>} */
  const groups = new Map();
  for (const entry of entries) {
    const e = /** @type {TreeEntry | null | undefined} */ (entry);
    if (!e || e.type !== 'file' || typeof e.path !== 'string' || !/\.gguf$/i.test(e.path)) continue;
    const path = e.path;
    // A path from the listing is folders and a file name, each a plain name: no '..', no scheme.
    for (const part of path.split('/')) {
      const problem = plainNameProblem(part);
      if (problem) throw new SourceError(`the Hub listing names ${quoteName(path)}: refused, ${problem}`);
    }
    /** @type {RepoGgufFile} */
    const file = { path, size: sizeOf(e), url: resolve(path) };
    const m = SPLIT.exec(path);
    if (!m || Number(m[3]) < 1) {
      models.push({ name: path, path, files: [file], split: null });
      continue;
    }
    const key = `${m[1]}\0${m[3]}`;
    let g = groups.get(key);
    if (!g) {
      g = { name: `${m[1]}-*-of-${m[3]}.gguf`, path: null, files: [], split: { count: Number(m[3]), missing: [] } };
      groups.set(key, g);
      models.push(g);
    }
    file.shard = Number(m[2]);
    g.files.push(file);
  }
  for (const g of groups.values()) {
    g.files.sort((a, b) => /** @type {number} */ (a.shard) - /** @type {number} */ (b.shard));
    const have = new Set(g.files.map((f) => f.shard));
    for (let i = 1; i <= g.split.count && g.split.missing.length < 100; i++) if (!have.has(i)) g.split.missing.push(i);
    g.path = g.files[0].path;
  }
  for (const m of models) {
    m.size = m.files.every((f) => f.size !== null) ? m.files.reduce((s, f) => s + /** @type {number} */ (f.size), 0) : null;
  }
  models.sort((a, b) => a.name.localeCompare(b.name));
  // Every group has its path and size now.
  return /** @type {RepoGguf[]} */ (models);
}

/**
 * Runs `task(item)` over items, at most `limit` at a time.
 * @template I
 * @param {I[]} items
 * @param {number} limit
 * @param {(item: I) => Promise<void>} task
 * @param {AbortSignal} [signal]
 */
async function pool(items, limit, task, signal) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      if (signal?.aborted) throw abortError(signal);
      await task(items[next++]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * Opens every listed model's headers over Range (a file's header only, never its tensors),
 * `concurrency` files at a time, and reports each: quant label, size, bits per weight,
 * parameters, and the planner's verdict for `device`. Models stay open (row.model) so that
 * verdicts for another device are cheap (repoVerdict); closeRepoModels frees them.
 * @param {RepoListing} listing what listRepoGgufs returned
 * @param {InspectOptions & { maxHeaderBytes?: number }} [options] { concurrency = 3, device, fetch, headers, signal, onProgress,
 *   firstReadBytes, keepOpen = true }
 * @returns {Promise<RepoGgufRow[]>}
 */
export async function inspectRepoGgufs(listing, options = {}) {
  const concurrency = Math.max(1, Math.min(16, Math.floor(options.concurrency ?? 3)));
  /** @type {Row[]} */
  const rows = listing.models.map((m) => ({ ...m, files: m.files.map((f) => ({ ...f })), model: null, summary: null, verdict: null, error: null, requests: 0, bytes: 0 }));
  const openOptions = { fetch: options.fetch, headers: options.headers, signal: options.signal, firstReadBytes: options.firstReadBytes, retries: options.retries, stallTimeoutMs: options.stallTimeoutMs, maxHeaderBytes: options.maxHeaderBytes };
  // Files, not models, are the unit of concurrency: a split model's shards queue like the rest.
  /** @type {{ row: Row, i: number }[]} */
  const jobs = [];
  for (const row of rows) {
    if (row.split?.missing.length) {
      row.error = `split model incomplete: shard${row.split.missing.length > 1 ? 's' : ''} ${row.split.missing.join(', ')} of ${row.split.count} missing`;
      continue;
    }
    row.opened = new Array(row.files.length).fill(null);
    row.files.forEach((f, i) => jobs.push({ row, i }));
  }
  const total = rows.length;
  let done = rows.filter((r) => r.error).length;
  const report = (/** @type {Row} */ row) => options.onProgress?.({ done, total, row: /** @type {RepoGgufRow} */ (/** @type {unknown} */ (row)) });
  const wasm = await loadCore();
  const pending = new Map(rows.map((r) => [r, r.files.length]));
  const finish = (/** @type {Row} */ row) => {
    try {
      // Every shard is open here.
      const shards = /** @type {GgufModel[]} */ (row.opened);
      const model = shards.length === 1 ? shards[0] : Model.merge(shards, wasm);
      row.model = model;
      row.summary = model.summary();
      row.requests = model.ioStats.requests;
      row.bytes = model.ioStats.bytes;
      row.verdict = repoVerdict(model, options.device);
    } catch (err) {
      row.error = /** @type {Error} */ (err).message;
      closeOpened(row);
    }
    delete row.opened;
    done++;
    report(row);
  };
  try {
    await pool(jobs, concurrency, async ({ row, i }) => {
      if (row.error) return; // a shard of this model already failed
      try {
        // one file: a shard's URL alone would open every shard of its model
        const model = await openGguf([row.files[i].url], openOptions);
        // another shard failed meanwhile, or the scan was aborted (its models are being closed)
        if (row.error || !row.opened || options.signal?.aborted) {
          await model.close().catch(() => {});
          return;
        }
        row.opened[i] = model;
      } catch (err) {
        if (options.signal?.aborted) throw abortError(options.signal);
        if (row.error) return;
        row.error = `${row.files[i].path}: ${/** @type {Error} */ (err).message}`;
        closeOpened(row);
        delete row.opened;
        done++;
        report(row);
        return;
      }
      const left = /** @type {number} */ (pending.get(row)) - 1;
      pending.set(row, left);
      if (left === 0) finish(row);
    }, options.signal);
  } catch (err) {
    await closeRepoModels(rows);
    for (const row of rows) if (row.opened) closeOpened(row);
    throw err;
  }
  if (options.keepOpen === false) await closeRepoModels(rows);
  return rows;
}

/** @param {Row} row */
function closeOpened(row) {
  for (const m of row.opened ?? []) m?.close().catch(() => {});
  if (row.opened) row.opened.fill(null);
}

/**
 * Frees the models inspectRepoGgufs kept open.
 * @param {{ model: { close(): Promise<void> } | null }[]} rows
 */
export async function closeRepoModels(rows) {
  await Promise.all(rows.map(async (row) => {
    const m = row.model;
    row.model = null;
    if (m) await m.close().catch(() => {});
  }));
}

/**
 * The planner's verdict for a device: { gpuMem, ctx, ngl, nglFull, fits, maxCtx, gpuBytes,
 * totalBytes, command } or { error } when the planner refuses the model.
 * - with gpuMem: `ngl` is the most layers whose weights and KV fit at `ctx` (nglFull = all of
 *   them, the output layer included); `fits` when that is every layer; `maxCtx` the largest
 *   context with every layer offloaded (null when not even 256 cells fit).
 * - without: everything on the CPU; `fits` is null (no budget was given).
 * @param {GgufModel} model
 * @param {RepoDevice} [device] { gpuMem (bytes), ctx (default: the training context), and any
 *   other planMemory option }
 * @returns {RepoVerdict}
 */
export function repoVerdict(model, device = {}) {
  const { gpuMem, ...rest } = device ?? {};
  try {
    if (!(gpuMem && gpuMem > 0)) {
      const p = model.planMemory({ ...rest, ngl: 0 });
      return { gpuMem: null, ctx: p.nCtx, ngl: 0, nglFull: p.nLayer + 1, fits: null, maxCtx: null, gpuBytes: 0, totalBytes: p.totalBytes, command: p.command };
    }
    const p = model.planMemory({ ...rest, gpuMem });
    const nglFull = p.nLayer + 1;
    const fits = p.ngl >= nglFull;
    const maxCtx = fits ? p.maxCtx : model.planMemory({ ...rest, ctx: 256 * (rest.parallel ?? 1), gpuMem, ngl: nglFull }).maxCtx;
    return { gpuMem, ctx: p.nCtx, ngl: p.ngl, nglFull, fits, maxCtx, gpuBytes: p.gpuBytes, totalBytes: p.totalBytes, command: p.command };
  } catch (err) {
    return { error: /** @type {Error} */ (err).message };
  }
}

/**
 * listRepoGgufs then inspectRepoGgufs, with the same options.
 * @param {string} repoText
 * @param {InspectOptions} [options]
 */
export async function scanRepo(repoText, options = {}) {
  const listing = await listRepoGgufs(repoText, options);
  return { ...listing, rows: await inspectRepoGgufs(listing, options) };
}
