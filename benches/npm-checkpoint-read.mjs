// npm `readTensor` of one checkpoint tensor in Node from a local path, with the simd128 module
// or (--scalar) the scalar one, in a process of its own: prints `seconds<TAB>cpu_seconds`, the
// least of --runs calls after a first (untimed) one.
//   node benches/npm-checkpoint-read.mjs PKG_DIR FILE TENSOR [--scalar] [--runs 3]
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const args = process.argv.slice(2);
const [pkg, file, tensor] = args;
const runs = args.includes('--runs') ? Number(args[args.indexOf('--runs') + 1]) : 3;
const { open, setWasmSimd } = await import(pathToFileURL(join(pkg, 'index.js')).href);
if (args.includes('--scalar')) setWasmSimd(false);
const model = await open(file);
// The first call (untimed) gives the logical size: a quantized layer's is not its stored part's.
const into = await model.readTensor(tensor);
let best = [Infinity, Infinity];
for (let i = 0; i < runs; i++) {
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  await model.readTensor(tensor, { into });
  const used = process.cpuUsage(cpu0);
  best = [Math.min(best[0], (performance.now() - start) / 1000), Math.min(best[1], (used.user + used.system) / 1e6)];
}
await model.close?.();
console.log(`${best[0].toFixed(3)}\t${best[1].toFixed(3)}`);
