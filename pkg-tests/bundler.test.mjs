// The installed package through a bundler, as a web app would ship it: Vite 6 (tools/) builds a
// page that imports 'gguf-lens' by its package name, and the built output alone (no
// node_modules served) runs in headless Chromium: the wasm module is found and the oracle
// tensors read over Range requests come out bit for bit.
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
`;

let server;
let browser;
let dist;

before(async () => {
  // An app inside the temporary project, so 'gguf-lens' resolves to the installed tarball.
  const app = fs.mkdtempSync(path.join(process.cwd(), 'bundler-app-'));
  fs.writeFileSync(path.join(app, 'main.js'), MAIN);
  fs.writeFileSync(path.join(app, 'index.html'), '<!doctype html><title>app</title><script type="module" src="./main.js"></script>');
  const require = createRequire(path.join(REPO, 'tools/package.json'));
  // Vite's ESM entry (require.resolve would give its deprecated CJS build).
  const viteRoot = path.dirname(require.resolve('vite/package.json'));
  const { build } = await import(pathToFileURL(path.join(viteRoot, 'dist/node/index.js')).href);
  dist = path.join(app, 'dist');
  await build({ root: app, logLevel: 'silent', configFile: false, build: { outDir: dist, emptyOutDir: true } });
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

test('Vite: the built app carries the wasm module and reads tensors bit for bit', async () => {
  const assets = fs.readdirSync(path.join(dist, 'assets'));
  assert.ok(assets.some((f) => f.endsWith('.wasm')), `no .wasm among ${assets.join(', ')}`);
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
