// The Summary tab's exports: the model as JSON and as Markdown (the state's model, by value).
import { mdEscape } from './export-util.js';
import { FTYPE_SHORT, ftypeLabel, pct, valueText, tokenizerModel } from './format.js';

export function exportObject(state) {
  const { model } = state;
  return {
    source: state.sourceLabel,
    file: model.info,
    summary: { ...model.summary, fileTypeName: FTYPE_SHORT[model.summary.fileType] },
    metadata: model.metadata.map((m) => (m.type === 'array' ? { key: m.key, type: 'array', itemType: m.itemType, length: m.length } : { key: m.key, type: m.type, value: typeof m.value === 'bigint' ? m.value.toString() : m.value })),
    tensors: model.tensors,
  };
}
export function exportMarkdown(state) {
  const { model } = state;
  const s = model.summary;
  const lines = [`# ${mdEscape(s.name || 'model')}`, '', '| field | value |', '|---|---|'];
  const rows = [['architecture', s.architecture], ['parameters', s.parameterCount], ['file type', `${FTYPE_SHORT[s.fileType] ?? s.fileType} (${ftypeLabel(s.fileType)})`], ['file size', model.info.byteLength], ['bits per weight', s.bitsPerWeight?.toFixed(3)], ['context length', s.contextLength], ['embedding length', s.embeddingSize], ['layers', s.layers], ['heads', s.heads], ['kv heads', s.kvHeads], ['vocabulary', s.vocabSize], ['tensors', model.tensors.length], ['tokenizer', tokenizerModel(model)]];
  for (const [k, v] of rows) lines.push(`| ${k} | ${mdEscape(v ?? '—')} |`);
  lines.push('', '## Quant mix', '', '| type | tensors | elements | bytes | share |', '|---|---:|---:|---:|---:|');
  for (const q of s.quantMix) lines.push(`| ${q.type} | ${q.tensors} | ${q.elements} | ${q.bytes} | ${pct(q.share)} |`);
  lines.push('', '## Tensors', '', '| name | type | shape | elements | bytes |', '|---|---|---|---:|---:|');
  for (const t of model.tensors) lines.push(`| ${mdEscape(t.name)} | ${t.type} | ${t.shape.join('×')} | ${t.nElements} | ${t.nBytes} |`);
  lines.push('', '## Metadata', '', '| key | type | value |', '|---|---|---|');
  for (const m of model.metadata) lines.push(`| ${mdEscape(m.key)} | ${m.type === 'array' ? `array<${m.itemType}>` : m.type} | ${mdEscape(m.type === 'array' ? `${m.length} items` : valueText(m).slice(0, 200))} |`);
  return lines.join('\n') + '\n';
}
