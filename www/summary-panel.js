// The Summary tab: the model's summary fields, the quant-mix chart and the layer × role heatmap.
// ctx: {state (app.js's: .model, .sourceLabel), inspect(name)}.
import { $, $$, el, svg, clear } from './dom.js';
import { fileTypeText, fmtInt, fmtBytes, fmtCount, fmtBpw, pct, typeColor, textOn, tokenizerModel, blockOf } from './format.js';

export function setupSummary(ctx) {
  const { state } = ctx;
  function setField(name, text, value) {
    for (const e of $$(`[data-field="${name}"]`)) {
      e.textContent = text === undefined || text === null || text === '' ? '—' : String(text);
      e.title = e.textContent;
      if (value !== undefined && value !== null) e.dataset.value = String(value); else delete e.dataset.value;
    }
  }

  function renderSummary() {
    const s = state.model.summary, info = state.model.info;
    setField('name', s.name || '(unnamed model)');
    $('#model-source').textContent = state.sourceLabel;
    setField('architecture', s.architecture);
    setField('parameter-count', `${fmtCount(s.parameterCount)} (${fmtInt(s.parameterCount)})`, s.parameterCount);
    // One row: the short name and llama.cpp's label say the same except for what fileTypeText
    // adds (the package's own fileTypeLabel, when it has one, is in the JSON export).
    setField('file-type', fileTypeText(s.fileType), s.fileType);
    setField('file-size', `${fmtBytes(info.byteLength)} (${fmtInt(info.byteLength)} B)`, info.byteLength);
    setField('bits-per-weight', s.bitsPerWeight === undefined || s.bitsPerWeight === null ? undefined : fmtBpw(s.bitsPerWeight), s.bitsPerWeight);
    setField('context-length', fmtInt(s.contextLength), s.contextLength);
    setField('embedding-length', fmtInt(s.embeddingSize), s.embeddingSize);
    setField('block-count', fmtInt(s.layers), s.layers);
    setField('head-count', fmtInt(s.heads), s.heads);
    setField('head-count-kv', fmtInt(s.kvHeads), s.kvHeads);
    setField('vocab-size', fmtInt(s.vocabSize), s.vocabSize);
    setField('tensor-count', fmtInt(state.model.tensors.length), state.model.tensors.length);
    setField('tokenizer-model', tokenizerModel(state.model));
    setField('quant-mix', s.quantMix.map((q) => `${q.type} ${pct(q.share)}`).join(' · '));
    const g = s.gptq;
    for (const e of $$('.gptq-only')) e.hidden = !g;
    if (info.format === 'safetensors') {
      setField('file-type', g ? `safetensors, GPTQ-${g.bits ?? '?'}bit, group ${g.groupSize === -1 ? 'none (-1)' : g.groupSize ?? '?'}` : 'safetensors');
      const flag = (v) => (v === null || v === undefined ? undefined : String(v));
      if (g) {
        setField('gptq-bits', g.bits, g.bits);
        setField('gptq-group-size', g.groupSize, g.groupSize);
        setField('gptq-desc-act', flag(g.descAct), g.descAct);
        setField('gptq-sym', flag(g.sym), g.sym);
        setField('gptq-format', g.checkpointFormat, g.checkpointFormat);
        setField('gptq-layers', `${fmtInt(g.layers)} ${g.layers === 1 ? 'layer' : 'layers'}; config: ${g.configSource ?? (info.quantConfigError ? `unusable (${info.quantConfigError})` : 'none found (bits and groups inferred from shapes)')}`, g.layers);
      }
      $('#file-info').textContent = info.shardCount > 1
        ? `safetensors, ${fmtInt(info.shardCount)} shards (from the index)`
        : `safetensors, ${fmtInt(info.headerLength)}-byte JSON header, data at byte ${fmtInt(info.dataOffset)}`;
    } else {
      $('#file-info').textContent = `GGUF v${info.version}, ${info.endian}-endian, alignment ${info.alignment}, data at byte ${fmtInt(info.dataOffset)}`;
    }
    showPending();
    document.title = `${$('[data-field="name"]').textContent || 'model'} — gguf-lens viewer`;
  }

  /** Fields whose metadata key has a pending edit show the value it will be saved with, marked. */
  function showPending() {
    for (const e of $$('[data-field].edited')) e.classList.remove('edited');
    const editing = ctx.editing?.();
    if (!editing || state.model.info.format !== 'gguf') return;
    const arch = state.model.summary.architecture;
    const keys = { name: 'general.name', architecture: 'general.architecture', 'context-length': `${arch}.context_length`, 'embedding-length': `${arch}.embedding_length`, 'block-count': `${arch}.block_count`, 'head-count': `${arch}.attention.head_count`, 'head-count-kv': `${arch}.attention.head_count_kv`, 'file-type': 'general.file_type' };
    for (const [field, key] of Object.entries(keys)) {
      const c = editing.pendingOf(key);
      if (!c) continue;
      const v = c.remove ? undefined : c.value;
      const text = v === undefined ? undefined : field === 'file-type' ? fileTypeText(Number(v)) : typeof v === 'number' ? fmtInt(v) : String(v);
      setField(field, text, typeof v === 'number' ? v : undefined);
      for (const e of $$(`[data-field="${field}"]`)) { e.classList.add('edited'); e.title = `${key}: ${c.remove ? 'removed' : 'edited'}, not saved yet (Metadata tab)`; }
    }
  }


  function renderMix() {
    const root = clear($('#mix-chart'));
    const mix = state.model.summary.quantMix;
    const W = 600;
    // The table below says the same in text: the bar's label is its short version.
    const bar = svg('svg', { viewBox: `0 0 ${W} 16`, preserveAspectRatio: 'none', class: 'chart stack', role: 'img', 'aria-label': `Share of tensor bytes by type: ${mix.map((q) => `${q.type} ${pct(q.share)}`).join(', ')}` });
    let x = 0;
    for (const q of mix) {
      const w = q.share * W;
      const r = svg('rect', { x, y: 0, width: Math.max(0, w), height: 16, fill: typeColor(q.type) });
      r.append(svg('title', {}, `${q.type}: ${pct(q.share)} of tensor bytes`));
      bar.append(r);
      x += w;
    }
    const table = el('table', { class: 'mix' },
      el('thead', {}, el('tr', {}, el('th', {}, 'Type'), el('th', {}, 'Share of bytes'), el('th', { class: 'num' }, 'Tensors'), el('th', { class: 'num' }, 'Elements'), el('th', { class: 'num' }, 'Bytes'), el('th', { class: 'num' }, 'bpw'))),
      el('tbody', {}, mix.map((q) => {
        const sw = el('span', { class: 'swatch' });
        sw.style.background = typeColor(q.type);
        const meter = el('span', { class: 'meter' });
        meter.style.width = `${Math.max(0.5, q.share * 100)}%`;
        meter.style.background = typeColor(q.type);
        return el('tr', { dataset: { type: q.type } },
          el('td', { class: 'mono' }, sw, q.type),
          el('td', {}, el('span', { class: 'meter-track' }, meter), el('span', { class: 'mono small' }, ` ${pct(q.share)}`)),
          el('td', { class: 'num' }, fmtInt(q.tensors)),
          el('td', { class: 'num' }, fmtCount(q.elements)),
          el('td', { class: 'num' }, fmtBytes(q.bytes)),
          el('td', { class: 'num' }, (q.bytes * 8 / q.elements).toFixed(2)));
      })));
    root.append(bar, table);
  }

  function renderHeatmap() {
    const root = clear($('#heatmap'));
    const roles = [], layers = new Map();
    for (const t of state.model.tensors) {
      const b = blockOf(t.name);
      if (!b || t.part) continue; // a GPTQ layer's parts: the layer stands for them
      if (!roles.includes(b.role)) roles.push(b.role);
      if (!layers.has(b.block)) layers.set(b.block, new Map());
      layers.get(b.block).set(b.role, t);
    }
    if (!layers.size) { root.append(el('p', { class: 'muted' }, 'No blk.N or layers.N tensors in this file.')); return; }
    const ids = [...layers.keys()].sort((a, b) => a - b);
    const longest = Math.max(...roles.map((r) => r.replace(/\.weight$/, '').length));
    const cw = 74, ch = 18, left = 52, top = Math.min(130, 18 + longest * 4.8);
    const s = svg('svg', { width: left + roles.length * cw + 70, height: top + ids.length * ch + 4, class: 'chart heat' });
    roles.forEach((r, j) => {
      const x = left + j * cw + cw / 2;
      s.append(svg('text', { x, y: top - 6, class: 'label', transform: `rotate(-40 ${x} ${top - 6})` }, r.replace(/\.weight$/, '')));
    });
    ids.forEach((id, i) => {
      const y = top + i * ch;
      s.append(svg('text', { x: left - 6, y: y + 13, class: 'label', 'text-anchor': 'end' }, `blk.${id}`));
      roles.forEach((r, j) => {
        const t = layers.get(id).get(r);
        if (!t) return;
        const g = svg('g', { class: 'cell' });
        g.append(svg('rect', { x: left + j * cw + 1, y: y + 1, width: cw - 2, height: ch - 2, fill: typeColor(t.type), rx: 2 }));
        // Black or white, whichever contrasts more with the cell's colour (at least 4.5:1).
        g.append(svg('text', { x: left + j * cw + cw / 2, y: y + 13, 'text-anchor': 'middle', class: 'cell-label', fill: textOn(typeColor(t.type)) }, t.type));
        g.append(svg('title', {}, `${t.name}: ${t.type}, ${fmtBytes(t.nBytes)}`));
        g.addEventListener('click', () => ctx.inspect(t.name));
        s.append(g);
      });
    });
    // Text alternatives: a sentence (the picture's label) and the grid as a table for screen readers.
    const counts = new Map();
    for (const m of layers.values()) for (const t of m.values()) counts.set(t.type, (counts.get(t.type) ?? 0) + 1);
    const sentence = `${ids.length} ${ids.length === 1 ? 'layer' : 'layers'} × ${roles.length} tensor ${roles.length === 1 ? 'role' : 'roles'}, by ggml type: ${[...counts].sort((a, b) => b[1] - a[1]).map(([ty, n]) => `${ty} in ${n}`).join(', ')}.`;
    s.setAttribute('role', 'img');
    s.setAttribute('aria-label', `Layers × tensors map. ${sentence} The table after it lists every cell.`);
    const table = el('table', { class: 'visually-hidden', dataset: { alt: 'heatmap' } },
      el('caption', {}, `Tensor types per layer. ${sentence}`),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Layer'), roles.map((r) => el('th', { scope: 'col' }, r.replace(/\.weight$/, ''))))),
      el('tbody', {}, ids.map((id) => el('tr', {}, el('th', { scope: 'row' }, `blk.${id}`), roles.map((r) => el('td', {}, layers.get(id).get(r)?.type ?? '—'))))));
    root.append(s, el('p', { class: 'muted small', dataset: { alt: 'heatmap-summary' } }, sentence), table);
  }


  return {
    render() { renderSummary(); renderMix(); renderHeatmap(); },
    /** The summary fields again (pending edits changed). */
    renderFields: renderSummary,
  };
}
