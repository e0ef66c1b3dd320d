// The package's declarations, as users install them: generated from the modules' JSDoc by
// scripts/build-npm.sh (tsc --declaration over the modules, then scripts/dts-docs.mjs). Checks
// that a typed consumer (pkg-tests/types/consumer.ts, naming every export) compiles with
// `tsc --noEmit --strict` against the installed tarball (types resolved through package.json's
// "exports"); that tsc rejects misuse and the internals the declarations leave out; that the
// installed declarations are what the repo's js/ generates now; and that a JSDoc type error in
// a module fails that generation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const repo = process.env.GGUF_LENS_REPO;
const tsc = join(repo ?? '.', 'tools/node_modules/typescript/bin/tsc');
const installed = join(process.cwd(), 'node_modules/gguf-lens');

function compile(file) {
  // Inside the project (cwd) so that `gguf-lens` resolves to the installed tarball.
  const dir = mkdtempSync(join(process.cwd(), 'types-'));
  copyFileSync(join(repo, 'pkg-tests/types', file), join(dir, file));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      strict: true, noEmit: true, target: 'es2022', module: 'nodenext',
      moduleResolution: 'nodenext', lib: ['es2022', 'dom'], types: [], skipLibCheck: false,
    },
    files: [file],
  }));
  return spawnSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8' });
}

test('a typed consumer compiles with tsc --noEmit --strict against the installed package', () => {
  assert.ok(repo, 'GGUF_LENS_REPO is set by scripts/test-npm.sh');
  const result = compile('consumer.ts');
  assert.equal(result.status, 0, result.stdout + result.stderr);
});

test('tsc rejects a consumer that misuses the types (the check can fail)', () => {
  const result = compile('misuse.ts');
  assert.notEqual(result.status, 0);
  assert.match(result.stdout, /misuse\.ts.*error TS2322/);
});

test('the declarations leave the models\' internals out (@internal)', () => {
  const result = compile('internals.ts');
  assert.notEqual(result.status, 0);
  const missing = [...result.stdout.matchAll(/internals\.ts.*error TS2339: Property '(\w+)' does not exist/g)].map((m) => m[1]);
  assert.deepEqual(missing.sort(), ['_checkpoint', '_statsInputId', '_tensorIndex', 'header', 'source', 'wasm'], result.stdout);
});

test('the installed declarations carry each typedef\'s description on its type', () => {
  const types = readFileSync(join(installed, 'types.d.ts'), 'utf8');
  assert.match(types, /\/\*\*\n \* Anything openGguf reads bytes from[^]*?\*\/\nexport type GgufInput =/);
  assert.match(types, /\/\*\* Statistics as `gguf-lens stats` computes them[^]*?\*\/\nexport type TensorStats =/);
  // No @typedef block is left for a declaration after it to show as its own.
  assert.doesNotMatch(types, /@typedef/);
});

/** Regenerates the declarations from `js` (edited by `edit` first) in a temporary copy. */
function generate(edit = () => {}) {
  // Beside pkg/ (as tools/ is for the tsconfig's typeRoots), removed by the caller.
  const dir = mkdtempSync(join(repo, 'target', 'types-gen-'));
  for (const f of readdirSync(join(repo, 'js'))) {
    if (f.endsWith('.js') || f.endsWith('.d.ts') || f === 'tsconfig.json' || f === 'package.json') copyFileSync(join(repo, 'js', f), join(dir, f));
  }
  // The wasm-bindgen glue's types (scripts/build-npm.sh puts them in pkg/wasm/).
  cpSync(join(installed, 'wasm'), join(dir, 'wasm'), { recursive: true, filter: (p) => !/\.(wasm|br|gz)$/.test(p) });
  edit(dir);
  const tsconfig = JSON.parse(readFileSync(join(dir, 'tsconfig.json'), 'utf8').replace(/^\s*\/\/.*$/gm, ''));
  tsconfig.compilerOptions.typeRoots = [join(repo, 'tools/node_modules/@types')];
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
  const result = spawnSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8' });
  const generated = readdirSync(join(repo, 'js')).filter((f) => f.endsWith('.js')).map((f) => f.replace(/\.js$/, '.d.ts'));
  if (result.status === 0) {
    const docs = spawnSync(process.execPath, [join(repo, 'scripts/dts-docs.mjs'), ...generated], { cwd: dir, encoding: 'utf8' });
    assert.equal(docs.status, 0, docs.stderr);
  }
  return { dir, result, generated };
}

test('the installed declarations are what js/\'s JSDoc generates (tsc --checkJs --strict clean)', () => {
  assert.ok(repo, 'GGUF_LENS_REPO is set by scripts/test-npm.sh');
  const { dir, result, generated } = generate();
  try {
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.doesNotMatch(result.stdout, /error TS/);
    for (const f of [...generated, 'internal.d.ts', 'bindings.d.ts', 'preview-global.d.ts']) {
      assert.equal(readFileSync(join(installed, f), 'utf8'), readFileSync(join(dir, f), 'utf8'), `${f} differs from what js/ generates`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a JSDoc type error in a module fails the generation', () => {
  const { dir, result } = generate((d) => {
    const file = join(d, 'model.js');
    writeFileSync(file, `${readFileSync(file, 'utf8')}\n/** @type {number} */\nexport const WRONG = 'not a number';\n`);
  });
  rmSync(dir, { recursive: true, force: true });
  assert.notEqual(result.status, 0);
  assert.match(result.stdout, /model\.js.*error TS2322/);
});
