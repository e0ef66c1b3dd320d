// Small static file server for the viewer: 127.0.0.1 only, GET/HEAD, single byte ranges
// (206/416), no directory listings, paths confined to their root.
// usage: node scripts/viewer-server.mjs ROOT [PORT] [/prefix=DIR ...]   (PORT 0: any free port)
// Prints "serving http://127.0.0.1:PORT/" once listening.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

const USAGE = `usage: node scripts/viewer-server.mjs ROOT [PORT] [/prefix=DIR ...]
  Serves ROOT (default site/) on http://127.0.0.1:PORT/ (default 8080; 0: any free port), with
  single byte ranges, no directory listings; each /prefix=DIR serves DIR under /prefix/.`;
if (process.argv.slice(2).some((a) => a === '--help' || a === '-h')) {
  console.log(USAGE);
  process.exit(0);
}
const [root = 'site', portArg = '8080', ...mountArgs] = process.argv.slice(2);
if (!/^\d+$/.test(portArg) || mountArgs.some((m) => !m.includes('='))) {
  console.error(USAGE);
  process.exit(2);
}
const mounts = mountArgs.map((m) => {
  const i = m.indexOf('=');
  return { prefix: m.slice(0, i).replace(/\/+$/, '') + '/', dir: path.resolve(m.slice(i + 1)) };
});
mounts.push({ prefix: '/', dir: path.resolve(root) });

// The same policy as the pages' meta tags, sent as a header too: it also covers worker.js (a
// worker takes its CSP from its own response, not from the page's meta). 'wasm-unsafe-eval'
// lets the pages and workers compile the package's WebAssembly, and nothing else.
const CSP = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; connect-src 'self' http: https:; style-src 'self'; img-src 'self' data: blob:; base-uri 'none'; form-action 'none'; object-src 'none'";
// frame-ancestors is ignored in a meta tag: only this header stops framing. The viewer holds a
// Hub token and buttons that act on files, so no site may frame it (clickjacking);
// X-Frame-Options says the same to browsers without CSP 2. embed.html is the one page made to
// be framed, by any site (it shows a header preview, holds no token and has no actions).
const FRAMED_PAGES = new Set(['embed.html']);
const pageHeaders = (file) => FRAMED_PAGES.has(path.basename(file))
  ? { 'Content-Security-Policy': `${CSP}; frame-ancestors *` }
  : { 'Content-Security-Policy': `${CSP}; frame-ancestors 'none'`, 'X-Frame-Options': 'DENY' };

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json', '.wasm': 'application/wasm', '.svg': 'image/svg+xml',
  '.png': 'image/png', '.ico': 'image/x-icon', '.md': 'text/plain; charset=utf-8', '.txt': 'text/plain; charset=utf-8',
};

function resolve(urlPath) {
  let p;
  try { p = decodeURIComponent(urlPath); } catch { return null; }
  if (p.includes('\0')) return null;
  for (const { prefix, dir } of mounts) {
    if (!p.startsWith(prefix)) continue;
    const file = path.resolve(dir, '.' + path.posix.normalize('/' + p.slice(prefix.length)));
    if (file !== dir && !file.startsWith(dir + path.sep)) return null;
    return file;
  }
  return null;
}

const server = http.createServer((req, res) => {
  const base = { 'X-Content-Type-Options': 'nosniff', 'Accept-Ranges': 'bytes', 'Cache-Control': 'no-cache', 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': 'Content-Range, Content-Length, Accept-Ranges' };
  if (req.method === 'OPTIONS') { res.writeHead(204, { ...base, 'Access-Control-Allow-Headers': 'Range' }); return res.end(); }
  if (req.method !== 'GET' && req.method !== 'HEAD') { res.writeHead(405, base); return res.end(); }
  let file = resolve(new URL(req.url, 'http://x').pathname);
  let st;
  try {
    st = file && fs.statSync(file);
    if (st && st.isDirectory()) { file = path.join(file, 'index.html'); st = fs.statSync(file); }
  } catch { st = null; }
  if (!st || !st.isFile()) { res.writeHead(404, { ...base, 'Content-Type': 'text/plain' }); return res.end('not found\n'); }
  const type = TYPES[path.extname(file).toLowerCase()] || 'application/octet-stream';
  const size = st.size;
  const range = req.headers.range;
  let start = 0, end = size - 1, status = 200;
  if (range) {
    const m = /^bytes=(\d*)-(\d*)$/.exec(range.trim());
    if (!m || (m[1] === '' && m[2] === '')) { res.writeHead(416, { ...base, 'Content-Range': `bytes */${size}` }); return res.end(); }
    if (m[1] === '') { start = Math.max(0, size - Number(m[2])); } else { start = Number(m[1]); if (m[2] !== '') end = Math.min(size - 1, Number(m[2])); }
    if (start >= size || start > end) { res.writeHead(416, { ...base, 'Content-Range': `bytes */${size}` }); return res.end(); }
    status = 206;
  }
  const headers = { ...base, 'Content-Type': type, 'Content-Length': end - start + 1 };
  if (/^text\/html/.test(type)) Object.assign(headers, pageHeaders(file));
  else if (/^text\/javascript/.test(type)) headers['Content-Security-Policy'] = CSP;
  if (status === 206) headers['Content-Range'] = `bytes ${start}-${end}/${size}`;
  res.writeHead(status, headers);
  if (req.method === 'HEAD' || size === 0) return res.end();
  fs.createReadStream(file, { start, end }).pipe(res);
});
server.listen(Number(portArg), '127.0.0.1', () => {
  console.log(`serving http://127.0.0.1:${server.address().port}/`);
});
