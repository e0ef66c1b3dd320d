// The Inspector tab: one tensor's first rows (values, row heatmap), then its statistics and
// histogram (the package's TensorStats, computed in the worker). ctx: {state (app.js's: .model),
// longTask, showError, hideError, selectTab, quantError() (quant-panel.js's handle)}.
import { $, $$, el, svg, clear } from './dom.js';
import { fmtInt, fmtBytes, fmtNum } from './format.js';

export function setupInspector(ctx) {
  const { state } = ctx;
  function renderInspectorList() {
    const sel = clear($('#insp-tensor'));
    for (const t of state.model.tensors) sel.append(el('option', { value: t.name }, `${t.name}  (${t.type} [${t.shape.join('×')}])`));
    for (const k of ['insp-info', 'insp-heat-note']) $(`#${k}`).textContent = '';
    $('#insp-warning').hidden = true;
    for (const e of $$('[data-stat]')) { e.textContent = ''; delete e.dataset.value; }
    clear($('#insp-hist')); clear($('#insp-values'));
    const c = $('#insp-heat'); c.getContext('2d').clearRect(0, 0, c.width, c.height);
  }

  /** `focus`: from the keyboard, focus moves with the user to the Inspector's tensor. */
  function inspect(name, { focus = false } = {}) {
    ctx.selectTab('inspector');
    $('#insp-tensor').value = name;
    if (focus) $('#insp-tensor').focus();
    runInspector();
  }

  async function runInspector() {
    const name = $('#insp-tensor').value;
    const t = state.model.tensors.find((x) => x.name === name);
    if (!t) return;
    ctx.hideError();
    ctx.quantError().reset(); // the chart was another tensor's
    $('#insp-info').textContent = t.gptq
      ? `${t.type} layer · [${t.shape[0]} out × ${t.shape[1]} in] dequantized · group ${t.groupSize}${t.actOrder ? ' · act-order' : ''} · ${fmtBytes(t.nBytes)} in its parts`
      : `${t.type} · shape [${t.shape.join(', ')}] · ${fmtInt(t.nElements)} elements · ${fmtBytes(t.nBytes)}`;
    for (const e of $$('[data-stat]')) { e.textContent = '…'; delete e.dataset.value; }
    $('#insp-warning').hidden = true;
    try {
      // The first rows first (one small read: values and heatmap at once), then the whole tensor.
      const rowLen = t.shape[t.shape.length - 1] || 1, nRows = t.nElements / rowLen; // shapes are outermost first
      const rows = Math.min(nRows, 256, Math.max(1, Math.floor((1 << 22) / rowLen)));
      clear($('#insp-values')); clear($('#insp-hist'));
      const vals = await ctx.longTask(`Rows 0–${rows - 1} of ${name}`, 'rows', { name, rows: [0, rows] }, { key: 'inspect' });
      drawValues(vals.subarray(0, Math.min(64, rowLen)));
      drawRowHeatmap(vals, rowLen, rows, nRows);
      const head = $('#insp-scope').value === 'head';
      const st = await ctx.longTask(`Statistics of ${name}`, 'stats', { name, bins: 64, rows: head ? [0, rows] : undefined }, { key: 'inspect' });
      $('#insp-stats-scope').textContent = head && rows < nRows ? `(rows 0–${rows - 1} of ${fmtInt(nRows)})` : '(whole tensor)';
      // the package's TensorStats; null min/max/mean/std (no finite value) shown as NaN
      for (const k of ['min', 'max', 'mean', 'std']) { const e = $(`[data-stat="${k}"]`); const v = st[k] ?? NaN; e.textContent = fmtNum(v); e.dataset.value = String(v); }
      for (const [k, f] of [['nan', 'nanCount'], ['inf', 'infCount'], ['zero', 'zeroCount'], ['count', 'count']]) { const e = $(`[data-stat="${k}"]`); e.textContent = fmtInt(st[f]); e.dataset.value = String(st[f]); }
      drawHistogram(st);
      warnConstant(st);
    } catch (err) {
      for (const e of $$('[data-stat]')) if (e.textContent === '…') e.textContent = '';
      if (err.name === 'AbortError') { if (!err.replaced) ctx.showError(`analysis of ${name}`, 'Cancelled'); }
      else ctx.showError(`could not analyse ${name}: ${err.message}`);
    }
  }

  /** All zeros (often a broken conversion's sign) or one constant value: said in words, since
   * the heatmap is then blank and every cosine 1. */
  function warnConstant(st) {
    const w = $('#insp-warning');
    const finite = st.count - st.nanCount - st.infCount;
    w.textContent = st.count > 0 && st.zeroCount === st.count
      ? `All ${fmtInt(st.count)} values are zero: often the sign of a broken conversion (the heatmap is blank, and a zero tensor's quantization error is 0 with cosine 1).`
      : finite > 1 && st.min === st.max ? `Every finite value is ${fmtNum(st.min)}: a constant tensor.` : '';
    w.hidden = !w.textContent;
  }

  function drawHistogram(st) {
    const root = clear($('#insp-hist'));
    const h = Array.from(st.histogram.counts, Number), edges = st.histogram.edges, lo0 = edges[0] ?? 0, hi0 = edges[edges.length - 1] ?? 0, W = 480, H = 140, max = Math.max(1, ...h);
    const peak = h.indexOf(max);
    const peakAt = h.length ? lo0 + (hi0 - lo0) * (peak + 0.5) / h.length : 0;
    const s = svg('svg', { viewBox: `0 0 ${W} ${H + 18}`, class: 'chart hist', role: 'img', 'aria-label': `Histogram of ${fmtInt(st.count)} values in ${h.length} bins from ${fmtNum(lo0)} to ${fmtNum(hi0)}; the fullest bin (${fmtInt(max)} values) is around ${fmtNum(peakAt)}.` });
    // Real weights are a narrow peak with a few far outliers (min..max spans them): on a linear
    // scale the bins that hold them are under a pixel and the chart looks empty. Then the
    // heights are log(1 + count), said on the chart, so every non-empty bin shows.
    const minFull = Math.min(...h.filter((c) => c > 0));
    const log = h.length > 0 && minFull / max * H < 2;
    const scale = log ? (c) => Math.log1p(c) / Math.log1p(max) : (c) => c / max;
    s.dataset.scale = log ? 'log' : 'linear';
    if (log) s.setAttribute('aria-label', `${s.getAttribute('aria-label')} Bar heights on a log scale.`);
    const bw = W / h.length;
    h.forEach((c, i) => {
      const bh = c > 0 ? Math.max(1, scale(c) * H) : 0;
      const r = svg('rect', { x: i * bw + 0.5, y: H - bh, width: Math.max(0.5, bw - 1), height: bh, class: 'bar' });
      const lo = lo0 + (hi0 - lo0) * i / h.length;
      r.append(svg('title', {}, `${fmtNum(lo)}…: ${c}`));
      s.append(r);
    });
    s.append(svg('text', { x: 0, y: H + 14, class: 'label' }, fmtNum(lo0)));
    s.append(svg('text', { x: W, y: H + 14, class: 'label', 'text-anchor': 'end' }, fmtNum(hi0)));
    if (log) s.append(svg('text', { x: W, y: 10, class: 'label', 'text-anchor': 'end' }, 'count: log scale'));
    root.append(s);
  }

  function drawValues(v) {
    const root = clear($('#insp-values'));
    for (let i = 0; i < v.length; i++) root.append(el('span', { class: 'v', dataset: { index: i } }, fmtNum(v[i])));
  }

  function drawRowHeatmap(vals, rowLen, rows, nRows) {
    const c = $('#insp-heat');
    const cols = Math.min(rowLen, 512);
    c.width = cols; c.height = Math.max(1, rows);
    c.style.height = rows < 32 ? `${Math.max(24, rows * 8)}px` : ''; // 1-D and short tensors: a visible strip
    const g2d = c.getContext('2d');
    const img = g2d.createImageData(cols, rows);
    let sum = 0, sq = 0, n = 0;
    for (const v of vals) if (Number.isFinite(v)) { sum += v; n++; }
    const mean = n ? sum / n : 0;
    for (const v of vals) if (Number.isFinite(v)) sq += (v - mean) * (v - mean);
    const st = { mean, std: n ? Math.sqrt(sq / n) : 1 };
    const scale = 3 * (st.std || 1);
    const step = rowLen / cols;
    for (let r = 0; r < rows; r++) {
      for (let x = 0; x < cols; x++) {
        const v = vals[r * rowLen + Math.floor(x * step)];
        const k = (r * cols + x) * 4;
        if (!Number.isFinite(v)) { img.data.set([255, 0, 255, 255], k); continue; }
        const tt = Math.max(-1, Math.min(1, (v - (st.mean || 0)) / scale));
        // diverging blue - white - red
        const a = Math.abs(tt);
        const [r0, g0, b0] = tt < 0 ? [59, 76, 192] : [180, 4, 38];
        img.data.set([Math.round(247 + (r0 - 247) * a), Math.round(247 + (g0 - 247) * a), Math.round(247 + (b0 - 247) * a), 255], k);
      }
    }
    g2d.putImageData(img, 0, 0);
    $('#insp-heat-note').textContent = `rows 0–${rows - 1} of ${fmtInt(nRows)}, ${cols < rowLen ? `every ${step.toFixed(1)}th of ${fmtInt(rowLen)} columns` : `${fmtInt(rowLen)} columns`}; blue < mean < red, ±3σ`;
    let below = 0, above = 0, bad = 0;
    for (const v of vals) { if (!Number.isFinite(v)) bad++; else if (v < mean - 3 * st.std) below++; else if (v > mean + 3 * st.std) above++; }
    c.setAttribute('aria-label', `Row heatmap of ${$('#insp-heat-note').textContent}. Mean ${fmtNum(mean)}, standard deviation ${fmtNum(st.std)}; ${fmtInt(below)} values below −3σ, ${fmtInt(above)} above +3σ${bad ? `, ${fmtInt(bad)} not finite (magenta)` : ''}.`);
  }

  $('#insp-run').addEventListener('click', () => { if (state.model) runInspector(); });
  return { reset: renderInspectorList, inspect };
}
