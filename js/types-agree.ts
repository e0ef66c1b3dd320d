// The hand-written index.d.ts against the JSDoc types of the modules that implement it: every
// export index.js re-exports, as the JSDoc types it, must be assignable to what index.d.ts
// declares (a class's instances, a function's whole signature, a constant's type), so a program
// typed by index.d.ts uses nothing the implementation does not have. Checked by tsc with the
// package (tsconfig.json, pkg-tests/types.test.mjs); never shipped, never run.
import type * as Declared from './index.js';
import type * as Open from './open.js';
import type * as Safetensors from './safetensors.js';
import type * as Model from './model.js';
import type * as Edit from './edit.js';
import type * as Sources from './sources.js';
import type * as Hub from './hub.js';
import type * as Compare from './compare.js';
import type * as Wasm from './wasm.js';

/** Compiles only when A is assignable to B. */
type Assignable<A extends B, B> = A;

/** The package's own model classes, which functions taking a model need (a structural look-alike
 * of index.d.ts's classes lacks their internals): such a function's check is that a call with
 * index.d.ts's other arguments and the package's models is accepted, and that what it returns is
 * what index.d.ts says. */
type Models = Model.GgufModel | Safetensors.SafetensorsModel;
type Takes<F extends (...args: any[]) => unknown, Args extends Parameters<F>> = Args;

export type Checks = [
  Assignable<Model.GgufModel, Declared.GgufModel>,
  Assignable<Safetensors.SafetensorsModel, Declared.SafetensorsModel>,
  Assignable<Edit.GgufEditor, Declared.GgufEditor>,
  Assignable<Sources.SourceError, Declared.SourceError>,
  Assignable<typeof Open.open, typeof Declared.open>,
  Assignable<typeof Open.openGguf, typeof Declared.openGguf>,
  Assignable<typeof Open.FIRST_READ_BYTES, typeof Declared.FIRST_READ_BYTES>,
  Assignable<typeof Safetensors.openSafetensors, typeof Declared.openSafetensors>,
  Assignable<typeof Safetensors.SAFETENSORS_FIRST_READ_BYTES, typeof Declared.SAFETENSORS_FIRST_READ_BYTES>,
  Assignable<typeof Model.CHUNK_BYTES, typeof Declared.CHUNK_BYTES>,
  Assignable<typeof Sources.toSource, typeof Declared.toSource>,
  Assignable<typeof Hub.listRepoGgufs, typeof Declared.listRepoGgufs>,
  Assignable<typeof Hub.inspectRepoGgufs, typeof Declared.inspectRepoGgufs>,
  Takes<typeof Hub.repoVerdict, [Model.GgufModel, Declared.RepoDevice?]>,
  Assignable<ReturnType<typeof Hub.repoVerdict>, ReturnType<typeof Declared.repoVerdict>>,
  Assignable<typeof Hub.closeRepoModels, typeof Declared.closeRepoModels>,
  Assignable<typeof Hub.scanRepo, typeof Declared.scanRepo>,
  Assignable<typeof Hub.parseRepo, typeof Declared.parseRepo>,
  Assignable<typeof Hub.checkHubEndpoint, typeof Declared.checkHubEndpoint>,
  Assignable<typeof Hub.HUB_ENDPOINT, typeof Declared.HUB_ENDPOINT>,
  Takes<typeof Compare.compareModels, [Models, Models]>,
  Assignable<ReturnType<typeof Compare.compareModels>, ReturnType<typeof Declared.compareModels>>,
  Takes<typeof Compare.compareReport, [Models, Models, Parameters<typeof Declared.compareReport>[2]]>,
  Assignable<ReturnType<typeof Compare.compareReport>, ReturnType<typeof Declared.compareReport>>,
  Takes<typeof Compare.compareTensor, [Models, Models, string, Parameters<typeof Declared.compareTensor>[3]]>,
  Assignable<ReturnType<typeof Compare.compareTensor>, ReturnType<typeof Declared.compareTensor>>,
  Assignable<typeof Compare.COMPARE_CHUNK_ELEMENTS, typeof Declared.COMPARE_CHUNK_ELEMENTS>,
  Assignable<typeof Wasm.setWasmSimd, typeof Declared.setWasmSimd>,
  Assignable<typeof Wasm.simdSupported, typeof Declared.simdSupported>,
];
