// Header benchmark, gguf-lens (npm package) vs @huggingface/gguf: time to summary, requests,
// bytes and peak RSS, from memory and through a local HTTP server (0 and 50 ms latency, and a
// server that ignores Range). Each measurement runs in its own process. Prints a Markdown table.
//   node npm-header-bench.mjs HEADER.gguf...      (run by benches/bench-npm.sh)
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const { startServer } = await import(path.join(process.env.GGUF_LENS_REPO, 'pkg-tests/server.mjs'));
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
/** A download a library does not stop by itself is stopped here (bytes sent so far reported). */
const BYTES_CAP = 1 << 30;
const TIME_CAP_MS = 60_000;

const files = process.argv.slice(2);
const server = await startServer({ files: Object.fromEntries(files.map((f) => ['/' + path.basename(f), f])) });

function runOne(lib, file, where, info) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(here, 'npm-header-one.mjs'), lib, file, where], {
      env: { ...process.env, BENCH_HEADER_INFO: JSON.stringify(info) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let stopped = null;
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const started = Date.now();
    const watch = setInterval(() => {
      if (server.state.bytesSent > BYTES_CAP || Date.now() - started > TIME_CAP_MS) {
        stopped = `stopped by the bench after ${(server.state.bytesSent / 1e6).toFixed(0)} MB / ${((Date.now() - started) / 1000).toFixed(0)} s`;
        child.kill('SIGKILL');
      }
    }, 50);
    child.on('close', () => {
      clearInterval(watch);
      if (stopped) return resolve({ error: stopped });
      try {
        resolve(JSON.parse(out.trim().split('\n').at(-1)));
      } catch {
        const line = err.split('\n').find((l) => /Error/.test(l)) ?? err.trim().split('\n')[0];
        resolve({ error: (line ?? 'failed').trim().slice(0, 90) });
      }
    });
  });
}

const ALL_MODES = [
  { name: 'memory', where: true },
  { name: 'HTTP 206, 0 ms', latency: 0, mode: '206' },
  { name: 'HTTP 206, 50 ms', latency: 50, mode: '206' },
  // 100 Mbit/s: 64 KiB pieces 5.24 ms apart (the server stops when the client stops reading).
  { name: 'HTTP 206, 50 ms, 100 Mbit/s', latency: 50, mode: '206', piece: 64 * 1024, pieceMs: (64 * 1024 * 8) / 100e6 * 1000 },
  { name: 'HTTP 200 (Range ignored)', latency: 0, mode: '200' },
];
// BENCH_MODES=link (for example): only the modes whose name contains one of these words.
const only = process.env.BENCH_MODES?.split(',').filter(Boolean);
const MODES = only ? ALL_MODES.filter((m) => only.some((w) => m.name.includes(w) || (w === 'link' && m.piece))) : ALL_MODES;

const rows = [];
for (const file of files) {
  const name = path.basename(file);
  const { openGguf } = await import('gguf-lens');
  const opened = await openGguf(file);
  const info = { dataOffset: opened.dataOffset };
  await opened.close();
  for (const mode of MODES) {
    // The floor, one exact range request, next to the libraries on the Range-serving links.
    const libs = mode.mode === '206' ? ['ours', 'hf', 'exact'] : ['ours', 'hf'];
    for (const lib of libs) {
      const results = [];
      for (let run = 0; run < RUNS; run++) {
        server.reset();
        server.state.latencyMs = mode.latency ?? 0;
        server.state.mode = mode.mode ?? '206';
        if (mode.piece) Object.assign(server.state, { pieceBytes: mode.piece, pieceDelayMs: mode.pieceMs });
        const where = mode.where ? 'memory' : server.url('/' + name);
        const r = await runOne(lib, file, where, info);
        if (!mode.where) Object.assign(r, { requests: server.state.requests, bytes: server.state.bytesSent });
        results.push(r);
        if (r.error) break;
      }
      const ok = results.filter((r) => !r.error);
      const first = results[0];
      const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
      rows.push({
        header: name,
        source: mode.name,
        lib: { ours: 'gguf-lens', hf: '@huggingface/gguf 0.4.6', exact: 'one exact range request (floor)' }[lib],
        ...(first.error ? { error: first.error } : {
          ms: median(ok.map((r) => r.ms)),
          requests: first.requests,
          mb: first.bytes / 1e6,
          rss: median(ok.map((r) => r.rssMB)),
          dataOffset: first.dataOffset,
          parameters: first.parameters,
        }),
      });
      process.stderr.write(`${name} ${mode.name} ${lib}: ${JSON.stringify(rows.at(-1))}\n`);
    }
  }
}
await server.close();

console.log('| header (data offset) | source | library | requests | MB fetched (× data offset) | ms to summary (× floor) | peak RSS MB |');
console.log('|---|---|---|---:|---:|---:|---:|');
const floorOf = (r) => rows.find((f) => f.header === r.header && f.source === r.source && f.lib.startsWith('one exact') && !f.error);
for (const r of rows) {
  const header = `${r.header}`;
  if (r.error) {
    console.log(`| ${header} | ${r.source} | ${r.lib} | – | – | failed: ${r.error.replace(/\|/g, '/')} | – |`);
  } else {
    const floor = floorOf(r);
    const times = floor && floor !== r ? ` (${(r.ms / floor.ms).toFixed(1)}×)` : '';
    const overFetch = ` (${(r.mb * 1e6 / r.dataOffset).toFixed(2)}×)`;
    console.log(`| ${header} (${(r.dataOffset / 1e6).toFixed(2)} MB) | ${r.source} | ${r.lib} | ${r.requests} | ${r.mb.toFixed(2)}${overFetch} | ${r.ms.toFixed(0)}${times} | ${r.rss.toFixed(0)} |`);
  }
}
