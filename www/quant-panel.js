// The Inspector's quantization-error chart: the tensor's values (dequantized when quantized)
// quantized to every type gguf-lens writes, bit-exact to ggml without an importance matrix, on
// the worker's pool (one worker per core, each reading its own rows); error against bits per
// weight, one point per type, the file's own type marked. First about 2M values in 64 evenly
// spaced runs of rows ("sampled"), then every row ("exact"), which replaces the points: at once
// up to AUTO_EXACT values, beyond that when "then every row" is ticked.

import { skippedText } from './messages.js';

const SAMPLE_VALUES = 2 << 20;
// Up to this many values every row is quick enough to run at once (docs/benchmarks.md).
const AUTO_EXACT = 100 << 20;
// A benchmark's timeline (benches/viewer-quant-error.mjs --timeline sets the flag): no marks otherwise.
const mark = (name) => { if (globalThis.GGUF_LENS_TIMELINE) performance.mark(`qerr:main:${name}`); };

/** @param {object} ctx the page's helpers: el, svg, clear, request, longTask, showError, model(), fmtNum, fmtInt */
export function setupQuantError(ctx) {
  const { el, svg, clear, longTask, showError } = ctx;
  const $ = (sel) => document.querySelector(sel);
  let generation = 0; // a reset or a new run makes an older run's answers stale

  async function run() {
    const m = ctx.model();
    const name = $('#insp-tensor').value;
    const t = m?.tensors.find((x) => x.name === name);
    if (!t) return;
    const mine = ++generation;
    const rowLen = t.shape[t.shape.length - 1] || 1;
    const nRows = t.nElements / rowLen;
    const sampleRows = Math.max(1, Math.ceil(SAMPLE_VALUES / rowLen));
    const sampled = sampleRows < nRows;
    const skippedNote = (report) => (report.skipped.length ? ` · ${skippedText(report.skipped)}` : '');
    let pass = sampled ? 'sampled' : 'exact';
    try {
      if (sampled) {
        mark('sample-sent');
        const report = await longTask(`Quantizing a sample of ${name}`, 'quantError', { name, sampleRows }, { key: 'quantError' });
        mark('sample-merged');
        if (mine !== generation) return;
        const used = report.results[0]?.nValues ?? 0;
        show(report, t.type, 'sampled', `sampled, ${ctx.fmtInt(used)} values (${ctx.fmtInt(Math.round(used / rowLen))} of ${ctx.fmtInt(nRows)} rows, evenly spread)${skippedNote(report)}`);
        if (!$('#qerr-all').checked && t.nElements > AUTO_EXACT) {
          $('#qerr-note').textContent += ' · tick "then every row" for the exact figures';
          return;
        }
        pass = 'exact';
      }
      mark('exact-sent');
      const report = await longTask(`Quantizing every row of ${name}`, 'quantError', { name }, { key: 'quantError' });
      mark('exact-merged');
      if (mine !== generation) return;
      show(report, t.type, 'exact', `exact, every row (${ctx.fmtInt(report.results[0]?.nValues ?? t.nElements)} values)${skippedNote(report)}`);
    } catch (err) {
      if (mine !== generation) return;
      if (err.name === 'AbortError' && pass === 'exact' && sampled) {
        $('#qerr-note').textContent += ' · exact pass cancelled';
        return;
      }
      if (err.name === 'AbortError') { if (!err.replaced) showError(`quantizing ${name}`, 'Cancelled'); }
      else showError(`could not quantize ${name}: ${err.message}`);
    }
  }

  function show(report, ownType, pass, note) {
    $('#qerr-note').textContent = note;
    $('#qerr-chart').dataset.pass = pass;
    draw(report, ownType);
    mark(`${pass}-drawn`);
  }

  let drawn = null; // the last report and type drawn, redrawn when the card changes width

  function draw(report, ownType) {
    drawn = { report, ownType };
    const root = clear($('#qerr-chart'));
    const points = report.results.filter((r) => r.relativeRmse > 0 && Number.isFinite(r.relativeRmse));
    // The viewBox is the card's width in CSS pixels: the chart fills the card and its text keeps
    // its real size, so the label boxes measured below are the ones on screen.
    const W = Math.max(320, Math.floor(root.clientWidth || 480)), H = 260, L = 46, B = 36, R = 8;
    const best = [...points].sort((a, b) => a.relativeRmse - b.relativeRmse)[0];
    const s = svg('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: 'chart qerr', role: 'img', 'aria-label': `Relative RMSE against bits per weight, one point per type (${report.results.length} types${best ? `; the smallest error, ${ctx.fmtNum(best.relativeRmse)}, is ${best.type}'s` : ''}). The table below lists every point.` });
    root.append(s);
    const xMax = Math.max(17, ...report.results.map((r) => r.bitsPerWeight));
    const ys = points.map((r) => Math.log10(r.relativeRmse));
    const yLo = Math.floor(Math.min(-4, ...ys)), yHi = Math.ceil(Math.max(0, ...ys));
    const x = (bpw) => L + (bpw / xMax) * (W - L - R);
    const y = (rel) => 8 + (yHi - Math.log10(rel)) / (yHi - yLo) * (H - B - 8);
    /** The width of `text` in the chart's label font (measured, not guessed). */
    const probe = svg('text', { class: 'label', x: 0, y: -100 });
    s.append(probe);
    const widthOf = (text) => { probe.textContent = text; return probe.getComputedTextLength() || text.length * 6; };
    for (let e = yLo; e <= yHi; e++) {
      s.append(svg('line', { x1: L, x2: W - R, y1: y(10 ** e), y2: y(10 ** e), class: 'grid' }));
      s.append(svg('text', { x: 2, y: y(10 ** e) + 4, class: 'label' }, `1e${e}`));
    }
    // Ticks under the plot (the last one kept inside the chart), the axis title on its own line
    // below them: two rows, so the title never meets a tick.
    for (let b = 0; b <= xMax; b += 4) {
      const w = widthOf(String(b));
      const tx = Math.min(x(b), W - 2 - w / 2);
      s.append(svg('text', { x: tx, y: H - B + 14, class: 'label tick', 'text-anchor': 'middle' }, String(b)));
    }
    s.append(svg('text', { x: (L + W - R) / 2, y: H - 4, class: 'label axis-title', 'text-anchor': 'middle' }, 'bits per weight'));
    // Labels placed left to right, each moved up or down past the ones already placed (with a
    // leader line to its point when moved), so clustered types never print over each other;
    // a label with no free place within reach is named in a line under the chart instead.
    const placed = [];
    const LINE_H = 11, GAP = 1;
    const free = (bx, by, w) => placed.every((p) => bx + w + GAP < p.x || bx > p.x + p.w + GAP || by + LINE_H <= p.y || by >= p.y + LINE_H);
    // the points themselves are obstacles too
    for (const r of report.results) placed.push({ x: x(r.bitsPerWeight) - 4, y: cyOf(r) - 4 - 1.5, w: 8, h: 8 });
    function place(px, py, text) {
      const w = widthOf(text);
      for (const side of [1, -1]) {
        const bx = side > 0 ? Math.min(px + 7, W - 2 - w) : Math.max(2, px - 7 - w);
        for (let k = 0; k < 24; k++) {
          const dy = (k % 2 ? 1 : -1) * Math.ceil(k / 2) * LINE_H;
          const by = py - 7 + dy;
          if (by < 0 || by + LINE_H > H - B) continue;
          if (free(bx, by, w)) {
            placed.push({ x: bx, y: by, w });
            return { x: bx, y: by + 8, moved: dy !== 0 || side < 0, side };
          }
        }
      }
      return null;
    }
    function cyOf(r) { return r.relativeRmse > 0 && Number.isFinite(r.relativeRmse) ? y(r.relativeRmse) : y(10 ** yLo); }
    const textOf = (r) => (r.type === ownType ? `${r.type} (this file${r.relativeRmse === 0 ? ': exact' : ''})` : r.type);
    const spots = new Map();
    for (const r of [...report.results].sort((a, b) => a.bitsPerWeight - b.bitsPerWeight)) spots.set(r, place(x(r.bitsPerWeight), cyOf(r), textOf(r)));
    probe.remove();
    const legend = [];
    for (const r of report.results) {
      const own = r.type === ownType;
      const cy = cyOf(r);
      const g = svg('g', { class: own ? 'point own' : 'point', 'data-type': r.type, 'data-bpw': String(r.bitsPerWeight), 'data-relative-rmse': String(r.relativeRmse) });
      g.append(svg('circle', { cx: x(r.bitsPerWeight), cy, r: own ? 6 : 4 }));
      const text = textOf(r);
      const at = spots.get(r);
      if (at) {
        if (at.moved) g.append(svg('line', { x1: x(r.bitsPerWeight), y1: cy, x2: at.side > 0 ? at.x - 1 : at.x + widthOf(text) + 1, y2: at.y - 3, class: 'leader' }));
        g.append(svg('text', { x: at.x, y: at.y, class: 'label point-label' }, text));
      } else {
        legend.push(r);
      }
      g.append(svg('title', {}, `${r.type}: ${r.bitsPerWeight.toFixed(4)} bits/weight, relative RMSE ${ctx.fmtNum(r.relativeRmse)}, RMSE ${ctx.fmtNum(r.rmse)}, max |err| ${ctx.fmtNum(r.maxAbsError)}, cosine ${r.cosine.toFixed(6)}`));
      s.append(g);
    }
    if (legend.length) root.append(el('p', { class: 'small muted qerr-legend' }, `Not labelled (no room): ${legend.map((r) => `${textOf(r)} at ${r.bitsPerWeight.toFixed(2)} bits`).join(' · ')}`));
    const body = clear($('#qerr-table tbody'));
    for (const r of [...report.results].sort((a, b) => a.bitsPerWeight - b.bitsPerWeight)) {
      body.append(el('tr', { dataset: { type: r.type }, class: r.type === ownType ? 'own' : undefined },
        el('td', { class: 'mono' }, r.type), el('td', { class: 'num' }, r.bitsPerWeight.toFixed(4)),
        el('td', { class: 'num' }, ctx.fmtNum(r.relativeRmse)), el('td', { class: 'num' }, ctx.fmtNum(r.rmse)),
        el('td', { class: 'num' }, ctx.fmtNum(r.maxAbsError)), el('td', { class: 'num' }, r.cosine.toFixed(6))));
    }
  }

  // A wider or narrower card (window resized, panel shown): the chart is drawn again to its width.
  // Redrawn in the next frame, not inside the observer's callback: a redraw there would change
  // the observed box during the same delivery (the browser's "ResizeObserver loop" error).
  let lastWidth = 0, pending = false;
  new ResizeObserver(() => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      const w = $('#qerr-chart').clientWidth;
      if (drawn && w && Math.abs(w - lastWidth) >= 1) { lastWidth = w; draw(drawn.report, drawn.ownType); }
    });
  }).observe($('#qerr-chart'));
  $('#qerr-run').addEventListener('click', () => { if (ctx.model()) run(); });
  // The Inspector shown or another tensor picked: the pool's workers start now, not on the click.
  const warm = () => { if (ctx.model()) ctx.request('warmPool', {}).promise.catch(() => {}); };
  $('#insp-tensor').addEventListener('change', warm);
  $('[data-tab="inspector"]').addEventListener('click', warm);
  return {
    reset() {
      generation++;
      ctx.cancelTask('quantError'); // its chart was another tensor's
      drawn = null;
      delete $('#qerr-chart').dataset.pass;
      clear($('#qerr-chart'));
      clear($('#qerr-table tbody'));
      $('#qerr-note').textContent = '';
    },
  };
}
