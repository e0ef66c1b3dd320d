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
  assert.deepEqual(log.errors, []);
});
