// npm calls in the orders an inspector makes them, each sequence in a Node process of its own
// (so every earlier call is one the sequence made), timed on its last call against the same call
// in a fresh process (the anchor), measured in the same run and interleaved with the others.
// Prints one Markdown table: sequence, wall seconds (median of --runs) and their ratio to the
// fresh anchor, and the same for CPU seconds (every thread of the process: workers included),
// which a busy machine disturbs less.
//   node benches/npm-call-orders.mjs MODEL.gguf [TENSOR] [--runs 3] [--package DIR]
// TENSOR: default the model's largest; DIR: a built or installed package (default: the repo's
// pkg/, from scripts/build-npm.sh). A model: benches/make_e2e_model.py makes one.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = fileURLToPath(import.meta.url);
const args = process.argv.slice(2);
const flag = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const positional = args.filter((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));

/** What each sequence does before its timed call, and the timed call (`read` or `stats`). */
const SEQUENCES = [
  { name: 'fresh: readTensor', timed: 'read', anchor: true },
  { name: 'tensorStats, then readTensor', before: ['stats'], timed: 'read' },
  { name: 'readTensor twice (the second timed)', before: ['read'], timed: 'read' },
  { name: 'two models open (stats on the other), then readTensor', before: ['openOther', 'statsOther'], timed: 'read' },
  { name: 'tensorStats, close, reopen, then readTensor', before: ['stats', 'reopen'], timed: 'read' },
  { name: 'quantError (sampled), then readTensor', before: ['quantError'], timed: 'read' },
  { name: 'readTensor({ workers: 2 }), then readTensor', before: ['readWorkers'], timed: 'read' },
  { name: 'fresh: tensorStats', timed: 'stats', anchor: true },
  { name: 'readTensor, then tensorStats', before: ['read'], timed: 'stats' },
  { name: 'two models open (stats on the other), then tensorStats', before: ['openOther', 'statsOther'], timed: 'stats' },
  { name: 'tensorStats, close, reopen, then tensorStats', before: ['stats', 'reopen'], timed: 'stats' },
];

if (args[0] === '--child') {
  await child(JSON.parse(args[1]));
} else {
  await parent();
}

async function parent() {
  const [file, tensorArg] = positional;
  if (!file) {
    console.error('usage: node benches/npm-call-orders.mjs MODEL.gguf [TENSOR] [--runs 3] [--package DIR]');
    process.exit(2);
  }
  const runs = Number(flag('--runs', 3));
  const pkg = path.resolve(flag('--package', path.join(path.dirname(HERE), '..', 'pkg')));
  const { openGguf } = await import(pathToFileURL(path.join(pkg, 'index.js')).href);
  const model = await openGguf(file);
  const tensor = tensorArg ?? [...model.tensors].sort((x, y) => y.nElements - x.nElements)[0].name;
  const t = model.tensor(tensor);
  await model.close();
  const times = SEQUENCES.map(() => []);
  const cpus = SEQUENCES.map(() => []);
  // Interleaved: a change in the machine's load falls on every sequence alike.
  for (let r = 0; r < runs; r++) {
    SEQUENCES.forEach((seq, i) => {
      const spec = JSON.stringify({ pkg, file: path.resolve(file), tensor, seq });
      const out = spawnSync(process.execPath, [HERE, '--child', spec], { encoding: 'utf8' });
      if (out.status !== 0) throw new Error(`${seq.name}: exit ${out.status}\n${out.stderr}`);
      const [wall, cpu] = out.stdout.trim().split('\n').at(-1).split(' ').map(Number);
      times[i].push(wall);
      cpus[i].push(cpu);
    });
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const anchors = {};
  SEQUENCES.forEach((seq, i) => { if (seq.anchor) anchors[seq.timed] = [median(times[i]), median(cpus[i])]; });
  console.log(`${path.basename(file)} ${tensor} (${t.type}, ${t.nElements} values), median of ${runs}, each in a fresh process`);
  console.log('');
  console.log('| sequence (timed: the last call) | wall s | ÷ fresh | CPU s | ÷ fresh |');
  console.log('|---|---:|---:|---:|---:|');
  SEQUENCES.forEach((seq, i) => {
    const [wall, cpu] = [median(times[i]), median(cpus[i])];
    const [wall0, cpu0] = anchors[seq.timed];
    console.log(`| ${seq.name} | ${wall.toFixed(3)} | ${(wall / wall0).toFixed(2)}× | ${cpu.toFixed(3)} | ${(cpu / cpu0).toFixed(2)}× |`);
  });
}

async function child({ pkg, file, tensor, seq }) {
  const { openGguf } = await import(pathToFileURL(path.join(pkg, 'index.js')).href);
  let model = await openGguf(file);
  let other = null;
  const steps = {
    stats: () => model.tensorStats(tensor),
    read: () => model.readTensor(tensor),
    readWorkers: () => model.readTensor(tensor, { workers: 2 }),
    quantError: () => model.quantError(tensor, { types: ['Q4_K', 'Q8_0'], sampleRows: 256 }),
    openOther: async () => { other = await openGguf(file); },
    statsOther: () => other.tensorStats(tensor),
    reopen: async () => { await model.close(); model = await openGguf(file); },
  };
  // Results are dropped before the timed call, as an inspector drops a panel's array.
  for (const step of seq.before ?? []) await steps[step]();
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  await steps[seq.timed]();
  const seconds = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await other?.close();
  await model.close();
  console.log(`${seconds} ${(cpu.user + cpu.system) / 1e6}`);
}
