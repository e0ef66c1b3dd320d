// The installed package through a bundler, as a web app would ship it: webpack 5 (tools/)
// bundles a page that imports 'gguf-lens' by its package name, and the built output alone (no
// node_modules served) runs in headless Chromium: the wasm module is emitted as an asset and
// found, and the oracle tensors read over Range requests come out bit for bit.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
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
`;

let server;
let browser;
let dist;

before(async () => {
  // An app inside the temporary project, so 'gguf-lens' resolves to the installed tarball.
  const app = fs.mkdtempSync(path.join(process.cwd(), 'bundler-app-'));
  fs.writeFileSync(path.join(app, 'main.js'), MAIN);
  dist = path.join(app, 'dist');
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
  fs.writeFileSync(path.join(dist, 'index.html'), '<!doctype html><title>app</title><script src="/main.js"></script>');
  const files = {};
  for (const e of entries) {
    files[`/fixtures/${e.file}`] = path.join(DEQUANT, e.file);
    files[`/fixtures/${e.expected}`] = path.join(DEQUANT, e.expected);
  }
  server = await startServer({ files, staticRoot: dist });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test('webpack: the bundled app carries the wasm module and reads tensors bit for bit', async () => {
  const built = fs.readdirSync(dist);
  assert.ok(built.some((f) => f.endsWith('.wasm')), `no .wasm among ${built.join(', ')}`);
  assert.ok(!fs.existsSync(path.join(dist, 'node_modules')));
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  await page.goto(server.url('/index.html'));
  await page.waitForFunction(() => typeof window.check === 'function');
  const result = await page.evaluate((list) => window.check(list), entries);
  assert.deepEqual(errors, []);
  assert.equal(result.kernel, 'simd128');
  assert.deepEqual(result.problems, []);
  assert.equal(entries.length, 8);
  await page.close();
});

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
