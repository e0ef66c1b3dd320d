// index.d.ts against a typed consumer: `tsc --noEmit --strict` over pkg-tests/types/consumer.ts
// in the project the tarball is installed in (types resolved through the package's "exports"),
// and a deliberate misuse that tsc must reject.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
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
