// The Inspector's quantization-error chart: one point per type the package's quantError gives
// for the same rows (whose numbers pkg-tests/quant_error.test.mjs checks against the CLI, and the
// CLI's quantizers against ggml), the file's own type marked.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startServer, launch, newPage, waitLoaded, waitInspected, ARTIFACTS } from './helpers.mjs';

let server, browser;
before(async () => { server = await startServer(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

test('quantization error: every type against bits per weight, the tensor\'s own type marked', async () => {
  const { page, log } = await newPage(browser);
  await page.goto(server.url);
  await waitLoaded(page, 'gguf-lens tiny sample');
  await page.click('[data-tab="tensors"]');
  const name = 'blk.0.ffn_down.weight';
  await page.click(`#tensor-table tr[data-tensor="${name}"]`);
  await waitInspected(page);
  await page.click('#qerr-run');
  await page.waitForFunction(() => document.querySelectorAll('#qerr-chart .point').length > 0, null, { timeout: 60000 });
  const shown = await page.$$eval('#qerr-chart .point', (gs) => gs.map((g) => ({ type: g.dataset.type, bpw: Number(g.dataset.bpw), rel: Number(g.dataset.relativeRmse), own: g.classList.contains('own') })));
  const want = await page.evaluate(async (n) => {
    const { openGguf } = await import('./pkg/index.js');
    const m = await openGguf('sample/tiny-llama-Q4_K_M.gguf');
    const t = m.tensor(n);
    const r = await m.quantError(n, { sampleRows: Math.max(1, Math.ceil((2 << 20) / t.rowLength)) });
    return { type: t.type, results: r.results };
  }, name);
  assert.ok(want.results.length >= 15, `${want.results.length} types`);
  assert.deepEqual(shown.map((p) => p.type), want.results.map((r) => r.type));
  assert.deepEqual(shown.map((p) => p.bpw), want.results.map((r) => r.bitsPerWeight));
  assert.deepEqual(shown.map((p) => p.rel), want.results.map((r) => r.relativeRmse));
  assert.deepEqual(shown.filter((p) => p.own).map((p) => p.type), want.results.some((r) => r.type === want.type) ? [want.type] : []);
  // More bits, less error, across the legacy family (a sanity check on the chart's data).
  const rel = Object.fromEntries(shown.map((p) => [p.type, p.rel]));
  assert.ok(rel.Q8_0 < rel.Q5_0 && rel.Q5_0 < rel.Q4_0, JSON.stringify(rel));
  // No two point labels overlap, and the axis title is clear of the ticks.
  const boxes = await page.$$eval('#qerr-chart svg text', (ts) => ts.map((t) => { const b = t.getBBox(); return { text: t.textContent, x: b.x, y: b.y, w: b.width, h: b.height }; }));
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const [a, b] = [boxes[i], boxes[j]];
      const overlap = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x) > 0.5 && Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y) > 0.5;
      assert.ok(!overlap, `labels overlap: ${JSON.stringify(a)} ${JSON.stringify(b)}`);
    }
  }
  await page.screenshot({ path: path.join(ARTIFACTS, 'quant-error.png'), fullPage: true });
  await chartGeometry(page, 'wide');
  // A narrower window: the chart is drawn again to the card's width, still without overlaps.
  await page.setViewportSize({ width: 760, height: 900 });
  await page.waitForFunction(() => Math.abs(document.querySelector('#qerr-chart svg').viewBox.baseVal.width - document.querySelector('#qerr-chart').clientWidth) <= 1);
  await chartGeometry(page, 'narrow');
  // redrawing to the new width raised nothing the page would show as an error
  assert.equal(await page.$eval('#error', (e) => e.hidden), true, await page.textContent('#error-text'));
  await page.screenshot({ path: path.join(ARTIFACTS, 'quant-error-narrow.png'), fullPage: true });
  assert.deepEqual(log.errors, []);
});

/** The chart fills its card, its text stays inside it, no two texts (point labels, ticks, axis
 * title) overlap, and every type is either labelled or named under the chart. */
async function chartGeometry(page, what) {
  const g = await page.evaluate(() => {
    const card = document.querySelector('#qerr-card');
    const svg = document.querySelector('#qerr-chart svg');
    const cs = getComputedStyle(card);
    const inner = card.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    const box = (e) => { const r = e.getBoundingClientRect(); return { text: e.textContent, cls: e.getAttribute('class'), x: r.x, y: r.y, w: r.width, h: r.height }; };
    return {
      inner, width: svg.getBoundingClientRect().width, viewBox: svg.viewBox.baseVal.width, svgBox: box(svg),
      texts: [...svg.querySelectorAll('text')].map(box),
      types: [...svg.querySelectorAll('.point')].map((p) => p.dataset.type),
      labelled: [...svg.querySelectorAll('.point')].filter((p) => p.querySelector('text')).map((p) => p.dataset.type),
      legend: document.querySelector('.qerr-legend')?.textContent ?? '',
    };
  });
  assert.ok(g.width >= 0.98 * g.inner, `${what}: chart ${g.width}px of the card's ${g.inner}px`);
  assert.ok(Math.abs(g.viewBox - g.width) <= 1, `${what}: viewBox ${g.viewBox}, drawn ${g.width}`);
  const s = g.svgBox;
  for (const t of g.texts) assert.ok(t.x >= s.x - 0.5 && t.x + t.w <= s.x + s.w + 0.5 && t.y >= s.y - 0.5 && t.y + t.h <= s.y + s.h + 0.5, `${what}: outside the chart ${JSON.stringify(t)}`);
  const title = g.texts.find((t) => t.cls.includes('axis-title'));
  const ticks = g.texts.filter((t) => t.cls.includes('tick'));
  assert.ok(title && ticks.length >= 4, `${what}: axis title and ticks`);
  const meets = (a, b) => Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x) > 0.5 && Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y) > 0.5;
  for (const t of ticks) assert.ok(!meets(title, t), `${what}: the axis title meets tick ${t.text}`);
  for (let i = 0; i < g.texts.length; i++) {
    for (let j = i + 1; j < g.texts.length; j++) assert.ok(!meets(g.texts[i], g.texts[j]), `${what}: ${JSON.stringify(g.texts[i])} meets ${JSON.stringify(g.texts[j])}`);
  }
  for (const t of g.types) assert.ok(g.labelled.includes(t) || g.legend.includes(t), `${what}: ${t} neither labelled nor named`);
  assert.ok(g.labelled.length >= g.types.length - 3, `${what}: only ${g.labelled.length} of ${g.types.length} labelled`);
}
