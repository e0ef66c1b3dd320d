// The Hub repo listing and scan (listRepoGgufs, inspectRepoGgufs, repoVerdict) against a local
// mock of the Hub (hub-mock.mjs: tree API pages, a gated repo, Range-served 2 GiB files that
// begin with fixture GGUFs), never the network: grouping, sizes, URLs, headers read only
// (requests and bytes per file bounded), at most `concurrency` files at a time, tokens, abort,
// and verdicts equal to the planner's own answer on the same files opened locally.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { openGguf, listRepoGgufs, inspectRepoGgufs, repoVerdict, closeRepoModels, scanRepo, parseRepo } from 'gguf-lens';
import { REPO } from './helpers.mjs';
import { startHubMock, mockRepos } from './hub-mock.mjs';

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;
let hub;
before(async () => { hub = await startHubMock({ repos: mockRepos(REPO), pageSize: 3 }); });
after(() => hub?.close());

test('parseRepo takes owner/name and Hub addresses, and refuses the rest', () => {
  assert.deepEqual(parseRepo('acme/tiny-GGUF'), { repo: 'acme/tiny-GGUF', revision: undefined });
  assert.deepEqual(parseRepo('https://huggingface.co/acme/x.y-GGUF/tree/v1.0'), { repo: 'acme/x.y-GGUF', revision: 'v1.0' });
  for (const bad of ['acme', 'a/b/c', '../x/y', 'acme/x?y', '']) assert.throws(() => parseRepo(bad), /not a Hugging Face repo/);
});

test('the listing follows every page, keeps GGUF files and groups split files', async () => {
  hub.reset();
  const listing = await listRepoGgufs('acme/tiny-GGUF', { endpoint: hub.base });
  // 9 files + README, a folder and config.json: 12 entries in pages of 3
  assert.equal(listing.requests, 4);
  assert.equal(hub.state.api, 4);
  assert.equal(listing.revision, 'main');
  const names = listing.models.map((m) => m.name);
  assert.deepEqual(names, ['broken.gguf', 'gemma3.gguf', 'part-*-of-00002.gguf', 'qwen2.gguf', 'split/llama-split-*-of-00003.gguf', 'tiny-Q4_K_M.gguf', 'tiny-Q8_0.gguf']);
  const split = listing.models.find((m) => m.split?.count === 3);
  assert.deepEqual(split.files.map((f) => f.shard), [1, 2, 3]);
  assert.deepEqual(split.split.missing, []);
  assert.equal(split.size, 3 * 2 * GIB); // the LFS sizes, not the pointer's 134 bytes
  assert.equal(split.files[1].url, `${hub.base}/acme/tiny-GGUF/resolve/main/split/llama-split-00002-of-00003.gguf`);
  assert.deepEqual(listing.models.find((m) => m.name.startsWith('part-')).split.missing, [2]);
  await assert.rejects(listRepoGgufs('acme/none', { endpoint: hub.base }), /not found \(HTTP 404\)/);
  await assert.rejects(listRepoGgufs('acme/tiny-GGUF', { endpoint: hub.base, revision: 'dev' }), /not found/);
});

test('every model\'s header is read over Range, a few files at a time, and planned', async () => {
  hub.reset();
  hub.state.latencyMs = 20; // requests overlap, so the concurrency bound is tested
  const listing = await listRepoGgufs('acme/tiny-GGUF', { endpoint: hub.base });
  const device = { gpuMem: 16 * MIB, ctx: 2048 }; // some models fit, some offload part (with the GPU's compute buffer)
  const seen = [];
  const rows = await inspectRepoGgufs(listing, { device, concurrency: 3, onProgress: (p) => seen.push(p.done) });
  try {
    assert.deepEqual(seen, [2, 3, 4, 5, 6, 7]); // the incomplete split is done before any read
    assert.ok(hub.state.maxInFlight <= 3 && hub.state.maxInFlight >= 2, `max in flight ${hub.state.maxInFlight}`);
    // 8 files opened (not the incomplete split's shard), each in at most 2 requests, of its header
    const fileRequests = hub.state.log.filter((l) => l.path.includes('/resolve/'));
    assert.equal(new Set(fileRequests.map((l) => l.path)).size, 8);
    assert.ok(fileRequests.length <= 16, `${fileRequests.length} requests`);
    assert.ok(fileRequests.every((l) => l.range !== null));
    // received: the header and what the stream had buffered; sent: also what sat in socket
    // buffers when the body was cancelled, still far from 8 files of 2 GiB
    assert.ok(rows.every((r) => r.bytes <= 256 * 1024 * r.files.length), rows.map((r) => r.bytes).join());
    assert.ok(hub.state.bytesSent < 8 * 32 * MIB, `${hub.state.bytesSent} bytes sent for 8 files of 2 GiB`);

    const byName = Object.fromEntries(rows.map((r) => [r.name, r]));
    assert.match(byName['broken.gguf'].error, /^broken\.gguf: /);
    assert.match(byName['part-*-of-00002.gguf'].error, /incomplete: shard 2 of 2 missing/);
    const local = {
      'tiny-Q4_K_M.gguf': ['fixtures/sample/tiny-llama-Q4_K_M.gguf'],
      'tiny-Q8_0.gguf': ['fixtures/sample/tiny-llama-Q8_0.gguf'],
      'qwen2.gguf': ['fixtures/plan/qwen2.gguf'],
      'gemma3.gguf': ['fixtures/plan/gemma3.gguf'],
      'split/llama-split-*-of-00003.gguf': [1, 2, 3].map((i) => `fixtures/plan/llama-split-0000${i}-of-00003.gguf`),
    };
    const fitting = [];
    for (const [name, files] of Object.entries(local)) {
      const row = byName[name];
      assert.equal(row.error, null, name);
      const model = await openGguf(files.length > 1 ? files.map((f) => path.join(REPO, f)) : path.join(REPO, files[0]));
      try {
        const want = model.summary();
        assert.equal(row.summary.fileTypeLabel, want.fileTypeLabel, name);
        assert.equal(row.summary.parameterCount, want.parameterCount, name);
        assert.equal(row.summary.bitsPerWeight, want.bitsPerWeight, name);
        assert.deepEqual(row.verdict, repoVerdict(model, device), name);
        // the verdict is the planner's: the most layers at this context, and whether that is all
        const plan = model.planMemory({ ctx: 2048, gpuMem: 16 * MIB });
        assert.equal(row.verdict.ngl, plan.ngl, name);
        assert.equal(row.verdict.fits, plan.ngl === plan.nLayer + 1, name);
        assert.ok(row.verdict.gpuBytes <= 16 * MIB, name);
        fitting.push(row.verdict.fits);
        if (row.verdict.fits) assert.equal(row.verdict.maxCtx, plan.maxCtx, name);
      } finally {
        await model.close();
      }
    }
    assert.ok(fitting.includes(true) && fitting.includes(false), String(fitting));
    // a tight budget: some layers, not all; a large one: everything, and the whole training context
    const tiny = byName['tiny-Q8_0.gguf'].model;
    const tight = repoVerdict(tiny, { gpuMem: 0.5 * MIB, ctx: 512 });
    assert.equal(tight.fits, false);
    assert.ok(tight.ngl < tight.nglFull);
    const roomy = repoVerdict(tiny, { gpuMem: 80 * GIB, ctx: 512 });
    assert.equal(roomy.fits, true);
    // the largest context is not capped at the training context: it fits, 256 more do not
    assert.ok(roomy.maxCtx >= tiny.planMemory().nCtx, String(roomy.maxCtx));
    assert.ok(tiny.planMemory({ ctx: roomy.maxCtx, ngl: roomy.nglFull }).gpuBytes <= 80 * GIB);
    if (roomy.maxCtx + 256 < 2 ** 32) assert.ok(tiny.planMemory({ ctx: roomy.maxCtx + 256, ngl: roomy.nglFull }).gpuBytes > 80 * GIB);
    const cpu = repoVerdict(tiny, { ctx: 512 });
    assert.equal(cpu.fits, null);
    assert.equal(cpu.totalBytes, tiny.planMemory({ ctx: 512, ngl: 0 }).totalBytes);
  } finally {
    await closeRepoModels(rows);
  }
});

test('a gated repo answers 401 without the token and lists and reads with it', async () => {
  hub.reset();
  await assert.rejects(listRepoGgufs('acme/gated-GGUF', { endpoint: hub.base }), /HTTP 401: gated or private, a token with access is needed/);
  const headers = { Authorization: `Bearer ${hub.token}` };
  const scan = await scanRepo('acme/gated-GGUF', { endpoint: hub.base, headers, device: { gpuMem: 8 * GIB, ctx: 1024 } });
  try {
    assert.equal(scan.rows.length, 1);
    assert.equal(scan.rows[0].error, null);
    assert.equal(scan.rows[0].verdict.fits, true);
    assert.ok(hub.state.log.filter((l) => l.path.includes('/resolve/')).every((l) => l.auth === headers.Authorization));
  } finally {
    await closeRepoModels(scan.rows);
  }
  // the listing with a token but the files without: each row says why
  const listing = await listRepoGgufs('acme/gated-GGUF', { endpoint: hub.base, headers });
  const rows = await inspectRepoGgufs(listing, {});
  assert.match(rows[0].error, /HTTP 401/);
});

test('a next page on another origin is refused (the token stays with the endpoint)', async () => {
  const fetch = async (url) => new Response('[]', { status: 200, headers: { link: '<https://evil.example/api/next>; rel="next"' } });
  await assert.rejects(listRepoGgufs('acme/x', { fetch }), /next page on another origin/);
  const notList = async () => new Response('{"a":1}', { status: 200 });
  await assert.rejects(listRepoGgufs('acme/x', { fetch: notList }), /did not answer a list/);
});

test('an abort stops the scan: no file read starts after it', async () => {
  hub.reset();
  hub.state.latencyMs = 30;
  const listing = await listRepoGgufs('acme/tiny-GGUF', { endpoint: hub.base });
  const controller = new AbortController();
  let countAtAbort = null;
  const scan = inspectRepoGgufs(listing, {
    concurrency: 1,
    signal: controller.signal,
    onProgress: (p) => {
      if (p.done >= 3 && countAtAbort === null) {
        countAtAbort = hub.state.files;
        controller.abort();
      }
    },
  });
  await assert.rejects(scan, (err) => err.name === 'AbortError');
  await new Promise((r) => setTimeout(r, 100));
  assert.ok(countAtAbort !== null);
  assert.equal(hub.state.files, countAtAbort);
  assert.ok(hub.state.files < 8);
});
