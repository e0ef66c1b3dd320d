// A source fuzz: a Range server on loopback that lies (wrong Content-Range start, end or total,
// wrong Content-Length, no Content-Range), truncates, drops, stalls, ignores Range and answers
// errors, chosen per request by a seeded PRNG. Every open and read must either give the right
// bytes or reject with an Error, within a deadline, and leave no unhandled rejection.
// Short by default; GGUF_LENS_SOURCE_FUZZ_SECONDS=N runs for N seconds (and prints the count),
// GGUF_LENS_SOURCE_FUZZ_SEED picks the seed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openGguf, toSource } from 'gguf-lens';
import { startLiar } from './liar-server.mjs';
import { makeBigHeader } from './helpers.mjs';

const SECONDS = Number(process.env.GGUF_LENS_SOURCE_FUZZ_SECONDS ?? 0);
const ITERATIONS = SECONDS > 0 ? Infinity : 40;
const SEED = Number(process.env.GGUF_LENS_SOURCE_FUZZ_SEED ?? 28);
const STALL_MS = 150;
/** Longest any one call may take: retries of stalls and drops included. */
const DEADLINE_MS = 8000;

/** mulberry32: small, seeded, good enough to pick behaviours. */
function prng(seed) {
  let x = seed >>> 0;
  return () => {
    x = (x + 0x6d2b79f5) >>> 0;
    let t = x;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const file = makeBigHeader({ nTokens: 3000, nTensors: 12, extraDataBytes: 300_000 });
const bytes = new Uint8Array(file.bytes);
let server;
const unhandled = [];
const onUnhandled = (err) => unhandled.push(err);

before(async () => {
  process.on('unhandledRejection', onUnhandled);
  server = await startLiar({ '/f.gguf': bytes });
});
after(async () => {
  await server.close();
  process.off('unhandledRejection', onUnhandled);
});

const KINDS = ['ok', 'ok', 'ok', 'ok', 'wrong-start', 'wrong-end', 'wrong-total', 'no-content-range', 'wrong-length',
  'truncate', 'stall-headers', 'stall-body', 'ignore', 'status'];

function planFor(rand) {
  return () => {
    const kind = KINDS[Math.floor(rand() * KINDS.length)];
    const delta = [-7, -1, 1, 3, 4096][Math.floor(rand() * 5)];
    const after = Math.floor(rand() * 20_000);
    const status = [500, 503, 404, 403, 429][Math.floor(rand() * 5)];
    const pieceBytes = [13, 1000, 7919, 64 * 1024][Math.floor(rand() * 4)];
    return { kind, delta, after, status, pieceBytes: kind === 'ok' ? pieceBytes : 64 * 1024 };
  };
}

/** `promise`, or a failure if it neither resolves nor rejects within the deadline. */
function within(promise, what) {
  let timer;
  return Promise.race([
    promise.then((v) => ({ ok: true, v }), (err) => ({ ok: false, err })),
    new Promise((resolve) => { timer = setTimeout(() => resolve({ hung: true }), DEADLINE_MS); }),
  ]).finally(() => clearTimeout(timer)).then((r) => {
    if (r.hung) assert.fail(`${what}: no answer within ${DEADLINE_MS} ms`);
    if (!r.ok) assert.ok(r.err instanceof Error, `${what}: rejected with a non-Error: ${r.err}`);
    return r;
  });
}

test('a lying, truncating, stalling, Range-ignoring server: right bytes or an Error, never a hang', { timeout: SECONDS > 0 ? (SECONDS + 120) * 1000 : 180_000 }, async () => {
  const truth = await openGguf(bytes);
  const names = truth.tensors.map((t) => t.name);
  const rand = prng(SEED);
  const start = Date.now();
  let iterations = 0;
  const outcomes = { ok: 0, error: 0 };
  for (; iterations < ITERATIONS && (SECONDS <= 0 || Date.now() - start < SECONDS * 1000); iterations++) {
    server.reset();
    server.state.plan = planFor(rand);
    const options = { stallTimeoutMs: STALL_MS, retries: Math.floor(rand() * 3), retryDelayMs: 1, firstReadBytes: [4096, 65536][Math.floor(rand() * 2)] };
    const what = `iteration ${iterations} (seed ${SEED})`;
    if (rand() < 0.5) {
      // The whole path: header, then a few tensors' rows.
      const opened = await within(openGguf(server.url('/f.gguf'), options), `${what}: open`);
      if (!opened.ok) { outcomes.error++; continue; }
      const model = opened.v;
      assert.equal(model.dataOffset, truth.dataOffset, what);
      for (let k = 0; k < 3; k++) {
        const name = names[Math.floor(rand() * names.length)];
        const t = truth.tensor(name);
        const first = Math.floor(rand() * t.nRows);
        const rows = [first, first + 1 + Math.floor(rand() * (t.nRows - first))];
        const got = await within(model.readTensorBytes(name, { rows }), `${what}: ${name} rows ${rows}`);
        if (!got.ok) { outcomes.error++; continue; }
        const want = await truth.readTensorBytes(name, { rows });
        assert.deepEqual(Buffer.from(got.v), Buffer.from(want), `${what}: ${name} rows ${rows}`);
        outcomes.ok++;
      }
      await model.close();
    } else {
      // Raw reads in any order, streamed or not.
      const source = await toSource(server.url('/f.gguf'), options);
      if (rand() < 0.5) source.streamNextRead();
      for (let k = 0; k < 4; k++) {
        const from = Math.floor(rand() * bytes.length);
        const to = Math.min(bytes.length, from + Math.floor(rand() * 70_000));
        const got = await within(source.read(from, to), `${what}: read ${from}-${to}`);
        if (!got.ok) { outcomes.error++; continue; }
        assert.deepEqual(Buffer.from(got.v), Buffer.from(bytes.subarray(from, to)), `${what}: read ${from}-${to}`);
        outcomes.ok++;
      }
      source.close();
    }
  }
  await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(unhandled.map(String), [], 'no unhandled rejection');
  assert.ok(outcomes.ok > 0 && outcomes.error > 0, `both outcomes seen: ${JSON.stringify(outcomes)}`);
  if (SECONDS > 0) console.log(`source fuzz: ${iterations} iterations in ${((Date.now() - start) / 1000).toFixed(1)} s, seed ${SEED}, ${JSON.stringify(outcomes)}`);
  await truth.close();
});
