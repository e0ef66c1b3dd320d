// npm `readTensor` in Node from a local path (the packed package, installed by
// benches/bench-e2e.sh), in a process of its own so that its first calls are first calls:
// prints `name<TAB>seconds` rows (with --cpu a third column: the process's user+sys CPU seconds,
// every thread's), medians of --runs; "first call" rows run once, before the others.
//   node --expose-gc npm-read-bench.mjs FILE TENSOR [--runs 3] [--cpu] [--workers 2]
import { Worker } from 'node:worker_threads';
import { openGguf } from 'gguf-lens';

const args = process.argv.slice(2);
const [file, tensor] = args;
const flag = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const runs = flag('--runs', 3);
const workers = flag('--workers', 2);
const cpu = args.includes('--cpu');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function time(fn, n = runs) {
  const wall = [];
  const cpus = [];
  for (let i = 0; i < n; i++) {
    // Run with --expose-gc: the last call's arrays are collected first, outside the timing.
    // SharedArrayBuffers do not prompt V8 to collect them: without this each call's stays
    // (537 MB) until some other allocation does, and past a few GB the page faults slow down.
    globalThis.gc?.();
    const cpu0 = process.cpuUsage();
    const start = performance.now();
    await fn();
    wall.push((performance.now() - start) / 1000);
    const used = process.cpuUsage(cpu0);
    cpus.push((used.user + used.system) / 1e6);
  }
  return [median(wall), median(cpus)];
}

const model = await openGguf(file);
const t = model.tensor(tensor);
const into = new Float32Array(t.nElements).fill(1);
const shared = new Float32Array(new SharedArrayBuffer(4 * t.nElements)).fill(1);
// Anchor: plain worker_threads (started once) each filling its share of a new shared array —
// the first touch alone, split as readTensor's workers split it.
const fillers = Array.from({ length: workers }, () => new Worker(`
  const { parentPort } = require('node:worker_threads');
  parentPort.on('message', ({ buffer, from, to }) => {
    new Float32Array(buffer).fill(1, from, to);
    parentPort.postMessage(0);
    // This worker allocates nothing else: without a collection it would keep every array.
    setImmediate(() => globalThis.gc?.());
  });`, { eval: true }));
const fillShared = () => {
  const buffer = new SharedArrayBuffer(4 * t.nElements);
  return Promise.all(fillers.map((w, i) => new Promise((resolve) => {
    w.once('message', resolve);
    w.postMessage({ buffer, from: Math.floor((t.nElements * i) / workers), to: Math.floor((t.nElements * (i + 1)) / workers) });
  })));
};
const rows = [
  ['npm readTensor, new array, this thread, first call', () => model.readTensor(tensor), 1],
  [`npm readTensor, new shared array, workers: ${workers}, first call (workers start)`, () => model.readTensor(tensor, { workers }), 1],
  ['npm readTensor, new array, this thread', () => model.readTensor(tensor)],
  [`npm readTensor, new shared array, workers: ${workers}`, () => model.readTensor(tensor, { workers })],
  ['npm readTensor into a Float32Array (this thread)', () => model.readTensor(tensor, { into })],
  [`npm readTensor into a shared Float32Array, workers: ${workers}`, () => model.readTensor(tensor, { into: shared, workers })],
  // What a new array's first touch costs alone, on this thread (page faults).
  ['new Float32Array(n).fill(1), this thread (anchor)', () => new Float32Array(t.nElements).fill(1)],
  [`new shared array filled by ${workers} plain worker_threads (anchor)`, fillShared],
];
for (const [name, fn, n] of rows) {
  const [wall, used] = await time(fn, n);
  console.log(cpu ? `${name}\t${wall.toFixed(4)}\t${used.toFixed(4)}` : `${name}\t${wall.toFixed(4)}`);
}
await model.close();
for (const w of fillers) await w.terminate();
