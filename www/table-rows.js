// The rows the viewer's metadata and tensor tables list, from a package model (GgufModel or
// SafetensorsModel, js/index.d.ts) — viewer logic, not a renaming: tensor infos are the package's
// as they are (`type` for every format); the table adds a checkpoint's GPTQ layers as rows.

/** Metadata entries: GGUF's as the package gives them (arrays: ArrayEntry with items/findText);
 * a safetensors file's __metadata__ as string scalars. */
export function metadataEntries(f) {
  if (f.format === 'gguf') return f.metadata;
  return Object.keys(f.metadata).map((key) => ({ key, type: 'string', value: f.metadata[key] }));
}

/** Tensor infos for the table. A checkpoint's GPTQ layers are listed before their qweight as
 * {name: prefix, type: 'GPTQ n-bit', gptq: true, shape [out, in]} (read dequantized); stored
 * tensors as the package gives them, `part: true` when they belong to a GPTQ layer. */
export function tensorRows(f) {
  if (f.format === 'gguf') return f.tensors;
  const layerOf = new Map(f.gptqLayers.map((l) => [l.parts.qweight, l]));
  const parts = new Set(f.gptqLayers.flatMap((l) => Object.values(l.parts)));
  const rows = [];
  for (const t of f.tensors) {
    const l = layerOf.get(t.name);
    if (l) {
      rows.push({
        name: l.name, type: `GPTQ ${l.bits}-bit`, typeId: -1, gptq: true, shape: [l.outFeatures, l.inFeatures],
        nElements: l.nElements, relativeOffset: t.relativeOffset, nBytes: l.nBytes,
        bits: l.bits, groupSize: l.groupSize, actOrder: l.actOrder, hasGIdx: l.hasGIdx,
      });
    }
    rows.push(parts.has(t.name) ? { ...t, part: true } : t);
  }
  return rows;
}
