// Compares the package's declarations (a built pkg/) with a hand-written index.d.ts and
// preview.d.ts of an earlier revision: every name the old ones export must still be exported,
// each type the same both ways (assignable each way), each class and function at least what it
// was (the new one assignable to the old), and no class member added or lost. The old
// GgufModel and SafetensorsModel are one class now (`Model`, both names its aliases): each is
// checked against it as a class (at least what it was, nothing lost, nothing added but the
// other's members), and every other type and function with the old models standing for the
// new ones (what code gets from the open functions). Prints what tsc finds; nothing on success.
//   node scripts/dts-surface.mjs REV   (e.g. 4ed2b80, the last revision with js/index.d.ts;
//                                       after scripts/build-npm.sh)
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const rev = process.argv[2];
if (!rev) throw new Error('usage: node scripts/dts-surface.mjs REV');
const show = (path) => execFileSync('git', ['-C', repo, 'show', `${rev}:${path}`], { encoding: 'utf8' });
const old = show('js/index.d.ts');

const dir = mkdtempSync(join(repo, 'target', 'dts-surface-'));
try {
  cpSync(join(repo, 'pkg'), dir, { recursive: true, filter: (p) => !/\.(wasm|br|gz)$/.test(p) });
  mkdirSync(join(dir, 'old'));
  // The old detokenize overloads as the one generic signature that replaced them (checked by
  // the calls below), so that the models compare on everything else.
  const overloads = /  detokenize\(ids: ArrayLike<number>, options\?: \{ special\?: boolean; bytes\?: false \}\): Promise<string>;\n  detokenize\(ids: ArrayLike<number>, options: \{ special\?: boolean; bytes: true \}\): Promise<Uint8Array>;/;
  if (!overloads.test(old)) throw new Error('dts-surface: the old detokenize overloads are not as expected');
  writeFileSync(join(dir, 'old/index.d.ts'), old.replace(overloads,
    '  detokenize<B extends boolean = false>(ids: ArrayLike<number>, options?: { special?: boolean; bytes?: B }): Promise<B extends true ? Uint8Array : string>;'));
  // The old declarations with the model classes as the new ones, for the types and functions
  // that name them.
  const models = ['GgufModel', 'SafetensorsModel'];
  let withNewModels = `import type * as New from '../index.js';\n${old}`;
  for (const c of models) {
    const body = new RegExp(`^export declare class ${c} \\{[^]*?\\n\\}\\n`, 'm');
    if (!body.test(withNewModels)) throw new Error(`dts-surface: the old ${c} declaration is not as expected`);
    withNewModels = withNewModels.replace(body, `export type ${c} = New.${c};\nexport declare const ${c}: typeof New.${c};\n`);
  }
  writeFileSync(join(dir, 'old/models.d.ts'), withNewModels);
  writeFileSync(join(dir, 'old/preview.d.ts'), show('js/preview.d.ts').replace(/declare global \{[^]*$/, ''));
  const names = (re) => [...old.matchAll(re)].map((m) => m[1]);
  const types = names(/^export (?:interface|type) (\w+)/gm);
  const classes = names(/^export declare class (\w+)/gm);
  const values = [...new Set(names(/^export declare (?:function|const) (\w+)/gm))];
  const lines = [
    "import type * as Old from './old/index.js';",
    "import type * as OldM from './old/models.js';",
    "import type * as New from './index.js';",
    "import type * as OldP from './old/preview.js';",
    "import type * as NewP from './preview.js';",
    'type Assignable<A extends B, B> = A;',
    'type Never<T extends never> = T;',
    ...types.map((t) => `export type T_${t} = [Assignable<New.${t}, OldM.${t}>, Assignable<OldM.${t}, New.${t}>];`),
    ...classes.map((c) => (models.includes(c)
      ? `export type C_${c} = [Assignable<New.${c}, Old.${c}>, Never<Exclude<keyof New.${c}, ${models.map((m) => `keyof Old.${m}`).join(' | ')}>>, Never<Exclude<keyof Old.${c}, keyof New.${c}>>];`
      : `export type C_${c} = [Assignable<New.${c}, OldM.${c}>, Never<Exclude<keyof New.${c}, keyof OldM.${c}>>, Never<Exclude<keyof OldM.${c}, keyof New.${c}>>];`)),
    'export type C_GgufPreview = [Assignable<NewP.GgufPreview, OldP.GgufPreview>, Never<Exclude<keyof OldP.GgufPreview, keyof NewP.GgufPreview>>];',
    ...values.map((v) => `export type V_${v} = Assignable<typeof New.${v}, typeof OldM.${v}>;`),
    ...['compactCount', 'formatBytes', 'quantLabel'].map((v) => `export type P_${v} = Assignable<typeof NewP.${v}, typeof OldP.${v}>;`),
    "export type Names = Never<Exclude<keyof typeof import('./old/index.js'), keyof typeof import('./index.js')>>;",
    'declare const m: New.GgufModel;',
    'export async function detokenize(): Promise<[string, string, Uint8Array, string]> {',
    '  return [await m.detokenize([1]), await m.detokenize([1], { special: false }), await m.detokenize([1], { bytes: true }), await m.detokenize([1], { bytes: false })];',
    '}',
  ];
  writeFileSync(join(dir, 'surface.ts'), `${lines.join('\n')}\n`);
  writeFileSync(join(dir, 'tsconfig.surface.json'), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', lib: ['es2022', 'dom'], types: [], skipLibCheck: false },
    files: ['surface.ts'],
  }));
  const tsc = spawnSync(process.execPath, [join(repo, 'tools/node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.surface.json')], { encoding: 'utf8' });
  process.stdout.write(tsc.stdout.replaceAll(/\S*dts-surface-\w+/g, 'pkg'));
  console.error(`dts-surface: ${types.length} types, ${classes.length + 1} classes, ${values.length + 3} functions and constants against ${rev}: ${tsc.status === 0 ? 'nothing lost' : 'differences above'}`);
  process.exitCode = tsc.status;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
