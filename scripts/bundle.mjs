// Writes the package's single-file browser builds into the package directory given (pkg/):
// `index.bundle.js` (all of index.js) and `preview.bundle.js` (the <gguf-preview> element with
// the library inside), minified ESM made by rolldown (tools/). For pages without a bundler: one
// request instead of a chain of ~20 modules, 2-4 round trips apart on a cold page. They sit
// beside index.js, so `new URL('./wasm/…', import.meta.url)` and the worker URLs inside still
// find the package's own files. External: `node:*` (reached only in Node) and the full module's
// glue (./wasm/gguf_lens.js, a dynamic import: it loads on first use, as from index.js).
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tools = createRequire(path.join(repo, 'tools/package.json'));
const { build } = await import(tools.resolve('rolldown'));
const dir = path.resolve(process.argv[2] ?? 'pkg');
for (const entry of ['index', 'preview']) {
  await build({
    input: path.join(dir, `${entry}.js`),
    platform: 'browser',
    logLevel: 'warn',
    external: [/^node:/, /\/wasm\/gguf_lens\.js$/],
    output: { file: path.join(dir, `${entry}.bundle.js`), format: 'esm', minify: true, codeSplitting: false },
  });
}
