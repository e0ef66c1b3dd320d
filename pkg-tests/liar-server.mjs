// A Range server on 127.0.0.1 (random port) that can lie, per request: a wrong Content-Range
// (start, end, total), a wrong Content-Length, no Content-Range, Range ignored (200 with the
// whole body), a body cut short or dropped, a stall before the headers or in the body, an error
// status, a redirect. `state.plan(info)` picks what each request gets ({ kind, ... }; default:
// an honest answer). Counts connections, requests, bytes sent and requests in flight; logs
// each request's path, range and headers.
import http from 'node:http';

/**
 * @param {Record<string, Uint8Array>} files URL path → bytes
 */
export async function startLiar(files = {}, { cors = false } = {}) {
  // For pages on another origin: the answers a browser needs to read a cross-origin Range reply.
  const CORS = cors ? {
    'access-control-allow-origin': '*',
    'access-control-expose-headers': 'content-range, content-length, accept-ranges, location',
  } : {};
  const state = { connections: 0, requests: 0, bytesSent: 0, inFlight: 0, maxInFlight: 0, log: [], plan: null, latencyMs: 0 };
  const stalled = new Set();
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    if (cors && req.method === 'OPTIONS') {
      return res.writeHead(204, { ...CORS, 'access-control-allow-headers': 'authorization, x-token, range', 'access-control-allow-methods': 'GET' }).end();
    }
    for (const [name, value] of Object.entries(CORS)) res.setHeader(name, value);
    state.requests++;
    state.inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    res.on('close', () => { state.inFlight--; });
    const info = { path: url.pathname, range: req.headers.range ?? null, headers: req.headers, n: state.requests };
    state.log.push(info);
    const plan = state.plan?.(info) ?? {};
    const latency = plan.latencyMs ?? state.latencyMs;
    if (latency) await new Promise((r) => setTimeout(r, latency));
    if (plan.kind === 'redirect') return res.writeHead(plan.status ?? 302, { location: plan.location }).end();
    if (plan.kind === 'status') return res.writeHead(plan.status).end();
    if (plan.kind === 'stall-headers') {
      stalled.add(res);
      return;
    }
    const bytes = files[url.pathname];
    if (!bytes) return res.writeHead(404).end();
    const size = bytes.length;
    const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    let status = 200;
    let [from, to] = [0, size];
    const headers = { 'content-type': 'application/octet-stream', 'accept-ranges': 'bytes' };
    if (m && plan.kind !== 'ignore') {
      from = Number(m[1]);
      to = m[2] === '' ? size : Math.min(Number(m[2]) + 1, size);
      if (from >= size) return res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
      status = 206;
      const claimed = {
        start: from + (plan.kind === 'wrong-start' ? (plan.delta ?? 1) : 0),
        end: to - 1 + (plan.kind === 'wrong-end' ? (plan.delta ?? -1) : 0),
        total: size + (plan.kind === 'wrong-total' ? (plan.delta ?? 1) : 0),
      };
      if (plan.kind !== 'no-content-range') headers['content-range'] = `bytes ${claimed.start}-${claimed.end}/${claimed.total}`;
    }
    if (plan.kind === 'wrong-length') headers['content-length'] = String(Math.max(0, to - from + (plan.delta ?? -1)));
    else headers['content-length'] = String(to - from);
    // A body longer than it says (wrong-length with delta > 0) cannot be sent over HTTP/1.1:
    // the server cuts it at Content-Length; a shorter one ends the response early.
    const sendTo = plan.kind === 'wrong-length' ? Math.min(to, from + Number(headers['content-length'])) : to;
    res.writeHead(status, headers);
    const cut = plan.kind === 'truncate' || plan.kind === 'stall-body' ? Math.min(sendTo, from + (plan.after ?? 0)) : sendTo;
    let closed = false;
    res.on('close', () => { closed = true; });
    const PIECE = plan.pieceBytes ?? 64 * 1024;
    for (let at = from; at < cut && !closed; at += PIECE) {
      const piece = bytes.subarray(at, Math.min(cut, at + PIECE));
      state.bytesSent += piece.length;
      if (!res.write(piece) && !closed) {
        await new Promise((wake) => {
          const done = () => { res.off('drain', done); res.off('close', done); wake(); };
          res.on('drain', done);
          res.on('close', done);
        });
      }
    }
    if (closed) return;
    if (plan.kind === 'truncate') return res.destroy();
    if (plan.kind === 'stall-body') {
      stalled.add(res);
      return;
    }
    res.end();
  });
  server.on('connection', (socket) => {
    state.connections++;
    socket.on('error', () => {});
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = server.address().port;
  const base = `http://127.0.0.1:${port}`;
  return {
    base,
    port,
    state,
    url: (name) => base + name,
    reset() {
      for (const res of stalled) res.destroy();
      stalled.clear();
      Object.assign(state, { connections: 0, requests: 0, bytesSent: 0, inFlight: 0, maxInFlight: 0, log: [], plan: null, latencyMs: 0 });
    },
    close: () => new Promise((resolve) => {
      for (const res of stalled) res.destroy();
      server.closeAllConnections?.();
      server.close(resolve);
    }),
  };
}
