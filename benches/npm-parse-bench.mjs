// Parse time from memory, gguf-lens (npm package) vs @huggingface/gguf, in Node and in headless
// Chromium: the header bytes are already in memory; each library turns them into tensor infos,
// metadata and a parameter count. Median of RUNS after WARMUP runs in one process/page (the wasm
// module is loaded once, before timing). Prints Markdown rows.
//   node npm-parse-bench.mjs HEADER.gguf...      (run by benches/bench-npm.sh)
import fs from 'node:fs';
import path from 'node:path';

const RUNS = Number(process.env.BENCH_RUNS ?? 9);
const WARMUP = 2;
const REPO = process.env.GGUF_LENS_REPO;
const HF = process.env.HF_GGUF;
const { startServer } = await import(path.join(REPO, 'pkg-tests/server.mjs'));
const { launchChromium, CHROMIUM } = await import(path.join(REPO, 'pkg-tests/helpers.mjs'));

/** The header plus 8 MiB (as a range reader might hold it) and the whole file's size. */
function headerBytes(file, dataOffset) {
  const size = fs.statSync(file).size;
  const length = Math.min(size, dataOffset + 8 * 1024 * 1024);
  const bytes = Buffer.alloc(length);
  const fd = fs.openSync(file, 'r');
  fs.readSync(fd, bytes, 0, length, 0);
  fs.closeSync(fd);
  return { bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, length), size };
}

// The timed work, the same text in Node and in the page: `libs` = { openGguf, gguf }.
const TIMED = `async (libs, bytes, size, runs, warmup) => {
  const memoryFetch = async (_url, init) => {
    const range = (init.headers.Range ?? init.headers.range);
    const [, a, b] = /bytes=(\\d+)-(\\d+)/.exec(range);
    const start = Number(a);
    const end = Math.min(Number(b) + 1, size);
    const body = new Uint8Array(end - start);
    body.set(bytes.subarray(start, Math.min(end, bytes.length)));
    return new Response(body, { status: 206, headers: { 'content-range': 'bytes ' + start + '-' + (end - 1) + '/' + size } });
  };
  const ours = async () => {
    const model = await libs.openGguf({ byteLength: size, slice: (a, b) => bytes.subarray(a, b) });
    const n = model.summary().parameterCount;
    await model.close();
    return n;
  };
  const hf = async () => (await libs.gguf('http://memory/model.gguf', { fetch: memoryFetch, computeParametersCount: true })).parameterCount;
  const out = {};
  for (const [name, run] of [['ours', ours], ['hf', hf]]) {
    const times = [];
    let parameters;
    for (let i = 0; i < warmup + runs; i++) {
      const t = performance.now();
      parameters = Number(await run());
      if (i >= warmup) times.push(performance.now() - t);
    }
    times.sort((x, y) => x - y);
    out[name] = { ms: times[Math.floor(times.length / 2)], parameters };
  }
  return out;
}`;

const files = process.argv.slice(2);
const { openGguf } = await import('gguf-lens');
const { gguf } = await import(HF);
const timed = (0, eval)(TIMED);
const inputs = [];
for (const file of files) {
  const model = await openGguf(file);
  inputs.push({ name: path.basename(file), dataOffset: model.dataOffset, ...headerBytes(file, model.dataOffset) });
  await model.close();
}

const rows = [];
for (const input of inputs) {
  const r = await timed({ openGguf, gguf }, input.bytes, input.size, RUNS, WARMUP);
  rows.push({ where: `Node ${process.version}`, ...input, r });
  process.stderr.write(`parse ${input.name} node: ${JSON.stringify(r)}\n`);
}

// Chromium: the installed package and @huggingface/gguf's browser build (with its one import,
// @huggingface/tasks, through an import map) served from one local origin.
const hfPackage = path.resolve(path.dirname(HF), '..');
const root = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'parse-bench-'));
fs.symlinkSync(path.resolve('node_modules/gguf-lens'), path.join(root, 'gguf-lens'));
fs.symlinkSync(path.join(hfPackage, 'dist/browser'), path.join(root, 'hf'));
fs.symlinkSync(path.resolve(hfPackage, '../tasks/dist/esm'), path.join(root, 'tasks'));
const importMap = JSON.stringify({ imports: { '@huggingface/tasks': '/tasks/index.js' } });
fs.writeFileSync(path.join(root, 'index.html'),
  `<!doctype html><title>parse bench</title><script type="importmap">${importMap}</script>`);
const served = Object.fromEntries(inputs.map((input) => ['/' + input.name, input.bytes]));
const server = await startServer({ files: served, staticRoot: root });
if (fs.existsSync(CHROMIUM)) {
  const browser = await launchChromium();
  const page = await browser.newPage();
  await page.goto(server.url('/index.html'));
  const version = await browser.version();
  for (const input of inputs) {
    const r = await page.evaluate(async ({ name, size, timedText, runs, warmup }) => {
      const { openGguf } = await import('/gguf-lens/index.js');
      const { gguf } = await import('/hf/index.mjs');
      const bytes = new Uint8Array(await (await fetch('/' + name)).arrayBuffer());
      const timedFn = (0, eval)(timedText);
      return timedFn({ openGguf, gguf }, bytes, size, runs, warmup);
    }, { name: input.name, size: input.size, timedText: TIMED, runs: RUNS, warmup: WARMUP });
    rows.push({ where: `Chromium ${version}`, ...input, r });
    process.stderr.write(`parse ${input.name} chromium: ${JSON.stringify(r)}\n`);
  }
  await browser.close();
} else {
  process.stderr.write(`no ${CHROMIUM}: Chromium rows left out\n`);
}
await server.close();
fs.rmSync(root, { recursive: true, force: true });

console.log('| header (data offset) | runtime | gguf-lens ms | @huggingface/gguf 0.4.6 ms | speed-up | same parameter count |');
console.log('|---|---|---:|---:|---:|---|');
for (const { name, dataOffset, where, r } of rows) {
  console.log(`| ${name} (${(dataOffset / 1e6).toFixed(2)} MB) | ${where} | ${r.ours.ms.toFixed(1)} | ${r.hf.ms.toFixed(0)} | ${(r.hf.ms / r.ours.ms).toFixed(0)}x | ${r.ours.parameters === r.hf.parameters ? 'yes' : `no: ${r.ours.parameters} vs ${r.hf.parameters}`} |`);
}
