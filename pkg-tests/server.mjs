// A local HTTP server on 127.0.0.1 (random port) serving files with Range support, and ways to
// misbehave: ignore Range (200 whole body), add latency, drop the connection mid-body, answer
// 416, omit Content-Length. Counts requests and body bytes sent. Static files (the package,
// browser test pages) are served from `staticRoot` when given, compressed as a CDN serves them
// when `compress` is set.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const TYPES = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.html': 'text/html', '.wasm': 'application/wasm' };

/** @type {Map<string, Buffer>} file + encoding + its mtime and size → compressed bytes */
const encodedCache = new Map();
/**
 * A static file's body in `encoding`: the precompressed copy shipped beside it (`.br` / `.gz`),
 * else compressed here once (brotli at its highest quality, as CDNs do for static assets).
 * @param {string} file
 * @param {'br' | 'gzip'} encoding
 */
function encodedBody(file, encoding) {
  const { mtimeMs, size } = fs.statSync(file); // a file written again is compressed again
  const key = `${file}\0${encoding}\0${mtimeMs}\0${size}`;
  let body = encodedCache.get(key);
  if (!body) {
    const shipped = file + (encoding === 'br' ? '.br' : '.gz');
    const raw = fs.readFileSync(file);
    body = fs.existsSync(shipped) ? fs.readFileSync(shipped)
      : encoding === 'br' ? zlib.brotliCompressSync(raw, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: raw.length } })
        : zlib.gzipSync(raw, { level: 9 });
    encodedCache.set(key, body);
  }
  return body;
}

/**
 * @param {object} options
 * @param {Record<string, Uint8Array | string>} [options.files] URL path → bytes or file path
 * @param {string} [options.staticRoot] directory served for any other path
 * @param {boolean} [options.isolated] static files with COOP/COEP headers: a page served so is
 *   cross-origin isolated (SharedArrayBuffer exists there and in its workers)
 * @param {boolean} [options.compress] static JS, HTML and wasm sent with Content-Encoding br (or
 *   gzip) when the request accepts it; the `files` (model bytes, Range) stay identity
 */
export async function startServer({ files = {}, staticRoot, isolated = false, compress = false } = {}) {
  if (compress && staticRoot) {
    // Compressed up front, as a CDN's edge holds them: no request waits for brotli.
    for (const entry of fs.readdirSync(staticRoot, { recursive: true })) {
      const file = path.join(staticRoot, String(entry));
      if (TYPES[path.extname(file)] && fs.statSync(file).isFile()) encodedBody(file, 'br');
    }
  }
  const state = {
    mode: '206', // '206' | '200' | '416' | 'no-length'
    latencyMs: 0,
    dropAfterBytes: null, // drop the connection after this many body bytes...
    dropsLeft: 0, // ...for this many responses
    requests: 0,
    bytesSent: 0,
    log: [],
    pieceBytes: 1 << 20, // the body is written in pieces of this size...
    pieceDelayMs: 0, // ...with this pause between them (a slow, trickling server)
    /** @type {((pathname: string) => Promise<void>) | null} */
    beforeStatic: null,
  };
  // A body is bytes in memory, or a file read range by range (sparse multi-GB files stay on disk).
  const bodyOf = (name) => {
    const f = files[name];
    if (typeof f !== 'string') {
      const bytes = Buffer.from(f.buffer, f.byteOffset, f.byteLength);
      return { length: bytes.length, read: async (start, end) => bytes.subarray(start, end) };
    }
    return {
      length: fs.statSync(f).size,
      async read(start, end) {
        const handle = await fs.promises.open(f, 'r');
        try {
          const out = Buffer.alloc(end - start);
          await handle.read(out, 0, out.length, start);
          return out;
        } finally {
          await handle.close();
        }
      },
    };
  };

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    let body;
    if (url.pathname in files) {
      body = bodyOf(url.pathname);
    } else if (staticRoot) {
      // A test may hold a static file back (state.beforeStatic resolves when it may go).
      if (state.beforeStatic) await state.beforeStatic(url.pathname);
      const file = path.join(staticRoot, decodeURIComponent(url.pathname));
      if (!file.startsWith(staticRoot) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
        res.writeHead(404).end();
        return;
      }
      const coi = isolated ? { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' } : {};
      const type = TYPES[path.extname(file)];
      const accepts = String(req.headers['accept-encoding'] ?? '');
      const encoding = !compress || !type ? null : /\bbr\b/.test(accepts) ? 'br' : /\bgzip\b/.test(accepts) ? 'gzip' : null;
      const encodingHeaders = encoding ? { 'content-encoding': encoding, vary: 'accept-encoding' } : {};
      res.writeHead(200, { 'content-type': type ?? 'application/octet-stream', ...coi, ...encodingHeaders });
      res.end(encoding ? encodedBody(file, encoding) : fs.readFileSync(file));
      return;
    } else {
      res.writeHead(404).end();
      return;
    }
    state.requests++;
    state.log.push({ path: url.pathname, range: req.headers.range ?? null });
    if (state.latencyMs) await new Promise((r) => setTimeout(r, state.latencyMs));
    const cors = { 'access-control-allow-origin': '*', 'accept-ranges': 'bytes' };
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    if (state.mode === '416') {
      res.writeHead(416, { ...cors, 'content-range': `bytes */${body.length}` }).end();
      return;
    }
    let status = 200;
    let [from, to] = [0, body.length];
    const headers = { ...cors, 'content-type': 'application/octet-stream' };
    if (range && state.mode === '206') {
      const start = Number(range[1]);
      const end = range[2] === '' ? body.length - 1 : Math.min(Number(range[2]), body.length - 1);
      if (start >= body.length) {
        res.writeHead(416, { ...cors, 'content-range': `bytes */${body.length}` }).end();
        return;
      }
      status = 206;
      [from, to] = [start, end + 1];
      headers['content-range'] = `bytes ${start}-${end}/${body.length}`;
    }
    if (state.mode !== 'no-length') headers['content-length'] = String(to - from);
    res.writeHead(status, headers);
    if (state.dropsLeft > 0 && state.dropAfterBytes !== null) {
      state.dropsLeft--;
      const part = await body.read(from, Math.min(to, from + state.dropAfterBytes));
      state.bytesSent += part.length;
      res.write(part, () => res.destroy());
      return;
    }
    // Write in pieces (1 MiB unless set) with backpressure, so a client that stops reading
    // stops the send.
    const PIECE = state.pieceBytes;
    let closed = false;
    const waiters = new Set();
    res.on('close', () => {
      closed = true;
      for (const wake of waiters) wake();
    });
    for (let at = from; at < to && !closed; at += PIECE) {
      const piece = await body.read(at, Math.min(to, at + PIECE));
      state.bytesSent += piece.length;
      if (state.pieceDelayMs && at > from) await new Promise((r) => setTimeout(r, state.pieceDelayMs));
      if (!res.write(piece) && !closed) {
        await new Promise((wake) => {
          waiters.add(wake);
          res.once('drain', () => { waiters.delete(wake); wake(); });
        });
      }
    }
    res.end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  return {
    base,
    state,
    url: (name) => base + name,
    reset() {
      Object.assign(state, { mode: '206', latencyMs: 0, dropAfterBytes: null, dropsLeft: 0, requests: 0, bytesSent: 0, log: [], pieceBytes: 1 << 20, pieceDelayMs: 0, beforeStatic: null });
    },
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(resolve); }),
  };
}
