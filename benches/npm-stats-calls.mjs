// npm `tensorStats` in Node, call by call: wall and process CPU seconds (every thread: workers
// included) of each call in one process, so the first call (worker start-up, wasm tier-up) and
// the repeated ones show apart, and CPU time compares builds on a busy machine.
//   node benches/npm-stats-calls.mjs PACKAGE_DIR FILE TENSOR [WORKERS|default] [CALLS]
// PACKAGE_DIR: an installed or built package (node_modules/gguf-lens, pkg/); WORKERS: a number
// (0: the calling thread) or `default` (the package's choice).
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [dir, file, tensor, workersArg = 'default', callsArg = '7'] = process.argv.slice(2);
if (!dir || !file || !tensor) {
  console.error('usage: node benches/npm-stats-calls.mjs PACKAGE_DIR FILE TENSOR [WORKERS|default] [CALLS]');
  process.exit(2);
}
const { openGguf } = await import(pathToFileURL(path.resolve(dir, 'index.js')).href);
const options = workersArg === 'default' ? { bins: 64 } : { bins: 64, workers: Number(workersArg) };
const model = await openGguf(file);
const wall = [];
const cpu = [];
for (let i = 0; i < Number(callsArg); i++) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await model.tensorStats(tensor, options);
  wall.push((performance.now() - t0) / 1000);
  const c = process.cpuUsage(c0);
  cpu.push((c.user + c.system) / 1e6);
}
await model.close();
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (xs) => xs.map((x) => x.toFixed(3)).join(' ');
console.log(`workers ${workersArg}: first call ${wall[0].toFixed(3)} s wall ${cpu[0].toFixed(3)} s CPU; ` +
  `later calls median ${median(wall.slice(1)).toFixed(3)} s wall ${median(cpu.slice(1)).toFixed(3)} s CPU ` +
  `(wall ${fmt(wall)}; CPU ${fmt(cpu)})`);

