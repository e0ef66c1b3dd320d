// Cold-page benchmark (#31): a fresh Chromium context per run (empty cache) on an emulated link
// (CDP Network.emulateNetworkConditions: 20 Mbit/s each way, 50 ms latency; and 100 Mbit/s).
// Pages, each served from a CDN-style path by a server that compresses JS and wasm as CDNs do
// (brotli; the package's own .br where it ships one; BENCH_COMPRESS=0 sends identity), the model
// file always identity with Range:
//   bundle   gguf-lens's single-file build (index.bundle.js, no bundler): openGguf(url).summary()
//   modules  the same from index.js (the package's ~20 modules), only when BENCH_PAGES names it
//   hf       @huggingface/gguf's browser build (bundled into one file): gguf(url)
//   floor    no library: the page's own script fetches the exact range at once (the best any
//            library could do on this page: navigation, then the header's bytes)
// Per run: ms from navigation start to the first summary, JS+wasm bytes before it (as sent, and
// decoded), requests, header bytes the server sent, and in the same page afterwards the anchor:
// one exact Range request of bytes 0..header_end (header_end from gguf-py, given in
// BENCH_HEADER_ENDS, not from the library under test). Then, for gguf-lens, the first tokenize,
// chat template render, tensorStats and quantError, each its own step (module loads show there).
// Median of BENCH_RUNS (default 5).
//   node cold-page.mjs HEADER.gguf...        (run by benches/bench-cold-page.sh)
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const REPO = process.env.GGUF_LENS_REPO;
const PKG = process.env.GGUF_LENS_PKG; // the installed package directory
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const ENDS = JSON.parse(process.env.BENCH_HEADER_ENDS); // file name → header end (bytes)
const { startServer } = await import(path.join(REPO, 'pkg-tests/server.mjs'));
const tools = createRequire(path.join(REPO, 'tools/package.json'));
const { chromium } = tools('playwright-core');

const LINKS = [
  { name: '20 Mbit/s, 50 ms', mbit: 20, latency: 50 },
  { name: '100 Mbit/s, 50 ms', mbit: 100, latency: 50 },
];
const GOAL_KIB = 600;
const GOAL_RATIO = 1.15;
const COMPRESS = process.env.BENCH_COMPRESS !== '0';
const PAGE_NAMES = (process.env.BENCH_PAGES ?? 'bundle,hf,floor').split(',');
const LIBRARY = { bundle: 'gguf-lens (index.bundle.js)', modules: 'gguf-lens (index.js)', hf: '@huggingface/gguf', floor: 'floor: the range alone' };

const files = process.argv.slice(2);
const root = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'cold-page-'));
fs.cpSync(PKG, path.join(root, 'npm/gguf-lens'), { recursive: true });
// @huggingface/gguf's browser build imports the bare name @huggingface/tasks: bundled into one
// minified ESM file with rolldown (in tools/ through vite), as an app's bundler would.
const { build } = await import(tools.resolve('rolldown'));
await build({
  input: path.join(REPO, 'tools/node_modules/@huggingface/gguf/dist/browser/index.mjs'),
  platform: 'browser', logLevel: 'silent',
  output: { file: path.join(root, 'npm/hf-gguf/index.mjs'), format: 'esm', minify: true, codeSplitting: false },
});

// What each page does once loaded; both record performance.now() (ms since navigation start)
// at the first summary, then the anchor, then (ours) the later steps.
const COMMON = `
const file = new URLSearchParams(location.search).get('file');
const headerEnd = Number(new URLSearchParams(location.search).get('end'));
const resources = () => performance.getEntriesByType('resource').map((e) => ({
  name: new URL(e.name).pathname, transfer: e.transferSize, decoded: e.decodedBodySize, end: e.responseEnd }));
async function anchor() {
  const t = performance.now();
  const r = await fetch(file, { headers: { range: 'bytes=0-' + (headerEnd - 1) }, cache: 'no-store' });
  const n = (await r.arrayBuffer()).byteLength;
  return { ms: performance.now() - t, bytes: n, status: r.status };
}
async function step(name, f, out) {
  const before = resources().length;
  const t = performance.now();
  try { await f(); out[name] = { ms: performance.now() - t, code: resources().slice(before) }; }
  catch (e) { out[name] = { error: String(e).slice(0, 80) }; }
}`;
const ours = (entry) => `<!doctype html><title>ours</title><script type="module">
import { openGguf } from '/npm/gguf-lens/${entry}';${COMMON}
const out = {};
try {
  const model = await openGguf(file);
  const s = model.summary();
  out.summaryMs = performance.now();
  out.resources = resources();
  await window.summaryReached();
  out.tensors = s.tensorCount;
  out.anchor = await anchor();
  const names = model.tensors.map((t) => t.name);
  const quantized = model.tensors.find((t) => /^(Q|IQ)/.test(t.type))?.name ?? names[0];
  // A header without a template renders a one-line one (the step still loads what rendering needs).
  const own = model.get('tokenizer.chat_template') ? {} : { template: '{% for m in messages %}{{ m.role }}: {{ m.content }}\\n{% endfor %}' };
  await step('tokenize', () => model.tokenize('Hello, world! This is a cold page.'), out);
  await step('template', () => model.renderChatTemplate([{ role: 'user', content: 'Hi' }], { addGenerationPrompt: true, ...own }), out);
  await step('tensorStats', () => model.tensorStats(names[0], { workers: 0 }), out);
  await step('quantError', () => model.quantError(quantized), out);
} catch (e) { out.error = String(e).slice(0, 120); }
window.result = out;
</script>`;
const PAGES = {
  bundle: ours('index.bundle.js'),
  modules: ours('index.js'),
  hf: `<!doctype html><title>hf</title><script type="module">
import { gguf } from '/npm/hf-gguf/index.mjs';${COMMON}
const out = {};
try {
  const r = await gguf(new URL(file, location.href).href);
  out.summaryMs = performance.now();
  out.resources = resources();
  await window.summaryReached();
  out.tensors = r.tensorInfos.length;
  out.anchor = await anchor();
} catch (e) { out.error = String(e).slice(0, 120); }
window.result = out;
</script>`,
  floor: `<!doctype html><title>floor</title><script type="module">${COMMON}
const out = {};
try {
  const first = await anchor();
  out.summaryMs = performance.now();
  out.resources = resources();
  await window.summaryReached();
  out.anchor = await anchor();
} catch (e) { out.error = String(e).slice(0, 120); }
window.result = out;
</script>`,
};
for (const [name, html] of Object.entries(PAGES)) fs.writeFileSync(path.join(root, `${name}.html`), html);

const isCode = (r) => /\.(m?js|wasm)$/.test(r.name);

const server = await startServer({ files: Object.fromEntries(files.map((f) => ['/h/' + path.basename(f), f])), staticRoot: root, compress: COMPRESS });
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run'],
});

async function runOnce(page, file, link) {
  const context = await browser.newContext(); // a fresh context: empty HTTP cache
  const tab = await context.newPage();
  const cdp = await context.newCDPSession(tab);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  const bytesPerSec = (link.mbit * 1e6) / 8;
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false, latency: link.latency, downloadThroughput: bytesPerSec, uploadThroughput: bytesPerSec,
  });
  const errors = [];
  tab.on('pageerror', (e) => errors.push(String(e)));
  server.reset();
  // The file's requests and bytes as the server sent them when the page has its summary (a
  // library may read a stream and cancel it: resource timing then has no finished entry).
  let atSummary = null;
  await tab.exposeBinding('summaryReached', () => { atSummary = { requests: server.state.requests, bytes: server.state.bytesSent, ranges: server.state.log.map((l) => l.range) }; });
  const name = path.basename(file);
  await tab.goto(server.url(`/${page}.html?file=/h/${name}&end=${ENDS[name]}`));
  await tab.waitForFunction(() => window.result, null, { timeout: 300_000 });
  const r = await tab.evaluate(() => window.result);
  await context.close();
  if (r.error || errors.length) return { error: r.error ?? errors[0] };
  const before = r.resources.filter((x) => x.end <= r.summaryMs);
  const code = before.filter(isCode);
  const steps = {};
  for (const s of ['tokenize', 'template', 'tensorStats', 'quantError']) {
    if (!r[s]) continue;
    steps[s] = r[s].error ? { error: r[s].error } : { ms: r[s].ms, kib: r[s].code.filter(isCode).reduce((a, x) => a + x.transfer, 0) / 1024 };
  }
  return {
    ms: r.summaryMs,
    anchorMs: r.anchor.ms,
    anchorOk: r.anchor.status === 206 && r.anchor.bytes === ENDS[name],
    codeKiB: code.reduce((a, x) => a + x.transfer, 0) / 1024,
    codeDecodedKiB: code.reduce((a, x) => a + x.decoded, 0) / 1024,
    requests: before.filter((x) => x.name !== `/h/${name}`).length + 1 + atSummary.requests, // + the page
    headerMB: atSummary.bytes / 1e6,
    headerRequests: atSummary.requests,
    ranges: atSummary.ranges,
    steps,
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rows = [];
for (const file of files) {
  for (const link of LINKS) {
    for (const page of PAGE_NAMES) {
      const runs = [];
      for (let i = 0; i < RUNS; i++) {
        const r = await runOnce(page, file, link);
        runs.push(r);
        if (r.error) break;
      }
      const ok = runs.filter((r) => !r.error);
      const row = { header: path.basename(file, '.gguf'), end: ENDS[path.basename(file)], link: link.name, lib: LIBRARY[page] };
      if (!ok.length) row.error = runs[0].error;
      else {
        const ratios = ok.map((r) => r.ms / r.anchorMs);
        Object.assign(row, {
          ms: median(ok.map((r) => r.ms)), anchorMs: median(ok.map((r) => r.anchorMs)), ratio: median(ratios),
          anchorOk: ok.every((r) => r.anchorOk), codeKiB: median(ok.map((r) => r.codeKiB)), codeDecodedKiB: median(ok.map((r) => r.codeDecodedKiB)),
          ranges: ok[0].ranges, requests: ok[0].requests, headerRequests: ok[0].headerRequests, headerMB: ok[0].headerMB, steps: {},
        });
        for (const s of Object.keys(ok[0].steps)) {
          const good = ok.map((r) => r.steps[s]).filter((x) => x && !x.error);
          row.steps[s] = good.length ? { ms: median(good.map((x) => x.ms)), kib: median(good.map((x) => x.kib)) } : { error: ok[0].steps[s].error };
        }
      }
      rows.push(row);
      process.stderr.write(`${JSON.stringify(row)}\n`);
    }
  }
}
await browser.close();
await server.close();
fs.rmSync(root, { recursive: true, force: true });

const yes = (ok) => (ok ? 'yes' : '**no**');
const stepCell = (s) => (!s ? '–' : s.error ? `failed: ${s.error.replace(/\|/g, '/')}` : `${s.ms.toFixed(0)}${s.kib > 0 ? ` (+${s.kib.toFixed(0)} KiB)` : ''}`);
console.log(`Median of ${RUNS} cold runs (fresh context each); JS and wasm sent ${COMPRESS ? 'brotli-compressed' : 'identity'}. JS+wasm KiB before the summary: as sent / decoded (steps: + KiB sent).`);
console.log();
console.log(`| header (end) | link | page | ms to summary | exact range ms | ratio (≤ ${GOAL_RATIO}) | JS+wasm KiB before summary (≤ ${GOAL_KIB} decoded) | requests (header) | MB sent by server (ranges) | tokenize ms | template ms | tensorStats ms | quantError ms |`);
console.log('|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  const head = `| ${r.header} (${(r.end / 1e6).toFixed(2)} MB) | ${r.link} | ${r.lib}`;
  if (r.error) { console.log(`${head} | failed: ${r.error.replace(/\|/g, '/')} | | | | | | | | | |`); continue; }
  console.log(`${head} | ${r.ms.toFixed(0)} | ${r.anchorMs.toFixed(0)}${r.anchorOk ? '' : ' (bad anchor)'} | ${r.ratio.toFixed(2)} ${yes(r.ratio <= GOAL_RATIO)} | ${r.codeKiB.toFixed(0)} / ${r.codeDecodedKiB.toFixed(0)} ${yes(r.codeDecodedKiB <= GOAL_KIB)} | ${r.requests} (${r.headerRequests}) | ${r.headerMB.toFixed(2)} (${r.ranges.join(', ')}) | ${stepCell(r.steps.tokenize)} | ${stepCell(r.steps.template)} | ${stepCell(r.steps.tensorStats)} | ${stepCell(r.steps.quantError)} |`);
}
