// The Inspector's quantization-error chart: the tensor's values (dequantized when quantized)
// quantized to every type gguf-lens writes, bit-exact to ggml without an importance matrix, in
// the worker; error against bits per weight, one point per type, the file's own type marked.
// By default about 2M values in 64 evenly spaced runs of rows ("all rows" quantizes every row).

const SAMPLE_VALUES = 2 << 20;

/** @param {object} ctx the page's helpers: el, svg, clear, longTask, showError, model(), fmtNum, fmtInt */
export function setupQuantError(ctx) {
  const { el, svg, clear, longTask, showError } = ctx;
  const $ = (sel) => document.querySelector(sel);

  async function run() {
    const m = ctx.model();
    const name = $('#insp-tensor').value;
    const t = m?.tensors.find((x) => x.name === name);
    if (!t) return;
    const rowLen = t.shape[t.shape.length - 1] || 1;
    const nRows = t.nElements / rowLen;
    const all = $('#qerr-all').checked;
    const sampleRows = all ? undefined : Math.max(1, Math.ceil(SAMPLE_VALUES / rowLen));
    try {
      const report = await longTask(`Quantizing ${name}`, 'quantError', { name, sampleRows });
      const used = report.results[0]?.nValues ?? 0;
      $('#qerr-note').textContent = `${ctx.fmtInt(used)} of ${ctx.fmtInt(t.nElements)} values (${used >= t.nElements ? 'every row' : `${Math.round(used / rowLen)} of ${ctx.fmtInt(nRows)} rows, evenly spread`})${report.skipped.length ? ` · not possible: ${report.skipped.map((s) => s.type).join(', ')}` : ''}`;
      draw(report, t.type);
    } catch (err) {
      showError(err.name === 'AbortError' ? `quantizing ${name} was cancelled` : `could not quantize ${name}: ${err.message}`);
    }
  }

  function draw(report, ownType) {
    const root = clear($('#qerr-chart'));
    const points = report.results.filter((r) => r.relativeRmse > 0 && Number.isFinite(r.relativeRmse));
    const W = 480, H = 220, L = 46, B = 24;
    const s = svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart qerr', role: 'img', 'aria-label': 'Relative RMSE against bits per weight, one point per type' });
    const xMax = Math.max(17, ...report.results.map((r) => r.bitsPerWeight));
    const ys = points.map((r) => Math.log10(r.relativeRmse));
    const yLo = Math.floor(Math.min(-4, ...ys)), yHi = Math.ceil(Math.max(0, ...ys));
    const x = (bpw) => L + (bpw / xMax) * (W - L - 8);
    const y = (rel) => 8 + (yHi - Math.log10(rel)) / (yHi - yLo) * (H - B - 8);
    for (let e = yLo; e <= yHi; e++) {
      s.append(svg('line', { x1: L, x2: W - 8, y1: y(10 ** e), y2: y(10 ** e), class: 'grid' }));
      s.append(svg('text', { x: 2, y: y(10 ** e) + 4, class: 'label' }, `1e${e}`));
    }
    for (let b = 0; b <= xMax; b += 4) s.append(svg('text', { x: x(b) - 4, y: H - 6, class: 'label' }, String(b)));
    s.append(svg('text', { x: W - 110, y: H - 6, class: 'label' }, 'bits per weight'));
    for (const r of report.results) {
      const own = r.type === ownType;
      const cy = r.relativeRmse > 0 ? y(r.relativeRmse) : y(10 ** yLo);
      const g = svg('g', { class: own ? 'point own' : 'point', 'data-type': r.type, 'data-bpw': String(r.bitsPerWeight), 'data-relative-rmse': String(r.relativeRmse) });
      g.append(svg('circle', { cx: x(r.bitsPerWeight), cy, r: own ? 6 : 4 }));
      g.append(svg('text', { x: x(r.bitsPerWeight) + 7, y: cy + 4, class: 'label' }, own ? `${r.type} (this file${r.relativeRmse === 0 ? ': exact' : ''})` : r.type));
      g.append(svg('title', {}, `${r.type}: ${r.bitsPerWeight.toFixed(4)} bits/weight, relative RMSE ${ctx.fmtNum(r.relativeRmse)}, RMSE ${ctx.fmtNum(r.rmse)}, max |err| ${ctx.fmtNum(r.maxAbsError)}, cosine ${r.cosine.toFixed(6)}`));
      s.append(g);
    }
    root.append(s);
    const body = clear($('#qerr-table tbody'));
    for (const r of [...report.results].sort((a, b) => a.bitsPerWeight - b.bitsPerWeight)) {
      body.append(el('tr', { dataset: { type: r.type }, class: r.type === ownType ? 'own' : undefined },
        el('td', { class: 'mono' }, r.type), el('td', { class: 'num' }, r.bitsPerWeight.toFixed(4)),
        el('td', { class: 'num' }, ctx.fmtNum(r.relativeRmse)), el('td', { class: 'num' }, ctx.fmtNum(r.rmse)),
        el('td', { class: 'num' }, ctx.fmtNum(r.maxAbsError)), el('td', { class: 'num' }, r.cosine.toFixed(6))));
    }
  }

  $('#qerr-run').addEventListener('click', () => { if (ctx.model()) run(); });
  return {
    reset() {
      clear($('#qerr-chart'));
      clear($('#qerr-table tbody'));
      $('#qerr-note').textContent = '';
    },
  };
}
