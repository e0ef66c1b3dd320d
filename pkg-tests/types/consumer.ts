// A typed consumer of the package as users install it: compiled with `tsc --noEmit --strict`
// by types.test.mjs against the installed tarball's declarations (generated from the JSDoc,
// resolved through package.json's "exports"). Every documented entry point is used with the
// types a user would write, and every export is named (the end of the file).
import {
  open,
  openGguf,
  openSafetensors,
  compareModels,
  compareReport,
  compareTensor,
  kernelName,
  SourceError,
  Model,
  type GgufModel,
  type SafetensorsModel,
  type Summary,
  type TensorInfo,
  type TensorStats,
  type ModelDiff,
  type ValueMetrics,
  type MetadataEntry,
  type ArrayEntry,
  type GgufEditor,
  type EditChange,
  type HashReport,
  type LintReport,
  type MemoryPlan,
  type FitResult,
  type KvCachePlan,
  type ChatMessage,
  type ChatTemplateOptions,
  listRepoGgufs,
  inspectRepoGgufs,
  repoVerdict,
  closeRepoModels,
  type RepoGgufRow,
  type RepoVerdict,
} from 'gguf-lens';
import * as lens from 'gguf-lens';
import { GgufPreview, quantLabel } from 'gguf-lens/preview';

export async function inspect(url: string, file: Blob): Promise<void> {
  const model: GgufModel = await openGguf(url, {
    headers: { Authorization: 'Bearer x' },
    onProgress: ({ loaded, total }) => console.log(loaded, total ?? 'unknown'),
    retries: 2,
  });
  const summary: Summary = model.summary();
  const arch: string | null = summary.architecture;
  const bpw: number = summary.bitsPerWeight;
  const mix: string[] = summary.quantMix.map((q) => `${q.type} ${(q.share * 100).toFixed(1)}%`);
  console.log(arch, bpw, mix, model.version, model.endian, model.alignment);

  const name = model.get('general.name');
  if (typeof name === 'string') console.log(name.toUpperCase());
  const tokens = model.get('tokenizer.ggml.tokens');
  if (tokens !== undefined && typeof tokens === 'object') {
    const entry: ArrayEntry = tokens;
    const first: unknown[] = entry.items(0, 10);
    const { bytes, ends } = entry.packed();
    console.log(first.length, bytes.byteLength, ends?.length ?? 0);
  }
  const keys: string[] = model.metadata.map((m: MetadataEntry) => m.key);
  const eos: number | undefined = model.specialTokens().find((t) => t.name === 'eos')?.id;
  console.log(eos);

  const tensor: TensorInfo = model.tensor(model.tensors[0].name);
  const rows: Float32Array = await model.readTensor(tensor.name, { rows: [0, 1] });
  const shared: Float32Array = await model.readTensor(tensor.name, { workers: 2 });
  const raw: Uint8Array = await model.readTensorBytes(tensor.name);
  const stats: TensorStats = await model.tensorStats(tensor.name, { bins: 16 });
  const hist: number = stats.histogram.counts.reduce((a, b) => a + b, 0);
  console.log(keys.length, rows.length, shared.length, raw.length, hist, stats.min ?? NaN, model.ioStats.requests);

  const local = await openGguf(file);
  const diff: ModelDiff = await compareModels(model, local);
  const metrics: ValueMetrics = await compareTensor(model, local, tensor.name);
  const md: string = await compareReport(model, local, { format: 'markdown', paths: ['a.gguf', 'b.gguf'], values: new Map([[tensor.name, metrics]]) });
  console.log(diff.tensors.matching.length, metrics.rmse, md.length);
  await Promise.all([model.close(), local.close()]);
  console.log(await kernelName());
}

export async function checkpoint(url: string): Promise<void> {
  const st: SafetensorsModel = await openSafetensors(url);
  for (const layer of st.gptqLayers) console.log(layer.name, layer.bits, layer.groupSize);
  const stKeys: string[] = st.metadata.map((m: MetadataEntry) => m.key);
  const format: string | undefined = st.get('format');
  const types: string[] = st.tensors.map((t) => t.type);
  console.log(stKeys.length, format, types.length, st.tensors[0]?.typeId);
  const any = await open(url);
  if (any.format === 'safetensors') console.log(any.quantConfig?.bits);
  else console.log(any.summary().fileTypeLabel);
  try {
    await st.readTensor('model.norm.weight', { v1Zeros: 'llama.cpp' });
  } catch (err) {
    if (err instanceof SourceError) console.log(err.retryable);
  }
}

// One class for both formats: the aliases are values of it, and types of it per format.
export async function oneClass(url: string, other: unknown): Promise<void> {
  const any: Model = await open(url);
  const g: Model<'gguf'> = await openGguf(url);
  const s: lens.Model<'safetensors'> = await openSafetensors(url);
  const alias: typeof Model = lens.GgufModel;
  const alias2: typeof Model = lens.SafetensorsModel;
  if (other instanceof lens.SafetensorsModel) console.log(other.format, other.tensors.length);
  const version: number = g.version;
  const none: null = s.version;
  const layers: number = s.gptqLayers.length + g.gptqLayers.length;
  console.log(any.format, version, none, layers, g.quantConfig?.bits, alias === alias2);
  console.log(await compareModels(g, s), await compareTensor(s, any, 'x'));
}

export async function editAndHash(model: GgufModel): Promise<[Blob, string]> {
  const editor: GgufEditor = (await model.edit()).set('general.name', 'x').set('general.alignment', 64, 'uint32').remove('general.url');
  const changes: EditChange[] = editor.changes();
  console.log(changes[0]?.op, editor.plan().pieces.length, editor.plan().len);
  const stream: ReadableStream<Uint8Array> = editor.toStream({ onProgress: (p) => console.log(p.loaded) });
  console.log(stream.locked);
  const report: HashReport = await model.hash({ sha256: true, uuid: true, perTensor: false });
  const lint: LintReport = await model.lint();
  for (const f of lint.findings) if (f.severity === 'error') console.log(f.code, f.tensor ?? f.key ?? f.offset);
  return [await editor.toBlob(), report.model.uuid ?? report.lines];
}

export async function tokensAndChat(model: GgufModel): Promise<[Int32Array, string, string, Uint8Array]> {
  const ids: Int32Array = await model.tokenize('Hello <|im_end|>', { addSpecial: false, parseSpecial: true });
  const text: string = await model.detokenize(ids, { special: false });
  const bytes: Uint8Array = await model.detokenize([1, 2, 3], { bytes: true });
  const messages: ChatMessage[] = [{ role: 'user', content: 'Hi' }];
  const options: ChatTemplateOptions = { addGenerationPrompt: true, variables: { enable_thinking: false }, tools: null };
  const rendered: string = await model.renderChatTemplate(messages, options);
  console.log((await model.tokenPiece(ids[0] ?? 0)).length, text);
  return [ids, text, rendered, bytes];
}

export function embed(file: File, summary: Summary): string {
  const el: GgufPreview = document.createElement('gguf-preview');
  el.file = file;
  el.setAttribute('theme', 'dark');
  el.addEventListener('load', () => console.log(el.model?.summary().architecture));
  document.body.append(el);
  return quantLabel(summary);
}

export function planMemory(model: GgufModel): [number, string, number | null] {
  const plan: MemoryPlan = model.planMemory({ ctx: 8192, cacheTypeK: 'q8_0', cacheTypeV: 'q8_0', flashAttn: true, gpuMem: 8 * 2 ** 30 });
  const swa: number = plan.kvCache.swaBytes + plan.kvCache.caches.filter((c: KvCachePlan) => c.swa).length;
  return [plan.totalBytes + swa, plan.command, plan.maxCtx];
}

export function fitGpus(model: GgufModel): [string, number, string[]] {
  const f: FitResult = model.fit({ gpus: [24 * 2 ** 30, 12 * 2 ** 30], margin: [2 ** 30, 2 ** 29], ctx: 8192, gpuNames: ['CUDA0', 'CUDA1'] });
  return [f.flags, f.gpus[0].partialLayers + f.cpu.kvCacheBytes, f.overrides.map((o) => `${o.pattern}=${o.buffer}`)];
}

export async function hubRepo(token: string, signal: AbortSignal): Promise<string[]> {
  const listing = await listRepoGgufs('owner/name', { revision: 'main', headers: { Authorization: `Bearer ${token}` }, signal });
  const sizes: (number | null)[] = listing.models.map((m) => m.size);
  const rows: RepoGgufRow[] = await inspectRepoGgufs(listing, {
    concurrency: 3, device: { gpuMem: 24 * 2 ** 30, ctx: 8192 }, signal,
    onProgress: ({ done, total }) => console.log(done, total, sizes.length),
  });
  const out = rows.map((r) => {
    const v: RepoVerdict | null = r.model ? repoVerdict(r.model, { gpuMem: null, ctx: 4096 }) : r.verdict;
    if (!v || 'error' in v) return r.error ?? v?.error ?? '';
    return `${r.summary?.fileTypeLabel} ${v.fits ? 'fits' : `-ngl ${v.ngl}/${v.nglFull}`} ${v.maxCtx ?? ''}`;
  });
  await closeRepoModels(rows);
  return out;
}

// Every export the package documents, by name (a value's type, a type's use): one lost from the
// declarations fails this file.
export const values = [
  lens.open, lens.openGguf, lens.openSafetensors, lens.toSource, lens.kernelName, lens.simdSupported, lens.setWasmSimd,
  lens.Model, lens.GgufModel, lens.SafetensorsModel, lens.GgufEditor, lens.SourceError,
  lens.listRepoGgufs, lens.inspectRepoGgufs, lens.repoVerdict, lens.closeRepoModels, lens.scanRepo, lens.parseRepo,
  lens.checkHubEndpoint, lens.compareModels, lens.compareReport, lens.compareTensor,
] as const;
export const constants: number[] = [lens.FIRST_READ_BYTES, lens.SAFETENSORS_FIRST_READ_BYTES, lens.CHUNK_BYTES, lens.COMPARE_CHUNK_ELEMENTS];
export const endpoint: string = lens.HUB_ENDPOINT;
export type Types = [
  lens.GgufInput, lens.Progress, lens.OpenOptions, lens.MetadataValue, lens.NestedArray, lens.ScalarEntry,
  lens.ArrayEntry, lens.MetadataEntry, lens.TensorInfo, lens.QuantShare, lens.Summary, lens.SpecialToken,
  lens.ReadOptions, lens.TensorReadOptions, lens.TensorStats, lens.StatsOptions, lens.LintFinding, lens.LintReport,
  lens.KvCacheType, lens.MemoryPlanOptions, lens.KvCachePlan, lens.MemoryPlan, lens.FitOptions, lens.FitDevice,
  lens.FitResult, lens.TokenizeOptions, lens.ChatMessage, lens.ChatTemplateOptions, lens.GgufTypeName, lens.EditValue,
  lens.EditChange, lens.EditPlan, lens.HashOptions, lens.Digests, lens.HashReport, lens.QuantErrorOptions,
  lens.QuantErrorResult, lens.QuantErrorReport, lens.SummaryFieldDiff, lens.KeyChange, lens.ModelDiff, lens.ValueMetrics,
  lens.SafetensorsOptions, lens.SafetensorsTensorInfo, lens.QuantConfig, lens.GptqLayer, lens.MlxLayer, lens.Fp8Layer,
  lens.CtLayer, lens.Mxfp4Layer, lens.BnbLayer, lens.BnbConfig, lens.CtConfig, lens.Fp8Config, lens.MlxQuantization, lens.DtypeShare,
  lens.SafetensorsSummary, lens.HubOptions, lens.RepoGgufFile, lens.RepoGguf, lens.RepoListing, lens.RepoVerdict,
  lens.RepoDevice, lens.RepoGgufRow, lens.InspectOptions,
  lens.Model, lens.GgufModel, lens.SafetensorsModel, lens.GgufEditor, lens.SourceError,
];

// What the declarations say beyond names: read-only fields, literal types, the overload-like
// detokenize.
export async function shapes(model: GgufModel, st: SafetensorsModel): Promise<void> {
  // @ts-expect-error read-only
  model.tensors = [];
  // @ts-expect-error read-only
  st.gptqLayers = [];
  const format: 'gguf' = model.format;
  const stFormat: 'safetensors' = st.summary().format;
  // @ts-expect-error a checkpoint has no GGUF version (null)
  const stVersion: number = st.version;
  console.log(stVersion);
  // @ts-expect-error bytes: true gives bytes, not a string
  const wrong: string = await model.detokenize([1], { bytes: true });
  const preview = new GgufPreview();
  // @ts-expect-error read-only
  preview.model = null;
  preview.source = 'https://example.invalid/m.gguf';
  console.log(format, stFormat, wrong);
}
