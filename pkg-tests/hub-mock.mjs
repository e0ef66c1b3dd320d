// A local mock of the Hugging Face Hub on 127.0.0.1 (random port), never the network: the tree
// API (`/api/models/{owner}/{name}/tree/{revision}?recursive=true`, paginated by a Link header,
// `pageSize` entries a page) and `resolve/{revision}/{path}` serving files with Range. A gated
// repo answers 401 to both without `Authorization: Bearer {token}`. A file is a fixture's bytes
// followed by zeros up to `size` (the LFS size the API reports), so "only the header was read"
// can be checked on a multi-GB file. CORS as the Hub answers (preflight, exposed headers).
import http from 'node:http';
import fs from 'node:fs';

/**
 * @param {object} options
 * @param {Record<string, {gated?: boolean, files: Record<string, {fixture?: string, bytes?: Uint8Array, size?: number}>, extra?: object[]}>} options.repos
 * @param {number} [options.pageSize]
 * @param {string} [options.token]
 */
export async function startHubMock({ repos, pageSize = 3, token = 'hf_test_token' }) {
  const state = { api: 0, files: 0, bytesSent: 0, inFlight: 0, maxInFlight: 0, latencyMs: 0, log: [] };
  const bodies = new Map();
  const body = (repo, path) => {
    const key = `${repo}\0${path}`;
    if (!bodies.has(key)) {
      const f = repos[repo].files[path];
      const bytes = f.bytes ?? fs.readFileSync(f.fixture);
      bodies.set(key, { bytes, size: Math.max(f.size ?? bytes.length, bytes.length) });
    }
    return bodies.get(key);
  };
  const cors = {
    'access-control-allow-origin': '*',
    'access-control-expose-headers': 'link, content-range, content-length, accept-ranges',
  };
  const authorized = (repo, req) => !repos[repo].gated || req.headers.authorization === `Bearer ${token}`;

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { ...cors, 'access-control-allow-headers': 'authorization, range, accept', 'access-control-allow-methods': 'GET' }).end();
      return;
    }
    state.log.push({ path: decodeURIComponent(url.pathname), search: url.search, range: req.headers.range ?? null, auth: req.headers.authorization ?? null });
    let m = /^\/api\/models\/([^/]+)\/([^/]+)\/tree\/([^/]+)$/.exec(url.pathname);
    if (m) {
      state.api++;
      const repo = `${decodeURIComponent(m[1])}/${decodeURIComponent(m[2])}`;
      if (!repos[repo] || decodeURIComponent(m[3]) !== 'main') return res.writeHead(404, cors).end('{"error":"Repository not found"}');
      if (!authorized(repo, req)) return res.writeHead(401, cors).end('{"error":"Access to model is restricted"}');
      const entries = [
        ...Object.keys(repos[repo].files).map((p) => {
          const { size } = body(repo, p);
          return { type: 'file', oid: 'x', size: 134, path: p, lfs: { oid: 'y', size, pointerSize: 134 } };
        }),
        ...(repos[repo].extra ?? []),
      ];
      const at = Number(url.searchParams.get('cursor') ?? 0);
      const headers = { ...cors, 'content-type': 'application/json' };
      if (at + pageSize < entries.length) {
        const next = new URL(url.href.replace('http://x', `http://${req.headers.host}`));
        next.searchParams.set('cursor', String(at + pageSize));
        headers.link = `<${next.href}>; rel="next"`;
      }
      return res.writeHead(200, headers).end(JSON.stringify(entries.slice(at, at + pageSize)));
    }
    m = /^\/([^/]+)\/([^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(url.pathname);
    const repo = m && `${decodeURIComponent(m[1])}/${decodeURIComponent(m[2])}`;
    const path = m && m[4].split('/').map(decodeURIComponent).join('/');
    if (!m || !repos[repo] || !(path in repos[repo].files)) return res.writeHead(404, cors).end();
    if (!authorized(repo, req)) return res.writeHead(401, cors).end();
    state.files++;
    // Requests waiting for their answer (the latency): a file read's start, so the count of
    // reads under way (a cancelled body may still drain after the reader has moved on).
    state.inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    if (state.latencyMs) await new Promise((r) => setTimeout(r, state.latencyMs));
    state.inFlight--;
    const { bytes, size } = body(repo, path);
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    let [from, to, status] = [0, size, 200];
    const headers = { ...cors, 'accept-ranges': 'bytes', 'content-type': 'application/octet-stream' };
    if (range) {
      from = Number(range[1]);
      to = range[2] === '' ? size : Math.min(Number(range[2]) + 1, size);
      if (from >= size) return res.writeHead(416, { ...cors, 'content-range': `bytes */${size}` }).end();
      status = 206;
      headers['content-range'] = `bytes ${from}-${to - 1}/${size}`;
    }
    headers['content-length'] = String(to - from);
    res.writeHead(status, headers);
    // 64 KiB pieces with backpressure: a client that cancels stops the send.
    let closed = false;
    res.on('close', () => { closed = true; });
    for (let at = from; at < to && !closed; at += 65536) {
      const end = Math.min(to, at + 65536);
      const piece = Buffer.alloc(end - at);
      if (at < bytes.length) piece.set(bytes.subarray(at, Math.min(end, bytes.length)));
      state.bytesSent += piece.length;
      if (!res.write(piece) && !closed) {
        await new Promise((wake) => {
          const done = () => { res.off('drain', done); res.off('close', done); wake(); };
          res.on('drain', done);
          res.on('close', done);
        });
      }
    }
    res.end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  return {
    base,
    token,
    state,
    reset() { Object.assign(state, { api: 0, files: 0, bytesSent: 0, maxInFlight: 0, latencyMs: 0, log: [] }); },
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(resolve); }),
  };
}

/** The repos both hub tests serve: every fixture kind a listing meets (files in pages, a split
 * model in a folder, an incomplete split, a file that is not GGUF, README and folders). */
export function mockRepos(root, { gib = 2 } = {}) {
  const big = gib * 1024 ** 3;
  const f = (p, size = big) => ({ fixture: `${root}/${p}`, size });
  return {
    'acme/tiny-GGUF': {
      files: {
        'tiny-Q4_K_M.gguf': f('fixtures/sample/tiny-llama-Q4_K_M.gguf'),
        'tiny-Q8_0.gguf': f('fixtures/sample/tiny-llama-Q8_0.gguf'),
        'qwen2.gguf': f('fixtures/plan/qwen2.gguf'),
        'gemma3.gguf': f('fixtures/plan/gemma3.gguf'),
        'split/llama-split-00001-of-00003.gguf': f('fixtures/plan/llama-split-00001-of-00003.gguf'),
        'split/llama-split-00002-of-00003.gguf': f('fixtures/plan/llama-split-00002-of-00003.gguf'),
        'split/llama-split-00003-of-00003.gguf': f('fixtures/plan/llama-split-00003-of-00003.gguf'),
        'part-00001-of-00002.gguf': f('fixtures/plan/llama.gguf'),
        'broken.gguf': { bytes: new TextEncoder().encode('not a gguf file at all, just text'.repeat(4)) },
      },
      extra: [
        { type: 'file', oid: 'r', size: 1200, path: 'README.md' },
        { type: 'directory', oid: 'd', size: 0, path: 'split' },
        { type: 'file', oid: 'c', size: 300, path: 'config.json' },
      ],
    },
    'acme/gated-GGUF': {
      gated: true,
      files: { 'llama.gguf': f('fixtures/plan/llama.gguf') },
    },
  };
}
