// npm `tensorStats` in Node on one big tensor per ggml type: for each TYPE.gguf in DIR (made by
// the stats benchmark's generator, one 128M-value tensor each), wall seconds (median of RUNS)
// and process CPU seconds per call (every thread, workers included: the steadier figure on a
// busy machine), as Gelem/s. Prints a Markdown table.
//   node benches/npm-stats-types.mjs PACKAGE_DIR DIR [--workers N|default] [--runs R] [--types A,B]
// PACKAGE_DIR: an installed or built package (node_modules/gguf-lens, pkg/).
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const [dir, modelDir] = args;
if (!dir || !modelDir) {
  console.error('usage: node benches/npm-stats-types.mjs PACKAGE_DIR DIR [--workers N|default] [--runs R] [--types A,B]');
  process.exit(2);
}
const flag = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const workers = flag('--workers', 'default');
const runs = Number(flag('--runs', '3'));
const only = flag('--types', '')?.split(',').filter(Boolean);
const { openGguf } = await import(pathToFileURL(path.resolve(dir, 'index.js')).href);
const options = workers === 'default' ? { bins: 64 } : { bins: 64, workers: Number(workers) };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const files = fs.readdirSync(modelDir).filter((f) => f.endsWith('.gguf')).sort()
  .filter((f) => !only?.length || only.includes(path.basename(f, '.gguf')));
console.log(`| type | values | wall s (median of ${runs}) | Gelem/s (wall) | CPU s a call | Gelem per CPU-second |`);
console.log('|---|---:|---:|---:|---:|---:|');
for (const f of files) {
  const model = await openGguf(path.join(modelDir, f));
  const tensor = model.tensors[0];
  const n = tensor.shape.reduce((a, b) => a * Number(b), 1);
  await model.tensorStats(tensor.name, options); // the first call starts workers: not timed
  const walls = [];
  const cpus = [];
  for (let i = 0; i < runs; i++) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await model.tensorStats(tensor.name, options);
    walls.push((performance.now() - t0) / 1000);
    const c = process.cpuUsage(cpu0);
    cpus.push((c.user + c.system) / 1e6);
  }
  await model.close();
  const wall = median(walls);
  const cpu = median(cpus);
  console.log(`| ${path.basename(f, '.gguf')} | ${n} | ${wall.toFixed(3)} | ${(n / wall / 1e9).toFixed(2)} | ${cpu.toFixed(3)} | ${(n / cpu / 1e9).toFixed(2)} |`);
}
