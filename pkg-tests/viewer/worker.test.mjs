// The viewer's worker can always be stopped, and a broken one never freezes the page
// (www/worker-client.js): Cancel replaces a worker busy in a long task; a crashed worker, one
// that stops answering, and one whose wasm trapped are replaced with one plain error in the
// page; each time the next action works on the same file (the fresh worker opened it again).
// The page is opened with ?test-hooks (a busy and a crashing request in the worker, the client
// on window.ggufLensTest) and a short ?watchdog.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startServer, launch, newPage, waitLoaded, waitInspected, readJson, FIXTURES } from './helpers.mjs';

const expected = readJson(path.join(FIXTURES, 'expected-sample.json'));
const TENSOR = 'output.weight';

let server, browser;
before(async () => { server = await startServer(); browser = await launch(); });
after(async () => { await browser?.close(); server?.close(); });

async function openPage(watchdog = 1500) {
  const { page, log } = await newPage(browser);
  await page.goto(`${server.url}?test-hooks&watchdog=${watchdog}`);
  await waitLoaded(page, expected.summary.name);
  return { page, log };
}

/** Inspects TENSOR from the tensor table: its statistics are the fixture's, within `ms`. */
async function inspectWorks(page, ms = 8000) {
  const start = Date.now();
  await page.click('[data-tab="tensors"]');
  await page.click(`#tensor-table tr[data-tensor="${TENSOR}"]`);
  await waitInspected(page);
  assert.equal(await page.$eval('[data-stat="max"]', (e) => Number(e.dataset.value)), expected.stats[TENSOR].max);
  assert.ok(Date.now() - start < ms, `the next action took ${Date.now() - start} ms`);
}

const errorBox = (page) => page.evaluate(() => ({
  hidden: document.querySelector('#error').hidden,
  kind: document.querySelector('#error-kind').textContent,
  text: document.querySelector('#error-text').textContent,
}));

test('Cancel replaces a worker stuck in a long task at once, and the next action works', async () => {
  const { page, log } = await openPage(60000);
  const before = await page.evaluate(() => window.ggufLensTest.worker() !== null);
  assert.ok(before);
  // A long task whose thread never looks at its messages (as a runaway call in wasm).
  await page.evaluate(() => {
    window.busyOutcome = window.ggufLensTest.longTask('Busy', 'testBusy', { ms: 120000 })
      .then(() => 'done', (e) => e.name);
  });
  await page.waitForSelector('#status:not([hidden])');
  const old = await page.evaluateHandle(() => window.ggufLensTest.worker());
  await page.click('#status button.cancel');
  assert.equal(await page.evaluate(() => window.busyOutcome), 'AbortError');
  assert.equal(await page.$eval('#status', (e) => e.hidden), true);
  assert.equal(await page.evaluate((w) => w !== window.ggufLensTest.worker(), old), true, 'the worker was replaced');
  await inspectWorks(page);
  assert.deepEqual(log.errors, []);
});

test('the user\'s Cancel of an analysis shows "Cancelled", not "Error:"; another task keeps running', async () => {
  const { page } = await openPage(60000);
  await page.evaluate(() => {
    window.busyOutcome = window.ggufLensTest.longTask('Busy', 'testBusy', { ms: 120000 }).then(() => 'done', (e) => e.name);
  });
  await page.waitForSelector('#status:not([hidden])');
  // The Inspector's analysis runs beside the busy task (it does not cancel it): two rows.
  await page.click('[data-tab="tensors"]');
  await page.click(`#tensor-table tr[data-tensor="${TENSOR}"]`);
  await page.waitForFunction(() => document.querySelectorAll('#status li.task').length === 2);
  await page.click(`#status button.cancel[aria-label*="${TENSOR}"]`);
  await page.waitForFunction(() => !document.querySelector('#error').hidden);
  const box = await errorBox(page);
  assert.equal(box.kind, 'Cancelled:');
  assert.equal(box.text, `analysis of ${TENSOR}`);
  assert.equal(await page.$eval('#error', (e) => e.getAttribute('role')), 'status');
  // The busy task is still listed (the worker busy in it was replaced and got it again).
  assert.equal(await page.$$eval('#status li.task', (li) => li.map((l) => l.textContent.includes('Busy')).join()), 'true');
  await page.click('#status button.cancel[aria-label="Cancel: Busy"]');
  assert.equal(await page.evaluate(() => window.busyOutcome), 'AbortError');
  await inspectWorks(page);
});

test('a crashed worker shows one plain error, and the next action works', async () => {
  const { page } = await openPage();
  const crashed = page.evaluate(() => window.ggufLensTest.request('testCrash', {}).promise.then(() => 'answered', (e) => e.message));
  await page.waitForFunction(() => !document.querySelector('#error').hidden, null, { timeout: 5000 });
  const box = await errorBox(page);
  assert.equal(box.kind, 'Error:');
  assert.match(box.text, /^the viewer's worker failed \(.*a test crash\); it was restarted$/);
  // The request the worker answered before it crashed had its answer.
  assert.equal(await crashed, 'answered');
  await inspectWorks(page);
  // Tokenizing (another request) too.
  await page.click('[data-tab="tokenizer"]');
  await page.fill('#tok-text', 'Hello world');
  await page.waitForFunction(() => Number(document.querySelector('#tok-count').dataset.count) > 0, null, { timeout: 5000 });
});

test('a worker that stops answering a quick request is replaced by the watchdog', async () => {
  const { page } = await openPage(1500);
  const start = Date.now();
  const outcome = await page.evaluate(() => window.ggufLensTest.request('testBusy', { ms: 120000 }).promise.then(() => 'answered', (e) => e.message));
  assert.match(outcome, /^the viewer's worker did not answer \(testBusy\) within 2 s; it was restarted$/);
  assert.ok(Date.now() - start < 6000, `${Date.now() - start} ms`);
  assert.equal((await errorBox(page)).text, outcome);
  await inspectWorks(page);
});

test('a worker ended without a word (terminated): the next quick request trips the watchdog, then all works', async () => {
  const { page } = await openPage(1500);
  await page.evaluate(() => window.ggufLensTest.worker().terminate());
  // The metadata filter asks the worker (metaFind): no answer, so the watchdog replaces it (the
  // first quick request sent to the dead worker trips it: metaFind, or one a panel sent).
  await page.click('[data-tab="metadata"]');
  await page.fill('#meta-filter', 'tokenizer');
  await page.waitForFunction(() => /did not answer \([a-zA-Z]+\) within 2 s; it was restarted$/.test(document.querySelector('#error-text').textContent), null, { timeout: 6000 });
  // The filter's request went to the fresh worker: its matches are shown.
  await page.waitForFunction(() => {
    const m = /^(\d+) of (\d+) keys$/.exec(document.querySelector('#meta-count').textContent);
    return m && Number(m[1]) < Number(m[2]);
  }, null, { timeout: 6000 });
  await inspectWorks(page);
});

test('a wasm trap in the worker: the request says so, the file is opened again, the next action works', async () => {
  const { page } = await openPage(60000);
  const message = await page.evaluate(() => window.ggufLensTest.request('testTrap', {}).promise.then(() => 'answered', (e) => e.message));
  assert.match(message, /^gguf-lens: the wasm module trapped in TokenizerJs\.tokenize \(unreachable\); the viewer opened the file again$/);
  await inspectWorks(page);
});

test('a chat template that never ends does not freeze the page', async () => {
  // 10^10 iterations: a template error naming a limit, or (without one) the watchdog that ends
  // it; either way the page says so and goes on.
  const { page, log } = await openPage(3000);
  await page.click('[data-tab="template"]');
  await page.check('#chat-use-edited');
  await page.fill('#chat-template-edit', '{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}');
  await page.waitForFunction(() => !document.querySelector('#chat-error').hidden, null, { timeout: 20000 });
  assert.ok((await page.textContent('#chat-error')).length > 0);
  // The page answers at once and the viewer keeps working.
  assert.equal(await page.evaluate(() => 1 + 1), 2);
  await page.fill('#chat-template-edit', '{{ messages[0].content }}');
  await page.waitForFunction(() => document.querySelector('#chat-error').hidden && document.querySelector('#chat-output').dataset.text !== undefined, null, { timeout: 10000 });
  await inspectWorks(page);
  assert.deepEqual(log.errors, []);
});
