// Hub repo scan: time to list and plan a repo of N GGUF files (each a fixture's header padded
// to 4 GiB) through the local mock of the Hub (pkg-tests/hub-mock.mjs) with a per-request
// latency, by concurrency; requests and bytes received per file. Median of RUNS.
//   node benches/hub-scan.mjs [N=24] [LATENCY_MS=50]      (after scripts/build-npm.sh)
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { scanRepo, closeRepoModels } = await import(path.join(repo, 'pkg/index.js'));
const { startHubMock } = await import(path.join(repo, 'pkg-tests/hub-mock.mjs'));
const N = Number(process.argv[2] ?? 24);
const LATENCY = Number(process.argv[3] ?? 50);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const fixture = path.join(repo, 'fixtures/sample/tiny-llama-Q4_K_M.gguf');
const files = Object.fromEntries(Array.from({ length: N }, (_, i) => [`model-${i}.gguf`, { fixture, size: 4 * 1024 ** 3 }]));
const hub = await startHubMock({ repos: { 'bench/repo': { files } }, pageSize: 1000 });
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

console.log(`${N} files, ${LATENCY} ms per request; median of ${RUNS}`);
console.log('| concurrency | time (ms) | requests / file | KiB received / file |');
console.log('|---|---|---|---|');
for (const concurrency of [1, 3, 4, 8]) {
  const times = [];
  let rows;
  for (let r = 0; r < RUNS; r++) {
    hub.reset();
    hub.state.latencyMs = LATENCY;
    const t0 = performance.now();
    const scan = await scanRepo('bench/repo', { endpoint: hub.base, concurrency, device: { gpuMem: 8 * 1024 ** 3, ctx: 4096 } });
    times.push(performance.now() - t0);
    rows = scan.rows;
    if (rows.some((x) => x.error)) throw new Error(rows.find((x) => x.error).error);
    await closeRepoModels(rows);
  }
  const requests = rows.reduce((s, x) => s + x.requests, 0) / N;
  const kib = rows.reduce((s, x) => s + x.bytes, 0) / N / 1024;
  console.log(`| ${concurrency} | ${median(times).toFixed(0)} | ${requests.toFixed(1)} | ${kib.toFixed(0)} |`);
}
await hub.close();
