// npm `tensorStats` in Node from a local path (the packed package, installed by
// benches/bench-e2e.sh): prints `name<TAB>seconds` rows, medians of --runs; the first row is the
// process's first call (worker start-up included), once. readTensor: npm-read-bench.mjs.
//   node npm-stats-bench.mjs FILE TENSOR [--runs 3]
import { openGguf } from 'gguf-lens';

const [file, tensor] = process.argv.slice(2);
const runs = Number(process.argv[process.argv.indexOf('--runs') + 1] || 3);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function time(fn, n = runs) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await fn();
    times.push((performance.now() - start) / 1000);
  }
  return median(times);
}

const model = await openGguf(file);
const rows = [
  ['npm tensorStats, first call (default: a worker per core for a big local tensor)', () => model.tensorStats(tensor, { bins: 64 }), 1],
  ['npm tensorStats (histogram, percentiles), default workers', () => model.tensorStats(tensor, { bins: 64 })],
  ['npm tensorStats (histogram, percentiles), workers: 0 (this thread)', () => model.tensorStats(tensor, { bins: 64, workers: 0 })],
  ['npm tensorStats (no percentiles), workers: 0', () => model.tensorStats(tensor, { bins: 64, percentiles: false, workers: 0 })],
  ['npm tensorStats (histogram, percentiles), workers: 2 (worker_threads)', () => model.tensorStats(tensor, { bins: 64, workers: 2 })],
];
for (const [name, fn, n] of rows) console.log(`${name}\t${(await time(fn, n)).toFixed(4)}`);
await model.close();
