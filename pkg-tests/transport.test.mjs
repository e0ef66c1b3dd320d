// How bytes are fetched: request counts and bytes on big headers, Range-ignoring servers,
// latency, dropped connections, 416, missing sizes, cancellation, split models.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { openGguf, SourceError } from 'gguf-lens';
import { startServer } from './server.mjs';
import { DEQUANT, makeBigHeader, expectedF32, bytesOf, sameBytes } from './helpers.mjs';

const big = makeBigHeader({ nTokens: 150_000, nTensors: 300 });
const small = makeBigHeader({ nTokens: 10, nTensors: 3 });
// A data section much larger than socket buffers, to see a Range-ignoring download stop.
const bigData = makeBigHeader({ nTokens: 150_000, nTensors: 300, extraDataBytes: 64 << 20 });
let server;

before(async () => {
  const shards = {};
  for (let i = 1; i <= 3; i++) {
    const split = { no: i - 1, count: 3, tensors: 6 };
    const shard = makeBigHeader({ nTokens: 100 * i, nTensors: 2, seed: i, namePrefix: `s${i}.`, split }).bytes;
    shards[`/split-0000${i}-of-00003.gguf`] = shard;
  }
  server = await startServer({
    files: { '/big.gguf': big.bytes, '/bigdata.gguf': bigData.bytes, '/small.gguf': small.bytes, '/q4k.gguf': path.join(DEQUANT, 'Q4_K.gguf'), ...shards },
  });
});
after(() => server.close());

test('a 150k-token header arrives in one streamed request and <= 1.1 x data offset + 64 KiB', async () => {
  server.reset();
  const model = await openGguf(server.url('/big.gguf'));
  assert.equal(model.dataOffset, big.dataOffset);
  assert.equal(server.state.requests, 1, 'one open-ended request, read as far as the header goes');
  assert.deepEqual(server.state.log.map((l) => l.range), ['bytes=0-']);
  const limit = 1.1 * big.dataOffset + 64 * 1024;
  assert.ok(model.ioStats.bytes <= limit, `${model.ioStats.bytes} bytes fetched, limit ${limit}`);
  assert.equal(model.get('tokenizer.ggml.tokens').len, 150_000);
  assert.equal(model.get('tokenizer.ggml.tokens').items(149_999, 150_010).length, 1);
  assert.equal(model.summary().vocabSize, 150_000);
  await model.close();
});

test('a BPE vocabulary (tokens, types, merges) arrives in <= 2 requests and <= 1.1 x + 64 KiB', async () => {
  const bpe = makeBigHeader({ nTokens: 150_000, nTensors: 300, bpe: true });
  let requests = 0;
  let bytes = 0;
  const source = { byteLength: bpe.bytes.length, slice: (a, b) => { requests++; bytes += b - a; return bpe.bytes.subarray(a, b); } };
  const model = await openGguf(source);
  assert.equal(model.dataOffset, bpe.dataOffset);
  assert.ok(requests <= 2, `${requests} requests`);
  assert.ok(bytes <= 1.1 * bpe.dataOffset + 64 * 1024, `${bytes} bytes, data offset ${bpe.dataOffset}`);
  assert.equal(model.get('tokenizer.ggml.merges').len, 150_000);
});

test('a ready-made source whose read() ignores the destination buffer still grows the header', async () => {
  const bytes = new Uint8Array(big.bytes);
  const source = {
    byteLength: bytes.length,
    stats: { requests: 0, bytes: 0 },
    async read(start, end) {
      this.stats.requests++;
      return bytes.slice(start, Math.min(end, bytes.length));
    },
    close() {},
  };
  const model = await openGguf(source);
  assert.equal(model.dataOffset, big.dataOffset);
  assert.equal(model.get('tokenizer.ggml.tokens').len, 150_000);
  assert.ok(source.stats.requests >= 2);
});

test('a header trickling in small pieces spans many reads of one request, then the body is cancelled', async () => {
  server.reset();
  server.state.pieceBytes = 7919; // a prime: pieces never line up with the reads
  server.state.pieceDelayMs = 1;
  const model = await openGguf(server.url('/bigdata.gguf'));
  assert.equal(model.dataOffset, bigData.dataOffset);
  assert.equal(model.get('tokenizer.ggml.tokens').items(149_999, 150_000).length, 1);
  assert.equal(server.state.requests, 1);
  assert.ok(model.ioStats.bytes <= 1.1 * bigData.dataOffset + 256 * 1024, `${model.ioStats.bytes} bytes read`);
  await new Promise((r) => setTimeout(r, 200));
  const sent = server.state.bytesSent;
  assert.ok(sent < bigData.dataOffset + (2 << 20), `the server stopped sending: ${sent} of ${bigData.bytes.length} bytes`);
  // The tensor reads after the header are exact ranges again.
  const before = server.state.requests;
  await model.readTensor('blk.3.weight', { rows: [0, 1] });
  assert.equal(server.state.requests - before, 1);
  assert.match(server.state.log.at(-1).range, /^bytes=\d+-\d+$/);
  await model.close();
});

test('a failed streamed request falls back to exact ranges', async () => {
  server.reset();
  server.state.dropAfterBytes = 10_000;
  server.state.dropsLeft = 1;
  const model = await openGguf(server.url('/big.gguf'), { retryDelayMs: 1 });
  assert.equal(model.dataOffset, big.dataOffset);
  assert.equal(server.state.log[0].range, 'bytes=0-');
  assert.match(server.state.log[1].range, /^bytes=0-\d+$/, 'the retry asks for an exact range');
  await model.close();
});

test('a small header is one request', async () => {
  server.reset();
  const model = await openGguf(server.url('/small.gguf'));
  assert.equal(server.state.requests, 1);
  assert.equal(model.tensors.length, 3);
  const t = await model.readTensor('blk.1.weight', { rows: [1, 2] });
  assert.deepEqual([...t], [12, 12.5, 13, 13.5, 14, 14.5, 15, 15.5]);
  await model.close();
});

test('a server that ignores Range: the body is read only as far as the header needs', async () => {
  server.reset();
  server.state.mode = '200';
  const model = await openGguf(server.url('/bigdata.gguf'));
  assert.equal(model.dataOffset, bigData.dataOffset);
  assert.equal(server.state.requests, 1, 'one streamed response, continued across reads');
  assert.ok(model.ioStats.bytes <= 1.1 * bigData.dataOffset + 256 * 1024, `${model.ioStats.bytes} bytes read`);
  await new Promise((r) => setTimeout(r, 200));
  assert.ok(server.state.bytesSent < bigData.dataOffset + (16 << 20),
    `the server stopped sending: ${server.state.bytesSent} of ${bigData.bytes.length} bytes sent`);
  await model.close();
});

test('latency: still <= 2 requests, and tensor data is right', async () => {
  server.reset();
  server.state.latencyMs = 50;
  const model = await openGguf(server.url('/q4k.gguf'));
  const out = await model.readTensor('special');
  assert.ok(sameBytes(bytesOf(out), expectedF32('Q4_K.special.f32')));
  assert.equal(server.state.requests, 2, 'one for the header, one for the tensor');
  await model.close();
});

test('a dropped connection is retried', async () => {
  server.reset();
  server.state.dropAfterBytes = 1000;
  server.state.dropsLeft = 2;
  const model = await openGguf(server.url('/big.gguf'), { retryDelayMs: 10 });
  assert.equal(model.dataOffset, big.dataOffset);
  assert.ok(server.state.requests >= 3);
  await model.close();
});

test('a connection that keeps dropping fails with a clear error', async () => {
  server.reset();
  server.state.dropAfterBytes = 1000;
  server.state.dropsLeft = 100;
  await assert.rejects(openGguf(server.url('/big.gguf'), { retries: 2, retryDelayMs: 5 }),
    (err) => err instanceof SourceError && /dropped|truncated/.test(err.message));
  assert.equal(server.state.requests, 3);
});

test('416 is a clear error naming the range and the size', async () => {
  server.reset();
  server.state.mode = '416';
  await assert.rejects(openGguf(server.url('/small.gguf')), /not satisfiable \(HTTP 416\).*the file is \d+ bytes/);
});

test('a Range-ignoring server without Content-Length is a clear error', async () => {
  server.reset();
  server.state.mode = 'no-length';
  await assert.rejects(openGguf(server.url('/small.gguf')), /no Content-Length/);
});

test('404 and unreachable hosts are clear errors', async () => {
  server.reset();
  await assert.rejects(openGguf(server.url('/missing.gguf'), { retries: 0 }), /HTTP 404/);
  await assert.rejects(openGguf('http://127.0.0.1:1/x.gguf', { retries: 1, retryDelayMs: 5 }), /network error/);
});

test('an aborted signal cancels', async () => {
  server.reset();
  server.state.latencyMs = 200;
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 20);
  await assert.rejects(openGguf(server.url('/big.gguf'), { signal: controller.signal }), { name: 'AbortError' });
});

test('onProgress reports loaded and total', async () => {
  server.reset();
  const seen = [];
  const model = await openGguf(server.url('/big.gguf'), { onProgress: (p) => seen.push(p) });
  assert.ok(seen.length > 0);
  assert.equal(seen.at(-1).total, big.bytes.length);
  assert.ok(seen.at(-1).loaded >= model.headerLength);
  await model.close();
});

test('a counting source: header and row reads fetch only what they need', async () => {
  let requests = 0;
  let bytes = 0;
  const source = {
    byteLength: big.bytes.length,
    slice(a, b) {
      requests++;
      bytes += b - a;
      return big.bytes.subarray(a, b);
    },
  };
  const model = await openGguf(source);
  assert.ok(requests <= 2 && bytes <= 1.1 * big.dataOffset + 64 * 1024, `${requests} requests, ${bytes} bytes`);
  requests = 0;
  bytes = 0;
  await model.readTensor('blk.7.weight', { rows: [1, 2] });
  assert.deepEqual([requests, bytes], [1, 32]);
});

test('split models open as one', async () => {
  server.reset();
  const model = await openGguf(server.url('/split-00001-of-00003.gguf'));
  assert.equal(model.shards.length, 3);
  assert.equal(model.tensors.length, 6);
  assert.deepEqual(model.tensors.map((t) => t.shard), [0, 0, 1, 1, 2, 2]);
  assert.equal(model.summary().parameterCount, 6 * 16);
  const last = await model.readTensor('s3.blk.1.weight', { rows: [0, 1] });
  assert.deepEqual([...last], [8, 8.5, 9, 9.5, 10, 10.5, 11, 11.5]);
  await model.close();
});

test('tensor reads: chunked requests, progress, cancellation', async () => {
  server.reset();
  const model = await openGguf(server.url('/q4k.gguf'));
  const t = model.tensor('special');
  const before = server.state.requests;
  const seen = [];
  const out = await model.readTensor('special', { chunkBytes: 10 * t.rowBytes, onProgress: (p) => seen.push(p) });
  assert.equal(server.state.requests - before, Math.ceil(t.nRows / 10), 'one request per 10-row chunk');
  assert.deepEqual(seen.at(-1), { loaded: t.nBytes, total: t.nBytes });
  assert.ok(sameBytes(bytesOf(out), expectedF32('Q4_K.special.f32')));
  server.state.latencyMs = 200;
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 20);
  await assert.rejects(model.readTensor('special', { signal: controller.signal }), { name: 'AbortError' });
  await assert.rejects(model.readTensor('special', { rows: [5, 99] }), /rows 5\.\.99 are outside special \(36 rows\)/);
  await assert.rejects(model.readTensor('nope'), /no tensor named nope/);
  await model.close();
});
