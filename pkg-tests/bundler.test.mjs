// The installed package through bundlers, as a web app would ship it: webpack 5 and Vite
// (tools/) each bundle a page that imports 'gguf-lens' by its package name, with no bundler
// configuration for it, and the built output alone (no node_modules served) runs in headless
// Chromium: the wasm module is emitted as an asset and found, the oracle tensors read over Range
// requests come out bit for bit, and tensorStats / quantError with `workers: 2` start the
// package's own module workers (bundled from its `new Worker(new URL('./stats-worker.js',
// import.meta.url))`) and give this thread's numbers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { startServer } from './server.mjs';
import { REPO, DEQUANT, manifest, launchChromium } from './helpers.mjs';

const entries = manifest().filter((e) => ['Q4_K.gguf', 'IQ2_XXS.gguf', 'F16.gguf', 'MXFP4.gguf'].includes(e.file));

const MAIN = `
import { openGguf, kernelName } from 'gguf-lens';
window.check = async (list) => {
  const problems = [];
  for (const e of list) {
    const model = await openGguf('/fixtures/' + e.file);
    const got = new Uint8Array((await model.readTensor(e.tensor)).buffer);
    const want = new Uint8Array(await (await fetch('/fixtures/' + e.expected)).arrayBuffer());
    if (got.length !== want.length || got.some((b, i) => b !== want[i])) problems.push(e.file + ' ' + e.tensor);
    await model.close();
  }
  return { kernel: await kernelName(), problems };
};
window.checkWorkers = async (list) => {
  const results = [];
  for (const e of list) {
    // A relative URL: the workers, elsewhere in the bundle, are sent it made absolute.
    const model = await openGguf('fixtures/' + e.file);
    const one = await model.tensorStats(e.tensor, { workers: 0 });
    const pooled = await model.tensorStats(e.tensor, { workers: 2 });
    const q1 = await model.quantError(e.tensor, { types: ['Q8_0'] });
    const q2 = await model.quantError(e.tensor, { types: ['Q8_0'], workers: 2 });
    results.push({ name: e.file + ' ' + e.tensor, same: JSON.stringify(one) === JSON.stringify(pooled),
      sameQuant: JSON.stringify(q1) === JSON.stringify(q2), count: pooled.count });
    await model.close();
  }
  const bytes = new Uint8Array(await (await fetch('/fixtures/' + list[0].file)).arrayBuffer());
  const fromBuffer = await openGguf(bytes);
  let bufferError = null;
  try {
    await fromBuffer.tensorStats(list[0].tensor, { workers: 2 });
  } catch (err) {
    bufferError = err.name + ': ' + err.message;
  }
  await fromBuffer.close();
  return { results, bufferError, started: window.workersStarted };
};
`;

// Counts the Workers the bundle starts (the bundled code calls the global Worker).
const COUNT_WORKERS = `window.workersStarted = [];
const PageWorker = window.Worker;
window.Worker = class extends PageWorker {
  constructor(url, options) { super(url, options); window.workersStarted.push(String(url)); }
};`;

/** Bundles MAIN with webpack 5 into `dist`. */
async function buildWebpack(app, dist) {
  const webpack = createRequire(path.join(REPO, 'tools/package.json'))('webpack');
  const compiler = webpack({
    mode: 'production',
    context: app,
    entry: './main.js',
    target: 'web',
    output: { path: dist, filename: 'main.js', publicPath: '/' },
    performance: { hints: false },
  });
  const stats = await new Promise((resolve, reject) => compiler.run((err, result) => (err ? reject(err) : resolve(result))));
  assert.ok(!stats.hasErrors(), stats.toString('errors-only'));
  assert.ok(!stats.hasWarnings(), stats.toString('errors-warnings'));
  await new Promise((resolve) => compiler.close(resolve));
  fs.writeFileSync(path.join(dist, 'index.html'),
    `<!doctype html><title>app</title><script>${COUNT_WORKERS}</script><script src="/main.js"></script>`);
}

/** Bundles MAIN with Vite (its defaults: `vite build` of an index.html) into `dist`. */
async function buildVite(app, dist) {
  const vitePath = path.join(REPO, 'tools/node_modules/vite/dist/node/index.js');
  const { build } = await import(pathToFileURL(vitePath).href);
  fs.writeFileSync(path.join(app, 'index.html'),
    `<!doctype html><title>app</title><script>${COUNT_WORKERS}</script><script type="module" src="/main.js"></script>`);
  const warnings = [];
  await build({
    root: app,
    configFile: false,
    logLevel: 'silent',
    build: { outDir: dist, emptyOutDir: true, rollupOptions: { onwarn: (w) => warnings.push(String(w.message ?? w)) } },
  });
  return warnings;
}

const bundlers = {};
let browser;

before(async () => {
  // Apps inside the temporary project, so 'gguf-lens' resolves to the installed tarball.
  const files = {};
  for (const e of entries) {
    files[`/fixtures/${e.file}`] = path.join(DEQUANT, e.file);
    files[`/fixtures/${e.expected}`] = path.join(DEQUANT, e.expected);
  }
  for (const [name, buildWith] of [['webpack', buildWebpack], ['vite', buildVite]]) {
    const app = fs.mkdtempSync(path.join(process.cwd(), `bundler-${name}-`));
    fs.writeFileSync(path.join(app, 'main.js'), MAIN);
    const dist = path.join(app, 'dist');
    const warnings = await buildWith(app, dist);
    bundlers[name] = { dist, warnings: warnings ?? [], server: await startServer({ files, staticRoot: dist }) };
  }
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  for (const b of Object.values(bundlers)) await b.server?.close();
});

/** Every file the build emitted, relative to `dist`. */
function builtFiles(dist) {
  return fs.readdirSync(dist, { recursive: true }).map(String);
}

async function onPage(name, fn, arg) {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  await page.goto(bundlers[name].server.url('/index.html'));
  await page.waitForFunction(() => typeof window.check === 'function');
  const result = await page.evaluate(fn, arg);
  await page.close();
  assert.deepEqual(errors, []);
  return result;
}

for (const name of ['webpack', 'vite']) {
  test(`${name}: the bundled app carries the wasm module and reads tensors bit for bit`, async () => {
    const built = builtFiles(bundlers[name].dist);
    assert.ok(built.some((f) => f.endsWith('.wasm')), `no .wasm among ${built.join(', ')}`);
    assert.ok(!built.some((f) => f.startsWith('node_modules')));
    assert.deepEqual(bundlers[name].warnings, []);
    const result = await onPage(name, (list) => window.check(list), entries);
    assert.equal(result.kernel, 'simd128');
    assert.deepEqual(result.problems, []);
    assert.equal(entries.length, 8);
  });

  test(`${name}: tensorStats and quantError with workers: 2 run on the bundled module workers, with this thread's numbers`, async () => {
    const result = await onPage(name, (list) => window.checkWorkers(list), entries);
    assert.equal(result.results.length, entries.length);
    for (const r of result.results) {
      assert.ok(r.count > 0, r.name);
      assert.ok(r.same, `${r.name}: tensorStats on workers differs from this thread's`);
      assert.ok(r.sameQuant, `${r.name}: quantError on workers differs from this thread's`);
    }
    // Two workers, started once for every call of the page, from a script the build emitted.
    assert.equal(result.started.length, 2, `workers started: ${result.started.join(', ')}`);
    const built = builtFiles(bundlers[name].dist);
    for (const url of result.started) {
      const file = new URL(url).pathname.slice(1);
      assert.ok(built.includes(file), `the worker script ${file} is not among the built files`);
    }
    // A model from a buffer: workers cannot reopen it, and the call says so.
    assert.match(result.bufferError ?? '', /^TypeError: .*needs a model opened from a URL, path, File or Blob/);
  });
}

test('every module the package imports for its side effects alone is listed in sideEffects', () => {
  // A bundler drops `import './x.js'` of a module the package says has no side effects.
  const dir = path.join(process.cwd(), 'node_modules/gguf-lens');
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const bare = new Set();
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.js'))) {
    const text = fs.readFileSync(path.join(dir, file), 'utf8');
    for (const m of text.matchAll(/^import\s+['"](\.\/[^'"]+)['"];?\s*$/gm)) bare.add(m[1]);
  }
  assert.ok(bare.size >= 2, `side-effect imports found: ${[...bare].join(', ')}`);
  for (const m of bare) assert.ok(pkg.sideEffects.includes(m), `${m} is imported for its side effects but package.json sideEffects does not list it`);
});
