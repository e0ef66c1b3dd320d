// One measurement in a fresh process (so peak RSS is its own): open a header with gguf-lens or
// @huggingface/gguf and compute its summary (parameter count). Prints one JSON line.
// `exact` is the floor: one Range request for exactly the header's bytes, read whole.
//   node npm-header-one.mjs ours|hf|exact FILE memory|URL
import fs from 'node:fs';

const [lib, file, where] = process.argv.slice(2);
const fileSize = fs.statSync(file).size;
let requests = 0;
let bytes = 0;
let preload = null;

if (where === 'memory') {
  // The header and a margin, read before timing starts: parsing "from memory".
  const { dataOffset } = JSON.parse(process.env.BENCH_HEADER_INFO);
  const length = Math.min(fileSize, dataOffset + 8 * 1024 * 1024);
  const fd = fs.openSync(file, 'r');
  preload = Buffer.alloc(length);
  fs.readSync(fd, preload, 0, length, 0);
  fs.closeSync(fd);
}

/** fetch over the preloaded bytes with Range support, for @huggingface/gguf in memory. */
async function memoryFetch(_url, init) {
  const [, a, b] = /bytes=(\d+)-(\d+)/.exec(init.headers.Range ?? init.headers.range);
  const start = Number(a);
  const end = Math.min(Number(b) + 1, fileSize);
  requests++;
  bytes += end - start;
  const body = new Uint8Array(end - start);
  body.set(preload.subarray(start, Math.min(end, preload.length)));
  return new Response(body, { status: 206, headers: { 'content-range': `bytes ${start}-${end - 1}/${fileSize}` } });
}

const started = performance.now();
let result;
if (lib === 'exact') {
  const { dataOffset } = JSON.parse(process.env.BENCH_HEADER_INFO);
  const response = await fetch(where, { headers: { Range: `bytes=0-${dataOffset - 1}` } });
  const body = await response.arrayBuffer();
  if (body.byteLength !== dataOffset) throw new Error(`exact read: ${body.byteLength} of ${dataOffset} bytes`);
  result = { dataOffset };
} else if (lib === 'ours') {
  const { openGguf } = await import('gguf-lens');
  const source = where === 'memory'
    ? { byteLength: fileSize, slice: (a, b) => { requests++; bytes += b - a; return preload.subarray(a, b); } }
    : where;
  const model = await openGguf(source);
  const summary = model.summary();
  result = { parameters: summary.parameterCount, tensors: model.tensors.length, dataOffset: model.dataOffset };
} else {
  const { gguf } = await import(process.env.HF_GGUF);
  const parsed = await gguf(where === 'memory' ? 'http://memory/model.gguf' : where, {
    computeParametersCount: true,
    ...(where === 'memory' ? { fetch: memoryFetch } : {}),
  });
  result = { parameters: parsed.parameterCount, tensors: parsed.tensorInfos.length, dataOffset: Number(parsed.tensorDataOffset) };
}
const ms = performance.now() - started;
// VmHWM: this process's own peak resident set (getrusage's maxrss would inherit the parent's).
const hwm = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
const rssMB = hwm ? Number(hwm[1]) / 1024 : process.resourceUsage().maxRSS / 1024;
console.log(JSON.stringify({ ...result, ms, requests, bytes, rssMB }));
