// Hostile files, links and servers on loopback (issue 28): names from files stay names, headers
// stay on the opened origin, Content-Range is checked, a Range-ignoring server is read forward
// only, stalls time out and abort works while stalled, a crafted header cannot make the reader
// stream hundreds of MB, shard fan-out is bounded, and a Hub endpoint is https (http on loopback).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openGguf, openSafetensors, toSource, listRepoGgufs, checkHubEndpoint, SourceError } from 'gguf-lens';
import { startLiar } from './liar-server.mjs';
import { startServer } from './server.mjs';
import { makeBigHeader } from './helpers.mjs';

const small = makeBigHeader({ nTokens: 10, nTensors: 3 });

/** A safetensors file of one F32 tensor `name` with `values`. */
function safetensors(name, values) {
  const header = Buffer.from(JSON.stringify({ [name]: { dtype: 'F32', shape: [values.length], data_offsets: [0, 4 * values.length] } }));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(header.length));
  return Buffer.concat([len, header, Buffer.from(new Float32Array(values).buffer)]);
}

const indexOf = (weightMap) => Buffer.from(JSON.stringify({ metadata: { total_size: 8 }, weight_map: weightMap }));

let a; // the origin the user opens
let b; // another origin (another port): must never be reached by names from a's files
before(async () => {
  b = await startLiar({ '/small.gguf': small.bytes, '/x.safetensors': safetensors('a.weight', [1, 2]) });
  a = await startLiar({ '/small.gguf': small.bytes, '/dir/model-1.safetensors': safetensors('a.weight', [1, 2]) });
});
after(async () => { await a.close(); await b.close(); });

const CRAFTED_NAMES = () => [
  `https:127.0.0.1:${b.port}`, // a URL without slashes: new URL() makes it https://127.0.0.1:PORT/
  `http:127.0.0.1:${b.port}`,
  `HTTPS:127.0.0.1:${b.port}`,
  `javascript:alert(1)`,
  'file:x.safetensors',
  'C:x.safetensors', // a drive
  'c:\\x.safetensors',
  '%2e%2e', // encoded ..
  '%2E%2e',
  '.%2e',
  '..%2fx.safetensors', // encoded separator
  '%2fx.safetensors',
  'a%5cx.safetensors',
  '%252e%252e%252fx', // encoded twice
  'a\u0007b.safetensors', // a control character
  '\u001b[31mred.safetensors',
  '..',
  '.',
];

test('names from a shard index stay plain names: URL, drive and encoded names are refused, with no connection elsewhere', async () => {
  a.reset();
  b.reset();
  for (const name of CRAFTED_NAMES()) {
    const at = `/dir/${encodeURIComponent(name).replace(/[.]/g, '_')}.safetensors.index.json`;
    const server = await startServer({ files: { [at]: indexOf({ 'a.weight': name }) } });
    try {
      await assert.rejects(openSafetensors(server.url(at)), (err) => {
        assert.ok(err instanceof Error);
        assert.doesNotMatch(err.message, /\n/, 'one line');
        // The refusal names what was refused: the JS check, or the core's.
        assert.match(err.message, /refused|plain file name|not a file name/i, `${JSON.stringify(name)}: ${err.message}`);
        return true;
      }, JSON.stringify(name));
    } finally {
      await server.close();
    }
  }
  assert.equal(b.state.connections, 0, 'no connection to a host the user never named');
});

test('a crafted index is refused with one error naming the shard, and the index origin sees only the index', async () => {
  const server = await startServer({ files: { '/dir/model.safetensors.index.json': indexOf({ 'a.weight': `https:127.0.0.1:${b.port}` }) } });
  b.reset();
  try {
    await assert.rejects(openSafetensors(server.url('/dir/model.safetensors.index.json'), { headers: { Authorization: 'Bearer secret' } }),
      // The package's check, or the core's (which now refuses it first): either names the shard.
      /shard name "https:127\.0\.0\.1:\d+" refused: it starts with a URL scheme|shard "https:127\.0\.0\.1:\d+" of "a\.weight" is not a plain file name/);
    assert.equal(server.state.requests, 1);
    assert.equal(b.state.connections, 0);
  } finally {
    await server.close();
  }
});

test('a plain shard name resolves beside the index', async () => {
  const files = { '/dir/model.safetensors.index.json': indexOf({ 'a.weight': 'model 1.safetensors' }), '/dir/model%201.safetensors': safetensors('a.weight', [1, 2]) };
  const server = await startServer({ files });
  try {
    const model = await openSafetensors(server.url('/dir/model.safetensors.index.json'));
    assert.deepEqual([...await model.readTensor('a.weight')], [1, 2]);
    assert.ok(server.state.log.some((l) => l.path === '/dir/model%201.safetensors'));
    await model.close();
  } finally {
    await server.close();
  }
});

test('headers go only to the opened origin: a redirect to another origin drops them, a same-origin one keeps them', async () => {
  a.reset();
  b.reset();
  const headers = { Authorization: 'Bearer secret', 'X-Token': 'secret' };
  a.state.plan = (info) => {
    if (info.path === '/away.gguf') return { kind: 'redirect', location: `${b.base}/small.gguf` };
    if (info.path === '/here.gguf') return { kind: 'redirect', status: 307, location: '/small.gguf' };
    return {};
  };
  const away = await openGguf(a.url('/away.gguf'), { headers });
  assert.equal(away.tensors.length, 3);
  await away.readTensor('blk.1.weight');
  assert.ok(b.state.log.length >= 2, 'the other origin served the file');
  for (const l of b.state.log) {
    assert.equal(l.headers.authorization, undefined, 'no Authorization to another origin');
    assert.equal(l.headers['x-token'], undefined, 'no caller header to another origin');
    assert.match(l.range, /^bytes=/, 'Range still sent');
  }
  assert.ok(a.state.log.every((l) => l.headers.authorization === 'Bearer secret'));
  await away.close();

  const plan = a.state.plan;
  a.reset();
  a.state.plan = plan;
  const here = await openGguf(a.url('/here.gguf'), { headers });
  assert.equal(here.tensors.length, 3);
  const followed = a.state.log.filter((l) => l.path === '/small.gguf');
  assert.ok(followed.length >= 1);
  for (const l of followed) assert.equal(l.headers['x-token'], 'secret', 'same origin: the headers stay');
  await here.close();
});

test('a redirect loop is an error naming the limit', async () => {
  a.reset();
  a.state.plan = () => ({ kind: 'redirect', location: '/loop.gguf' });
  await assert.rejects(openGguf(a.url('/loop.gguf'), { headers: { 'X-Token': 't' }, retries: 0 }), /more than 10 redirects/);
});

test('every 206 is checked: a Content-Range that is not the range asked is refused clearly', async () => {
  const cases = [
    [{ kind: 'wrong-start' }, /Content-Range "bytes 1-\d+\/\d+" does not match the range asked \(bytes 0-.*\): it starts at byte 1/],
    [{ kind: 'wrong-end' }, /does not match the range asked .*: it ends at byte/],
    [{ kind: 'wrong-total' }, null], // the first answer sets the size; a later one must agree
    [{ kind: 'no-content-range' }, /HTTP 206 for bytes 0-.* with no Content-Range/],
    [{ kind: 'wrong-length', delta: -5 }, /its Content-Length is \d+, not \d+/],
  ];
  for (const [plan, message] of cases) {
    a.reset();
    a.state.plan = () => plan;
    if (message) {
      await assert.rejects(openGguf(a.url('/small.gguf'), { retries: 0 }), (err) => {
        assert.ok(err instanceof SourceError, err.message);
        assert.match(err.message, message);
        return true;
      }, plan.kind);
    }
  }
  // A total that changes between answers.
  a.reset();
  const source = await toSource(a.url('/small.gguf'), { retries: 0 });
  await source.read(0, 10);
  a.state.plan = () => ({ kind: 'wrong-total' });
  await assert.rejects(source.read(20, 30), /does not match the range asked \(bytes 20-29\): the file was \d+ bytes/);
  source.close();
});

test('a server that ignores Range is read forward only: three small reads of a 50 MB file pull about 50 MB, not 100', async () => {
  const size = 50 << 20;
  const server = await startLiar({ '/big.bin': new Uint8Array(size).map((_, i) => i % 251) });
  try {
    server.state.plan = () => ({ kind: 'ignore' });
    const source = await toSource(server.url('/big.bin'), { retries: 0 });
    assert.deepEqual([...await source.read(0, 10)], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.deepEqual([...await source.read(size - 10, size)], Array.from({ length: 10 }, (_, k) => (size - 10 + k) % 251));
    await assert.rejects(source.read(10, 20), (err) => {
      assert.ok(err instanceof SourceError);
      assert.match(err.message, /ignores Range requests \(HTTP 200\): bytes 10-19 are behind byte \d+, and this server is read forward only/);
      return true;
    });
    source.close();
    assert.equal(server.state.requests, 1, 'one response, read forward');
    assert.ok(server.state.bytesSent <= size + (1 << 20), `${server.state.bytesSent} bytes sent`);
  } finally {
    await server.close();
  }
});

test('a stalled server times out, before the headers and in the body, with an error naming the timeout', { timeout: 20_000 }, async () => {
  for (const plan of [{ kind: 'stall-headers' }, { kind: 'stall-body', after: 100 }]) {
    a.reset();
    a.state.plan = () => plan;
    const t0 = Date.now();
    await assert.rejects(openGguf(a.url('/small.gguf'), { stallTimeoutMs: 300, retries: 2, retryDelayMs: 1 }), (err) => {
      assert.ok(err instanceof SourceError);
      assert.match(err.message, /no bytes for 300 ms at byte \d+ \(stallTimeoutMs 300\)/);
      return true;
    }, plan.kind);
    assert.ok(Date.now() - t0 < 5000, `${plan.kind}: ${Date.now() - t0} ms`);
  }
  await assert.rejects(toSource(a.url('/small.gguf'), { stallTimeoutMs: -1 }), /stallTimeoutMs must be a number/);
});

test('abort works while a read is stalled (headers, body, a held stream)', { timeout: 20_000 }, async () => {
  for (const plan of [{ kind: 'stall-headers' }, { kind: 'stall-body', after: 100 }]) {
    a.reset();
    a.state.plan = () => plan;
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const t0 = Date.now();
    await assert.rejects(openGguf(a.url('/small.gguf'), { signal: controller.signal, stallTimeoutMs: 60_000 }), { name: 'AbortError' }, plan.kind);
    assert.ok(Date.now() - t0 < 3000, `${plan.kind}: ${Date.now() - t0} ms`);
  }
  // A source whose open stream stalls on a later read.
  a.reset();
  a.state.plan = () => ({ kind: 'stall-body', after: 100 });
  const source = await toSource(a.url('/small.gguf'), { stallTimeoutMs: 60_000 });
  source.streamNextRead();
  assert.equal((await source.read(0, 50)).length, 50);
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 100);
  await assert.rejects(source.read(50, 500, controller.signal), { name: 'AbortError' });
  source.close();
});

test('a crafted 8 MB header (2^20 strings, the first 60,000 bytes) in a sparse 20 GB file streams about its own length', { timeout: 120_000 }, async () => {
  const parts = [];
  const u32 = (v) => { const x = Buffer.alloc(4); x.writeUInt32LE(v); parts.push(x); };
  const u64 = (v) => { const x = Buffer.alloc(8); x.writeBigUInt64LE(BigInt(v)); parts.push(x); };
  const str = (s) => { u64(Buffer.byteLength(s)); parts.push(Buffer.from(s)); };
  parts.push(Buffer.from('GGUF'));
  u32(3); u64(0); u64(2);
  str('general.architecture'); u32(8); str('llama');
  str('x.strings'); u32(9); u32(8); u64(2 ** 20);
  str('a'.repeat(60_000));
  parts.push(Buffer.alloc(8 * (2 ** 20 - 1))); // every other string empty
  const header = Buffer.concat(parts);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gguf-lens-sparse-'));
  const file = path.join(dir, 'sparse.gguf');
  const fd = fs.openSync(file, 'w');
  fs.writeSync(fd, header);
  fs.ftruncateSync(fd, 20 * 2 ** 30);
  fs.closeSync(fd);
  const server = await startServer({ files: { '/sparse.gguf': file } });
  try {
    const model = await openGguf(server.url('/sparse.gguf'));
    assert.equal(model.get('x.strings').len, 2 ** 20);
    const bound = 1.5 * header.length + (1 << 20);
    assert.ok(model.ioStats.bytes <= bound, `${model.ioStats.bytes} bytes read for a ${header.length}-byte header (bound ${bound})`);
    await model.close();
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(server.state.bytesSent <= bound + (8 << 20), `${server.state.bytesSent} bytes sent for a ${header.length}-byte header`);
    // A local file: no more than the step a request may take (16 MiB) past the header.
    const local = await openGguf(file);
    assert.ok(local.ioStats.bytes <= header.length + (17 << 20), `${local.ioStats.bytes} bytes read from the file`);
    await local.close();
    // maxHeaderBytes below the header: refused, naming the limit.
    await assert.rejects(openGguf(file, { maxHeaderBytes: 1 << 20 }), /more than maxHeaderBytes \(1048576\)|longer than maxHeaderBytes \(1048576\)/);
  } finally {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a source that gives no bytes ends the header read with an error', { timeout: 10_000 }, async () => {
  const big = makeBigHeader({ nTokens: 20_000, nTensors: 2 });
  const source = {
    byteLength: big.bytes.length,
    stats: { requests: 0, bytes: 0 },
    async read(start, end) {
      this.stats.requests++;
      return start === 0 ? big.bytes.subarray(0, Math.min(end, 4096)) : new Uint8Array(0);
    },
    close() {},
  };
  await assert.rejects(openGguf(source, { firstReadBytes: 4096 }), /the source gave no bytes at byte 4096/);
  assert.ok(source.stats.requests <= 3);
});

test('a zero-width tensor of 2^50 rows reads as nothing at once', { timeout: 10_000 }, async () => {
  const header = Buffer.from(JSON.stringify({ z: { dtype: 'F32', shape: [2 ** 50, 0], data_offsets: [0, 0] } }));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(header.length));
  let reads = 0;
  const bytes = Buffer.concat([len, header]);
  const model = await openSafetensors({ byteLength: bytes.length, slice: (s, e) => { reads++; return bytes.subarray(s, e); } });
  reads = 0;
  const out = await model.readTensor('z');
  assert.equal(out.length, 0);
  assert.ok(reads <= 1, `${reads} reads`);
  await model.close();
});

test('split shards open at most 4 at a time; the first failure stops the rest', { timeout: 20_000 }, async () => {
  const shards = {};
  for (let i = 1; i <= 8; i++) {
    const split = { no: i - 1, count: 8, tensors: 16 };
    shards[`/m-0000${i}-of-00008.gguf`] = makeBigHeader({ nTokens: 10, nTensors: 2, seed: i, namePrefix: `s${i}.`, split }).bytes;
  }
  const server = await startLiar(shards);
  try {
    server.state.latencyMs = 100;
    const model = await openGguf(server.url('/m-00001-of-00008.gguf'));
    assert.equal(model.shards.length, 8);
    assert.ok(server.state.maxInFlight <= 4, `${server.state.maxInFlight} requests in flight`);
    await model.close();

    server.reset();
    server.state.plan = (info) => (info.path === '/m-00003-of-00008.gguf' ? { kind: 'status', status: 404, latencyMs: 0 } : { latencyMs: 300 });
    await assert.rejects(openGguf(server.url('/m-00001-of-00008.gguf'), { retries: 0 }), /m-00003-of-00008\.gguf: HTTP 404/);
    const asked = new Set(server.state.log.map((l) => l.path));
    assert.ok(![5, 6, 7, 8].some((i) => asked.has(`/m-0000${i}-of-00008.gguf`)), `shards asked after the failure: ${[...asked]}`);
    assert.ok(server.state.maxInFlight <= 4);
  } finally {
    await server.close();
  }
});

test('a Hub endpoint is https, or http on loopback only', async () => {
  for (const ok of ['https://hub.example', 'http://127.0.0.1:8080', 'http://127.9.9.9', 'http://localhost:3000/', 'http://[::1]:9']) {
    assert.equal(checkHubEndpoint(ok), ok.replace(/\/$/, ''), ok);
  }
  for (const bad of ['http://hub.example', 'http://127.0.0.1.example.com', 'http://10.0.0.1', 'ftp://127.0.0.1', 'javascript:alert(1)', 'not a url', 'file:///etc']) {
    assert.throws(() => checkHubEndpoint(bad), /endpoint (must be https|is not a URL)/, bad);
    let fetched = 0;
    await assert.rejects(listRepoGgufs('o/n', { endpoint: bad, fetch: () => { fetched++; throw new Error('no'); } }), /endpoint/);
    assert.equal(fetched, 0, `${bad}: nothing fetched`);
  }
  const listing = await listRepoGgufs('o/n', {
    endpoint: 'http://localhost:1',
    fetch: async () => new Response('[]', { status: 200, headers: { 'content-type': 'application/json' } }),
  });
  assert.deepEqual(listing.models, []);
});

test('a Hub listing naming a path outside the repo is refused', async () => {
  const list = (path) => listRepoGgufs('o/n', {
    endpoint: 'https://hub.example',
    fetch: async () => new Response(JSON.stringify([{ type: 'file', path, size: 10 }]), { status: 200 }),
  });
  await assert.rejects(list('../../other/x.gguf'), /the Hub listing names "\.\.\/\.\.\/other\/x\.gguf": refused, it is a dot segment/);
  // The package's own check (no core in the way): every crafted name as a folder is refused.
  for (const name of CRAFTED_NAMES()) {
    await assert.rejects(list(`${name}/m.gguf`), /the Hub listing names .*: refused, it (is|holds|starts)/, JSON.stringify(name));
  }
  assert.equal((await list('sub dir/m-Q4_K.gguf')).models.length, 1, 'a plain folder and name pass');
});

test('a stalled Hub listing times out, and abort ends it while stalled', { timeout: 20_000 }, async () => {
  a.reset();
  a.state.plan = () => ({ kind: 'stall-headers' });
  await assert.rejects(listRepoGgufs('o/n', { endpoint: a.base, stallTimeoutMs: 300 }), /o\/n@main: no answer from .* for 300 ms \(stallTimeoutMs 300\)/);
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 100);
  await assert.rejects(listRepoGgufs('o/n', { endpoint: a.base, signal: controller.signal, stallTimeoutMs: 60_000 }), { name: 'AbortError' });
});
