// Accessible by default: axe-core (WCAG 2.0 / 2.1, A and AA) over every tab with a real model
// open (the bundled sample, compared with its Q8_0 variant), each tab in the state a user
// brings it to (a tensor analysed and quantized, hashes computed, a pending edit and a refused
// value, a comparison run), in the light and the dark scheme: no serious or critical
// violation. And the keyboard alone opens a local file, moves through tabs and tensor rows,
// and opens and closes the compare bar.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startServer, launch, newPage, waitLoaded, waitInspected, readJson, FIXTURES, ROOT, HERE, ARTIFACTS } from './helpers.mjs';

const expected = readJson(path.join(FIXTURES, 'expected-sample.json'));
const AXE = path.join(HERE, 'node_modules/axe-core/axe.min.js');
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];
let server, browser;
before(async () => { server = await startServer(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

/** axe's serious and critical violations on the page as it is, one line per node. */
async function violations(page) {
  if (!(await page.evaluate(() => Boolean(window.axe)))) await page.addScriptTag({ path: AXE });
  const found = await page.evaluate(async (tags) => {
    const r = await window.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}) ${n.target.join(' ')}: ${n.failureSummary.replace(/\s+/g, ' ')}`));
  }, TAGS);
  return found;
}

for (const colorScheme of ['light', 'dark']) {
  test(`axe: no serious or critical WCAG 2 A/AA violation on any tab (${colorScheme})`, async () => {
    const { page, log } = await newPage(browser, { colorScheme, bypassCSP: true });
    const b = `${server.url}sample-fixtures/tiny-llama-Q8_0.gguf`;
    await page.goto(`${server.url}?compare=${encodeURIComponent(b)}`);
    await waitLoaded(page, expected.summary.name);
    await page.waitForSelector('#compare-tab:not([hidden])', { timeout: 20000 });
    const report = {};
    const steps = {
      overview: async () => {
        // The compare bar open and a message shown, over the overview.
        await page.click('#compare-start');
        await page.fill('#url-input', 'javascript:alert(1)');
        await page.click('#url-form button[type="submit"]');
        await page.waitForSelector('#error:not([hidden])');
        await page.waitForSelector('#mem-table [data-mem="total"][data-value]:not([data-value=""])');
      },
      tensors: async () => {},
      inspector: async () => {
        await page.click('[data-tab="tensors"]');
        await page.click('#tensor-table tr[data-tensor="blk.0.attn_k.weight"]');
        await waitInspected(page);
        await page.click('#qerr-run');
        await page.waitForFunction(() => document.querySelector('#qerr-chart').dataset.pass === 'exact', null, { timeout: 60000 });
      },
      metadata: async () => {
        await page.fill('#edit-add-key', 'general.license');
        await page.fill('#edit-add-value', 'mit');
        await page.click('#edit-add button[type="submit"]');
        await page.waitForSelector('#edit-card:not([hidden])');
        await page.fill('#edit-add-key', 'general.count');
        await page.selectOption('#edit-add-type', 'uint32');
        await page.fill('#edit-add-value', 'many');
        await page.click('#edit-add button[type="submit"]');
        await page.waitForSelector('#edit-add-error:not([hidden])');
      },
      tokenizer: async () => { await page.waitForFunction(() => Number(document.querySelector('#tok-count').dataset.count) > 0); },
      template: async () => { await page.waitForFunction(() => document.querySelector('#chat-count').dataset.count !== undefined); },
      integrity: async () => {
        await page.click('#hash-run');
        await page.waitForSelector('#hash-result:not([hidden])', { timeout: 20000 });
      },
      compare: async () => {
        await page.click('#cmp-all');
        await page.waitForFunction(() => /^compared \d+ tensors$/.test(document.querySelector('#cmp-progress-text').textContent), null, { timeout: 60000 });
      },
    };
    for (const [tab, prepare] of Object.entries(steps)) {
      await page.click(`[data-tab="${tab}"]`);
      await prepare();
      await page.click(`[data-tab="${tab}"]`);
      assert.equal(await page.$eval(`#panel-${tab}`, (p) => p.hidden), false, tab);
      report[tab] = await violations(page);
      // The panel screenshots (docs/screenshots/) are of real models: real-model.test.mjs and
      // the llama.cpp file below.
    }
    assert.deepEqual(report, Object.fromEntries(Object.keys(steps).map((t) => [t, []])));
    assert.deepEqual(log.errors, []);
  });
}

// The panels a vocabulary-only GGUF fills, on llama.cpp's own Phi-3 vocabulary file (written by
// llama.cpp's tools; the sdist's models/, scripts/llama-sdist.sh): its 32,064 tokens, byte
// fallback pieces, merges-free SPM model and chat template.
const REAL_TABS = ['metadata', 'tokenizer', 'template'];
test('axe on a real llama.cpp file (the Phi-3 vocabulary): metadata, tokenizer and template tabs', async () => {
  const { page, log } = await newPage(browser, { bypassCSP: true });
  const file = '/llama-models/ggml-vocab-phi-3.gguf';
  await page.goto(`${server.url}?url=${encodeURIComponent(file)}`);
  await page.waitForFunction(() => document.querySelector('#model-source').textContent.includes('ggml-vocab-phi-3.gguf'), null, { timeout: 20000 });
  const report = {};
  const steps = {
    metadata: async () => {},
    tokenizer: async () => {
      await page.fill('#tok-text', 'A llama 🦙 reads “GGUF” files.');
      await page.waitForFunction(() => Number(document.querySelector('#tok-count').dataset.count) > 0);
    },
    template: async () => { await page.waitForFunction(() => document.querySelector('#chat-count').dataset.count !== undefined); },
  };
  for (const [tab, prepare] of Object.entries(steps)) {
    await page.click(`[data-tab="${tab}"]`);
    await prepare();
    report[tab] = await violations(page);
    // all-MiniLM-L6-v2 (real-model.test.mjs) has no chat template: this file's is the screenshot,
    // and its SPM tokenizer (byte fallback) beside the real model's WordPiece one.
    const shot = { template: 'panel-template.jpg', tokenizer: 'panel-tokenizer-spm.jpg' }[tab];
    if (shot) await page.screenshot({ path: path.join(ARTIFACTS, shot), type: 'jpeg', quality: 60 });
  }
  assert.deepEqual(report, Object.fromEntries(REAL_TABS.map((t) => [t, []])));
  assert.equal(await page.$eval('#tok-table tbody', (b) => b.rows.length > 0), true);
  assert.deepEqual(log.errors, []);
});

/** Tabs until `pred` holds for the focused element (at most `max` presses); its description. */
async function tabTo(page, pred, max = 60, key = 'Tab') {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press(key);
    if (await page.evaluate(pred)) return true;
  }
  return false;
}

test('keyboard only: open a local file, move through tabs and tensor rows, the compare bar', async () => {
  const { page, log } = await newPage(browser);
  // Playwright turns on file-chooser interception when the first listener is added (a round
  // trip to the browser): added before the page loads, it is on before any key is pressed.
  page.on('filechooser', () => {});
  await page.goto(server.url);
  await waitLoaded(page, expected.summary.name);
  // The file button is a tab stop; Enter opens the file chooser.
  assert.ok(await tabTo(page, () => document.activeElement?.id === 'open-file'), 'Tab reaches "Open file…"');
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.keyboard.press('Enter')]);
  await chooser.setFiles(path.join(ROOT, 'fixtures/sample/tiny-llama-Q8_0.gguf'));
  await page.waitForFunction(() => document.querySelector('#model-source').textContent === 'tiny-llama-Q8_0.gguf', null, { timeout: 20000 });
  // The tabs: one tab stop, arrows select.
  assert.ok(await tabTo(page, () => document.activeElement?.getAttribute('role') === 'tab'), 'Tab reaches the tabs');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.tab), 'overview');
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.tab), 'tensors');
  assert.equal(await page.$eval('#panel-tensors', (p) => p.hidden), false);
  // The tensor rows: one tab stop, arrows move, Enter opens the Inspector there.
  assert.ok(await tabTo(page, () => document.activeElement?.matches('#tensor-table tr.clickable'), 30), 'Tab reaches the tensor rows');
  const first = await page.evaluate(() => document.activeElement.dataset.tensor);
  await page.keyboard.press('ArrowDown');
  const second = await page.evaluate(() => document.activeElement.dataset.tensor);
  assert.notEqual(first, second);
  await page.keyboard.press('Enter');
  await waitInspected(page);
  assert.equal(await page.$eval('#panel-inspector', (p) => p.hidden), false);
  assert.equal(await page.$eval('#insp-tensor', (s) => s.value), second);
  assert.equal(await page.evaluate(() => document.activeElement.id), 'insp-tensor');
  // The compare bar: Enter opens it (focus in its URL box), Escape closes it (focus back).
  assert.ok(await tabTo(page, () => document.activeElement?.id === 'compare-start', 80, 'Shift+Tab'), 'Shift+Tab reaches "Compare with…"');
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'compare-url');
  assert.equal(await page.$eval('#compare-start', (b) => b.getAttribute('aria-expanded')), 'true');
  await page.keyboard.press('Escape');
  assert.equal(await page.$eval('#compare-form', (f) => f.hidden), true);
  assert.equal(await page.evaluate(() => document.activeElement.id), 'compare-start');
  // "Pick a file…" is a button too.
  await page.keyboard.press('Enter');
  await page.keyboard.press('Shift+Tab');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'compare-pick');
  const [chooserB] = await Promise.all([page.waitForEvent('filechooser'), page.keyboard.press('Enter')]);
  await chooserB.setFiles(path.join(ROOT, 'fixtures/sample/tiny-llama-Q4_K_M.gguf'));
  await page.waitForSelector('#compare-tab:not([hidden])', { timeout: 20000 });
  assert.deepEqual(log.errors, []);
});
