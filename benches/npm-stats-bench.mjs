// npm `tensorStats` and `readTensor` in Node from a local path (the packed package, installed by
// benches/bench-e2e.sh): prints `name<TAB>seconds` rows, medians of --runs.
//   node npm-stats-bench.mjs FILE TENSOR [--runs 3]
import { openGguf } from 'gguf-lens';

const [file, tensor] = process.argv.slice(2);
const runs = Number(process.argv[process.argv.indexOf('--runs') + 1] || 3);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function time(fn) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    times.push((performance.now() - start) / 1000);
  }
  return median(times);
}

const model = await openGguf(file);
const t = model.tensor(tensor);
const into = new Float32Array(t.nElements);
const rows = [
  ['npm tensorStats (histogram, percentiles)', () => model.tensorStats(tensor, { bins: 64 })],
  ['npm tensorStats (no percentiles)', () => model.tensorStats(tensor, { bins: 64, percentiles: false })],
  ['npm tensorStats (histogram, percentiles), workers: 2 (worker_threads)', () => model.tensorStats(tensor, { bins: 64, workers: 2 })],
  ['npm readTensor', () => model.readTensor(tensor)],
];
if (model.readTensor.length >= 0) {
  rows.push(['npm readTensor into a Float32Array', () => model.readTensor(tensor, { into })]);
}
for (const [name, fn] of rows) console.log(`${name}\t${(await time(fn)).toFixed(4)}`);
await model.close();
