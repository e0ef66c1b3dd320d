// index.d.ts against a typed consumer: `tsc --noEmit --strict` over pkg-tests/types/consumer.ts
// in the project the tarball is installed in (types resolved through the package's "exports"),
// and a deliberate misuse that tsc must reject. Then the package's own modules: `tsc --checkJs
// --strict` over pkg/ (what was packed, with the wasm glue's types: scripts/build-npm.sh), whose
// types-agree.ts holds the JSDoc types to index.d.ts; and that check failing on a declaration
// the modules do not implement.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const repo = process.env.GGUF_LENS_REPO;
const tsc = join(repo ?? '.', 'tools/node_modules/typescript/bin/tsc');

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

/** `tsc -p dir` over a copy of pkg/ (with `edit` applied to its index.d.ts first). */
function checkPackage(edit = (text) => text) {
  // Beside pkg/ (as tools/ is for the tsconfig's typeRoots), removed by the test.
  const dir = mkdtempSync(join(repo, 'target', 'types-pkg-'));
  cpSync(join(repo, 'pkg'), dir, { recursive: true });
  const dts = join(dir, 'index.d.ts');
  writeFileSync(dts, edit(readFileSync(dts, 'utf8')));
  const tsconfig = JSON.parse(readFileSync(join(dir, 'tsconfig.json'), 'utf8').replace(/^\s*\/\/.*$/gm, ''));
  tsconfig.compilerOptions.typeRoots = [join(repo, 'tools/node_modules/@types')];
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
  try {
    return spawnSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the package\'s modules pass tsc --checkJs --strict, and agree with index.d.ts', () => {
  assert.ok(repo, 'GGUF_LENS_REPO is set by scripts/test-npm.sh');
  const result = checkPackage();
  assert.equal(result.status, 0, result.stdout + result.stderr);
  assert.doesNotMatch(result.stdout, /error TS/);
});

test('the agreement check fails on a declaration the modules do not implement', () => {
  const result = checkPackage((text) => text.replace('  specialTokens(): SpecialToken[];',
    '  specialTokens(): SpecialToken[];\n  notImplemented(): void;'));
  assert.notEqual(result.status, 0);
  assert.match(result.stdout, /types-agree\.ts.*error TS2344/);
});
